//! The fixture for the official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! server scenarios, both eras: 2025-11-25 and 2026-07-28): exactly the tools, resources and
//! prompts its scenarios call, served over Streamable HTTP at `http://127.0.0.1:$PORT/mcp`
//! (PORT defaults to 8001). One server, one endpoint, both eras.
//!
//! ```text
//! PORT=8001 target-picomcp/debug/examples/picomcp-conformance &
//! npx @modelcontextprotocol/conformance server --url http://127.0.0.1:8001/mcp --suite all --spec-version 2025-11-25
//! npx @modelcontextprotocol/conformance@0.2.0-alpha.12 server --url http://127.0.0.1:8001/mcp --requirements 2026-07-28
//! ```

mod common;

use std::time::Duration;

use picomcp::http::HttpConfig;
use picomcp::{
    CompleteRequest, Content, Ctx, InputRequired, NoArgs, PromptConfig, PromptMessage,
    ProtocolError, ResourceConfig, ResourceContents, ResourceRequest, Server, ToolConfig,
    ToolError, audio, embedded, image, text,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

type Res<T> = Result<T, ToolError>;

fn red_png() -> Vec<u8> {
    common::png(1, |_, _| [255, 0, 0])
}

#[derive(Deserialize, JsonSchema)]
struct SamplingInput {
    /// The prompt to send to the LLM.
    prompt: String,
}

#[derive(Deserialize, JsonSchema)]
struct ElicitationInput {
    /// The message to show the user.
    message: String,
}

#[derive(Deserialize, JsonSchema)]
struct PromptArgs {
    /// First test argument.
    arg1: String,
    /// Second test argument.
    arg2: String,
}

#[derive(Deserialize, JsonSchema)]
struct EmbeddedPromptArgs {
    /// URI of the resource to embed.
    #[serde(rename = "resourceUri")]
    resource_uri: String,
}

fn add_tools(s: &mut Server) -> Result<(), picomcp::RegisterError> {
    let c = |d: &str| ToolConfig::new().description(d);
    s.tool(
        "test_simple_text",
        c("Returns simple text content"),
        |_: NoArgs, _: Ctx| async { Res::Ok("This is a simple text response for testing.") },
    )?;
    s.tool(
        "test_image_content",
        c("Returns image content"),
        |_: NoArgs, _: Ctx| async { Res::Ok(image(red_png(), "image/png")) },
    )?;
    s.tool(
        "test_audio_content",
        c("Returns audio content"),
        |_: NoArgs, _: Ctx| async { Res::Ok(audio(common::wav_tone(50), "audio/wav")) },
    )?;
    s.tool(
        "test_embedded_resource",
        c("Returns an embedded resource"),
        |_: NoArgs, _: Ctx| async {
            Res::Ok(embedded(ResourceContents::text(
                "test://embedded-resource",
                "text/plain",
                "This is an embedded resource content.",
            )))
        },
    )?;
    s.tool(
        "test_multiple_content_types",
        c("Returns text, image and resource content"),
        |_: NoArgs, _: Ctx| async {
            Res::Ok(vec![
                text("Multiple content types test:"),
                image(red_png(), "image/png"),
                embedded(ResourceContents::text(
                    "test://mixed-content-resource",
                    "application/json",
                    r#"{"test":"data","value":123}"#,
                )),
            ])
        },
    )?;
    s.tool(
        "test_tool_with_logging",
        c("Sends log messages while it runs"),
        |_: NoArgs, ctx: Ctx| async move {
            ctx.info("Tool execution started");
            tokio::time::sleep(Duration::from_millis(50)).await;
            ctx.info("Tool processing data");
            tokio::time::sleep(Duration::from_millis(50)).await;
            ctx.info("Tool execution completed");
            Res::Ok("Tool with logging executed successfully")
        },
    )?;
    s.tool(
        "test_error_handling",
        c("Always fails with a tool error"),
        |_: NoArgs, _: Ctx| async {
            Res::<()>::Err(ToolError::new(
                "This tool intentionally returns an error for testing",
            ))
        },
    )?;
    s.tool(
        "test_tool_with_progress",
        c("Reports progress 0, 50, 100 of 100"),
        |_: NoArgs, ctx: Ctx| async move {
            for (i, p) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                ctx.progress(p, Some(100.0), None);
            }
            Res::Ok("Tool with progress executed successfully")
        },
    )?;
    s.tool(
        "test_sampling",
        c("Asks the client's LLM to answer a prompt"),
        |i: SamplingInput, ctx: Ctx| async move {
            let params = json!({
                "messages": [{ "role": "user", "content": { "type": "text", "text": i.prompt } }],
                "maxTokens": 100
            });
            let result = ctx.create_message(params).await?;
            let answer = result["content"]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            Res::Ok(format!("LLM response: {answer}"))
        },
    )?;
    s.tool(
        "test_elicitation",
        c("Asks the user for a username and email"),
        |i: ElicitationInput, ctx: Ctx| async move {
            let schema = json!({
                "type": "object",
                "properties": {
                    "username": { "type": "string", "description": "User's response" },
                    "email": { "type": "string", "description": "User's email address" }
                },
                "required": ["username", "email"]
            });
            let r = ctx.elicit(&i.message, schema).await?;
            Res::Ok(format!(
                "User response: action={}, content={}",
                r.action,
                json!(r.content)
            ))
        },
    )?;
    s.tool(
        "test_elicitation_sep1034_defaults",
        c("Elicitation with a default for every primitive type"),
        |_: NoArgs, ctx: Ctx| async move {
            let schema = json!({
                "type": "object",
                "properties": {
                    "name": { "type": "string", "description": "User name", "default": "John Doe" },
                    "age": { "type": "integer", "description": "User age", "default": 30 },
                    "score": { "type": "number", "description": "User score", "default": 95.5 },
                    "status": {
                        "type": "string", "description": "User status",
                        "enum": ["active", "inactive", "pending"], "default": "active"
                    },
                    "verified": { "type": "boolean", "description": "Verification status", "default": true }
                }
            });
            let r = ctx.elicit("Please review and update the form fields with defaults", schema).await?;
            Res::Ok(format!("Elicitation completed: action={}, content={}", r.action, json!(r.content)))
        },
    )?;
    s.tool(
        "test_elicitation_sep1330_enums",
        c("Elicitation with the five enum schema variants"),
        |_: NoArgs, ctx: Ctx| async move {
            let schema = json!({
                "type": "object",
                "properties": {
                    "untitledSingle": { "type": "string", "enum": ["option1", "option2", "option3"] },
                    "titledSingle": { "type": "string", "oneOf": [
                        { "const": "value1", "title": "First Option" },
                        { "const": "value2", "title": "Second Option" },
                        { "const": "value3", "title": "Third Option" }
                    ]},
                    "legacyEnum": {
                        "type": "string", "enum": ["opt1", "opt2", "opt3"],
                        "enumNames": ["Option One", "Option Two", "Option Three"]
                    },
                    "untitledMulti": { "type": "array", "items": { "type": "string", "enum": ["option1", "option2", "option3"] } },
                    "titledMulti": { "type": "array", "items": { "anyOf": [
                        { "const": "value1", "title": "First Choice" },
                        { "const": "value2", "title": "Second Choice" },
                        { "const": "value3", "title": "Third Choice" }
                    ]}}
                }
            });
            let r = ctx.elicit("Please select options from the enum fields", schema).await?;
            Res::Ok(format!("Elicitation completed: action={}, content={}", r.action, json!(r.content)))
        },
    )?;
    // SEP-2243: an argument mirrored into the `Mcp-Param-Region` header, checked over HTTP.
    s.tool_dynamic(
        "test_custom_header",
        c("Echoes the region it was given (the region also travels as a header)").input_schema(
            json!({
                "type": "object",
                "properties": {
                    "region": { "type": "string", "x-mcp-header": "Region" }
                },
                "required": ["region"]
            }),
        ),
        |args: Value, _: Ctx| async move {
            let region = args["region"].as_str().unwrap_or_default().to_string();
            Res::Ok(format!("region: {region}"))
        },
    )?;
    // The suite's own fixture schema (SEP-1613, SEP-2106): given as is, listed as is.
    s.tool_dynamic(
        "json_schema_2020_12_tool",
        c("Tool with JSON Schema 2020-12 features").input_schema(json_schema_2020_12()),
        |_: Value, _: Ctx| async { Res::Ok("JSON Schema 2020-12 tool executed") },
    )?;
    s.tool(
        "test_reconnection",
        c("Answers at once (SSE resumption is not implemented)"),
        |_: NoArgs, _: Ctx| async { Res::Ok("Reconnection test completed successfully") },
    )?;
    Ok(())
}

/// `JSON_SCHEMA_2020_12_FIXTURE` of the conformance suite (src/scenarios/server/json-schema-2020-12.ts).
fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": { "street": { "type": "string" }, "city": { "type": "string" } }
            }
        },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" },
            "contactMethod": { "type": "string", "enum": ["phone", "email"] },
            "phone": { "type": "string" },
            "email": { "type": "string" }
        },
        "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
        "if": {
            "properties": { "contactMethod": { "const": "phone" } },
            "required": ["contactMethod"]
        },
        "then": { "required": ["phone"] },
        "else": { "required": ["email"] },
        "additionalProperties": false
    })
}

fn name_schema() -> Value {
    json!({ "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] })
}

/// The `content.<field>` of an accepted elicitation answer.
fn accepted(answer: Option<&Value>, field: &str) -> Option<String> {
    let answer = answer?;
    if answer.get("action")?.as_str()? != "accept" {
        return None;
    }
    Some(answer.get("content")?.get(field)?.as_str()?.to_string())
}

/// The text of a sampling answer (`CreateMessageResult`).
fn sampled(answer: Option<&Value>) -> Option<String> {
    Some(answer?.get("content")?.get("text")?.as_str()?.to_string())
}

/// The root URIs of a `roots/list` answer.
fn roots(answer: Option<&Value>) -> Option<Vec<String>> {
    let list = answer?.get("roots")?.as_array()?;
    Some(
        list.iter()
            .filter_map(|r| r.get("uri").and_then(Value::as_str).map(str::to_string))
            .collect(),
    )
}

fn sampling_params(question: &str, max_tokens: u32) -> Value {
    json!({
        "messages": [{ "role": "user", "content": { "type": "text", "text": question } }],
        "maxTokens": max_tokens
    })
}

/// The 2026-07-28 scenarios' tools: stateless checks and multi round-trip requests, written
/// with `Ctx::input_response` / `Ctx::require_input` (explicit keys, as the scenarios name
/// them) or with `ctx.elicit`, which works in both eras.
fn add_modern_tools(s: &mut Server) -> Result<(), picomcp::RegisterError> {
    let c = |d: &str| ToolConfig::new().description(d);
    s.tool(
        "test_missing_capability",
        c("Needs the client's sampling capability"),
        |_: NoArgs, ctx: Ctx| async move {
            let answer = ctx.create_message(sampling_params("Say hi", 10)).await?;
            Res::Ok(sampled(Some(&answer)).unwrap_or_default())
        },
    )?;
    s.tool(
        "test_streaming_elicitation",
        c("Asks the user for a name with ctx.elicit (both eras)"),
        |_: NoArgs, ctx: Ctx| async move {
            let r = ctx.elicit("What is your name?", name_schema()).await?;
            Res::Ok(format!("action={}", r.action))
        },
    )?;
    s.tool(
        "test_logging_tool",
        c("Logs one message, then answers"),
        |_: NoArgs, ctx: Ctx| async move {
            ctx.info("test_logging_tool ran");
            Res::Ok("logged")
        },
    )?;
    s.tool(
        "test_input_required_result_elicitation",
        c("Asks the user's name (input_required)"),
        |_: NoArgs, ctx: Ctx| async move {
            match accepted(ctx.input_response("user_name"), "name") {
                Some(name) => Res::Ok(format!("Hello, {name}!")),
                None => Err(ctx
                    .require_input(InputRequired::new().elicit(
                        "user_name",
                        "What is your name?",
                        name_schema(),
                    ))
                    .into()),
            }
        },
    )?;
    s.tool(
        "test_input_required_result_sampling",
        c("Asks the client's model a question (input_required)"),
        |_: NoArgs, ctx: Ctx| async move {
            match sampled(ctx.input_response("capital_question")) {
                Some(answer) => Res::Ok(format!("The model said: {answer}")),
                None => Err(ctx
                    .require_input(InputRequired::new().create_message(
                        "capital_question",
                        sampling_params("What is the capital of France?", 100),
                    ))
                    .into()),
            }
        },
    )?;
    s.tool(
        "test_input_required_result_list_roots",
        c("Asks for the client's roots (input_required)"),
        |_: NoArgs, ctx: Ctx| async move {
            match roots(ctx.input_response("client_roots")) {
                Some(list) => Res::Ok(format!("Roots: {}", list.join(", "))),
                None => Err(ctx
                    .require_input(InputRequired::new().list_roots("client_roots"))
                    .into()),
            }
        },
    )?;
    s.tool(
        "test_input_required_result_request_state",
        c("Asks for a confirmation and keeps a state (input_required)"),
        |_: NoArgs, ctx: Ctx| async move {
            let confirmed = ctx.input_response("confirm").is_some();
            if confirmed && ctx.request_state() == Some("awaiting-confirmation") {
                return Res::Ok("state-ok: confirmed");
            }
            let schema = json!({ "type": "object", "properties": { "ok": { "type": "boolean" } }, "required": ["ok"] });
            Err(ctx
                .require_input(
                    InputRequired::new()
                        .elicit("confirm", "Please confirm", schema)
                        .state("awaiting-confirmation"),
                )
                .into())
        },
    )?;
    s.tool(
        "test_input_required_result_multiple_inputs",
        c("Asks for a name, a sampled greeting and the roots at once (input_required)"),
        |_: NoArgs, ctx: Ctx| async move {
            let name = accepted(ctx.input_response("user_name"), "name");
            let greeting = sampled(ctx.input_response("greeting"));
            let roots = roots(ctx.input_response("client_roots"));
            if let (Some(name), Some(greeting), Some(roots)) = (name, greeting, roots) {
                return Res::Ok(format!("{greeting} {name} ({} roots)", roots.len()));
            }
            Err(ctx
                .require_input(
                    InputRequired::new()
                        .elicit("user_name", "What is your name?", name_schema())
                        .create_message("greeting", sampling_params("Generate a greeting", 50))
                        .list_roots("client_roots")
                        .state("all-three"),
                )
                .into())
        },
    )?;
    s.tool(
        "test_input_required_result_multi_round",
        c("Asks two questions, one round each (input_required)"),
        |_: NoArgs, ctx: Ctx| async move {
            let name = accepted(ctx.input_response("step1"), "name");
            let color = accepted(ctx.input_response("step2"), "color");
            match (name, color) {
                (Some(name), Some(color)) => Res::Ok(format!("{name} likes {color}")),
                (Some(_), None) => {
                    let schema = json!({ "type": "object", "properties": { "color": { "type": "string" } }, "required": ["color"] });
                    Err(ctx
                        .require_input(
                            InputRequired::new()
                                .elicit("step2", "Step 2: What is your favorite color?", schema)
                                .state("round-2"),
                        )
                        .into())
                }
                _ => Err(ctx
                    .require_input(
                        InputRequired::new()
                            .elicit("step1", "Step 1: What is your name?", name_schema())
                            .state("round-1"),
                    )
                    .into()),
            }
        },
    )?;
    s.tool(
        "test_input_required_result_tampered_state",
        c("Keeps a state that picomcp signs (input_required)"),
        |_: NoArgs, ctx: Ctx| async move {
            if ctx.request_state() == Some("issued") {
                return Res::Ok("state verified");
            }
            Err(ctx
                .require_input(
                    InputRequired::new()
                        .elicit("user_name", "What is your name?", name_schema())
                        .state("issued"),
                )
                .into())
        },
    )?;
    s.tool(
        "test_input_required_result_capabilities",
        c("Asks only for what the client declared it can give (input_required)"),
        |_: NoArgs, ctx: Ctx| async move {
            if ctx.input_responses().is_some_and(|r| !r.is_empty()) {
                return Res::Ok("input received");
            }
            let caps = ctx.client_capabilities().unwrap_or_default();
            let has = |name: &str| caps.get(name).is_some_and(Value::is_object);
            let mut ask = InputRequired::new();
            if has("elicitation") {
                ask = ask.elicit("user_name", "What is your name?", name_schema());
            }
            if has("sampling") {
                ask = ask.create_message("greeting", sampling_params("Generate a greeting", 50));
            }
            if has("roots") {
                ask = ask.list_roots("client_roots");
            }
            if ask.is_empty() {
                return Res::Ok("the client can give no input");
            }
            Err(ctx.require_input(ask).into())
        },
    )?;
    s.prompt(
        "test_input_required_result_prompt",
        PromptConfig::new().description("A prompt that asks the user for context (input_required)"),
        |_: NoArgs, ctx: Ctx| async move {
            match accepted(ctx.input_response("user_context"), "context") {
                Some(context) => Ok(vec![PromptMessage::user(text(format!(
                    "Use this context: {context}"
                )))]),
                None => {
                    let schema = json!({ "type": "object", "properties": { "context": { "type": "string" } }, "required": ["context"] });
                    Err(ctx.require_input(InputRequired::new().elicit(
                        "user_context",
                        "What context should the prompt use?",
                        schema,
                    )))
                }
            }
        },
    )?;
    Ok(())
}

fn add_resources(s: &mut Server) -> Result<(), picomcp::RegisterError> {
    s.resource(
        "test://static-text",
        ResourceConfig::new("Static Text Resource")
            .description("A static text resource for testing")
            .mime_type("text/plain"),
        |r: ResourceRequest, _: Ctx| async move {
            Ok(ResourceContents::text(
                r.uri,
                "text/plain",
                "This is the content of the static text resource.",
            ))
        },
    )?;
    s.resource(
        "test://static-binary",
        ResourceConfig::new("Static Binary Resource")
            .description("A static binary resource (PNG) for testing")
            .mime_type("image/png"),
        |r: ResourceRequest, _: Ctx| async move {
            Ok(ResourceContents::blob(r.uri, "image/png", red_png()))
        },
    )?;
    s.resource(
        "test://watched-resource",
        ResourceConfig::new("Watched Resource")
            .description("A resource to subscribe to")
            .mime_type("text/plain"),
        |r: ResourceRequest, _: Ctx| async move {
            Ok(ResourceContents::text(
                r.uri,
                "text/plain",
                "Watched resource content",
            ))
        },
    )?;
    s.resource_template(
        "test://template/{id}/data",
        ResourceConfig::new("Template Resource")
            .description("A resource template with an id parameter")
            .mime_type("application/json"),
        |r: ResourceRequest, _: Ctx| async move {
            let id = r.params.get("id").cloned().unwrap_or_default();
            let body =
                json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") });
            Ok(ResourceContents::text(
                r.uri,
                "application/json",
                body.to_string(),
            ))
        },
    )?;
    Ok(())
}

fn add_prompts(s: &mut Server) -> Result<(), picomcp::RegisterError> {
    let c = |d: &str| PromptConfig::new().description(d);
    s.prompt(
        "test_simple_prompt",
        c("A simple prompt without arguments"),
        |_: NoArgs, _: Ctx| async {
            Ok::<_, ProtocolError>(vec![PromptMessage::user(text(
                "This is a simple prompt for testing.",
            ))])
        },
    )?;
    s.prompt(
        "test_prompt_with_arguments",
        c("A prompt with two arguments"),
        |a: PromptArgs, _: Ctx| async move {
            let t = format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                a.arg1, a.arg2
            );
            Ok::<_, ProtocolError>(vec![PromptMessage::user(text(t))])
        },
    )?;
    s.prompt(
        "test_prompt_with_embedded_resource",
        c("A prompt that embeds a resource"),
        |a: EmbeddedPromptArgs, _: Ctx| async move {
            let resource = ResourceContents::text(
                a.resource_uri,
                "text/plain",
                "Embedded resource content for testing.",
            );
            Ok::<_, ProtocolError>(vec![
                PromptMessage::user(embedded(resource)),
                PromptMessage::user(text("Please process the embedded resource above.")),
            ])
        },
    )?;
    s.prompt(
        "test_prompt_with_image",
        c("A prompt with an image"),
        |_: NoArgs, _: Ctx| async {
            let img: Content = image(red_png(), "image/png");
            Ok::<_, ProtocolError>(vec![
                PromptMessage::user(img),
                PromptMessage::user(text("Please analyze the image above.")),
            ])
        },
    )?;
    s.completion(|req: CompleteRequest, _: Ctx| async move {
        let candidates = ["paris", "park", "party", "test-value-1", "test-value-2"];
        let values: Vec<String> = candidates
            .iter()
            .filter(|c| c.starts_with(&req.argument.value))
            .map(|c| (*c).to_string())
            .collect();
        Ok::<_, ProtocolError>(values)
    });
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut server = Server::new("picomcp-conformance", env!("CARGO_PKG_VERSION"));
    add_tools(&mut server)?;
    add_modern_tools(&mut server)?;
    add_resources(&mut server)?;
    add_prompts(&mut server)?;
    let port: u16 = match std::env::var("PORT") {
        Ok(p) => p.parse()?,
        Err(_) => 8001,
    };
    let addr = format!("127.0.0.1:{port}");
    eprintln!("picomcp conformance fixture at http://{addr}/mcp");
    picomcp::http::serve(server, addr, HttpConfig::default()).await?;
    Ok(())
}
