//! A coding agent's session log, read as a transcript (issue 15): the model behind `tj audit`
//! and `tj compact`.
//!
//! Two harnesses write one JSON object a line: Claude Code
//! (`~/.claude/projects/<project>/<session>.jsonl`: entries with `uuid`/`parentUuid`, whose
//! `message.content` holds `tool_use` and `tool_result` blocks paired by id) and Codex
//! (`~/.codex/sessions/**/rollout-*.jsonl`: `response_item` lines, `function_call` and
//! `function_call_output` paired by `call_id`). [`Transcript::parse`] tells them apart, finds
//! every call and its result, and keeps the byte range of every line: compaction replaces
//! the value of one field and leaves every other byte as it was. Entries of a type it does not
//! know pass through untouched.
//!
//! A log that does not parse, a tool id used twice, or a result without its call is an error
//! naming the line: tj never drops what it did not understand.
//!
//! ```text
//!  bytes ─▶ parse (claude / codex) ─▶ Transcript { lines, messages, calls, results }
//!                                          │
//!              classify (each call: read, edit, check, listing, …)
//!                                          ▼
//!                         plan (keep or drop each result, and why)
//!                                          ▼
//!              rewrite (placeholders in place; notes) ─▶ validate (same shape)
//! ```

pub mod classify;
mod claude;
mod codex;
pub mod locate;
pub mod plan;
pub mod rewrite;
pub mod sidecar;
pub mod span;

use anyhow::{Result, bail};

use self::classify::Kind;
use self::span::Step;

/// The agent harness that wrote a log: the same as `tj stats --transcripts` reads.
pub use crate::transcripts::Harness;

/// One line of the log.
#[derive(Clone, Debug)]
pub struct Line {
    /// Where the line starts in the log.
    pub start: usize,
    /// Where it ends (its line break excluded).
    pub end: usize,
    /// The user turn it belongs to (0 before the first prompt).
    pub turn: usize,
    /// The role, if the line is a message the model sees (`user`, `assistant`, or for
    /// Codex items other than messages, the item's type).
    pub role: Option<String>,
    /// Estimated tokens the model sees from this line.
    pub tokens: usize,
}

/// A tool call.
#[derive(Clone, Debug)]
pub struct Call {
    /// The id that pairs it with its result.
    pub id: String,
    /// The line it is on.
    pub line: usize,
    /// The tool's name.
    pub tool: String,
    /// What kind of call it is, for the compaction rules.
    pub kind: Kind,
    /// The command or path it names, for people.
    pub label: String,
}

/// A tool result.
#[derive(Clone, Debug)]
pub struct ToolResult {
    /// The index of its call in [`Transcript::calls`].
    pub call: usize,
    /// The line it is on.
    pub line: usize,
    /// The path, inside the line's JSON, to the value holding the result.
    pub path: Vec<OwnedStep>,
    /// The result as text: what is stored when it is dropped. `None` if it is not text
    /// alone (an image): such a result is never dropped.
    pub text: Option<String>,
    /// The harness flagged it as an error, or the command exited non-zero.
    pub failed: bool,
    /// Estimated tokens of `text`.
    pub tokens: usize,
    /// Other copies of the result in the log, which the harness keeps for its own display.
    pub echoes: Vec<Echo>,
}

/// A copy of a tool result that the harness writes beside the one the model sees: Claude
/// Code's `toolUseResult` (a command's `stdout`, a read file's `content`, a search's file
/// names) and Codex's `exec_command_end` events (`aggregated_output`, `stdout`, …). The model
/// never sees it, but a dropped result must not stay in the compacted log through its copy,
/// so it goes with the result.
#[derive(Clone, Debug)]
pub struct Echo {
    /// The line it is on.
    pub line: usize,
    /// The path, inside the line's JSON, to the value.
    pub path: Vec<OwnedStep>,
    /// The value is an array of strings (emptied when dropped), not a string.
    pub array: bool,
}

/// A string or array of strings shorter than this is not worth an echo: numbers of lines,
/// flags and short names stay as the harness wrote them.
const ECHO_MIN: usize = 64;

/// The echoes in `value`, which sits at `path` on line `n`: every string of at least
/// [`ECHO_MIN`] bytes, and every array of strings holding that many.
fn echoes_in(value: &serde_json::Value, n: usize, path: &mut Vec<OwnedStep>, out: &mut Vec<Echo>) {
    use serde_json::Value;
    match value {
        Value::String(s) if s.len() >= ECHO_MIN => {
            out.push(Echo { line: n, path: path.clone(), array: false });
        }
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_string) => {
            let len: usize = items.iter().filter_map(Value::as_str).map(str::len).sum();
            if len >= ECHO_MIN {
                out.push(Echo { line: n, path: path.clone(), array: true });
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(OwnedStep::Index(i));
                echoes_in(item, n, path, out);
                path.pop();
            }
        }
        Value::Object(map) => {
            for (k, item) in map {
                path.push(OwnedStep::Key(k.clone()));
                echoes_in(item, n, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// A [`Step`] that owns its key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OwnedStep {
    /// An object member.
    Key(String),
    /// An array element.
    Index(usize),
}

/// `path` as [`Step`]s.
pub fn steps(path: &[OwnedStep]) -> Vec<Step<'_>> {
    path.iter()
        .map(|s| match s {
            OwnedStep::Key(k) => Step::Key(k),
            OwnedStep::Index(i) => Step::Index(*i),
        })
        .collect()
}

/// A session log, parsed.
#[derive(Clone, Debug)]
pub struct Transcript {
    /// Who wrote it.
    pub harness: Harness,
    /// Every line, blank ones included.
    pub lines: Vec<Line>,
    /// Every tool call, in log order.
    pub calls: Vec<Call>,
    /// Every tool result, in log order.
    pub results: Vec<ToolResult>,
    /// The line of the first message the user typed.
    pub first_user: Option<usize>,
    /// Where, inside that line, its first text is.
    pub first_user_text: Vec<OwnedStep>,
    /// The session's id, as the log records it.
    pub session_id: Option<String>,
    /// User turns.
    pub turns: usize,
}

impl Transcript {
    /// Parses a log, telling the harness from its first entries.
    pub fn parse(bytes: &[u8]) -> Result<Transcript> {
        let lines = split_lines(bytes);
        let mut values = Vec::with_capacity(lines.len());
        for (n, &(start, end)) in lines.iter().enumerate() {
            let text = &bytes[start..end];
            if text.iter().all(u8::is_ascii_whitespace) {
                values.push(None);
                continue;
            }
            match serde_json::from_slice::<serde_json::Value>(text) {
                Ok(value) if value.is_object() => values.push(Some(value)),
                Ok(_) => bail!("line {}: not a JSON object; nothing was changed", n + 1),
                Err(err) => bail!("line {}: not JSON ({err}); nothing was changed", n + 1),
            }
        }
        let Some(harness) = values.iter().flatten().find_map(detect) else {
            bail!("not a Claude Code or Codex session log (no entry of either kind)");
        };
        let mut builder = Builder::new(harness, &lines);
        for (n, value) in values.iter().enumerate() {
            if let Some(value) = value {
                match harness {
                    Harness::ClaudeCode => claude::line(&mut builder, n, value)?,
                    Harness::Codex => codex::line(&mut builder, n, value)?,
                }
            }
        }
        Ok(builder.finish())
    }

    /// Line indices of the messages the model sees, in order.
    pub fn messages(&self) -> impl Iterator<Item = usize> + '_ {
        self.lines.iter().enumerate().filter(|(_, l)| l.role.is_some()).map(|(i, _)| i)
    }

    /// Estimated tokens of every message the model sees.
    pub fn tokens(&self) -> usize {
        self.lines.iter().map(|l| l.tokens).sum()
    }

    /// The bytes of line `n`.
    pub fn line_bytes<'b>(&self, bytes: &'b [u8], n: usize) -> &'b [u8] {
        &bytes[self.lines[n].start..self.lines[n].end]
    }

    /// Calls that have no result.
    pub fn unanswered(&self) -> Vec<&Call> {
        let mut answered = vec![false; self.calls.len()];
        for r in &self.results {
            answered[r.call] = true;
        }
        self.calls.iter().zip(answered).filter(|(_, a)| !a).map(|(c, _)| c).collect()
    }
}

/// The lines of `bytes` as byte ranges, line breaks excluded (a last line without one
/// counts; nothing after a final line break does).
fn split_lines(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut lines = Vec::new();
    let mut start = 0;
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'\n' {
            lines.push((start, i));
            start = i + 1;
        }
    }
    if start < bytes.len() {
        lines.push((start, bytes.len()));
    }
    lines
}

/// The harness whose entry `value` is, if it tells.
fn detect(value: &serde_json::Value) -> Option<Harness> {
    let kind = value.get("type").and_then(|t| t.as_str()).unwrap_or_default();
    if value.get("payload").is_some()
        && matches!(
            kind,
            "session_meta" | "response_item" | "turn_context" | "event_msg" | "compacted"
        )
    {
        return Some(Harness::Codex);
    }
    if value.get("uuid").is_some()
        || value.get("sessionId").is_some()
        || matches!(kind, "user" | "assistant" | "summary")
    {
        return Some(Harness::ClaudeCode);
    }
    None
}

/// What both parsers fill in.
struct Builder {
    transcript: Transcript,
    /// Call index by id.
    by_id: std::collections::HashMap<String, usize>,
    /// Whether each call has its result yet.
    answered: Vec<bool>,
    /// The working directory the log last named.
    cwd: Option<String>,
    /// Echoes by the id of the call whose result they copy (they may come before the
    /// result).
    echoes: std::collections::HashMap<String, Vec<Echo>>,
}

impl Builder {
    fn new(harness: Harness, lines: &[(usize, usize)]) -> Builder {
        let lines = lines
            .iter()
            .map(|&(start, end)| Line { start, end, turn: 0, role: None, tokens: 0 })
            .collect();
        Builder {
            transcript: Transcript {
                harness,
                lines,
                calls: Vec::new(),
                results: Vec::new(),
                first_user: None,
                first_user_text: Vec::new(),
                session_id: None,
                turns: 0,
            },
            by_id: std::collections::HashMap::new(),
            answered: Vec::new(),
            cwd: None,
            echoes: std::collections::HashMap::new(),
        }
    }

    /// Marks line `n` a message of `role`, worth the tokens of the strings in `value`.
    fn message(&mut self, n: usize, role: &str, value: &serde_json::Value) {
        let line = &mut self.transcript.lines[n];
        line.role = Some(role.to_owned());
        line.tokens = string_tokens(value);
        line.turn = self.transcript.turns;
    }

    /// A prompt typed by the user on line `n` (its first text at `text`) starts a turn.
    fn prompt(&mut self, n: usize, text: Vec<OwnedStep>) {
        self.transcript.turns += 1;
        self.transcript.lines[n].turn = self.transcript.turns;
        if self.transcript.first_user.is_none() {
            self.transcript.first_user = Some(n);
            self.transcript.first_user_text = text;
        }
    }

    /// Records a call; an id seen before is an error.
    fn call(&mut self, n: usize, id: &str, tool: &str, kind: Kind, label: String) -> Result<()> {
        if let Some(&first) = self.by_id.get(id) {
            let at = self.transcript.calls[first].line + 1;
            bail!(
                "line {}: tool id `{id}` used twice (first on line {at}); nothing was changed",
                n + 1
            );
        }
        self.by_id.insert(id.to_owned(), self.transcript.calls.len());
        self.answered.push(false);
        self.transcript.calls.push(Call {
            id: id.to_owned(),
            line: n,
            tool: tool.to_owned(),
            kind,
            label,
        });
        Ok(())
    }

    /// Records the result of call `id`; one without its call, or a second one, is an error.
    fn result(
        &mut self,
        n: usize,
        id: &str,
        path: Vec<OwnedStep>,
        text: Option<String>,
        failed: bool,
    ) -> Result<()> {
        let Some(&call) = self.by_id.get(id) else {
            bail!(
                "line {}: a result for tool id `{id}`, which no earlier call has; nothing was changed",
                n + 1
            );
        };
        if std::mem::replace(&mut self.answered[call], true) {
            bail!("line {}: a second result for tool id `{id}`; nothing was changed", n + 1);
        }
        let tokens = text.as_deref().map_or(0, crate::reduce::tokens::estimate);
        self.transcript.results.push(ToolResult {
            call,
            line: n,
            path,
            text,
            failed,
            tokens,
            echoes: Vec::new(),
        });
        Ok(())
    }

    /// Records the echoes of call `id`'s result in `value`, at `path` on line `n`.
    fn echo(&mut self, id: &str, n: usize, value: &serde_json::Value, mut path: Vec<OwnedStep>) {
        let mut found = Vec::new();
        echoes_in(value, n, &mut path, &mut found);
        if !found.is_empty() {
            self.echoes.entry(id.to_owned()).or_default().extend(found);
        }
    }

    /// The transcript, each result with its echoes.
    fn finish(mut self) -> Transcript {
        for r in &mut self.transcript.results {
            let id = &self.transcript.calls[r.call].id;
            if let Some(echoes) = self.echoes.remove(id) {
                r.echoes = echoes;
            }
        }
        self.transcript
    }
}

/// Estimated tokens of every string in `value` (keys and punctuation not counted).
fn string_tokens(value: &serde_json::Value) -> usize {
    match value {
        serde_json::Value::String(s) => crate::reduce::tokens::estimate(s),
        serde_json::Value::Array(items) => items.iter().map(string_tokens).sum(),
        serde_json::Value::Object(map) => map.values().map(string_tokens).sum(),
        _ => 0,
    }
}

/// Checks that `after` is `before` with only result contents and notes changed: the same
/// lines, the same messages with the same roles in the same order, the same calls paired
/// with the same results; and that no result lacks its call. `tj compact` runs it on every
/// output before writing it.
pub fn same_shape(before: &Transcript, after: &Transcript) -> Result<()> {
    if before.harness != after.harness || before.lines.len() != after.lines.len() {
        bail!(
            "the compacted log has {} lines, the original {}",
            after.lines.len(),
            before.lines.len()
        );
    }
    for (n, (a, b)) in before.lines.iter().zip(&after.lines).enumerate() {
        if a.role != b.role {
            bail!("line {}: the compacted log changed the message's role", n + 1);
        }
    }
    let pairs = |t: &Transcript| -> Vec<(String, usize, usize)> {
        t.results
            .iter()
            .map(|r| (t.calls[r.call].id.clone(), t.calls[r.call].line, r.line))
            .collect()
    };
    let calls = |t: &Transcript| -> Vec<(String, usize)> {
        t.calls.iter().map(|c| (c.id.clone(), c.line)).collect()
    };
    if calls(before) != calls(after) || pairs(before) != pairs(after) {
        bail!("the compacted log does not pair calls and results as the original does");
    }
    Ok(())
}

/// Checks that every call has its result and every result its call (parsing already
/// refuses a result without its call).
pub fn check_pairing(transcript: &Transcript) -> Result<()> {
    if let Some(call) = transcript.unanswered().first() {
        bail!("line {}: call `{}` ({}) has no result", call.line + 1, call.id, call.tool);
    }
    Ok(())
}
