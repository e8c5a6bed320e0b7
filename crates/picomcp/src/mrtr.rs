//! Multi round-trip requests (MCP 2026-07-28): a handler that needs something from the client
//! (the user's answer, a sampled message, the client's roots) ends its request with an
//! `input_required` result listing what it needs; the client sends the same request again with
//! `inputResponses` and the `requestState` it was given, and the handler runs again from the
//! start, this time finding the answers.
//!
//! picomcp signs the `requestState` it hands out (HMAC-SHA256 under a key of the server's) and
//! carries in it the answers of earlier rounds, so a handler that asks one question after
//! another (`ctx.elicit(..)` twice) sees every earlier answer in every round, and a state the
//! client altered is refused (`-32602`) before the handler runs. The state is bound to the
//! method and to the tool, prompt or resource it was issued for.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine as _;
use ring::hmac;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::jsonrpc::{ProtocolError, code};
use crate::session::lock;

/// What a handler needs from the client before it can answer: `input_required` in MCP
/// 2026-07-28. Build it, then end the handler with `Err(ctx.require_input(request).into())`.
///
/// Each request has a key of the handler's choosing; the client's answer comes back under the
/// same key ([`Ctx::input_response`](crate::Ctx::input_response)).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InputRequired {
    pub(crate) requests: Map<String, Value>,
    pub(crate) state: Option<String>,
}

impl InputRequired {
    /// Nothing asked yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks the user (`elicitation/create`, form mode) with a flat object schema.
    #[must_use]
    pub fn elicit(
        self,
        key: impl Into<String>,
        message: impl Into<String>,
        requested_schema: Value,
    ) -> Self {
        let params = json!({ "message": message.into(), "requestedSchema": requested_schema });
        self.request(key, "elicitation/create", params)
    }

    /// Asks the client's model (`sampling/createMessage`); `params` as in that request
    /// (`messages`, `maxTokens`, ...).
    #[must_use]
    pub fn create_message(self, key: impl Into<String>, params: Value) -> Self {
        self.request(key, "sampling/createMessage", params)
    }

    /// Asks for the client's roots (`roots/list`).
    #[must_use]
    pub fn list_roots(self, key: impl Into<String>) -> Self {
        self.request(key, "roots/list", json!({}))
    }

    /// Any input request, by method.
    #[must_use]
    pub fn request(mut self, key: impl Into<String>, method: &str, params: Value) -> Self {
        self.requests
            .insert(key.into(), json!({ "method": method, "params": params }));
        self
    }

    /// State of the handler's own, given back by [`Ctx::request_state`](crate::Ctx::request_state)
    /// in the next round (signed by picomcp: the client cannot alter it).
    #[must_use]
    pub fn state(mut self, state: impl Into<String>) -> Self {
        self.state = Some(state.into());
        self
    }

    /// Whether nothing is asked and no state is kept.
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty() && self.state.is_none()
    }

    fn merge(&mut self, other: InputRequired) {
        self.requests.extend(other.requests);
        if other.state.is_some() {
            self.state = other.state;
        }
    }

    /// The client capabilities these requests need, as `data.requiredCapabilities` names them.
    pub(crate) fn required_capabilities(&self) -> Vec<&'static str> {
        let mut needed: Vec<&'static str> = Vec::new();
        for request in self.requests.values() {
            let capability = match request.get("method").and_then(Value::as_str) {
                Some("elicitation/create") => "elicitation",
                Some("sampling/createMessage") => "sampling",
                Some("roots/list") => "roots",
                _ => continue,
            };
            if !needed.contains(&capability) {
                needed.push(capability);
            }
        }
        needed
    }
}

/// The key that signs request states. Random per server unless set with
/// [`Server::request_state_secret`](crate::Server::request_state_secret) (several instances
/// behind one address must share it).
pub(crate) struct StateKey(hmac::Key);

impl StateKey {
    pub(crate) fn random() -> Self {
        let rng = ring::rand::SystemRandom::new();
        match hmac::Key::generate(hmac::HMAC_SHA256, &rng) {
            Ok(key) => Self(key),
            // The system's random source failing is not recoverable in any useful way; fall
            // back to a key from two random UUIDs (the same source, through another path).
            Err(_) => {
                let seed = format!("{}{}", uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
                Self::from_secret(seed.as_bytes())
            }
        }
    }

    pub(crate) fn from_secret(secret: &[u8]) -> Self {
        Self(hmac::Key::new(hmac::HMAC_SHA256, secret))
    }
}

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateKey(..)")
    }
}

/// What a signed `requestState` carries.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct Envelope {
    /// Method and name (tool, prompt or resource URI) it was issued for.
    m: String,
    n: String,
    /// The handler's own state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    u: Option<String>,
    /// Answers of earlier rounds.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    r: Map<String, Value>,
}

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

fn seal(key: &StateKey, envelope: &Envelope) -> String {
    let payload = serde_json::to_vec(envelope).unwrap_or_default();
    let tag = hmac::sign(&key.0, &payload);
    format!("{}.{}", B64.encode(&payload), B64.encode(tag.as_ref()))
}

fn open(key: &StateKey, token: &str, method: &str, name: &str) -> Result<Envelope, ProtocolError> {
    let invalid = || {
        ProtocolError::invalid_params(
            "Invalid params: requestState was not issued by this server for this request, or was altered",
        )
    };
    let (payload, tag) = token.split_once('.').ok_or_else(invalid)?;
    let payload = B64.decode(payload).map_err(|_| invalid())?;
    let tag = B64.decode(tag).map_err(|_| invalid())?;
    hmac::verify(&key.0, &payload, &tag).map_err(|_| invalid())?;
    let envelope: Envelope = serde_json::from_slice(&payload).map_err(|_| invalid())?;
    if envelope.m != method || envelope.n != name {
        return Err(invalid());
    }
    Ok(envelope)
}

/// One round of a request that may ask for input: the answers so far, the handler's state, and
/// what the handler asks for this time.
#[derive(Debug)]
pub(crate) struct Round {
    method: String,
    name: String,
    /// Earlier rounds' answers, then this round's (`inputResponses`).
    responses: Map<String, Value>,
    user_state: Option<String>,
    pending: Mutex<Option<InputRequired>>,
    /// Numbers the keys of `ctx.elicit`/`create_message`/`list_roots`, in call order.
    calls: AtomicUsize,
}

impl Round {
    /// Reads `inputResponses` and `requestState` out of a request's params (they are not the
    /// handler's arguments). A request of another method has no round (`None`): it may not ask
    /// for input.
    pub(crate) fn take(
        key: &StateKey,
        method: &str,
        params: &mut Map<String, Value>,
    ) -> Result<Option<Round>, ProtocolError> {
        let responses = params.remove("inputResponses");
        let state = params.remove("requestState");
        let name_key = match method {
            "tools/call" | "prompts/get" => "name",
            "resources/read" => "uri",
            _ => return Ok(None),
        };
        let name = params
            .get(name_key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let mut round = Round {
            method: method.to_string(),
            name,
            responses: Map::new(),
            user_state: None,
            pending: Mutex::new(None),
            calls: AtomicUsize::new(0),
        };
        match state {
            None | Some(Value::Null) => {}
            Some(Value::String(token)) => {
                let envelope = open(key, &token, method, &round.name)?;
                round.user_state = envelope.u;
                round.responses = envelope.r;
            }
            Some(_) => {
                return Err(ProtocolError::invalid_params(
                    "Invalid params: requestState must be a string",
                ));
            }
        }
        match responses {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => round.responses.extend(map),
            Some(_) => {
                return Err(ProtocolError::invalid_params(
                    "Invalid params: inputResponses must be an object",
                ));
            }
        }
        Ok(Some(round))
    }

    pub(crate) fn responses(&self) -> &Map<String, Value> {
        &self.responses
    }

    pub(crate) fn user_state(&self) -> Option<&str> {
        self.user_state.as_deref()
    }

    /// Records what the handler asks for; the request ends with `input_required`.
    pub(crate) fn ask(&self, request: InputRequired) {
        let mut pending = lock(&self.pending);
        match pending.as_mut() {
            Some(p) => p.merge(request),
            None => *pending = Some(request),
        }
    }

    /// The next key for a high-level call (`elicitation-1`, `sampling-2`, ...).
    pub(crate) fn next_key(&self, kind: &str) -> String {
        let n = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{kind}-{n}")
    }

    /// The `input_required` result, if the handler asked for input; `have` tells which client
    /// capabilities the request declared (a request for one it lacks is `-32021`).
    pub(crate) fn finish(
        &self,
        key: &StateKey,
        have: impl Fn(&str) -> bool,
    ) -> Option<Result<Value, ProtocolError>> {
        let pending = lock(&self.pending).take()?;
        let missing: Map<String, Value> = pending
            .required_capabilities()
            .into_iter()
            .filter(|c| !have(c))
            .map(|c| (c.to_string(), json!({})))
            .collect();
        if !missing.is_empty() {
            let names: Vec<&str> = missing.keys().map(String::as_str).collect();
            let error = ProtocolError::new(
                code::MISSING_REQUIRED_CLIENT_CAPABILITY,
                format!(
                    "Missing required client capability: this request needs {}",
                    names.join(", ")
                ),
            )
            .with_data(json!({ "requiredCapabilities": missing }));
            return Some(Err(error));
        }
        let envelope = Envelope {
            m: self.method.clone(),
            n: self.name.clone(),
            u: pending.state.or_else(|| self.user_state.clone()),
            r: self.responses.clone(),
        };
        let mut result = Map::new();
        result.insert("resultType".into(), json!("input_required"));
        if !pending.requests.is_empty() {
            result.insert("inputRequests".into(), Value::Object(pending.requests));
        }
        result.insert("requestState".into(), json!(seal(key, &envelope)));
        Some(Ok(Value::Object(result)))
    }
}

/// The error a high-level call (`ctx.elicit`, ...) returns when the answer is not here yet:
/// the handler is expected to pass it on with `?`; the request then ends with `input_required`
/// whatever the handler returns.
pub(crate) fn pending_error() -> ProtocolError {
    ProtocolError::new(
        code::INTERNAL_ERROR,
        "input required: the request ends here and is sent again with the client's answer",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(key: &StateKey, params: Value) -> Result<Option<Round>, ProtocolError> {
        let Value::Object(mut p) = params else {
            return Ok(None);
        };
        Round::take(key, "tools/call", &mut p)
    }

    #[test]
    fn state_round_trips_and_carries_earlier_answers() {
        let key = StateKey::random();
        let r1 = round(&key, json!({"name": "t"})).ok().flatten();
        let Some(r1) = r1 else {
            panic!("tools/call has a round")
        };
        r1.ask(
            InputRequired::new()
                .elicit("a", "A?", json!({}))
                .state("s1"),
        );
        let Some(Ok(result)) = r1.finish(&key, |_| true) else {
            panic!("input required")
        };
        assert_eq!(result["resultType"], "input_required");
        assert_eq!(result["inputRequests"]["a"]["method"], "elicitation/create");
        let state = result["requestState"].clone();

        let r2 = round(&key, json!({"name": "t", "requestState": state, "inputResponses": {"a": {"action": "accept"}}}))
            .ok()
            .flatten();
        let Some(r2) = r2 else { panic!("round 2") };
        assert_eq!(r2.user_state(), Some("s1"));
        assert_eq!(r2.responses()["a"]["action"], "accept");
        r2.ask(InputRequired::new().elicit("b", "B?", json!({})));
        let Some(Ok(result)) = r2.finish(&key, |_| true) else {
            panic!("input required")
        };
        let r3 = round(&key, json!({"name": "t", "requestState": result["requestState"], "inputResponses": {"b": {"action": "decline"}}}))
            .ok()
            .flatten();
        let Some(r3) = r3 else { panic!("round 3") };
        // Round 1's answer is still there, and the state carried over.
        assert_eq!(r3.responses()["a"]["action"], "accept");
        assert_eq!(r3.responses()["b"]["action"], "decline");
        assert_eq!(r3.user_state(), Some("s1"));
    }

    #[test]
    fn an_altered_or_foreign_state_is_refused() {
        let key = StateKey::random();
        let Some(r1) = round(&key, json!({"name": "t"})).ok().flatten() else {
            panic!()
        };
        r1.ask(InputRequired::new().state("x"));
        let Some(Ok(result)) = r1.finish(&key, |_| true) else {
            panic!()
        };
        let state = result["requestState"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let mut tampered = state.clone();
        tampered.insert(3, 'A');
        for bad in [
            tampered,
            format!("{state}x"),
            "nonsense".into(),
            String::new(),
        ] {
            let e = round(&key, json!({"name": "t", "requestState": bad})).err();
            assert_eq!(e.map(|e| e.code), Some(code::INVALID_PARAMS));
        }
        // Another tool, another server key: refused.
        let e = round(&key, json!({"name": "other", "requestState": state})).err();
        assert_eq!(e.map(|e| e.code), Some(code::INVALID_PARAMS));
        let e = round(
            &StateKey::random(),
            json!({"name": "t", "requestState": state}),
        )
        .err();
        assert_eq!(e.map(|e| e.code), Some(code::INVALID_PARAMS));
    }

    #[test]
    fn a_request_for_an_undeclared_capability_is_refused_with_its_name() {
        let key = StateKey::random();
        let Some(r) = round(&key, json!({"name": "t"})).ok().flatten() else {
            panic!()
        };
        r.ask(
            InputRequired::new()
                .create_message("s", json!({}))
                .list_roots("r"),
        );
        let Some(Err(e)) = r.finish(&key, |c| c == "roots") else {
            panic!()
        };
        assert_eq!(e.code, code::MISSING_REQUIRED_CLIENT_CAPABILITY);
        assert_eq!(
            e.data,
            Some(json!({"requiredCapabilities": {"sampling": {}}}))
        );
    }
}
