//! `bash:` prefix rules: a deliberately small reading of a command line (docs/permissions.md).
//!
//! A rule such as `bash:git status*` may only allow a line that is **one simple command** whose
//! first words are the rule's words. Bash's grammar is large and every corner of it that we
//! misread is a way to run a second command without asking, so this module does not try to
//! parse bash. It splits a line into words honouring `'…'`, `"…"` and `\x`, and *refuses* the
//! whole line at the first thing that could make bash do more than run one program with those
//! words as its arguments: an operator, a substitution, an expansion, a comment, a keyword, a
//! leading assignment, a control character. A refused line matches no rule, so it asks.
//!
//! The invariant that makes this safe: whatever this module accepts, bash turns into exactly one
//! command whose argv starts with the same words. The only bash transformations left on an
//! accepted line are quote removal (which we do too) and glob, brace and tilde expansion of
//! unquoted `* ? [ ] { } ~`, which may turn one word into several *arguments* but never run
//! anything. Words compared with the rule's words must therefore contain none of those
//! unquoted; the arguments after them may.

/// Why a line is not one simple command that this module understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NotSimple {
    /// Nothing but blanks.
    Empty,
    /// A control character (newline, carriage return, escape, …), quoted or not: a newline
    /// separates commands, and the rest have no business in a rule-allowed line.
    Control,
    /// An unquoted `; & | < > ( )`: lists, pipelines, background jobs, redirections, here-docs,
    /// process substitution, subshells and arithmetic all start with one of these.
    Operator,
    /// A backtick, quoted or not: command substitution.
    Substitution,
    /// A `$` outside single quotes: `$(…)`, `$((…))`, `${…}`, `$VAR`, `$'…'`, `$"…"`.
    Expansion,
    /// An unquoted `#` starting a word: the rest of the line is a comment.
    Comment,
    /// A quote that is never closed.
    Unterminated,
    /// A backslash at the end of the line.
    TrailingBackslash,
    /// The first word holds an unquoted `=`: an assignment (`PAGER=x git log`), which changes
    /// the program's environment or, alone, runs nothing.
    Assignment,
    /// The first word is a reserved word (`if`, `time`, `{`, `[[`, `!`, …): not a simple command.
    Keyword,
}

/// Bash's reserved words: a line starting with one is a compound command or a pipeline prefix.
const KEYWORDS: &[&str] = &[
    "!", "[[", "]]", "{", "}", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for",
    "function", "if", "in", "select", "then", "time", "until", "while",
];

/// One word of a line, after quote removal.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Word {
    /// The word as the program would receive it, if it contains no unquoted pattern character.
    pub(super) value: String,
    /// How many unquoted `* ? [ ] { } ~` it holds: bash may expand those into other words.
    pub(super) patterns: usize,
    /// Whether any part of it was quoted or escaped (`''` is a word, an empty one).
    quoted: bool,
    /// Whether its last character is an unquoted `*` (the "more arguments" mark of a rule).
    star_last: bool,
    /// Whether it holds an unquoted `=` (an assignment when it is the first word).
    unquoted_eq: bool,
}

impl Word {
    fn push_quoted(&mut self, c: char) {
        self.value.push(c);
        self.quoted = true;
        self.star_last = false;
    }

    fn push_unquoted(&mut self, c: char) {
        self.value.push(c);
        let pattern = matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '~');
        self.patterns += usize::from(pattern);
        self.star_last = c == '*';
        self.unquoted_eq |= c == '=';
    }
}

/// Characters one at a time, refusing control characters wherever they appear (tab is a blank).
struct Chars<'a>(std::str::Chars<'a>);

impl Chars<'_> {
    fn next(&mut self) -> Result<Option<char>, NotSimple> {
        match self.0.next() {
            Some(c) if c.is_control() && c != '\t' => Err(NotSimple::Control),
            other => Ok(other),
        }
    }
}

/// Splits `line` into the words of one simple command, or says why it is not one.
pub(super) fn split(line: &str) -> Result<Vec<Word>, NotSimple> {
    let mut chars = Chars(line.chars());
    let mut words = Vec::new();
    // `None` between words; a word starts at its first character, quote or escape.
    let mut current: Option<Word> = None;
    while let Some(c) = chars.next()? {
        match c {
            ' ' | '\t' => words.extend(current.take()),
            ';' | '&' | '|' | '<' | '>' | '(' | ')' => return Err(NotSimple::Operator),
            '`' => return Err(NotSimple::Substitution),
            '$' => return Err(NotSimple::Expansion),
            '#' if current.is_none() => return Err(NotSimple::Comment),
            '\\' => {
                let escaped = chars.next()?.ok_or(NotSimple::TrailingBackslash)?;
                current.get_or_insert_default().push_quoted(escaped);
            }
            '\'' => {
                let word = current.get_or_insert_default();
                word.quoted = true;
                word.star_last = false;
                loop {
                    match chars.next()?.ok_or(NotSimple::Unterminated)? {
                        '\'' => break,
                        c => word.push_quoted(c),
                    }
                }
            }
            '"' => double_quoted(&mut chars, current.get_or_insert_default())?,
            c => current.get_or_insert_default().push_unquoted(c),
        }
    }
    words.extend(current);
    let first = words.first().ok_or(NotSimple::Empty)?;
    if first.unquoted_eq {
        return Err(NotSimple::Assignment);
    }
    if KEYWORDS.contains(&first.value.as_str()) {
        return Err(NotSimple::Keyword);
    }
    Ok(words)
}

/// The rest of a `"…"` after its opening quote. Inside, bash still expands `$` and backticks
/// (refused here), and a backslash escapes only `$`, a backtick, `"` and `\` (and a newline,
/// refused as a control character); before anything else it stays a backslash.
fn double_quoted(chars: &mut Chars<'_>, word: &mut Word) -> Result<(), NotSimple> {
    word.quoted = true;
    word.star_last = false;
    loop {
        match chars.next()?.ok_or(NotSimple::Unterminated)? {
            '"' => return Ok(()),
            '$' => return Err(NotSimple::Expansion),
            '`' => return Err(NotSimple::Substitution),
            '\\' => match chars.next()?.ok_or(NotSimple::Unterminated)? {
                c @ ('$' | '`' | '"' | '\\') => word.push_quoted(c),
                c => {
                    word.push_quoted('\\');
                    word.push_quoted(c);
                }
            },
            c => word.push_quoted(c),
        }
    }
}

/// A parsed `bash:` rule: the words a line must start with, and whether more may follow.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct BashRule {
    prefix: Vec<String>,
    more: bool,
}

impl BashRule {
    /// Reads the pattern of a `bash:PATTERN` entry with the same tokenizer as command lines. An
    /// unquoted `*` ending the pattern means "any further arguments"; a pattern that is not one
    /// simple command, or that holds another unquoted `* ? [ ] { } ~`, is no rule at all
    /// (`None`) and allows nothing.
    pub(super) fn parse(pattern: &str) -> Option<Self> {
        let mut words = split(pattern).ok()?;
        let mut more = false;
        if let Some(last) = words.last_mut().filter(|w| w.star_last) {
            last.value.pop();
            last.patterns -= 1;
            last.star_last = false;
            more = true;
            if last.value.is_empty() && !last.quoted {
                words.pop();
            }
        }
        if words.iter().any(|w| w.patterns > 0) {
            return None;
        }
        let prefix = words.into_iter().map(|w| w.value).collect();
        Some(Self { prefix, more })
    }

    /// Whether `line` is one simple command whose first words are this rule's words, with no
    /// more words unless the rule ends in `*`.
    pub(super) fn matches(&self, line: &str) -> bool {
        let Ok(words) = split(line) else {
            return false;
        };
        let count_ok = if self.more {
            words.len() >= self.prefix.len()
        } else {
            words.len() == self.prefix.len()
        };
        count_ok
            && self
                .prefix
                .iter()
                .zip(&words)
                .all(|(want, word)| word.patterns == 0 && word.value == *want)
    }

    /// Whether a deny rule with this pattern refuses `line`. Deny rules are prefix rules
    /// whether or not they end in `*`, and they look inside lines that are not one simple
    /// command: the rule's words, as text, anywhere in the line between word boundaries (blanks,
    /// operators, quotes, the ends) — `deny bash:rm*` refuses `ls | xargs rm` and
    /// `bash -c 'rm x'`. A false refusal costs the model a retry; a miss would run what the
    /// user refused. It is a guard rail, not a sandbox: `r\m` or `$(printf rm)` still get
    /// through (docs/permissions.md says so).
    pub(super) fn denies(&self, line: &str) -> bool {
        if self.prefix.is_empty() {
            return true;
        }
        if self.denies_commands(line, 0) {
            return true;
        }
        if let Ok(words) = split(line)
            && words.len() >= self.prefix.len()
            && self
                .prefix
                .iter()
                .zip(&words)
                .all(|(w, word)| word.value == *w)
        {
            return true;
        }
        let text = collapse_blanks(line);
        let needle = self.prefix.join(" ");
        text.match_indices(&needle).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + needle.len()..].chars().next();
            before.is_none_or(is_boundary) && after.is_none_or(is_boundary)
        })
    }

    /// The structured half of [`denies`](Self::denies): the line read leniently as the
    /// commands it may run ([`loose_commands`]); a command denies when one of its words is the
    /// rule's program — by name whatever its path (`/usr/bin/rm`), or as a pattern bash would
    /// expand to it (`/bin/r[m]`, `r?`) — and the rule's other words follow it in order, other
    /// words allowed between (`git -C . push`, `git --no-pager push`, `git -c k=v push`). A
    /// word that holds a command line itself (`bash -c '/bin/rm x'`, `"$(rm x)"`) is read
    /// the same way, a few levels deep.
    fn denies_commands(&self, line: &str, depth: usize) -> bool {
        let Some((program, rest)) = self.prefix.split_first() else {
            return true;
        };
        for command in loose_commands(line) {
            for (at, word) in command.iter().enumerate() {
                if word.is_program(program) && in_order(rest, &command[at + 1..]) {
                    return true;
                }
            }
            let nested = |w: &&Loose| {
                w.value.contains(|c: char| {
                    c.is_whitespace()
                        || matches!(c, ';' | '&' | '|' | '(' | ')' | '<' | '>' | '`' | '$')
                })
            };
            if depth < MAX_NESTING
                && command
                    .iter()
                    .filter(nested)
                    .any(|w| self.denies_commands(&w.value, depth + 1))
            {
                return true;
            }
        }
        false
    }
}

/// How deep a deny rule looks into words that hold command lines (`bash -c "sh -c '…'"`).
const MAX_NESTING: usize = 4;

/// Whether `wanted` appear among `words` in this order, other words allowed between.
fn in_order(wanted: &[String], words: &[Loose]) -> bool {
    let mut words = words.iter();
    wanted
        .iter()
        .all(|want| words.any(|word| word.is_word(want)))
}

/// A word as the deny check reads it: its value after quote removal, and the same word as a
/// glob (unquoted `* ? [ ] { }` kept as patterns, quoted ones escaped), for the words bash
/// would expand.
#[derive(Debug, Default)]
struct Loose {
    value: String,
    glob: String,
    patterns: bool,
}

impl Loose {
    fn push_quoted(&mut self, c: char) {
        self.value.push(c);
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            self.glob.push('\\');
        }
        self.glob.push(c);
    }

    fn push_unquoted(&mut self, c: char) {
        self.value.push(c);
        self.glob.push(c);
        self.patterns |= matches!(c, '*' | '?' | '[' | '{');
    }

    /// This word, or what bash would expand it to, is `want`.
    fn is_word(&self, want: &str) -> bool {
        self.value == want || (self.patterns && glob_matches(&self.glob, want))
    }

    /// This word runs the program `want`: the word itself, or its last path component when
    /// `want` names a program without a path.
    fn is_program(&self, want: &str) -> bool {
        if self.is_word(want) {
            return true;
        }
        if want.contains('/') {
            return false;
        }
        let base = |s: &str| s.rsplit('/').next().unwrap_or_default().to_string();
        base(&self.value) == want || (self.patterns && glob_matches(&base(&self.glob), want))
    }
}

/// Whether a bash pattern (`r[m]`, `r?`, `{rm,mv}`) matches `text`; a pattern that is not one
/// matches nothing.
fn glob_matches(pattern: &str, text: &str) -> bool {
    globset::GlobBuilder::new(pattern)
        .literal_separator(false)
        .backslash_escape(true)
        .build()
        .is_ok_and(|glob| glob.compile_matcher().is_match(text))
}

/// A line read leniently, as the commands it may run, each as its words (quotes removed). It
/// never refuses: an operator (`; & | ( ) < >`, a newline, a backtick, `$(`) ends a command and
/// starts the next, and an unterminated quote runs to the end. Wider than bash on purpose (a
/// redirection's file name reads as a command of its own): it serves deny rules only, where a
/// false refusal costs a retry and a miss runs what the user refused.
fn loose_commands(line: &str) -> Vec<Vec<Loose>> {
    let mut commands = Vec::new();
    let mut words: Vec<Loose> = Vec::new();
    let mut current: Option<Loose> = None;
    let mut chars = line.chars().peekable();
    let end_command =
        |words: &mut Vec<Loose>, current: &mut Option<Loose>, commands: &mut Vec<Vec<Loose>>| {
            words.extend(current.take());
            if !words.is_empty() {
                commands.push(std::mem::take(words));
            }
        };
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => words.extend(current.take()),
            '\n' | '\r' | ';' | '&' | '|' | '(' | ')' | '<' | '>' | '`' => {
                end_command(&mut words, &mut current, &mut commands);
            }
            '$' if chars.peek() == Some(&'(') => {
                chars.next();
                end_command(&mut words, &mut current, &mut commands);
            }
            '\\' => {
                let word = current.get_or_insert_default();
                if let Some(escaped) = chars.next() {
                    word.push_quoted(escaped);
                }
            }
            '\'' => {
                let word = current.get_or_insert_default();
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push_quoted(c);
                }
            }
            '"' => {
                let word = current.get_or_insert_default();
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some(e @ ('$' | '`' | '"' | '\\')) => word.push_quoted(e),
                            Some(e) => {
                                word.push_quoted('\\');
                                word.push_quoted(e);
                            }
                            None => word.push_quoted('\\'),
                        },
                        c => word.push_quoted(c),
                    }
                }
            }
            c => current.get_or_insert_default().push_unquoted(c),
        }
    }
    end_command(&mut words, &mut current, &mut commands);
    commands
}

/// The programs a command line may run, in order, as the deny check reads it (see
/// [`loose_commands`]): the first word of each command, nested command lines included. What
/// a consent dialog says next to the choices, where no part of the line can push it away.
pub(super) fn programs(line: &str) -> Vec<String> {
    fn walk(line: &str, depth: usize, out: &mut Vec<String>) {
        for command in loose_commands(line) {
            // Leading assignments (`A=1 cmd`) are not the program.
            let first = command
                .iter()
                .find(|w| !w.value.contains('=') || w.value.starts_with('='));
            if let Some(word) = first {
                out.push(word.value.clone());
            }
            if depth < MAX_NESTING {
                for word in &command {
                    if word.value.contains(|c: char| {
                        c.is_whitespace() || matches!(c, ';' | '&' | '|' | '`' | '$')
                    }) {
                        walk(&word.value, depth + 1, out);
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(line, 0, &mut out);
    out
}

/// The line with every run of blanks (spaces, tabs, newlines) as one space.
fn collapse_blanks(line: &str) -> String {
    line.split(|c: char| c.is_whitespace())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A character that ends a word for bash: a blank, an operator, a quote, a substitution mark.
fn is_boundary(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            ';' | '&'
                | '|'
                | '('
                | ')'
                | '<'
                | '>'
                | '`'
                | '$'
                | '"'
                | '\''
                | '{'
                | '}'
                | '/'
                | '='
        )
}

/// Programs whose first argument is a subcommand: "always" for `git status -s` allows
/// `git status*`, not all of `git`.
const WITH_SUBCOMMANDS: &[&str] = &[
    "apt",
    "apt-get",
    "brew",
    "bun",
    "cargo",
    "docker",
    "dotnet",
    "gh",
    "git",
    "go",
    "gradle",
    "helm",
    "just",
    "kubectl",
    "make",
    "mvn",
    "nix",
    "npm",
    "pip",
    "pip3",
    "pnpm",
    "podman",
    "poetry",
    "rustup",
    "systemctl",
    "terraform",
    "uv",
    "yarn",
];

/// The command prefix an "always" answer for `line` allows: the program, and its subcommand
/// for the programs that have them ([`WITH_SUBCOMMANDS`]), then `*`. `None` when the line is
/// not one simple command, or its first words are patterns. Words are quoted as needed, and
/// the rule is checked to allow `line` itself.
pub(super) fn prefix_rule(line: &str) -> Option<String> {
    let words = split(line).ok()?;
    let first = words.first().filter(|w| w.patterns == 0)?;
    let mut prefix = vec![first.value.as_str()];
    let program = first.value.rsplit('/').next().unwrap_or_default();
    if WITH_SUBCOMMANDS.contains(&program)
        && let Some(second) = words
            .get(1)
            .filter(|w| w.patterns == 0 && is_subcommand(&w.value))
    {
        prefix.push(second.value.as_str());
    }
    let quoted: Vec<String> = prefix.iter().map(|w| quote(w)).collect();
    let rule = format!("{}*", quoted.join(" "));
    BashRule::parse(&rule)
        .filter(|r| r.matches(line))
        .map(|_| rule)
}

/// `status`, `run`, `build-all`: lower-case letters first, then letters, digits, `-`, `_`.
fn is_subcommand(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// A word as the rule tokenizer reads it back: bare when it is plain, else single-quoted.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word.chars().all(|c| {
            c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ':' | '@' | '%' | '+' | ',')
        });
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
#[path = "shell_tests.rs"]
mod tests;
