//! The one rewrite engine every adapter asks: is this shell line a build, test, lint or
//! install command tj reduces with benefit, and if so, the same line with
//! `<absolute tj> run --agent --host H -- ` inserted before the command word, no other byte
//! changed (issue 11).
//!
//! A line is rewritten when all of this holds, and left alone (with the reason) otherwise:
//!
//! 1. It is at most [`MAX_LINE_BYTES`] long and lexes ([`lex`]) without command or process substitution, arithmetic expansion,
//!    heredocs, control characters or unterminated quotes.
//! 2. Its shape is `cd DIR && … && COMMAND`: any number of `cd` preludes (plain `cd` and
//!    exactly one word, no redirection), joined by `&&` (a newline may follow an `&&`),
//!    then one simple command. No `;`, `;;`, `||`, `|`, `|&`, `&`, `(`, `)`, and no second
//!    line of commands; comments and blank lines around it are fine.
//! 3. The command is: assignments (`FOO='x y'`, never `TJ_RAW` or `TJ_DISABLE`), then
//!    wrappers in any order (`env NAME=VALUE…`, `timeout [-s SIG] [-k DUR]
//!    [--preserve-status] [-v] DUR`, `nice [-n N]`, `time [-p]`), then the command word and
//!    its arguments. The only redirections are `2>&1`, `2>/dev/null`, and `>/dev/null`
//!    (or `1>/dev/null`) when stderr goes to /dev/null too, after the command word. (With
//!    stdout alone discarded, `tj run` would take stderr into its rendition, which goes to
//!    /dev/null: the agent would lose the errors it sees without tj.)
//! 4. The command word is a plain word: no expansion, glob or brace, not a reserved word
//!    (`if`, `{`, `!`, …), not `=cmd`, not a shell, builtin or wrapper tj cannot run or see
//!    through (`sudo`, `eval`, `exec`, `xargs`, `source`, `.`, `command`, `bash`, …), and not
//!    tj itself (an already wrapped line).
//! 5. The command is not refused by `eligible::refused` (data commands such as `cat` or
//!    `git diff`; servers, watchers and prompts such as `npm run dev`, `--watch`,
//!    `terraform apply` without `-auto-approve`; machine-readable output such as `--json`),
//!    nor excluded by the user's `rewrite.exclude` (word prefixes, see
//!    [`eligible::prefix_matches`]).
//! 6. The rule it selects, from the builtin and user layers only, is not the fallback and
//!    is admitted: `"wrap": true`, or no `wrap` key and a family among
//!    [`DIAGNOSTIC_FAMILIES`].
//!
//! The insertion goes right before the command word: after assignments (so the command
//! still gets them through tj's environment), after wrappers (so `timeout` still times,
//! and signals the whole of `tj run`, which passes them on), after the `cd` preludes.

pub mod eligible;
pub mod lex;

use std::fmt;
use std::path::Path;

use lex::{Kind, LexError, Op, Token, Word};

use crate::env::Env;
use crate::host::Host;

/// Everything the decision needs besides the line.
#[derive(Clone, Copy, Debug)]
pub struct Context<'a> {
    /// The environment snapshot (where user rules and config live).
    pub env: &'a Env,
    /// The absolute path of the tj binary the rewritten line runs.
    pub tj: &'a Path,
    /// The harness the line comes from, passed on as `--host`.
    pub host: Option<Host>,
    /// Commands the user excluded (`rewrite.exclude` in config.json).
    pub exclude: &'a [String],
}

/// An eligible line, rewritten.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rewrite {
    /// The rewritten line.
    pub line: String,
    /// The simple commands of the *original* line, in order (`cd DIR`, then the command),
    /// each as its source text: what permission rules are judged against.
    pub segments: Vec<Segment>,
}

/// One simple command of the original line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The command's source text, exactly as in the line (without its `&&`).
    pub text: String,
    /// Its words after quote removal (assignments and redirects excluded).
    pub words: Vec<String>,
}

/// Why a line is not rewritten.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ineligible(pub String);

impl fmt::Display for Ineligible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The rule families whose commands are rewritten unless a rule says `"wrap": false`:
/// their output is diagnostics (failures, errors, locations) that tj reduces with benefit.
pub const DIAGNOSTIC_FAMILIES: &[&str] = &["tests", "build", "lint", "install"];

/// Longer lines are not rewritten: no build or test command an agent types is this long,
/// and judging one costs time on every shell call (the hook must answer in milliseconds).
pub const MAX_LINE_BYTES: usize = 16 * 1024;

/// Variables that ask for tj to stay out of the way; a line assigning one is left alone.
const HANDS_OFF: &[&str] = &[crate::env::TJ_RAW, crate::env::TJ_DISABLE];

/// The path of the running tj that a rewritten line names: absolute, symlinks resolved,
/// and existing right now. `tj hook` and `tj rewrite` both use it, so they print the same
/// line. On Linux, a binary replaced or removed while it runs reads as `/path/tj
/// (deleted)`, which no longer exists: that is an error here, not a line that would fail
/// with "command not found".
pub fn this_tj() -> std::io::Result<std::path::PathBuf> {
    std::env::current_exe().and_then(std::fs::canonicalize)
}

fn no(why: impl Into<String>) -> Ineligible {
    Ineligible(why.into())
}

/// Decides on `line`: the rewrite, or why not.
pub fn rewrite(line: &str, ctx: &Context<'_>) -> Result<Rewrite, Ineligible> {
    if line.len() > MAX_LINE_BYTES {
        return Err(no(format!("the line is longer than {MAX_LINE_BYTES} bytes")));
    }
    let tokens = lex::lex(line).map_err(|e: LexError| no(format!("{e}")))?;
    let commands = split(&tokens)?;
    let Some((main, preludes)) = commands.split_last() else {
        return Err(no("no command"));
    };
    let mut segments = Vec::with_capacity(commands.len());
    for prelude in preludes {
        check_cd(prelude)?;
        segments.push(segment(line, prelude, 0));
    }
    let command = parse_command(line, main)?;
    check_command(line, &command, ctx)?;
    segments.push(segment(line, main, command.assignments));
    let prefix = insertion(ctx)?;
    let at = command.word.start;
    let mut out = String::with_capacity(line.len() + prefix.len());
    out.push_str(&line[..at]);
    out.push_str(&prefix);
    out.push_str(&line[at..]);
    Ok(Rewrite { line: out, segments })
}

/// `<tj> run --agent [--host H] -- `, with tj's path single-quoted when it holds anything
/// but `[A-Za-z0-9_./+-]`.
fn insertion(ctx: &Context<'_>) -> Result<String, Ineligible> {
    let Some(path) = ctx.tj.to_str() else {
        return Err(no("the path of tj is not UTF-8"));
    };
    if !ctx.tj.is_absolute() {
        return Err(no(format!("the path of tj is not absolute: {path}")));
    }
    let plain = path.bytes().all(|c| c.is_ascii_alphanumeric() || b"_./+-".contains(&c));
    let quoted = if plain { path.to_owned() } else { format!("'{}'", path.replace('\'', r"'\''")) };
    let host = ctx.host.map(|h| format!(" --host {}", h.name())).unwrap_or_default();
    Ok(format!("{quoted} run --agent{host} -- "))
}

/// Splits the tokens at `&&` into simple commands, refusing every other list or grouping.
/// Comments are dropped; newlines are fine before the first command, after an `&&` and
/// after the last command, and nowhere else.
fn split(tokens: &[Token]) -> Result<Vec<Vec<&Token>>, Ineligible> {
    let mut commands: Vec<Vec<&Token>> = Vec::new();
    let mut current: Vec<&Token> = Vec::new();
    let mut after_and = false;
    let mut ended = false;
    for token in tokens {
        match &token.kind {
            Kind::Comment => {}
            Kind::Op(Op::Newline) => ended |= !current.is_empty(),
            Kind::Op(Op::AndIf) if !current.is_empty() && !ended => {
                commands.push(std::mem::take(&mut current));
                after_and = true;
            }
            Kind::Op(Op::AndIf) => return Err(no("`&&` without a command before it")),
            Kind::Op(op) => return Err(no(refused_operator(*op))),
            _ if ended => return Err(no("more than one line of commands")),
            _ => {
                current.push(token);
                after_and = false;
            }
        }
    }
    if after_and {
        return Err(no("the line ends with `&&`"));
    }
    if current.is_empty() {
        return Err(no("no command"));
    }
    commands.push(current);
    Ok(commands)
}

fn refused_operator(op: Op) -> String {
    let what = match op {
        Op::OrIf => "an `||` list",
        Op::Semi => "a `;` list",
        Op::CaseEnd => "`;;` (a `case` statement)",
        Op::Amp => "a background `&`",
        Op::Pipe => "a pipe `|`",
        Op::PipeAmp => "a pipe `|&`",
        Op::LParen | Op::RParen => "a subshell, group or function `( )`",
        Op::AndIf | Op::Newline => "an operator",
    };
    format!("{what}: only `cd DIR && COMMAND` lists are rewritten")
}

/// The word of a token, if it is one.
fn word(token: &Token) -> Option<&Word> {
    match &token.kind {
        Kind::Word(w) => Some(w),
        _ => None,
    }
}

/// A `cd DIR` prelude: plain `cd`, one word not starting with `-`, nothing else.
fn check_cd(tokens: &[&Token]) -> Result<(), Ineligible> {
    let words: Vec<&Word> = tokens.iter().filter_map(|t| word(t)).collect();
    let ok = words.len() == tokens.len()
        && words.len() == 2
        && words[0].text == "cd"
        && !words[0].quoted
        && !words[1].text.starts_with('-');
    if ok {
        Ok(())
    } else {
        Err(no("only `cd DIR` may come before `&&` (one plain directory argument)"))
    }
}

/// The parts of the main simple command.
struct Command<'t> {
    /// How many leading tokens are assignments.
    assignments: usize,
    /// The command word.
    word: &'t Token,
    /// The command word and the words after it, quotes removed (redirections left out).
    argv: Vec<String>,
}

/// Finds the assignments, wrappers and command word of the main command, and checks its
/// assignments and redirections.
fn parse_command<'t>(line: &str, tokens: &[&'t Token]) -> Result<Command<'t>, Ineligible> {
    let mut at = 0;
    while let Some(t) = tokens.get(at).filter(|t| word(t).is_some()) {
        let Some(name) = assignment_name(&line[t.start..t.end]) else { break };
        if HANDS_OFF.contains(&name) {
            return Err(no(format!("the line sets {name}: tj stays out of the way")));
        }
        at += 1;
    }
    let assignments = at;
    at += wrappers(&tokens[at..])?;
    let Some(&first) = tokens.get(at) else {
        return Err(no("no command after the assignments and wrappers"));
    };
    if word(first).is_none() {
        return Err(no("a redirection before the command word"));
    }
    let mut argv = Vec::new();
    let mut streams = Streams::default();
    for token in &tokens[at..] {
        match &token.kind {
            Kind::Word(w) => argv.push(w.text.clone()),
            Kind::Redirect(r) => streams.apply(r)?,
            Kind::Op(_) | Kind::Comment => {}
        }
    }
    if streams.stdout_discarded && !streams.stderr_discarded {
        // tj would put stderr on its PTY, into a rendition that goes to /dev/null: the
        // agent would lose the errors it sees today.
        return Err(no(
            "stdout goes to /dev/null but stderr does not: tj would reduce stderr into the discarded output",
        ));
    }
    Ok(Command { assignments, word: first, argv })
}

/// Where stdout and stderr end up after the command's redirections, which must be among
/// `>/dev/null`, `1>/dev/null`, `2>/dev/null` and `2>&1`, applied left to right as the
/// shell does.
#[derive(Default)]
struct Streams {
    stdout_discarded: bool,
    stderr_discarded: bool,
}

impl Streams {
    fn apply(&mut self, r: &lex::Redirect) -> Result<(), Ineligible> {
        let fd = r.fd.unwrap_or(if r.op.starts_with('<') { 0 } else { 1 });
        let raw = r.target_raw.as_str();
        match (r.op, fd, raw) {
            (">", 1, "/dev/null") => self.stdout_discarded = true,
            (">", 2, "/dev/null") => self.stderr_discarded = true,
            (">&", 2, "1") if r.fd.is_some() => self.stderr_discarded = self.stdout_discarded,
            _ => {
                let fd = r.fd.map(|f| f.to_string()).unwrap_or_default();
                return Err(no(format!(
                    "the redirection `{fd}{}{raw}`: only `2>&1`, `2>/dev/null` and `>/dev/null` (with stderr) are rewritten",
                    r.op
                )));
            }
        }
        Ok(())
    }
}

/// `NAME` of a `NAME=value` assignment, from the word as written (`raw`): the shell sees
/// an assignment only when the name and `=` are unquoted (`'FOO'=x` is a command named
/// `FOO=x`), so the source text is what is looked at.
fn assignment_name(raw: &str) -> Option<&str> {
    let (name, _) = raw.split_once('=')?;
    is_name(name).then_some(name)
}

/// A shell variable name: `[A-Za-z_][A-Za-z0-9_]*`.
fn is_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && bytes.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// How many tokens at the start of `tokens` are supported wrappers (`env NAME=V…`,
/// `timeout …`, `nice …`, `time …`) with their options. A wrapper in another form is left
/// as the command word, which [`eligible::blocked`] then refuses.
fn wrappers(tokens: &[&Token]) -> Result<usize, Ineligible> {
    // The words' texts; `None` for a redirection, or for a word with quotes or expansions,
    // which is never taken for a wrapper or its option.
    let texts: Vec<Option<&str>> = tokens
        .iter()
        .map(|t| word(t).filter(|w| !w.quoted && !w.expands && !w.glob).map(|w| w.text.as_str()))
        .collect();
    let mut at = 0;
    loop {
        let rest = &texts[(at + 1).min(texts.len())..];
        let next = match texts.get(at).copied().flatten() {
            Some("env") => env_wrapper(&tokens[at + 1..])?,
            Some("timeout") => timeout_wrapper(rest),
            Some("nice") => nice_wrapper(rest),
            Some("time") => Some(usize::from(rest.first() == Some(&Some("-p")))),
            _ => None,
        };
        match next {
            Some(n) => at += 1 + n,
            None => return Ok(at),
        }
    }
}

/// `env NAME=VALUE…`: how many assignment words follow `env`, or `None` for another form.
fn env_wrapper(tokens: &[&Token]) -> Result<Option<usize>, Ineligible> {
    let mut n = 0;
    while let Some(w) = tokens.get(n).and_then(|t| word(t)) {
        let Some((name, _)) = w.text.split_once('=') else { break };
        if !is_name(name) {
            break;
        }
        if HANDS_OFF.contains(&name) {
            return Err(no(format!("the line sets {name}: tj stays out of the way")));
        }
        n += 1;
    }
    Ok((n > 0).then_some(n))
}

/// `timeout [-s SIG|--signal=SIG] [-k DUR|--kill-after=DUR] [--preserve-status] [-v] DUR`:
/// how many words follow `timeout`, or `None` for another form (`--foreground` included:
/// it stops timing the command's children).
fn timeout_wrapper(words: &[Option<&str>]) -> Option<usize> {
    let mut i = 0;
    loop {
        match words.get(i).copied().flatten()? {
            "-s" | "--signal" | "-k" | "--kill-after" => i += 2,
            "--preserve-status" | "-v" | "--verbose" => i += 1,
            o if o.starts_with("--signal=") || o.starts_with("--kill-after=") => i += 1,
            o if is_duration(o) => return Some(i + 1),
            _ => return None,
        }
    }
}

fn is_duration(text: &str) -> bool {
    let number = text.strip_suffix(['s', 'm', 'h', 'd']).unwrap_or(text);
    let mut parts = number.splitn(2, '.');
    let whole = parts.next().unwrap_or("");
    let fraction = parts.next();
    !whole.is_empty()
        && whole.bytes().all(|c| c.is_ascii_digit())
        && fraction.is_none_or(|f| !f.is_empty() && f.bytes().all(|c| c.is_ascii_digit()))
}

/// `nice`, `nice -n N`, `nice -nN` or `nice -N`: how many words follow `nice`.
fn nice_wrapper(words: &[Option<&str>]) -> Option<usize> {
    let text = |i: usize| words.get(i).copied().flatten();
    let is_int = |s: &str| {
        let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
        !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit())
    };
    match text(0) {
        Some("-n") if text(1).is_some_and(is_int) => Some(2),
        Some(o) if o.strip_prefix("-n").is_some_and(is_int) => Some(1),
        Some(o) if o.starts_with('-') && is_int(o) => Some(1),
        Some(o) if o.starts_with('-') => None,
        _ => Some(0),
    }
}

/// The checks on the main command that need its words: the command word itself, the
/// refusal lists, the user's exclusions and the rules.
fn check_command(line: &str, command: &Command<'_>, ctx: &Context<'_>) -> Result<(), Ineligible> {
    let Some(w) = word(command.word) else { return Err(no("no command word")) };
    let raw = &line[command.word.start..command.word.end];
    if w.expands || raw.contains('$') {
        return Err(no(format!("the command word `{raw}` is an expansion")));
    }
    if w.glob || raw.starts_with('=') {
        return Err(no(format!("the command word `{raw}` is a pattern the shell expands")));
    }
    if !w.quoted && is_reserved(&w.text) {
        return Err(no(format!("`{}` is shell syntax (a reserved word)", w.text)));
    }
    if w.text.is_empty() {
        return Err(no("the command word is empty"));
    }
    if w.text.contains('=') {
        // `'FOO'=x cargo test` runs a program named `FOO=x`, which the rules would see as
        // an assignment before `cargo`.
        return Err(no(format!("the command word `{raw}` is a quoted assignment")));
    }
    if eligible::basename(&w.text) == "tj" || Path::new(&w.text) == ctx.tj {
        return Err(no("the line already runs through tj"));
    }
    if let Some(why) = eligible::blocked(&w.text) {
        return Err(no(why));
    }
    let query = crate::rules::select::Query { argv: &command.argv, ..Default::default() };
    let identity = crate::rules::select::identify(&query);
    if identity.compound {
        return Err(no("the command runs a shell string"));
    }
    if identity.argv.first().is_some_and(|p| p == "tj") {
        return Err(no("the line already runs through tj"));
    }
    if let Some(why) = eligible::refused(&command.argv, &identity.argv) {
        return Err(no(why));
    }
    for pattern in ctx.exclude {
        if [&command.argv, &identity.argv].iter().any(|a| eligible::prefix_matches(pattern, a)) {
            return Err(no(format!("excluded by rewrite.exclude (`{pattern}`)")));
        }
    }
    admitted_by_rules(ctx.env, &command.argv, &identity.argv)
}

/// Words that make a command shell syntax in bash or zsh, not a program run.
fn is_reserved(word: &str) -> bool {
    matches!(
        word,
        "{" | "}"
            | "!"
            | "[["
            | "]]"
            | "if"
            | "then"
            | "else"
            | "elif"
            | "fi"
            | "for"
            | "while"
            | "until"
            | "do"
            | "done"
            | "case"
            | "esac"
            | "in"
            | "select"
            | "function"
            | "coproc"
            | "repeat"
            | "foreach"
            | "end"
            | "always"
            | "declare"
            | "typeset"
            | "local"
            | "export"
            | "readonly"
            | "alias"
    )
}

/// Admits the command when the rule it selects says so: `"wrap": true`, or no `wrap` key
/// and a family in [`DIAGNOSTIC_FAMILIES`]. The fallback never does.
///
/// Only the builtin and user layers are consulted. Project rules come from the repository
/// the agent is working in, which nobody vetted: if they could widen eligibility, a
/// repository could have `cat secrets` or `git diff` reduced (and hidden) by adding a rule
/// that calls them tests. tj still reduces with project rules when it runs; they just do
/// not decide what gets rewritten. The project layer is left out by giving the loader no
/// working directory (it finds `.tokenjuice/rules` by walking up from it), which also
/// spares the walk; only the builtin rules that could match `identity` are parsed.
fn admitted_by_rules(env: &Env, argv: &[String], identity: &[String]) -> Result<(), Ineligible> {
    let program = identity.first().map_or("", String::as_str);
    let trusted = Env { cwd: None, ..env.clone() };
    let set = crate::rules::load::load_for(&trusted, identity);
    let query = crate::rules::select::Query { argv, ..Default::default() };
    let selection = crate::rules::select::select(&set, &query, None);
    if selection.is_fallback() {
        return Err(no(format!("no rule reduces `{program}`")));
    }
    let rule = &selection.rule.rule;
    let admitted = rule.wrap.unwrap_or_else(|| DIAGNOSTIC_FAMILIES.contains(&rule.family.as_str()));
    if admitted {
        Ok(())
    } else if rule.wrap == Some(false) {
        Err(no(format!("rule {} is marked \"wrap\": false", rule.id)))
    } else {
        Err(no(format!(
            "rule {} is in family `{}`, not build, tests, lint or install (and not marked \"wrap\": true)",
            rule.id, rule.family
        )))
    }
}

/// The segment for the simple command made of `tokens`: its source text, and its words
/// after quote removal without the first `assignments` words and without redirections.
fn segment(line: &str, tokens: &[&Token], assignments: usize) -> Segment {
    let start = tokens.first().map_or(0, |t| t.start);
    let end = tokens.last().map_or(0, |t| t.end);
    let words =
        tokens.iter().skip(assignments).filter_map(|t| word(t)).map(|w| w.text.clone()).collect();
    Segment { text: line[start..end].to_owned(), words }
}

#[cfg(test)]
mod tests;
