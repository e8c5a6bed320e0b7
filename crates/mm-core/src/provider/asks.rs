//! What mm itself writes to the model to ask for an answer (the turn loop's answer steps), in
//! the language the user writes in ([`Language`]): a small model answers in the language of the
//! request that closes its prompt, not of the question (measured on Qwen2.5-Coder-1.5B: the
//! English request got English answers to French, German and Spanish questions in 28 runs of
//! 32; docs/eval-results.md).
//!
//! The English wording is the measured one (see [`ENGLISH`]); the others say the same. The
//! Spanish `now` was reworded after a replay of the 1.5B's 11 Spanish answer steps of the
//! held-out agents: the word-for-word translation ("Ahora contéstame en una o dos frases, con
//! las cifras y las referencias exactas de los resultados de las herramientas.") got 3 replies
//! that answered the request itself ("Sí, aquí tienes las cifras y las referencias exactas…"
//! and a list), this one none.

use crate::language::Language;

/// mm's requests for an answer, in one language.
#[derive(Debug)]
pub struct Asks {
    /// Closes a native answer-only request after tool results.
    pub now: &'static str,
    /// Closes a native answer-only request that ends with the user's own message (the model's
    /// reply to it was not an answer).
    pub again: &'static str,
    /// Ends the fresh answer step's one message.
    pub from_results: &'static str,
    /// Begins the fresh answer step's one message, before the user's question.
    pub question: &'static str,
    /// Around a tool's name, before its output, in the fresh answer step.
    pub tool_answered: (&'static str, &'static str),
    /// Around the references an answer left out, in the request for the answer again.
    pub not_given: (&'static str, &'static str),
    /// Between two references left out.
    pub or: &'static str,
    /// Ends the request for the answer again.
    pub with_them: &'static str,
    /// Before the references mm adds under an answer that left them out (when the lines of the
    /// output that hold them would make the answer a copy of the output).
    pub reference: &'static str,
}

/// The English requests. `now`, measured on Qwen2.5-Coder-1.5B after the 24 right calls of the
/// project's suite in English (docs/eval-results.md): asking for the exact figures and
/// references, and not for an answer to "my question" (after earlier turns folded into the
/// message, the model answered an earlier one), 22 answers of 24 passed their check; "Do not
/// call a tool again: answer my question in words, using the tool results above." 17 ("Yes, it
/// is humid in the bedroom." without the 63 % the sensor gave). Sending no tools is not enough
/// for a small model: with Qwen2.5-Coder-0.5B-Instruct, a conversation that ends with tool
/// results got the same call again as text, with the tools, without them and with
/// `tool_choice: "none"` alike; a closing user turn that asks for an answer got one in words
/// (docs/models.md).
pub const ENGLISH: Asks = Asks {
    now: "Now answer me in one or two sentences, with the exact figures and references from the \
          tool results.",
    again: "Answer my question in words.",
    from_results: "\nAnswer my question in words, briefly, from these results.",
    question: "My question: ",
    tool_answered: ("The tool ", " answered:"),
    not_given: ("Your answer does not give ", " from the tool's result. "),
    or: " or ",
    with_them: "Answer me again in one or two sentences, with it.",
    reference: "Reference: ",
};

const FRENCH: Asks = Asks {
    now: "Maintenant, réponds-moi en une ou deux phrases, avec les chiffres et les références \
          exacts des résultats des outils.",
    again: "Réponds à ma question avec des mots.",
    from_results: "\nRéponds à ma question avec des mots, brièvement, à partir de ces résultats.",
    question: "Ma question : ",
    tool_answered: ("L'outil ", " a répondu :"),
    not_given: ("Ta réponse ne donne pas ", " du résultat de l'outil. "),
    or: " ou ",
    with_them: "Réponds-moi encore en une ou deux phrases, en le donnant.",
    reference: "Référence : ",
};

const GERMAN: Asks = Asks {
    now: "Antworte mir jetzt in ein oder zwei Sätzen, mit den genauen Zahlen und Referenzen aus \
          den Ergebnissen der Tools.",
    again: "Beantworte meine Frage in Worten.",
    from_results: "\nBeantworte meine Frage in Worten, kurz, anhand dieser Ergebnisse.",
    question: "Meine Frage: ",
    tool_answered: ("Das Tool ", " antwortete:"),
    not_given: (
        "Deine Antwort nennt ",
        " aus dem Ergebnis des Tools nicht. ",
    ),
    or: " oder ",
    with_them: "Antworte mir noch einmal in ein oder zwei Sätzen, mit dieser Angabe.",
    reference: "Referenz: ",
};

const SPANISH: Asks = Asks {
    now: "Respóndeme ahora en una o dos frases, dando las cifras y referencias exactas de los \
          resultados.",
    again: "Responde a mi pregunta con palabras.",
    from_results: "\nResponde a mi pregunta con palabras, brevemente, a partir de estos \
                   resultados.",
    question: "Mi pregunta: ",
    tool_answered: ("La herramienta ", " respondió:"),
    not_given: ("Tu respuesta no da ", " del resultado de la herramienta. "),
    or: " o ",
    with_them: "Contéstame otra vez en una o dos frases, con ese dato.",
    reference: "Referencia: ",
};

const ITALIAN: Asks = Asks {
    now: "Ora rispondimi in una o due frasi, con le cifre e i riferimenti esatti dei risultati \
          degli strumenti.",
    again: "Rispondi alla mia domanda a parole.",
    from_results: "\nRispondi alla mia domanda a parole, brevemente, in base a questi risultati.",
    question: "La mia domanda: ",
    tool_answered: ("Lo strumento ", " ha risposto:"),
    not_given: (
        "La tua risposta non dà ",
        " del risultato dello strumento. ",
    ),
    or: " o ",
    with_them: "Rispondimi di nuovo in una o due frasi, con quel dato.",
    reference: "Riferimento: ",
};

const PORTUGUESE: Asks = Asks {
    now: "Agora responda-me em uma ou duas frases, com os números e as referências exatos dos \
          resultados das ferramentas.",
    again: "Responda à minha pergunta com palavras.",
    from_results: "\nResponda à minha pergunta com palavras, brevemente, a partir destes \
                   resultados.",
    question: "A minha pergunta: ",
    tool_answered: ("A ferramenta ", " respondeu:"),
    not_given: ("A sua resposta não dá ", " do resultado da ferramenta. "),
    or: " ou ",
    with_them: "Responda-me de novo em uma ou duas frases, com esse dado.",
    reference: "Referência: ",
};

const EVERY: [&Asks; 6] = [&ENGLISH, &FRENCH, &GERMAN, &SPANISH, &ITALIAN, &PORTUGUESE];

impl Asks {
    /// The requests in `language`.
    pub fn of(language: Language) -> &'static Asks {
        match language {
            Language::English => &ENGLISH,
            Language::French => &FRENCH,
            Language::German => &GERMAN,
            Language::Spanish => &SPANISH,
            Language::Italian => &ITALIAN,
            Language::Portuguese => &PORTUGUESE,
        }
    }

    /// The request for an answer again, after one that left out every one of `references` (the
    /// turn loop's `references` module): `Your answer does not give LV-2292 from the tool's
    /// result. Answer me again in one or two sentences, with it.`
    pub fn answer_with(&self, references: &[String]) -> String {
        let (before, after) = self.not_given;
        format!(
            "{before}{}{after}{}",
            references.join(self.or),
            self.with_them
        )
    }

    /// The fresh answer step's one message: the question, each tool's output, the request.
    pub fn fresh<'a>(
        &self,
        question: &str,
        outputs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> String {
        let mut text = format!("{}{question}\n", self.question);
        let (before, after) = self.tool_answered;
        for (name, output) in outputs {
            text.push_str(&format!("\n{before}{name}{after}\n{}\n", output.trim_end()));
        }
        text.push_str(self.from_results);
        text
    }
}

/// Everything mm itself writes to ask for an answer, in every language: an answer that copies
/// one of these is not an answer.
pub fn all() -> impl Iterator<Item = &'static str> {
    EVERY
        .into_iter()
        .flat_map(|asks| [asks.now, asks.again, asks.from_results, asks.with_them])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_english_requests_read_as_measured() {
        assert_eq!(
            ENGLISH.answer_with(&["LV-2292".into(), "T-7".into()]),
            "Your answer does not give LV-2292 or T-7 from the tool's result. Answer me again \
             in one or two sentences, with it."
        );
        assert_eq!(
            ENGLISH.fresh("Is billing up?", [("status", "billing: running\n")]),
            "My question: Is billing up?\n\nThe tool status answered:\nbilling: running\n\n\
             Answer my question in words, briefly, from these results."
        );
    }

    #[test]
    fn each_language_has_its_own_requests() {
        let mut seen = std::collections::HashSet::new();
        for asks in EVERY {
            for text in [asks.now, asks.again, asks.from_results, asks.with_them] {
                assert!(seen.insert(text), "{text:?} twice");
            }
        }
        assert_eq!(all().count(), 24);
        assert_eq!(
            Asks::of(Language::German).answer_with(&["VIR-1".into()]),
            "Deine Antwort nennt VIR-1 aus dem Ergebnis des Tools nicht. Antworte mir noch \
             einmal in ein oder zwei Sätzen, mit dieser Angabe."
        );
    }
}
