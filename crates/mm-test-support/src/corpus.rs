//! A hostile corpus: many inputs of one kind, each checked for the property that must hold,
//! counted, and every failure reported at once. Each corpus prints one line,
//!
//! ```text
//! hostile corpus · deny rules: 96 tried, 96 held
//! ```
//!
//! which `scripts/hostile-counts.sh` gathers for docs/hardening.md.
//!
//! ```
//! use mm_test_support::Corpus;
//!
//! let mut corpus = Corpus::new("doubling");
//! for n in 0..10 {
//!     corpus.check(n, n * 2 / 2 == n, || format!("{n} did not come back"));
//! }
//! corpus.finish();
//! ```

use std::fmt::Debug;

/// One category of hostile inputs.
#[derive(Debug)]
pub struct Corpus {
    name: String,
    tried: usize,
    failures: Vec<String>,
}

impl Corpus {
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            tried: 0,
            failures: Vec::new(),
        }
    }

    /// One input: whether the property `held`; `why` says what happened when it did not.
    pub fn check(&mut self, input: impl Debug, held: bool, why: impl FnOnce() -> String) {
        self.tried += 1;
        if !held {
            let input = format!("{input:?}");
            let input: String = input.chars().take(200).collect();
            self.failures.push(format!("{input}: {}", why()));
        }
    }

    pub fn tried(&self) -> usize {
        self.tried
    }

    /// Prints the counts and fails with every input that did not hold.
    pub fn finish(self) {
        let held = self.tried - self.failures.len();
        println!(
            "hostile corpus · {}: {} tried, {held} held",
            self.name, self.tried
        );
        if !self.failures.is_empty() {
            panic!(
                "{}: {} of {} inputs did not hold:\n{}",
                self.name,
                self.failures.len(),
                self.tried,
                self.failures.join("\n")
            );
        }
    }
}
