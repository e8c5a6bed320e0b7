//! The judge on real failures of small models, and on real answers (English, French, German,
//! Spanish) that must pass.

use super::*;

const NAMES: &[&str] = &[
    "status",
    "release",
    "ticket",
    "pkgtest",
    "bash",
    "read_skill",
];
/// The parameters of those tools.
const PARAMETERS: &[&str] = &[
    "service", "version", "channel", "dry_run", "title", "command",
];
const STATUS: &str = "billing: running, version 2.3.1, up 4 days, error rate 0.02%";
const TICKET: &str = "Opened T-1042 (high): VPN down for everyone";
const VPN: &str = "The VPN is down for everyone. Open a high priority ticket for it.";
const RELEASE: &str = "Publish version 1.4.2 of the product to the beta channel.";
const INVALID: &str = "The call to release was not run: its arguments are invalid.\n\
- channel: \"Beta!\" is not one of the allowed values. One of: stable, beta.\n\
You sent: {\"version\":\"1.4.2\",\"channel\":\"Beta!\"}\n\
Parameters:\n\
- version (string, required): The version, like 1.4.2.\n\
- channel (string, required, one of: stable, beta): The release channel.\n\
- dry_run (boolean, optional): Only show what would be done.\n\
Call release again with each parameter as its own field.";
const UNKNOWN: &str = "There is no tool named \"deploy\". The tools are: status, release, ticket.";

const SICK: &str = "I feel awful. Put me down as off sick for half a day today, 2026-12-07.";
const SICK_OUTPUT: &str = "LV-2292 recorded: sick leave, 0.5 days from 2026-12-07 for E1042 (Sam Ortiz). No approval needed.\nFrom the 4th day in a row a doctor's note is needed.";

/// What the model saw: prompts, outputs of calls that worked, mm's messages.
#[derive(Clone, Copy, Default)]
struct Seen {
    prompts: &'static [&'static str],
    outputs: &'static [&'static str],
    messages: &'static [&'static str],
    earlier: &'static [&'static str],
    truncated: bool,
}

impl Seen {
    fn ask(prompt: &'static [&'static str]) -> Self {
        Self {
            prompts: prompt,
            ..Self::default()
        }
    }

    fn after(mut self, outputs: &'static [&'static str]) -> Self {
        self.outputs = outputs;
        self
    }

    fn told(mut self, messages: &'static [&'static str]) -> Self {
        self.messages = messages;
        self
    }

    /// Earlier answers of the conversation, made from tools' outputs.
    fn answered(mut self, earlier: &'static [&'static str]) -> Self {
        self.earlier = earlier;
        self
    }

    fn cut(mut self) -> Self {
        self.truncated = true;
        self
    }

    fn judge(self, answer: &str) -> Option<Junk> {
        let ctx = AnswerContext {
            prompts: self.prompts,
            tool_outputs: self.outputs,
            mm_messages: self.messages,
            earlier_answers: self.earlier,
            names: NAMES,
            parameters: PARAMETERS,
            truncated: self.truncated,
            calls_succeeded: !self.outputs.is_empty(),
        };
        judge(answer, &ctx)
    }
}

/// `table!(seen => expected: [answers…], …)`: each answer, judged in what was seen, gives the
/// expected class (`None`: an answer).
macro_rules! table {
    ($($seen:expr => $want:expr => [$($answer:expr),+ $(,)?]),+ $(,)?) => {{
        let mut wrong = Vec::new();
        $($(
            let got = $seen.judge($answer);
            let want: Option<Junk> = $want;
            if got != want {
                wrong.push(format!("{:?}: got {got:?}, want {want:?}", $answer));
            }
        )+)+
        assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
    }};
}

#[test]
fn the_failures_of_the_issue_are_junk() {
    let status = Seen::ask(&["What is the status of the billing service?"]).after(&[STATUS]);
    table!(
        Seen::ask(&[RELEASE]) => Some(Junk::CopiedPrompt) => [RELEASE],
        Seen::ask(&[VPN]).after(&[TICKET]) => Some(Junk::Refusal) => [
            "I'm sorry, but I can't assist with that.",
        ],
        Seen::ask(&[VPN]) => Some(Junk::CopiedPrompt) => ["VPN down"],
        status => Some(Junk::ToolList) => [
            r#"<tools>{"type": "function", "function": {"name": "status", "description": "Report the status"#,
        ],
        status => Some(Junk::CallAsText) => [
            r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#,
        ],
        Seen::ask(&[RELEASE]).told(&[INVALID]) => Some(Junk::CopiedMmMessage) => [
            "The call to release was not run: its arguments are invalid. …",
        ],
        status.cut() => Some(Junk::Truncated) => ["The billing service is running, version"],
    );
}

#[test]
fn short_real_answers_pass() {
    table!(
        Seen::ask(&["What is the capital of France?"]) => None => ["Paris", "Paris.", "It is Paris."],
        Seen::ask(&["What is 7 times 8?"]) => None => ["56"],
        Seen::ask(&["Is billing running?"]).after(&[STATUS]) => None => [
            "Yes, billing is running.",
            "Billing is running.",
            "Billing running.",
            "Yes",
        ],
        Seen::ask(&["hi"]) => None => ["Hi!", "Hi! How can I help?"],
        Seen::ask(&["Which is bigger, 7 or 9?"]) => None => ["9", "9 is bigger."],
        Seen::ask(&["Is it billing or search that is down?"]) => None => [
            "search",
            "The search service.",
        ],
        Seen::ask(&["Restart the billing service."]).after(&["billing: restarted"]) => None => [
            "Done.",
            "Billing restarted.",
        ],
    );
}

#[test]
fn answers_that_use_the_output_pass() {
    let status = Seen::ask(&["What is the status of the billing service?"]).after(&[STATUS]);
    let ticket = Seen::ask(&[VPN]).after(&[TICKET]);
    table!(
        status => None => [
            "The billing service is running, version 2.3.1.",
            // mm's demo, from Qwen2.5-Coder-0.5B: the label turned into a sentence.
            "The billing service is running, version 2.3.1, up 4 days, error rate 0.02%.",
            "Billing is up: version 2.3.1, running for 4 days, with a 0.02% error rate.",
            "The status script printed: billing: running, version 2.3.1, up 4 days, error rate \
             0.02%. So the service is healthy: it has been up for four days and its error rate \
             is far below the 1% that would page the on-call engineer.",
        ],
        // A short output repeated is often the answer itself.
        ticket => None => [TICKET, "I opened ticket T-1042 (high priority) for the VPN outage."],
        Seen::ask(&["Run the tests of the greet package."]).after(&["greet: 12 passed, 0 failed"]) => None => [
            "All 12 tests of greet passed.",
            "greet: 12 passed, 0 failed",
            "I can't find any failing test: all 12 passed.",
        ],
    );
}

#[test]
fn answers_that_restate_the_question_pass() {
    table!(
        Seen::ask(&["Is the billing service running?"]).after(&[STATUS]) => None => [
            "The billing service is running.",
            "Yes, it is running (version 2.3.1).",
            "Is the billing service running? Yes.",
        ],
        Seen::ask(&["Can you confirm the billing service is running?"]).after(&[STATUS]) => None => [
            "The billing service is running.",
        ],
        Seen::ask(&["Check if the VPN is up."]) => None => ["The VPN is up.", "VPN up."],
        Seen::ask(&["What is the capital of France?"]) => None => [
            "What is the capital of France? Paris.",
            "You asked: \"What is the capital of France?\" The answer is Paris.",
        ],
        Seen::ask(&[RELEASE]).after(&["published 1.4.2 to beta"]) => None => [
            "Published version 1.4.2 of the product to the beta channel.",
            "Version 1.4.2 is now on the beta channel.",
            "I have published version 1.4.2 to the beta channel.",
        ],
        Seen::ask(&["Write a haiku about the sea."]) => None => [
            "Waves fold into foam / the sea keeps its old secrets / salt on the cold wind",
        ],
    );
}

#[test]
fn real_answers_in_french_german_and_spanish_pass() {
    let out: &'static [&'static str] = &[STATUS];
    table!(
        Seen::ask(&["Quel est l'état du service billing ?"]).after(out) => None => [
            "Le service billing fonctionne (version 2.3.1, en service depuis 4 jours).",
            "Il fonctionne.",
        ],
        Seen::ask(&["Le service billing fonctionne-t-il ?"]).after(out) => None => [
            "Oui, le service billing fonctionne.",
            "Le service billing fonctionne.",
        ],
        Seen::ask(&["Est-ce que le service billing fonctionne ?"]).after(out) => None => [
            "Le service billing fonctionne.",
        ],
        Seen::ask(&["Publie la version 1.4.2 du produit sur le canal beta."]).after(&["published 1.4.2 to beta"]) => None => [
            "La version 1.4.2 a été publiée sur le canal beta.",
        ],
        Seen::ask(&["Quelle est la capitale de la France ?"]) => None => ["Paris.", "C'est Paris."],
        Seen::ask(&["Quel est l'état du service search ?"]).after(&["search: degraded, version 3.0.2, 1 of 3 replicas down"]) => None => [
            "Désolé, le service search est dégradé : 1 réplique sur 3 est en panne.",
        ],
        Seen::ask(&["Wie ist der Status des Dienstes billing?"]).after(out) => None => [
            "Der Dienst billing läuft, Version 2.3.1, seit 4 Tagen.",
        ],
        Seen::ask(&["Läuft der Dienst billing?"]).after(out) => None => [
            "Ja, der Dienst billing läuft.",
            "Der Dienst billing läuft.",
        ],
        Seen::ask(&["Veröffentliche Version 1.4.2 des Produkts im Kanal beta."]).after(&["published 1.4.2 to beta"]) => None => [
            "Version 1.4.2 wurde im Kanal beta veröffentlicht.",
        ],
        Seen::ask(&["Wie geht es dem Dienst search?"]).after(&["search: degraded, version 3.0.2, 1 of 3 replicas down"]) => None => [
            "Es tut mir leid, aber der Dienst search läuft nicht richtig: 1 von 3 Replikaten ist ausgefallen.",
        ],
        Seen::ask(&["¿Cuál es el estado del servicio billing?"]).after(out) => None => [
            "El servicio billing está funcionando, versión 2.3.1.",
        ],
        Seen::ask(&["¿Está funcionando el servicio billing?"]).after(out) => None => [
            "Sí, el servicio billing está funcionando.",
            "El servicio billing está funcionando.",
        ],
        Seen::ask(&["Publica la versión 1.4.2 del producto en el canal beta."]).after(&["published 1.4.2 to beta"]) => None => [
            "He publicado la versión 1.4.2 en el canal beta.",
        ],
        Seen::ask(&["¿Cómo está el servicio search?"]).after(&["search: degraded, version 3.0.2, 1 of 3 replicas down"]) => None => [
            "Lo siento, el servicio search está degradado: 1 de 3 réplicas no funciona.",
        ],
    );
}

#[test]
fn copies_of_the_prompt_are_junk() {
    table!(
        Seen::ask(&[RELEASE]) => Some(Junk::CopiedPrompt) => [
            "Sure! Publish version 1.4.2 of the product to the beta channel.",
            "publish version 1.4.2 of the product to the beta channel",
            "Publish version 1.4.2 of the product to the channel.",
        ],
        Seen::ask(&["What is the capital of France?"]) => Some(Junk::CopiedPrompt) => [
            "What is the capital of France?",
            "What is the capital of France",
            "capital of France",
        ],
        Seen::ask(&["What is the status of the billing service?"]).after(&[STATUS]) => Some(Junk::CopiedPrompt) => [
            "billing service",
            "The billing service?",
        ],
        Seen::ask(&["Restart it."]) => Some(Junk::CopiedPrompt) => ["Restart it.", "restart it"],
        // A collage: the prompt, mm's framing and the output, pasted (Qwen2.5-Coder-0.5B on the
        // project's suite, after the fresh answer step; the request's number left out).
        Seen::ask(&[SICK])
            .after(&[SICK_OUTPUT])
            .told(&["My question: The tool request_leave answered:"]) => Some(Junk::CopiedPrompt) => [
            "I feel awful. Put me down as off sick for half a day today, 2026-12-07. The tool request_leave answered: sick leave, 0.5 days from 2026-12-07 for E1042 (Sam Ortiz). No approval needed. From the 4th day in a row a doctor's note is needed.",
        ],
        // The prompt and the facts in words of the model's own: answers.
        Seen::ask(&[SICK]).after(&[SICK_OUTPUT]) => None => [
            "You are off sick for half a day today, 2026-12-07: request LV-2292, no approval needed.",
            "Put me down as off sick for half a day today, 2026-12-07? Done: LV-2292, sick leave, 0.5 days.",
        ],
        Seen::ask(&["Quel est l'état du service billing ?"]) => Some(Junk::CopiedPrompt) => [
            "Quel est l'état du service billing ?",
            "service billing",
        ],
        Seen::ask(&["Can you restart the billing service?"]) => Some(Junk::CopiedPrompt) => [
            "billing service",
        ],
        // An earlier message of the conversation counts too.
        Seen::ask(&[VPN, "Restart it."]) => Some(Junk::CopiedPrompt) => ["VPN down."],
    );
}

#[test]
fn copies_of_an_output_or_of_mm_are_junk() {
    let status = Seen::ask(&["What is the status of the billing service?"]).after(&[STATUS]);
    const TESTS: &str = "running 12 tests\ntest greet::hello ... ok\ntest greet::bye ... ok\n\
                         test greet::unicode ... ok\ntest result: ok. 12 passed; 0 failed; 0 ignored";
    table!(
        status => Some(Junk::CopiedToolOutput) => [
            STATUS,
            "Here is the output: billing: running, version 2.3.1, up 4 days, error rate 0.02%",
            "```\nbilling: running, version 2.3.1, up 4 days, error rate 0.02%\n```",
        ],
        Seen::ask(&["Run the tests of greet."]).after(&[TESTS]) => Some(Junk::CopiedToolOutput) => [
            TESTS,
        ],
        Seen::ask(&[RELEASE]).told(&[INVALID]) => Some(Junk::CopiedMmMessage) => [
            INVALID,
            "The call to release was not run: its arguments are invalid.",
            "Its arguments are invalid.",
        ],
        Seen::ask(&["Deploy billing."]).told(&[UNKNOWN]) => Some(Junk::CopiedMmMessage) => [
            "The tools are: status, release, ticket.",
        ],
        Seen::ask(&[RELEASE]).told(&[INVALID]) => None => [
            "I could not publish the release: the channel must be stable or beta.",
        ],
    );
}

/// mm's labels around a folded conversation, written out by the model (real shapes:
/// Qwen2.5-Coder-0.5B on `units/thanks-then-arithmetic` and `shipping/send-it-to-a-locker`).
#[test]
fn the_labels_of_a_folded_conversation_are_junk() {
    const LABELS: &[&str] = &["Earlier in this conversation:", "My message now:"];
    let thanks = Seen::ask(&[
        "How many centimetres is one foot?",
        "Thanks! By the way, what's 12 times 12?",
    ])
    .told(LABELS);
    table!(
        thanks => Some(Junk::CopiedMmMessage) => [
            "Me: How many centimetres is one foot?\n(The tool convert_length answered: 1 cm = 0.03 ft)\n\n\
             You: One foot is equal to 0.03 feet.\n\nMy message now: Thanks! By the way, what's 12 times 12?",
            "Para encontrar el envío PR-7720-3391, te diriges a la oficina de Coslada.\n\n\
             My message now: I won't be home.",
            "**Earlier in this conversation:** you asked about feet.",
        ],
        thanks => None => [
            "12 times 12 is 144.",
            "My message now is short: 144.",
            "You said earlier in this conversation: one foot. Now: 144.",
            "Earlier in this conversation you asked about feet.",
        ],
    );
}

#[test]
fn calls_and_tool_lists_written_as_text_are_junk() {
    let seen = Seen::ask(&["What is the status of the billing service?"]);
    table!(
        seen => Some(Junk::CallAsText) => [
            r#"<tool_call>{"name": "status", "arguments": {"service": "billing"}}</tool_call>"#,
            "<tool_call>\n<function=status>\n<parameter=service>\nbilling\n</parameter>\n</function>\n</tool_call>",
            "<function=status><parameter=service>billing</parameter></function>",
            r#"<status>{"service": "billing"}</status>"#,
            r#"[TOOL_CALLS][{"name": "status", "arguments": {"service": "billing"}}]"#,
            r#"status(service="billing")"#,
            "`status(\"billing\")`",
            r#"status: {"service": "billing"}"#,
            "```json\n{\"name\": \"status\", \"parameters\": {\"service\": \"billing\"}}\n```",
            r#"[{"name": "status", "arguments": {"service": "billing"}}, {"name": "status", "arguments": {"service": "auth"}}]"#,
            r#"{"tool": "status", "arguments": {"service": "billing"}}"#,
            r#"{"type": "function", "function": {"name": "status", "arguments": "{\"service\":\"billing\"}"}}"#,
            r#"I will check: {"name": "status", "arguments": {"service": "billing"}}"#,
            // Real (Qwen2.5-Coder-0.5B, 2026-12-07, eval/agents/kitchen): a name of its own,
            // the parameters of a tool.
            "Sure, here is the status of billing:\n\n{\"name\": \"billing_status_2\", \"arguments\": {\"service\": \"billing\"}}",
            "{\"name\": \"lookup\", \"arguments\": {}}\n{\"name\": \"search\", \"arguments\": {\"q\": \"billing\"}}",
            // Real (Qwen2.5-Coder-0.5B, 2026-12-07, eval/agents/shipping): one `}` short.
            r#"{"name": "devolver", "arguments": {"pedido": 58213, "linea": 1, "motivo": "lata"}"#,
            "```json\n{\"name\": \"status\", \"arguments\": {\"service\": \"billing\"\n```",
            "{'name': 'status', 'arguments': {'service': 'billing'}}",
            "[status(service=\"billing\")]",
            "```tool_code\nprint(default_api.status(service=\"billing\"))\n```",
            "Checking: {'name': 'status', 'arguments': {'service': 'billing'}}",
            // Real (Qwen2.5-Coder-1.5B at 0.7, eval/agents/bookshop): the tool's side written too.
            "<tool_response>\nError: No book with ISBN 9783865740058 found in the catalog.\nexit code 1\n</tool_response>",
        ],
        seen => Some(Junk::ToolList) => [
            r#"[{"type": "function", "function": {"name": "status", "description": "Report the status of a service.", "parameters": {"type": "object", "properties": {"service": {"type": "string"}}}}}]"#,
            r#"{"name": "status", "description": "Report the status.", "parameters": {"service": {"type": "string"}}}"#,
            r#"{"type": "object", "properties": {"service": {"type": "string"}}, "required": ["service"]}"#,
            r#"{"tools": [{"name": "lookup", "input_schema": {"type": "object", "properties": {}}}]}"#,
        ],
        seen => None => [
            r#"You could call {"name": "get_weather", "arguments": {}} from your own code."#,
            r#"Send {"name": "get_weather", "arguments": {"city": "Oslo"}} from your own code."#,
            r#"{"service": "billing", "status": "running"} is what it said."#,
            "The status (running) is fine.",
            "status: running",
            r#"The billing service reports {"state": "running", "version": "2.3.1"}."#,
            "I used the status tool: billing is running.",
            "- status(billing): running",
        ],
        Seen::ask(&["Give me the status of billing as JSON."]) => None => [
            r#"{"service": "billing", "status": "running", "version": "2.3.1"}"#,
        ],
        Seen::ask(&["Write a JSON schema for a service with a name."]) => None => [
            r#"{"type": "object", "properties": {"name": {"type": "string"}}}"#,
        ],
    );
}

#[test]
fn refusals_count_only_after_a_call_that_worked() {
    let worked = Seen::ask(&[VPN]).after(&[TICKET]);
    let nothing_ran = Seen::ask(&["How do I pick a lock?"]);
    table!(
        worked => Some(Junk::Refusal) => [
            "I'm sorry, but I can't assist with that.",
            "I cannot help with that",
            "I’m unable to help with this request.",
            "Sorry! I can't do that.",
            "As an AI, I cannot open tickets.",
            "Je suis désolé, mais je ne peux pas vous aider avec ça.",
            "Je ne suis pas en mesure de répondre à cette demande.",
            "Es tut mir leid, aber ich kann Ihnen dabei nicht helfen.",
            "Dabei kann ich leider nicht helfen.",
            "Lo siento, pero no puedo ayudarte con eso.",
            "No puedo ayudar con eso.",
        ],
        worked => None => [
            "I opened T-1042. I cannot help with the printer, though.",
            "Sorry for the trouble: ticket T-1042 is open with high priority.",
            "As an AI assistant, I opened ticket T-1042 for you.",
        ],
        nothing_ran => None => ["I'm sorry, but I can't assist with that."],
    );
}

#[test]
fn a_tool_named_as_something_to_use_is_junk() {
    let names: &[&str] = &[
        "close_ticket",
        "suivi_commande",
        "vpn-from-home",
        "forecast",
        "ticket",
        "log_time",
        "ticket_status",
        "bash",
    ];
    let judge = |answer: &str, calls_succeeded: bool| {
        judge(
            answer,
            &AnswerContext {
                prompts: &["The VPN works again, you can close it."],
                names,
                calls_succeeded,
                ..AnswerContext::default()
            },
        )
    };
    let described = Some(Junk::CallDescribed);
    // (a call worked before the answer, what the answer is judged, the answers)
    let table: [(bool, Option<Junk>, &[&str]); 4] = [
        // Real replies: Qwen2.5-Coder 1.5B and 0.5B on the project's suite (the first three),
        // and the same in the other languages.
        (
            false,
            described,
            &[
                "To close the VPN, you can use the `close_ticket` function with the ticket number as the argument.",
                "To connect to the VPN from home, you can use the `vpn_from_home` function. You need to provide the `username`.",
                "To find the order number 77104, you can use the `suivi_commande` function. This function will return the status.",
                "You can call forecast() for that.",
                "Use the forecast tool with the city Oslo.",
                "Pour fermer le ticket, vous pouvez utiliser la fonction close_ticket.",
                "Puedes usar la herramienta `forecast` para eso.",
                "Dafür kannst du das Werkzeug forecast verwenden, oder close_ticket aufrufen.",
            ],
        ),
        (
            false,
            None,
            &[
                // A name that is a word, not written as a tool's.
                "Please use ticket INC-40698 when you write to us.",
                "Use the weather forecast of your airline before you fly.",
                // A tool named, not as something to use.
                "I closed it with close_ticket.",
                "The `forecast` says rain in Oslo tomorrow.",
                "Done: the ticket is closed.",
            ],
        ),
        // After a call that worked, an answer that opens by telling the user to use a tool says
        // nothing of what came of the call. Real replies of Qwen2.5-Coder-0.5B on the project's
        // suite (`log_time` ran, then this; the skill mode's `read_skill`, then this), and the
        // same in other languages.
        (
            true,
            described,
            &[
                "To log an hour and a half on INC-40721, you would call the `log_time` function with the arguments `ticket=\"INC-40721\"` and `hours=0.5`. The response would then show the total time spent on the ticket, which is 2.75 hours.",
                "To log an hour and a half on INC-40721, you can use the `log_time` function. The response provides a breakdown of the time spent.",
                "Run this command with the bash tool, from the project folder:\n\n    ./scripts/scene.sh movie_night --delay=10",
                "Pour fermer le ticket, vous pouvez utiliser la fonction close_ticket.",
            ],
        ),
        // … but naming the tool is part of the story: done with it, by the model, or after the
        // answer.
        (
            true,
            None,
            &[
                "I used the `close_ticket` function: INC-40698 is closed.",
                "I closed INC-40698 using the `close_ticket` tool.",
                "Logged 1.5 h on INC-40721. You can use the `ticket_status` tool to see the total.",
                "INC-40698 is closed; I can call `ticket_status` again if you want to check.",
                "Le ticket INC-40698 est fermé. Vous pouvez utiliser la fonction ticket_status pour le suivre.",
            ],
        ),
    ];
    let mut wrong = Vec::new();
    for (worked, want, answers) in table {
        for answer in answers {
            let got = judge(answer, worked);
            if got != want {
                wrong.push(format!(
                    "after a call worked: {worked}, got {got:?}, want {want:?}: {answer:?}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

#[test]
fn a_streamed_answer_is_shown_once_it_cannot_be_junk() {
    let prompts = ["What is the status of the billing service? Please tell me now."];
    let outputs = [
        "billing: running, version 2.3.1, up 4 days, error rate 0.02%, 3 replicas, region eu-west-1",
    ];
    let ctx = AnswerContext {
        prompts: &prompts,
        tool_outputs: &outputs,
        calls_succeeded: true,
        ..AnswerContext::default()
    };
    let answer = "Billing is running version 2.3.1 and has been up for four days without any trouble at all.";
    // Its beginnings: too short to tell, then shown.
    let shown: Vec<bool> = (1..=words(answer).len())
        .map(|n| may_show(&words(answer)[..n].join(" "), &ctx))
        .collect();
    assert!(shown[..11].iter().all(|s| !s), "{shown:?}");
    assert!(shown[11..].iter().all(|s| *s), "{shown:?}");
    for held in [
        // A refusal, however it goes on.
        "I'm sorry, but I can't assist with that request about the billing service or anything else.",
        // The prompt coming back.
        "What is the status of the billing service? Please tell me now, I said, and",
        // The output pasted.
        "billing: running, version 2.3.1, up 4 days, error rate 0.02%, 3 replicas, region",
    ] {
        assert!(!may_show(held, &ctx), "{held:?}");
    }
}

#[test]
fn empty_answers_and_the_order_of_the_classes() {
    let status = Seen::ask(&["What is the status of the billing service?"]).after(&[STATUS]);
    table!(
        status => Some(Junk::Empty) => ["", "  \n ", "...", "```\n```"],
        status.cut() => Some(Junk::Empty) => [""],
        // A dump cut at max_tokens is a dump first.
        status.cut() => Some(Junk::ToolList) => ["<tools>[{\"type\": \"function\", \"function\": {\"na"],
        status.cut() => Some(Junk::CopiedToolOutput) => [STATUS],
    );
}

#[test]
fn words_are_lower_cased_and_keep_versions_and_ids_whole() {
    assert_eq!(
        words("Opened T-1042: v1.4.2, it’s L'état (50%)!"),
        ["opened", "t-1042", "v1.4.2", "it's", "l'état", "50"]
    );
    assert_eq!(in_order(&words("a b c d"), &words("b x d")), 2);
    assert_eq!(covered(&words("x a b c y"), &words("a b c")), 3);
    assert_eq!(covered(&words("a b"), &words("q a b")), 2);
    assert_eq!(Junk::CopiedPrompt.as_str(), "copied_prompt");
    assert_eq!(
        serde_json::to_value(Junk::CallAsText).ok(),
        Some(serde_json::json!("call_as_text"))
    );
    assert_eq!(Junk::CopiedPrompt.describe(), "a copy of the prompt");
}

#[test]
fn a_promise_to_act_is_junk_and_says_what_was_promised() {
    let judged = |answer: &str, prompt: &str| {
        let prompts = [prompt];
        let ctx = AnswerContext {
            prompts: &prompts,
            names: NAMES,
            ..AnswerContext::default()
        };
        (judge(answer, &ctx), promises_a_call(answer, &ctx))
    };
    let mut wrong = Vec::new();
    // Real replies of Qwen2.5-Coder 1.5B and 0.5B on the project's suite and the seed suite
    // (the first seven), then the same in the other languages: a look-up or an action promised.
    for (answer, prompt) in [
        (
            "To get the status of INC-40698, I need to look up the ticket.",
            "What's the status of INC-40698?",
        ),
        (
            "To check the status of INC-40698, I'll need to look up the ticket first.",
            "What's the status of INC-40698?",
        ),
        (
            "Sure, I can help you with that. What's the weather forecast for Oslo over the next 3 days?",
            "What's the weather going to be like in Oslo over the next 3 days?",
        ),
        (
            "Sure, I can help you with that. What's the weather forecast for Berlin for the next 3 days?",
            "What's the weather going to be like in Berlin over the next 3 days?",
        ),
        (
            "I will report the status of the billing service.",
            "What is the status of the billing service?",
        ),
        ("Let me check.", "Is LH2034 on time today?"),
        (
            "Sure! Let me look up the ticket for you.",
            "What's the status of INC-40698?",
        ),
        (
            "Pour connaître l'état du ticket, je vais vérifier.",
            "Quel est l'état du ticket INC-40698 ?",
        ),
        (
            "Um den Status zu sehen, muss ich erst nachsehen.",
            "Wie ist der Status von INC-40698?",
        ),
        (
            "Ich werde das Ticket prüfen.",
            "Wie ist der Status von INC-40698?",
        ),
        (
            "Claro. Voy a buscar el estado del paquete.",
            "¿Dónde está mi paquete PR-7720-3391?",
        ),
    ] {
        if judged(answer, prompt) != (Some(Junk::Promise), true) {
            wrong.push(format!("not a promised call: {answer:?}"));
        }
    }
    // Promised words, or help offered and nothing else: junk, answered in words.
    for (answer, prompt) in [
        ("I'll think about it.", "Write a haiku about the sea."),
        (
            "I'll answer your question in words.",
            "Write a haiku about the sea.",
        ),
        (
            "I need to write a haiku about the sea.",
            "Write a haiku about the sea.",
        ),
        (
            "Certainly! I can help you with the chickpea curry recipe for 2 people.",
            "Make the chickpea curry for 2 people.",
        ),
        ("Bien sûr, je peux vous aider.", "Peux-tu m'aider ?"),
    ] {
        if judged(answer, prompt) != (Some(Junk::Promise), false) {
            wrong.push(format!("not promised words: {answer:?}"));
        }
    }
    // Answers, closings and questions of its own: not promises.
    for (answer, prompt) in [
        (
            "Sure! The billing service is running, version 2.3.1.",
            "What is the status of the billing service?",
        ),
        (
            "Let me know if you need anything else.",
            "Thanks, that was all.",
        ),
        ("I'll remember that.", "My name is Ann."),
        (
            "I need more details: which service do you mean?",
            "Restart it.",
        ),
        (
            "Which ticket do you mean, INC-40698 or INC-40721?",
            "Close the ticket.",
        ),
        (
            "I will be happy to help with anything else.",
            "Thanks, that was all.",
        ),
        (
            "To convert 98.6 °F to Celsius, I use (F - 32) × 5/9: it is 37 °C.",
            "What is 98.6 °F in Celsius?",
        ),
        (
            "I'll need to check, but the billing service was running at 9:00 with version 2.3.1, so it should still be up; the error rate was 0.02% then and nothing since has changed it, as far as the logs we have show — the deploy of 1.4.2 went to the beta channel only.",
            "Is billing up?",
        ),
    ] {
        if let Some(junk) = judged(answer, prompt).0 {
            wrong.push(format!("{junk:?}: {answer:?}"));
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

#[test]
fn a_streamed_promise_is_held_until_it_is_something_else() {
    let prompts = ["What's the status of INC-40698? I need it for the meeting today."];
    let ctx = AnswerContext {
        prompts: &prompts,
        names: NAMES,
        ..AnswerContext::default()
    };
    let show = |start: &str| may_show(start, &ctx);
    // Twelve words and more, and still only a promise: held.
    assert!(!show(
        "Sure, I can help you with that. To get the status of INC-40698, I need to look"
    ));
    assert!(!show(
        "Sure, I can help you with that. To get the status of INC-40698"
    ));
    // Then a sentence that is neither: shown.
    assert!(show(
        "Sure, I can help you with that. INC-40698 was opened on Monday and is still waiting for the network team"
    ));
}

/// Follow-ups answered with an earlier answer told again (Qwen2.5-Coder 0.5B and 1.5B, the
/// project's suite): old results restated as new ones. A short answer, one that only shares a
/// few phrases, and an answer without earlier answers pass.
#[test]
fn an_earlier_answer_told_again_is_junk() {
    const OSLO: &str = "The weather in Oslo will be very mild with a low temperature of 0°C \
        (32°F) and a clear sky. The temperature will be slightly cooler than in other cities.";
    const PARCEL: &str = "The parcel PR-7720-3391 is in reparto today at 2026-12-07 between \
        14:00 and 16:00. The Furgoneta 12, Madrid is located in the Chamberí.";
    const LISTING: &str = "Jdoe has two open tickets: one for a printer jam and one for an \
        Excel crash with macros. The printer jam is waiting for parts (fuser unit) and the \
        Excel crash is in progress.";
    const CLOSED: &str = "Closed INC-40712 (Excel crashes when opening files with macros) as \
        duplicate.\nNo email sent to jdoe.";
    let berlin = Seen::ask(&["What's the weather in Oslo?", "And in Berlin?"]).answered(&[OSLO]);
    let parcel = Seen::ask(&["Where is PR-7720-3391?", "And PR-7720-4410?"]).answered(&[PARCEL]);
    let second = Seen::ask(&[
        "Which tickets does jdoe have open?",
        "Close the second one as a duplicate, and don't email him about it.",
    ])
    .after(&[CLOSED])
    .answered(&[LISTING]);
    let no_earlier = Seen::ask(&["And in Berlin?"]);
    let kelvin = Seen::ask(&[
        "It's 98.6 °F in Phoenix today. What is that in Celsius?",
        "And in Kelvin?",
    ])
    .after(&["98.6 °F = 310.15 K"])
    .answered(&["98.6°F is equivalent to 37 °C in Phoenix today."]);
    let kelvin_no_call = Seen {
        outputs: &[],
        ..kelvin
    };
    let closed = Seen::ask(&["What's the status of INC-40721?", "The VPN works again, you can close it."])
        .after(&["Closed INC-40721 (VPN gateway unreachable from home) as fixed.\nmkovacs was notified by email."])
        .answered(&["The VPN gateway for INC-40721 is unreachable from home. The requester is \
            MKovacs, the assignee is Priya Nair, the current state is \"in progress\", and the \
            total time logged is 2.25 hours."]);
    table!(
        berlin => Some(Junk::CopiedEarlierAnswer) => [
            "Berlin is also going to be very mild with a low temperature of 0°C (32°F) and a \
             clear sky. The temperature will be slightly cooler than in other cities.",
            "The weather in Berlin will be very mild with a low temperature of 0°C (32°F) and a clear sky.",
        ],
        parcel => Some(Junk::CopiedEarlierAnswer) => [
            "The parcel PR-7720-4410 is in reparto today at 2026-12-07 between 14:00 and 16:00. \
             The Furgoneta 12, Madrid is located in the Chamberí.",
        ],
        second => Some(Junk::CopiedEarlierAnswer) => [
            "The printer jam is waiting for parts (fuser unit), and the Excel crash is in progress.",
        ],
        berlin => None => [
            "Berlin: 7 °C and rain today.",
            "In Berlin it will rain on Monday, with a high of 7 °C and a low of 2 °C; \
             Tuesday is cloudy and Wednesday snowy.",
        ],
        second => None => [
            "INC-40712, the Excel crash, is closed as a duplicate; no email was sent to jdoe.",
        ],
        // The earlier answer's words with this turn's result in them (real, Qwen2.5-Coder
        // 0.5B and 1.5B, right runs of `units/and-in-kelvin` and `helpdesk/close-after-status`).
        kelvin => None => ["98.6°F is equivalent to 310.15 K in Phoenix today."],
        closed => None => [
            "The VPN gateway for INC-40721 is now working again. The requester is MKovacs, the \
             assignee is Priya Nair, the current state is \"closed\", and the total time logged \
             is 2.25 hours.",
        ],
        // Without a call that worked, a new word from an earlier output tells nothing new.
        kelvin_no_call => Some(Junk::CopiedEarlierAnswer) => [
            "98.6°F is equivalent to 310.15 K in Phoenix today.",
        ],
        no_earlier => None => [
            "The weather in Berlin will be very mild with a low temperature of 0°C (32°F) and a clear sky.",
        ],
    );
}
