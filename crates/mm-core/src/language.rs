//! The language the user writes in, told by its function words: mm writes its own requests for
//! an answer (the answer step, [`crate::provider::asks`]) in it. Measured on Qwen2.5-Coder-1.5B
//! (docs/eval-results.md): after a call, a question in French, German or Spanish was answered in
//! English in 28 runs of 32 when mm asked for the answer in English; an English request to keep
//! the user's language kept it in 1 answer step of 38, the same request written in the user's
//! language in 35.
//!
//! Only the languages mm has its requests in are told apart; anything else, a tie, or too few
//! function words to tell (a prompt of a name and a figure) is English, mm's requests as they
//! were.

/// A language mm writes its requests for an answer in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Language {
    #[default]
    English,
    French,
    German,
    Spanish,
    Italian,
    Portuguese,
}

/// Each language's function words (and a few words of every day), none of them in two lists:
/// words of several languages (`de`, `la`, `un`, `il`, `del`, `que`, `o`, `in`, `me`, …) count for
/// none.
const WORDS: [(Language, &[&str]); 6] = [
    (
        Language::English,
        &[
            "the", "is", "are", "and", "of", "to", "what", "my", "for", "with", "how", "which",
            "was", "it", "this", "that", "do", "does", "can", "you", "i", "please", "from", "at",
            "be", "there", "when", "where", "will", "many", "much", "any", "thanks",
        ],
    ),
    (
        Language::French,
        &[
            "le", "les", "est", "et", "des", "du", "une", "pour", "avec", "quel", "quelle",
            "quels", "quelles", "mon", "ma", "mes", "je", "vous", "tu", "moi", "sur", "dans",
            "pas", "ce", "cette", "qui", "au", "aux", "combien", "où", "j", "qu", "merci", "ne",
            "elle", "nous", "mais", "être", "fait", "faire", "c", "n", "aujourd", "demain", "font",
            "veut", "signifie", "reste", "cherche", "beaucoup", "bonne", "allume", "fois", "près",
            "peu", "voudrais", "pouvez", "peux",
        ],
    ),
    (
        Language::German,
        &[
            "der", "die", "ist", "und", "ich", "mein", "meine", "meinen", "mir", "mich", "nicht",
            "ein", "eine", "einen", "mit", "für", "wie", "welche", "welcher", "welches", "bitte",
            "den", "dem", "auf", "zu", "von", "im", "wir", "sind", "wann", "wo", "noch", "auch",
            "bis", "aus", "danke", "kannst", "heute", "morgen", "welchem", "meinem", "meiner",
            "steht", "geht", "wieder", "starte", "zeit", "jahr", "bekam", "nach", "schon", "sie",
            "gibt", "viel", "viele",
        ],
    ),
    (
        Language::Spanish,
        &[
            "el", "los", "las", "y", "mis", "qué", "cuál", "cuáles", "cuánto", "cuánta", "cuántos",
            "cuántas", "está", "están", "hay", "puedes", "dónde", "cómo", "sus", "gracias",
            "estoy", "tengo", "quiero", "cuando", "muy", "también", "ya", "eso", "este",
            "necesito", "hoy", "mañana", "usted", "nuestro", "nuestra", "puedo", "puede", "pueda",
            "son", "días", "quedan", "tenéis", "mejor", "esa", "ese", "esas", "esos", "apaga",
            "dale",
        ],
    ),
    (
        Language::Italian,
        &[
            "gli", "è", "della", "delle", "dei", "di", "che", "mio", "mia", "miei", "quale",
            "quali", "quanti", "quante", "sono", "non", "ho", "ci", "puoi", "dove", "per", "nel",
            "nella", "alla", "sul", "grazie", "voglio", "questo", "questa", "oggi", "domani",
        ],
    ),
    (
        Language::Portuguese,
        &[
            "os", "é", "dos", "um", "uma", "não", "meu", "minha", "quais", "quantos", "quantas",
            "com", "você", "onde", "obrigado", "obrigada", "preciso", "quero", "isso", "em", "na",
            "seu", "sua", "hoje", "amanhã",
        ],
    ),
];

/// Letters and marks that belong to one language of these: each counts as one of its words.
const MARKS: [(char, Language); 7] = [
    ('¿', Language::Spanish),
    ('¡', Language::Spanish),
    ('ñ', Language::Spanish),
    ('ß', Language::German),
    ('ä', Language::German),
    ('ö', Language::German),
    ('ã', Language::Portuguese),
];

impl Language {
    /// The language `text` is written in, if its words tell it: more of them in its list than
    /// in any other.
    pub fn of(text: &str) -> Option<Self> {
        let lower = text.to_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        let mut counts = WORDS.map(|(language, list)| {
            let words = words.iter().filter(|w| list.contains(w)).count();
            let marks = MARKS
                .iter()
                .filter(|(_, of)| *of == language)
                .map(|(mark, _)| lower.matches(*mark).count())
                .sum::<usize>();
            (words + marks, language)
        });
        counts.sort_by_key(|&(count, _)| std::cmp::Reverse(count));
        let [(best, language), (second, _), ..] = counts;
        (best > second).then_some(language)
    }

    /// The language of the conversation: of the user's message now (the last of `messages`), or,
    /// when it is too short to tell ("Und in Berlin?"), of all of them; English when neither
    /// tells.
    pub fn of_user(messages: &[&str]) -> Self {
        messages
            .last()
            .and_then(|now| Self::of(now))
            .or_else(|| Self::of(&messages.join("\n")))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::Language::{self, *};

    #[test]
    fn each_language_is_told_by_its_function_words() {
        let cases = [
            ("What is the status of the billing service?", English),
            ("Quel est le solde de mon compte courant ?", French),
            ("Wie ist das Wetter morgen in Berlin?", German),
            ("¿Cuál es el saldo de mi cuenta corriente?", Spanish),
            ("Qual è il saldo del mio conto?", Italian),
            ("Qual é o saldo da minha conta?", Portuguese),
            (
                "Virement de 120 euros vers le compte d'épargne, s'il vous plaît.",
                French,
            ),
            (
                "Öffne bitte ein Ticket für den Drucker im 3. Stock.",
                German,
            ),
        ];
        for (text, language) in cases {
            assert_eq!(Language::of(text), Some(language), "{text}");
        }
    }

    #[test]
    fn no_word_counts_for_two_languages() {
        let mut seen = std::collections::HashMap::new();
        for (language, words) in super::WORDS {
            for word in words {
                if let Some(other) = seen.insert(*word, language) {
                    panic!("{word:?} is a word of {other:?} and {language:?}");
                }
            }
        }
    }

    #[test]
    fn too_few_words_or_a_tie_tell_nothing() {
        for text in ["PR-7720-3391", "Berlin?", "12 in cm", "", "le the"] {
            assert_eq!(Language::of(text), None, "{text}");
        }
    }

    #[test]
    fn a_short_message_takes_the_language_of_the_conversation() {
        let conversation = ["Wie ist das Wetter morgen in Oslo?", "Berlin?"];
        assert_eq!(Language::of_user(&conversation), German);
        assert_eq!(Language::of_user(&["Berlin?"]), English);
        assert_eq!(
            Language::of_user(&["Wie ist das Wetter in Oslo?", "What about Berlin?"]),
            English,
            "a message that tells its language keeps it"
        );
    }
}
