//! Claude Code's transcripts: one JSON object a line, each with `type` (`user`,
//! `assistant`, `summary`, `system`, …), `sessionId`, `timestamp`, `cwd` and a `message`.
//!
//! - **Usage.** An assistant line's `message.usage` holds `input_tokens`,
//!   `cache_creation_input_tokens`, `cache_read_input_tokens` and `output_tokens` of the API
//!   response it belongs to. Claude Code writes one line per content block of a response
//!   (thinking, text, each tool call), and every one repeats the response's usage, with the
//!   same `message.id` (and `requestId`); `output_tokens` may grow from line to line
//!   (anthropics/claude-code#6805, #87303). So usage is counted once per message id (else
//!   per request id; a line with neither counts alone): the last line's input and cache
//!   counts, the largest output count. A message id an earlier file already counted (a
//!   resumed or forked session copies its history) is not counted again.
//! - **Shell calls.** An assistant content block `{"type": "tool_use", "id", "name":
//!   "Bash", "input": {"command"}}` is a call, once per id; its output is the user line's
//!   block `{"type": "tool_result", "tool_use_id", "content"}`, a string or a list of
//!   `{"type": "text", "text"}` blocks: what the model was given.
//!
//! Sessions are grouped by `sessionId`, so a subagent's transcript (its own file, whose lines
//! carry the parent's `sessionId`) counts in its parent session.

use std::collections::{HashMap, HashSet};
use std::io::{self, Read};

use serde::Deserialize;

use super::lenient::{Flag, Num, Obj, Output, Text};
use super::{Harness, Lines, Session, ShellCall, Usage, Via};

/// The parts of a line that are read; serde skips the rest without building it.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(default, borrow, rename = "sessionId")]
    session_id: Text<'a>,
    #[serde(default, borrow)]
    timestamp: Text<'a>,
    #[serde(default, borrow)]
    cwd: Text<'a>,
    #[serde(default, borrow, rename = "requestId")]
    request_id: Text<'a>,
    #[serde(default, rename = "isSidechain")]
    sidechain: Flag,
    #[serde(default, borrow)]
    message: Obj<Message<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(default, borrow)]
    id: Text<'a>,
    #[serde(default)]
    usage: Obj<RawUsage>,
    #[serde(default, borrow)]
    content: Blocks<'a>,
}

#[derive(Deserialize)]
#[allow(clippy::struct_field_names)] // the names are Anthropic's
struct RawUsage {
    #[serde(default)]
    input_tokens: Num,
    #[serde(default)]
    cache_creation_input_tokens: Num,
    #[serde(default)]
    cache_read_input_tokens: Num,
    #[serde(default)]
    output_tokens: Num,
}

/// A message's content blocks; a plain string (a person's prompt) has none.
#[derive(Default)]
struct Blocks<'a>(Vec<Block<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for Blocks<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
            type Value = Blocks<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                let mut blocks = Vec::new();
                while let Some(block) = seq.next_element::<Obj<Block<'a>>>()? {
                    blocks.extend(block.0);
                }
                Ok(Blocks(blocks))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                while map.next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?.is_some() {}
                Ok(Blocks::default())
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Blocks::default())
            }
            fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Blocks::default())
            }
            fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Blocks::default())
            }
            fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Blocks::default())
            }
            fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Blocks::default())
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                Ok(Blocks::default())
            }
        }
        deserializer.deserialize_any(V(std::marker::PhantomData))
    }
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(default, borrow, rename = "type")]
    kind: Text<'a>,
    #[serde(default, borrow)]
    id: Text<'a>,
    #[serde(default, borrow)]
    name: Text<'a>,
    #[serde(default, borrow)]
    input: Obj<Input<'a>>,
    #[serde(default, borrow)]
    tool_use_id: Text<'a>,
    #[serde(default)]
    content: Output,
}

#[derive(Deserialize)]
struct Input<'a> {
    #[serde(default, borrow)]
    command: Text<'a>,
}

/// The tool whose calls are shell commands.
const SHELL_TOOL: &str = "Bash";

/// One API response's usage, as counted so far.
struct Response {
    session: usize,
    usage: Usage,
    /// A subagent's (`isSidechain`).
    sidechain: bool,
}

/// What one file holds, being built.
#[derive(Default)]
struct File {
    sessions: Vec<Session>,
    by_id: HashMap<String, usize>,
    responses: Vec<Response>,
    /// Message key → index in `responses`.
    messages: HashMap<String, usize>,
    /// Tool-use id → (session index, shell call index), for the results to come.
    tools: HashMap<String, (usize, usize)>,
    seen_tools: HashSet<String>,
}

/// Reads one transcript file. `claimed` holds the message keys counted by the files read
/// before it; this file's are added.
pub(crate) fn read<R: Read>(
    lines: &mut Lines<R>,
    claimed: &mut HashSet<String>,
) -> io::Result<Vec<Session>> {
    let mut file = File::default();
    let mut bad = 0;
    while let Some(bytes) = lines.next_line()? {
        match serde_json::from_slice::<Line<'_>>(bytes) {
            Ok(line) => file.add(line, claimed),
            Err(_) => bad += 1,
        }
    }
    lines.skipped += bad;
    Ok(file.finish())
}

impl File {
    fn add(&mut self, line: Line<'_>, claimed: &mut HashSet<String>) {
        let Some(id) = line.session_id.get() else { return };
        let s = match self.by_id.get(id) {
            Some(&s) => s,
            None => {
                self.sessions.push(Session::new(Harness::ClaudeCode, id.to_owned()));
                self.by_id.insert(id.to_owned(), self.sessions.len() - 1);
                self.sessions.len() - 1
            }
        };
        let time = line.timestamp.get().and_then(super::parse_time);
        let session = &mut self.sessions[s];
        session.saw(time);
        if session.cwd.is_none() {
            session.cwd = line.cwd.get().map(str::to_owned);
        }
        let Some(message) = line.message.0 else { return };
        if let Some(usage) = message.usage.0 {
            let key = message.id.get().or(line.request_id.get());
            self.add_usage(s, key, &usage, line.sidechain.0, claimed);
        }
        for block in message.content.0 {
            match block.kind.get() {
                Some("tool_use") => self.add_call(s, &block, time),
                Some("tool_result") => self.add_result(&block, time),
                _ => {}
            }
        }
    }

    /// Counts a response's usage once per key (see the module doc).
    fn add_usage(
        &mut self,
        session: usize,
        key: Option<&str>,
        raw: &RawUsage,
        sidechain: bool,
        claimed: &mut HashSet<String>,
    ) {
        let usage = Usage {
            input: raw.input_tokens.0.unwrap_or(0),
            cache_read: raw.cache_read_input_tokens.0.unwrap_or(0),
            cache_write: Some(raw.cache_creation_input_tokens.0.unwrap_or(0)),
            output: raw.output_tokens.0.unwrap_or(0),
        };
        if let Some(key) = key {
            if let Some(&r) = self.messages.get(key) {
                let counted = &mut self.responses[r].usage;
                let output = counted.output.max(usage.output);
                *counted = Usage { output, ..usage };
                return;
            }
            if !claimed.insert(key.to_owned()) {
                return;
            }
            self.messages.insert(key.to_owned(), self.responses.len());
        }
        self.responses.push(Response { session, usage, sidechain });
    }

    fn add_call(&mut self, s: usize, block: &Block<'_>, time: Option<u64>) {
        let (Some(id), Some(SHELL_TOOL)) = (block.id.get(), block.name.get()) else { return };
        let Some(command) = block.input.0.as_ref().and_then(|i| i.command.get()) else { return };
        if !self.seen_tools.insert(id.to_owned()) {
            return;
        }
        let shell = &mut self.sessions[s].shell;
        let via = if super::runs_tj(command) { Via::Command } else { Via::No };
        shell.push(ShellCall {
            command: super::clip(command.to_owned()),
            time,
            via,
            ..ShellCall::default()
        });
        self.tools.insert(id.to_owned(), (s, shell.len() - 1));
    }

    fn add_result(&mut self, block: &Block<'_>, time: Option<u64>) {
        let Some(id) = block.tool_use_id.get() else { return };
        // A result is taken once: the entry goes when it is.
        let Some((s, c)) = self.tools.remove(id) else { return };
        let call = &mut self.sessions[s].shell[c];
        call.done = time;
        call.chars = block.content.tally.chars();
        call.tokens = block.content.tally.tokens();
        if call.via == Via::No && block.content.marker {
            call.via = Via::Marker;
        }
    }

    fn finish(self) -> Vec<Session> {
        let mut sessions = self.sessions;
        for r in self.responses {
            let session = &mut sessions[r.session];
            session.usage.add(&r.usage);
            session.api_calls += 1;
            if !r.sidechain {
                session.calls.push(r.usage);
            }
        }
        sessions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_text(text: &str) -> (Vec<Session>, usize) {
        let mut lines = Lines::new(text.as_bytes(), 1 << 20);
        let sessions = read(&mut lines, &mut HashSet::new()).unwrap();
        (sessions, lines.skipped)
    }

    #[test]
    fn repeated_message_ids_count_once_with_the_final_output() {
        let line = |block: &str, output: u32| {
            format!(
                r#"{{"type":"assistant","sessionId":"s1","timestamp":"2026-11-30T10:00:00Z","requestId":"req_1","message":{{"id":"msg_1","role":"assistant","content":[{block}],"usage":{{"input_tokens":3,"cache_creation_input_tokens":100,"cache_read_input_tokens":900,"output_tokens":{output}}}}}}}"#
            )
        };
        let text = [
            line(r#"{"type":"thinking","thinking":"hm","signature":"x"}"#, 1),
            line(r#"{"type":"text","text":"Running the tests."}"#, 1),
            line(r#"{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"cargo test"}}"#, 42),
        ]
        .join("\n");
        let (sessions, skipped) = read_text(&text);
        assert_eq!(skipped, 0);
        assert_eq!(sessions.len(), 1);
        assert_eq!(
            sessions[0].usage,
            Usage { input: 3, cache_read: 900, cache_write: Some(100), output: 42 }
        );
        assert_eq!(sessions[0].calls.len(), 1);
        assert_eq!(sessions[0].shell.len(), 1);
        assert_eq!(sessions[0].shell[0].command, "cargo test");
    }

    #[test]
    fn a_subagents_calls_are_billed_but_left_out_of_the_trend() {
        let line = |id: &str, sidechain: bool| {
            format!(
                r#"{{"type":"assistant","isSidechain":{sidechain},"sessionId":"s","message":{{"id":"{id}","usage":{{"input_tokens":1,"cache_creation_input_tokens":2,"cache_read_input_tokens":3,"output_tokens":4}}}}}}"#
            )
        };
        let text = [line("m1", false), line("m2", true), line("m3", false)].join("\n");
        let (sessions, _) = read_text(&text);
        assert_eq!(sessions[0].api_calls, 3);
        assert_eq!(sessions[0].calls.len(), 2);
        assert_eq!(sessions[0].usage.output, 12);
    }

    #[test]
    fn a_result_is_measured_and_its_marker_seen() {
        let text = concat!(
            r#"{"type":"assistant","sessionId":"s","message":{"id":"m","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"cargo build"}},{"type":"tool_use","id":"t2","name":"Read","input":{"file_path":"x"}}]}}"#,
            "\n",
            r#"{"type":"user","sessionId":"s","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":[{"type":"text","text":"error[E0308]\n[tj] 120 of 160 lines omitted"}]},{"tool_use_id":"t2","type":"tool_result","content":"file text"}]}}"#,
            "\n",
            "{not json\n",
            r#"{"type":"user","sessionId":"s","message":{"role":"user","content":"thanks"}}"#,
        );
        let (sessions, skipped) = read_text(text);
        assert_eq!(skipped, 1);
        let call = &sessions[0].shell[0];
        assert_eq!(sessions[0].shell.len(), 1);
        assert_eq!(call.chars, 42); // "error[E0308]" 12, "\n" 1, "[tj] 120 of 160 lines omitted" 29
        assert_eq!(call.via, Via::Marker);
    }
}
