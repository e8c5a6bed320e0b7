//! The little [`judge`](super::judge) needs to know about English, French, German and Spanish:
//! which prompts offer their own answer (so that a few of their words may be one), what a
//! refusal says, and how a tool is named as something to use.

use std::sync::LazyLock;

use regex::RegexSet;

use super::words;

/// What kind of message a prompt is, as far as a bare fragment of it is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct PromptShape {
    /// A few of its words can be a real answer: it asks a yes/no question ("Is billing
    /// running?" — "Billing running"), offers a choice ("… or …"), or asks whether.
    pub offers_answer: bool,
    /// It asks an open question (what, where, how, …): its answer is never only its words.
    pub open_question: bool,
}

/// Question words (after lower-casing). German `was` is handled apart: English has it too.
const OPEN: &[&str] = &[
    // English
    "what",
    "what's",
    "which",
    "who",
    "who's",
    "whom",
    "whose",
    "when",
    "where",
    "where's",
    "why",
    "how",
    "how's", // French
    "quoi",
    "quel",
    "quelle",
    "quels",
    "quelles",
    "qui",
    "quand",
    "où",
    "pourquoi",
    "comment",
    "combien",
    "lequel",
    "laquelle",
    "lesquels",
    "lesquelles",
    "qu'est-ce",
    "qu'est",
    // German
    "wer",
    "wen",
    "wem",
    "wessen",
    "welche",
    "welcher",
    "welches",
    "welchen",
    "welchem",
    "wann",
    "wo",
    "warum",
    "wie",
    "wieso",
    "weshalb",
    "woher",
    "wohin",
    "womit",
    "wozu",
    "wofür",
    "woran",
    "worum",
    "wieviel", // Spanish
    "qué",
    "cuál",
    "cuáles",
    "quién",
    "quiénes",
    "cuándo",
    "dónde",
    "adónde",
    "cómo",
    "cuánto",
    "cuánta",
    "cuántos",
    "cuántas",
];

/// After English `was`, a subject: "Was the deploy fine?" is a yes/no question, German "Was
/// ist …?" an open one.
const ENGLISH_AFTER_WAS: &[&str] = &[
    "the", "it", "there", "he", "she", "this", "that", "i", "a", "an", "my", "your", "our",
    "their", "his", "her", "its", "you", "we", "they",
];

/// Words that offer a choice.
const CHOICE: &[&str] = &["or", "ou", "oder", "o", "u"];

/// Words that ask whether something holds, inside a sentence ("Check if the VPN is up.").
const WHETHER: &[&str] = &["whether", "if", "si", "ob"];

/// A question that starts like this is a request ("Can you restart billing?"), not a yes/no
/// question.
const REQUESTS: &[&[&str]] = &[
    &["can", "you"],
    &["could", "you"],
    &["would", "you"],
    &["will", "you"],
    &["please"],
    &["peux-tu"],
    &["pouvez-vous"],
    &["pourrais-tu"],
    &["pourriez-vous"],
    &["tu", "peux"],
    &["vous", "pouvez"],
    &["kannst", "du"],
    &["können", "sie"],
    &["könntest", "du"],
    &["könnten", "sie"],
    &["puedes"],
    &["podrías"],
    &["puede", "usted"],
    &["podría", "usted"],
    &["me", "puedes"],
];

pub(super) fn prompt_shape(prompt: &str) -> PromptShape {
    let all = words(prompt);
    let mut shape = PromptShape {
        offers_answer: all
            .iter()
            .any(|w| CHOICE.contains(&w.as_str()) || WHETHER.contains(&w.as_str())),
        open_question: false,
    };
    for question in questions(prompt) {
        let words = words(question);
        if is_open(&words) {
            shape.open_question = true;
        } else if !REQUESTS
            .iter()
            .any(|start| words.len() >= start.len() && words[..start.len()] == **start)
        {
            shape.offers_answer = true;
        }
    }
    shape
}

/// The sentences of `text` that end with a question mark.
fn questions(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        // A full stop ends a sentence only before a space or the end (not inside `1.4.2`).
        let ends = match c {
            '?' | '？' | '!' | '\n' | '¿' | '¡' => true,
            '.' => chars.peek().is_none_or(|(_, n)| n.is_whitespace()),
            _ => false,
        };
        if ends {
            if matches!(c, '?' | '？') {
                out.push(&text[start..at]);
            }
            start = at + c.len_utf8();
        }
    }
    out
}

fn is_open(words: &[String]) -> bool {
    let first_que = words
        .first()
        .is_some_and(|w| w == "que" || w.starts_with("qu'"));
    first_que
        || words.iter().enumerate().any(|(i, w)| {
            OPEN.contains(&w.as_str())
                || (w == "was"
                    && !words
                        .get(i + 1)
                        .is_some_and(|next| ENGLISH_AFTER_WAS.contains(&next.as_str())))
        })
}

/// Saying one cannot help, in the first sentence (see [`refusal`]). Matched on the lower-cased
/// text with straight apostrophes and single spaces.
const REFUSALS: &[&str] = &[
    // English: "I'm sorry, but I can't assist with that.", "I cannot help with that."
    r"\b(?:i|we)(?: really| currently| unfortunately)?(?: can't| cannot| can not| won't| will not| am unable to|'m unable to| are unable to|'re unable to| am not able to|'m not able to)(?: really| currently)? (?:help|assist|comply|fulfil|fulfill|provide|support|answer|do that|do this|do it|be of help)\b",
    r"\bsorry,? but (?:i|we)(?: can't| cannot| can not| am unable| 'm unable|'m unable| won't)\b",
    r"^as an ai(?: language model| assistant)?,? (?:i|we)(?: can't| cannot| can not| am unable| 'm unable|'m unable| am not able|'m not able| won't)\b",
    // French: "Je suis désolé, mais je ne peux pas vous aider avec ça."
    r"\bje ne (?:peux|pourrai|pourrais) pas (?:vous |t'|te )?(?:aider|assister|répondre|faire (?:ça|cela)|le faire)",
    r"\bje ne suis pas en mesure de\b",
    r"\bdésolée?,? (?:mais )?je ne (?:peux|pourrai|pourrais|suis) pas\b",
    // German: "Es tut mir leid, aber ich kann Ihnen dabei nicht helfen."
    r"\b(?:ich kann|kann ich)(?: ihnen| dir| euch)?(?: dabei| damit| hier| hierbei| das| leider)*(?: leider)? nicht(?: weiter)? (?:helfen|weiterhelfen|tun|machen|erledigen|beantworten|unterstützen)\b",
    r"\bich bin (?:leider )?nicht in der lage\b",
    r"\btut mir leid,? aber (?:ich kann|kann ich|das kann ich)\b",
    // Spanish: "Lo siento, pero no puedo ayudarte con eso."
    r"\bno (?:puedo|podré|podría) (?:ayudar(?:te|le|les)?|asistir(?:te|le)?|hacer eso|responder|cumplir)",
    r"\bno (?:estoy|me es posible) en condiciones\b",
    r"\blo siento,? (?:pero )?no (?:puedo|podré)\b",
];

/// An answer this long is more than a refusal, whatever its first sentence says.
const MAX_REFUSAL_WORDS: usize = 40;

static REFUSAL_SET: LazyLock<Option<RegexSet>> = LazyLock::new(|| RegexSet::new(REFUSALS).ok());

/// The answer is a refusal: short, and its first sentence (the first two when the first
/// apologises: "Sorry! I can't do that.") says that the model cannot help.
pub(super) fn refusal(answer: &str) -> bool {
    if words(answer).len() > MAX_REFUSAL_WORDS {
        return false;
    }
    let Some(set) = REFUSAL_SET.as_ref() else {
        return false;
    };
    let text: String = answer
        .chars()
        .map(|c| match c {
            '\u{2019}' | '\u{2018}' | '\u{02bc}' => '\'',
            c => c,
        })
        .collect::<String>()
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let first = first_sentences(&text);
    set.is_match(first)
}

/// Words of an apology, which may stand as a sentence of their own before the refusal
/// ("Sorry! I can't do that.").
const APOLOGIES: &[&str] = &[
    "sorry",
    "apologies",
    "apologize",
    "apologise",
    "unfortunately",
    "désolé",
    "désolée",
    "pardon",
    "leid",
    "leider",
    "entschuldigung",
    "siento",
    "lamentablemente",
    "perdón",
    "disculpa",
    "disculpe",
];

/// The first sentence, or the first two when the first apologises.
fn first_sentences(text: &str) -> &str {
    let end_of = |from: usize| {
        text[from..]
            .char_indices()
            .find(|&(i, c)| {
                matches!(c, '.' | '!' | '?' | '\n')
                    && text[from + i + c.len_utf8()..]
                        .chars()
                        .next()
                        .is_none_or(char::is_whitespace)
            })
            .map_or(text.len(), |(i, c)| from + i + c.len_utf8())
    };
    let first = end_of(0);
    let apology = words(&text[..first])
        .iter()
        .any(|w| APOLOGIES.contains(&w.as_str()));
    if apology && first < text.len() {
        &text[..end_of(first)]
    } else {
        &text[..first]
    }
}

/// Verbs of using a tool (after lower-casing), in the forms small models write: "you can use
/// the `close_ticket` function", "puedes usar la herramienta `forecast`".
const USE_VERBS: &[&str] = &[
    // English
    "use",
    "using",
    "call",
    "calling",
    "invoke",
    "run", // French
    "utiliser",
    "utilisez",
    "utilise",
    "utilisant",
    "appeler",
    "appelez",
    "appelle", // German
    "verwenden",
    "verwende",
    "verwendest",
    "benutzen",
    "benutze",
    "nutzen",
    "nutze",
    "aufrufen",
    // Spanish
    "usar",
    "usa",
    "usando",
    "utilizar",
    "utiliza",
    "utilizando",
    "llamar",
    "llama",
];

/// Words that say a name is a tool's: "the `forecast` function", "l'outil forecast".
const TOOL_WORDS: &[&str] = &[
    "function",
    "tool",
    "command",
    "fonction",
    "outil",
    "l'outil",
    "commande",
    "funktion",
    "werkzeug",
    "befehl",
    "función",
    "funcion",
    "herramienta",
    "comando",
];

/// How many words may stand between the verb and the tool's name ("use the `X`").
const USE_REACH: usize = 4;

/// The tool or skill `words` (an answer's, see [`words`]) name as something to use: a verb of
/// [`USE_VERBS`] at most [`USE_REACH`] words before a name of `names` (`-` and `_` alike)
/// written as a tool's — an identifier (`close_ticket`, `vpn-from-home`), in backticks, before `(`, or
/// next to a word of [`TOOL_WORDS`] — so that "use this ticket number" is not a call of
/// `ticket`.
pub(crate) fn names_a_tool_to_use<'n>(
    answer: &str,
    words: &[String],
    names: &[&'n str],
) -> Option<&'n str> {
    tool_to_use(answer, words, names, |_| true)
}

/// Forms of a verb of use that say how something was done, not that it is to be done: "I
/// closed it using the `close_ticket` tool."
const MEANS: &[&str] = &["using", "calling", "utilisant", "usando", "utilizando"];

/// Words that make the model the one who uses the tool ("I can use `ticket_status` again").
const FIRST_PERSON: &[&str] = &[
    "i", "i'll", "i've", "i'd", "we", "we'll", "je", "j'ai", "nous", "ich", "wir", "yo", "nosotros",
];

/// After a call that worked: the answer's first sentence tells the user to use a tool — "To
/// log an hour and a half on INC-40721, you would call the `log_time` function with …", "Run
/// this command with the bash tool" — instead of saying what came of the call. A tool named
/// after the first sentence ("INC-40733 is open. You can use `ticket_status` to follow it."),
/// as the means ("using"), or by the model as its own to use ("I can call …") is not.
pub(crate) fn tells_to_use_a_tool(answer: &str, names: &[&str]) -> bool {
    let Some(first) = sentences(answer)
        .into_iter()
        .find(|s| s.chars().any(char::is_alphanumeric))
    else {
        return false;
    };
    let words = words(first);
    tool_to_use(first, &words, names, |verb| {
        !MEANS.contains(&words[verb].as_str())
            && !words[..verb]
                .iter()
                .any(|w| FIRST_PERSON.contains(&w.as_str()))
    })
    .is_some()
}

/// [`names_a_tool_to_use`], with the verbs of use limited to those at an index `verb_counts`
/// accepts.
fn tool_to_use<'n>(
    answer: &str,
    words: &[String],
    names: &[&'n str],
    verb_counts: impl Fn(usize) -> bool,
) -> Option<&'n str> {
    let fold = |c: char| match c {
        '-' => '_',
        c => c.to_ascii_lowercase(),
    };
    let same = |word: &str, name: &str| word.chars().map(fold).eq(name.chars().map(fold));
    let lower: String = answer.chars().map(fold).collect();
    words.iter().enumerate().find_map(|(i, word)| {
        let name = names.iter().find(|n| !n.is_empty() && same(word, n))?;
        let folded: String = name.chars().map(fold).collect();
        let tool_word = |at: Option<&String>| at.is_some_and(|w| TOOL_WORDS.contains(&w.as_str()));
        let as_a_tool = folded.contains('_')
            || lower.contains(&format!("`{folded}`"))
            || lower.contains(&format!("{folded}("))
            || tool_word(words.get(i + 1))
            || tool_word(i.checked_sub(1).and_then(|j| words.get(j)));
        let used = (i.saturating_sub(USE_REACH + 1)..i)
            .any(|j| USE_VERBS.contains(&words[j].as_str()) && verb_counts(j));
        (as_a_tool && used).then_some(*name)
    })
}

/// Sentences that only offer help ("Sure, I can help you with that."), matched whole on the
/// lower-cased sentence with straight apostrophes and single spaces, its end punctuation
/// removed. They carry no answer; what follows them decides.
const OFFERS: &[&str] = &[
    r"^(?:(?:sure|of course|certainly|absolutely|okay|ok|yes|great|alright|all right)[,!.]?)?(?: ?(?:i|we) (?:can|could|will|'ll|would be (?:happy|glad) to|'d be (?:happy|glad) to|am (?:happy|glad) to|'m (?:happy|glad) to) (?:help|assist|do that|do this|do it)(?: you)?(?: with (?:that|this|it|your request|the [^,]{1,40}))?)?$",
    r"^(?:(?:bien sûr|certainement|d'accord|oui)[,!.]?)?(?: ?je (?:peux|vais|serais ravie? de) (?:vous |t')?(?:aider|le faire)(?: avec (?:ça|cela))?)?$",
    r"^(?:(?:natürlich|gerne|gern|klar|sicher)[,!.]?)?(?: ?(?:ich kann|kann ich|ich helfe|helfe ich)(?: ihnen| dir)?(?: dabei| damit| gerne| gern)* ?(?:helfen)?)?$",
    r"^(?:(?:claro|por supuesto|desde luego|sí)[,!.]?)?(?: ?(?:puedo|te puedo|le puedo) (?:ayudarte|ayudarle|ayudar)(?: con (?:eso|esto))?)?$",
];

/// A sentence that only says what the model is about to do: "I need to look up the ticket.",
/// "To get the status of INC-40698, I need to look up the ticket.", "Let me check.", "I'll
/// think about it." (lower-cased, as [`OFFERS`]). The named group `verb` is the first word of
/// what it means to do.
const PROMISES: &[&str] = &[
    r"^(?:(?:to|in order to) [^,]{1,80}, )?(?:first,? )?(?:(?:i|we)(?: first)?(?:'ll| will| shall| need to| have to| must|'d need to| would need to| am going to|'m going to| are going to|'re going to)(?: first| now| need to| have to)?|let me(?: first| now)?|let's) (?:do my best to |try to |quickly )?(?P<verb>[a-z]+)\b",
    r"^(?:pour [^,]{1,80}, )?(?:je vais|je dois|il me faut|laissez-moi|laisse-moi|permettez-moi de|permets-moi de) (?:d'abord )?(?P<verb>[a-zéèêàâîôûç]+)\b",
    // German puts the verb last: "Ich werde das Ticket prüfen.", "Dafür muss ich erst nachsehen."
    r"^(?:um [^,]{1,80}, |dafür |dazu |zuerst |erst )?(?:ich werde|ich muss|muss ich|werde ich|lass mich|lassen sie mich|ich sehe|ich schaue)\b(?:.* )?(?P<verb>[a-zäöüß]+)$",
    r"^(?:para [^,]{1,80}, )?(?:voy a|tengo que|necesito|déjame|permíteme|primero voy a) (?:primero )?(?P<verb>[a-záéíóúñ]+)\b",
];

/// Verbs of a promise to look something up or act (the first word after "I need to", "let
/// me", "je vais", "ich werde", "voy a", …): the call the model meant to make.
const ACTING: &[&str] = &[
    // English
    "look",
    "check",
    "find",
    "fetch",
    "get",
    "retrieve",
    "search",
    "query",
    "consult",
    "verify",
    "see",
    "use",
    "call",
    "run",
    "open",
    "create",
    "book",
    "reserve",
    "set",
    "cancel",
    "close",
    "restart",
    "convert",
    "calculate",
    "compute",
    "report",
    "send",
    "schedule",
    "update",
    "add",
    "pull",
    "access",
    "contact", // French
    "vérifier",
    "chercher",
    "rechercher",
    "consulter",
    "regarder",
    "trouver",
    "obtenir",
    "ouvrir",
    "réserver",
    "annuler",
    "convertir",
    "calculer",
    "utiliser",
    "appeler",
    "fermer",
    // German
    "prüfen",
    "überprüfen",
    "nachsehen",
    "nachschauen",
    "suchen",
    "finden",
    "abrufen",
    "holen",
    "buchen",
    "reservieren",
    "stornieren",
    "umrechnen",
    "berechnen",
    "verwenden",
    "nutzen",
    "öffnen",
    "nach",
    "schließen", // Spanish
    "comprobar",
    "verificar",
    "buscar",
    "consultar",
    "revisar",
    "obtener",
    "mirar",
    "reservar",
    "cancelar",
    "convertir",
    "calcular",
    "usar",
    "abrir",
    "cerrar",
];

/// Verbs of a promise of words ("I'll think about it.", "I need to write a haiku"): the model
/// is asked for the answer it promised. A sentence with a verb in neither list ("I'll
/// remember that.", "Let me know if …") is not a promise.
const ANSWERING: &[&str] = &[
    "answer",
    "respond",
    "reply",
    "write",
    "think",
    "explain",
    "tell",
    "provide",
    "give",
    "try",
    "do",
    "répondre",
    "réfléchir",
    "écrire",
    "expliquer",
    "antworten",
    "nachdenken",
    "schreiben",
    "erklären",
    "responder",
    "pensar",
    "escribir",
    "explicar",
];

/// The first words of a [`PROMISES`] sentence.
const PROMISE_STARTS: &[&str] = &[
    "to",
    "in",
    "first",
    "first,",
    "i",
    "i'll",
    "i'd",
    "i'm",
    "let",
    "let's",
    "we",
    "we'll",
    "pour",
    "je",
    "laissez-moi",
    "laisse-moi",
    "permettez-moi",
    "um",
    "ich",
    "dafür",
    "dazu",
    "lass",
    "lassen",
    "para",
    "voy",
    "tengo",
    "necesito",
    "déjame",
    "permíteme",
    "primero",
];

/// A sentence that is a yes: an answer, whatever comes around it.
const YES: &[&str] = &["yes", "oui", "ja", "sí", "si"];

/// An answer this long is more than a promise.
const MAX_PROMISE_WORDS: usize = 40;

static OFFER_SET: LazyLock<Option<RegexSet>> = LazyLock::new(|| RegexSet::new(OFFERS).ok());
static PROMISE_RES: LazyLock<Vec<regex::Regex>> = LazyLock::new(|| {
    PROMISES
        .iter()
        .filter_map(|p| regex::Regex::new(p).ok())
        .collect()
});

/// What a promise-only answer announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Promised {
    /// A look-up or an action ("I need to look up the ticket"), or an offer of help with the
    /// question asked back: the call the model did not make.
    Call,
    /// Words ("I'll think about it", "I need to write a haiku"), or help offered and nothing
    /// else.
    Answer,
}

/// The answer only offers help or says what the model will do: every sentence an offer
/// ([`OFFERS`]), a promise ([`PROMISES`]), or the user's question asked back (at least 70 % of
/// its words the prompt's in order, and at least half of the prompt), in at most
/// [`MAX_PROMISE_WORDS`] words. A promise to look something up or act ([`ACTING`]), or the
/// question asked back, promises a call; a promise of words ([`ANSWERING`]) or an offer alone
/// an answer.
pub(crate) fn promise(answer: &str, prompts: &[&str]) -> Option<Promised> {
    if words(answer).len() > MAX_PROMISE_WORDS {
        return None;
    }
    let (offers, promises) = (OFFER_SET.as_ref()?, &*PROMISE_RES);
    let text = answer
        .chars()
        .map(|c| match c {
            '\u{2019}' | '\u{2018}' | '\u{02bc}' => '\'',
            c => c,
        })
        .collect::<String>()
        .to_lowercase();
    let mut promised = None;
    let mut offered = false;
    for sentence in sentences(&text) {
        let bare = sentence
            .trim()
            .trim_end_matches(['.', '!', '?', '？', '…', ' '])
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if bare.is_empty() {
            continue;
        }
        if YES.contains(&bare.as_str()) {
            // "Is the billing service running? Yes.": an answer.
            return None;
        }
        if offers.is_match(&bare) {
            // "Sure." alone is no offer; "Sure, I can help you with that." is.
            offered |= bare.split_whitespace().count() > 2;
            continue;
        }
        if let Some(verb) = promises
            .iter()
            .find_map(|re| re.captures(&bare).and_then(|c| c.name("verb")))
        {
            let kind = if ACTING.contains(&verb.as_str()) {
                Promised::Call
            } else if ANSWERING.contains(&verb.as_str()) {
                Promised::Answer
            } else {
                return None;
            };
            promised = Some(promised.map_or(
                kind,
                |p: Promised| {
                    if p == Promised::Call { p } else { kind }
                },
            ));
            continue;
        }
        if sentence.trim_end().ends_with(['?', '？']) && asks_back(&bare, prompts) {
            promised = Some(Promised::Call);
            continue;
        }
        return None;
    }
    promised.or(offered.then_some(Promised::Answer))
}

/// A streamed answer's beginning may still become a [`promise`]: at most
/// [`MAX_PROMISE_WORDS`] words, every complete sentence an offer, a promise or a question, and
/// the sentence still open, if any, after one of those or itself the start of a promise.
pub(crate) fn may_become_promise(start: &str) -> bool {
    if words(start).len() > MAX_PROMISE_WORDS {
        return false;
    }
    let Some(offers) = OFFER_SET.as_ref() else {
        return false;
    };
    let text = start
        .replace(['\u{2019}', '\u{2018}', '\u{02bc}'], "'")
        .to_lowercase();
    let parts = sentences(&text);
    let mut before = false;
    for (i, sentence) in parts.iter().enumerate() {
        let bare = sentence
            .trim()
            .trim_end_matches(['.', '!', '?', '？', '…', ' '])
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let complete =
            i + 1 < parts.len() || sentence.trim_end().ends_with(['.', '!', '?', '？', '…']);
        let promised = PROMISE_RES.iter().any(|re| re.is_match(&bare));
        if complete {
            if !(bare.is_empty()
                || offers.is_match(&bare)
                || promised
                || sentence.trim_end().ends_with(['?', '？']))
            {
                return false;
            }
            before = true;
        } else {
            // Still open after an offer: it may become a promise or the question asked back,
            // unless it starts as neither ("Sure! INC-40698 was opened on …").
            let first = bare.split_whitespace().next().unwrap_or("");
            let question = is_open(&[first.to_string()]) || REQUESTS.iter().any(|r| r[0] == first);
            let short = bare.split_whitespace().count() < 3;
            let promising = PROMISE_STARTS.contains(&first);
            return promised || (before && (question || short || promising));
        }
    }
    true
}

/// The sentence is the user's question asked back.
fn asks_back(sentence: &str, prompts: &[&str]) -> bool {
    let asked = words(sentence);
    prompts.iter().any(|p| {
        let prompt = words(p);
        let common = super::in_order(&asked, &prompt);
        !asked.is_empty() && common * 10 >= asked.len() * 7 && common * 2 >= prompt.len()
    })
}

/// The sentences of `text`, each with its end punctuation.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let ends = match c {
            '?' | '？' | '!' | '\n' | '.' | '…' => {
                chars.peek().is_none_or(|(_, n)| n.is_whitespace())
            }
            _ => false,
        };
        if ends {
            let end = at + c.len_utf8();
            out.push(&text[start..end]);
            start = end;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_refusal_pattern_compiles() {
        for pattern in OFFERS.iter().chain(PROMISES) {
            assert!(regex::Regex::new(pattern).is_ok(), "{pattern}");
        }
        assert!(OFFER_SET.is_some());
        assert_eq!(PROMISE_RES.len(), PROMISES.len());
        for pattern in REFUSALS {
            assert!(regex::Regex::new(pattern).is_ok(), "{pattern}");
        }
        assert!(REFUSAL_SET.is_some());
    }

    #[test]
    fn prompt_shapes() {
        let shape = prompt_shape;
        let open = PromptShape {
            offers_answer: false,
            open_question: true,
        };
        let offers = PromptShape {
            offers_answer: true,
            open_question: false,
        };
        let statement = PromptShape::default();
        assert_eq!(shape("What is the capital of France?"), open);
        assert_eq!(shape("Quel est l'état du service billing ?"), open);
        assert_eq!(shape("Was ist der Status des Dienstes billing?"), open);
        assert_eq!(shape("¿Cuál es el estado del servicio billing?"), open);
        assert_eq!(shape("Qu'est-ce que le service billing ?"), open);
        assert_eq!(shape("Is the billing service running?"), offers);
        assert_eq!(shape("Was the deploy of 1.4.2 fine?"), offers);
        assert_eq!(shape("Est-ce que le service billing fonctionne ?"), offers);
        assert_eq!(shape("Läuft der Dienst billing?"), offers);
        assert_eq!(shape("Check if the VPN is up."), offers);
        assert_eq!(shape("Is it billing or search that is down?"), offers);
        assert_eq!(shape("Can you restart the billing service?"), statement);
        assert_eq!(
            shape("The VPN is down for everyone. Open a high priority ticket."),
            statement
        );
        assert_eq!(
            shape("Version 1.4.2 is out. What changed in version 1.4.2?"),
            open
        );
    }

    #[test]
    fn the_first_sentences() {
        assert_eq!(first_sentences("sorry! i can't. more."), "sorry! i can't.");
        assert_eq!(first_sentences("i opened t-1. i can't."), "i opened t-1.");
        assert_eq!(
            first_sentences("the service 1.4.2 runs. i can't help."),
            "the service 1.4.2 runs."
        );
        assert_eq!(first_sentences("no end"), "no end");
    }
}
