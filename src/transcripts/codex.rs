//! Codex's rollouts: one `{"timestamp", "type", "payload"}` object a line
//! (`codex-rs/protocol`'s `RolloutLine`).
//!
//! - `session_meta`: the session's `id` and `cwd` (the first one is the session's; the file
//!   name ends with the id too, which stands in when the line is missing).
//! - `event_msg` with payload `type` `token_count`: `info.total_token_usage` is the
//!   session's running total and `info.last_token_usage` the last API call's, each
//!   `{input_tokens, cached_input_tokens, output_tokens, reasoning_output_tokens,
//!   total_tokens}`. The session's usage is the last total (totals are cumulative: summing
//!   them would count each call again and again); each call is a `last_token_usage` whose
//!   total moved (Codex repeats the event when only its rate limits changed).
//!   `input_tokens` includes `cached_input_tokens`, which is taken out (see [`Usage`]). Codex
//!   records no cache writes; a `cache_write_input_tokens` field, where a version writes
//!   one, is read, and assumed to be part of `input_tokens` as the cached part is.
//! - `response_item` with payload `type` `function_call`: a shell call when `name` is
//!   `shell` or `container.exec` (`arguments`, a JSON string, has `command` as an argv),
//!   `shell_command` (`command` as a string) or `exec_command` (`cmd`); `local_shell_call`
//!   has `action.command`. Its output is the `function_call_output` (or
//!   `local_shell_call_output`) with the same `call_id`: `output`, a string or a list of
//!   content items, is what the model was given. Output read later from a running command
//!   (`write_stdin`) is not attributed to it.

use std::collections::HashMap;
use std::io::{self, Read};
use std::path::Path;

use serde::Deserialize;

use super::lenient::{Command, Num, Obj, Output, Text};
use super::{Harness, Lines, Session, ShellCall, Usage, Via};

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(default, borrow)]
    timestamp: Text<'a>,
    #[serde(default, borrow, rename = "type")]
    kind: Text<'a>,
    #[serde(default, borrow)]
    payload: Obj<Payload<'a>>,
}

/// The fields of every payload type that is read, each absent from the others.
#[derive(Deserialize)]
struct Payload<'a> {
    #[serde(default, borrow, rename = "type")]
    kind: Text<'a>,
    #[serde(default, borrow)]
    id: Text<'a>,
    #[serde(default, borrow)]
    cwd: Text<'a>,
    #[serde(default)]
    info: Obj<Info>,
    #[serde(default, borrow)]
    name: Text<'a>,
    #[serde(default, borrow)]
    arguments: Text<'a>,
    #[serde(default, borrow)]
    call_id: Text<'a>,
    #[serde(default)]
    output: Output,
    #[serde(default)]
    action: Obj<Action>,
}

#[derive(Deserialize)]
struct Info {
    #[serde(default)]
    total_token_usage: Obj<RawUsage>,
    #[serde(default)]
    last_token_usage: Obj<RawUsage>,
}

#[derive(Clone, Copy, Deserialize, PartialEq, Eq)]
#[allow(clippy::struct_field_names)] // the names are Codex's
struct RawUsage {
    #[serde(default)]
    input_tokens: Num,
    #[serde(default)]
    cached_input_tokens: Num,
    #[serde(default)]
    cache_write_input_tokens: Num,
    #[serde(default)]
    output_tokens: Num,
}

impl RawUsage {
    fn usage(&self) -> Usage {
        let cached = self.cached_input_tokens.0.unwrap_or(0);
        let written = self.cache_write_input_tokens.0;
        let input = self.input_tokens.0.unwrap_or(0);
        Usage {
            input: input.saturating_sub(cached).saturating_sub(written.unwrap_or(0)),
            cache_read: cached,
            cache_write: written,
            output: self.output_tokens.0.unwrap_or(0),
        }
    }
}

#[derive(Deserialize)]
struct Action {
    #[serde(default)]
    command: Command,
}

/// The arguments of a shell function call.
#[derive(Deserialize)]
struct Args {
    #[serde(default)]
    command: Command,
    #[serde(default)]
    cmd: Command,
}

/// Function names whose calls run a shell command.
const SHELL_FUNCTIONS: &[&str] = &["shell", "container.exec", "shell_command", "exec_command"];

/// One rollout, being read.
struct File {
    session: Session,
    /// The id from `session_meta` was seen.
    named: bool,
    last_total: Option<RawUsage>,
    pending: HashMap<String, usize>,
}

/// Reads one rollout file (at `path`, whose name gives the session id if no line does).
pub(crate) fn read<R: Read>(lines: &mut Lines<R>, path: &Path) -> io::Result<Vec<Session>> {
    let fallback = id_from_name(path);
    let mut file = File {
        session: Session::new(Harness::Codex, fallback),
        named: false,
        last_total: None,
        pending: HashMap::new(),
    };
    let mut bad = 0;
    while let Some(bytes) = lines.next_line()? {
        match serde_json::from_slice::<Line<'_>>(bytes) {
            Ok(line) => file.add(line),
            Err(_) => bad += 1,
        }
    }
    lines.skipped += bad;
    let mut session = file.session;
    session.api_calls = session.calls.len();
    if let Some(total) = file.last_total {
        session.usage = total.usage();
    }
    Ok(vec![session])
}

/// The session id at the end of a rollout's name (`rollout-2026-11-30T10-00-00-<uuid>.jsonl`),
/// or the whole stem.
fn id_from_name(path: &Path) -> String {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
    let tail = stem.len().checked_sub(36).and_then(|at| stem.get(at..));
    match tail {
        Some(uuid) if uuid.bytes().filter(|&c| c == b'-').count() == 4 => uuid.to_owned(),
        _ => stem.to_owned(),
    }
}

impl File {
    fn add(&mut self, line: Line<'_>) {
        let time = line.timestamp.get().and_then(super::parse_time);
        self.session.saw(time);
        let Some(payload) = line.payload.0 else { return };
        match (line.kind.get(), payload.kind.get()) {
            (Some("session_meta"), _) => {
                if !self.named
                    && let Some(id) = payload.id.get()
                {
                    self.session.id = id.to_owned();
                    self.named = true;
                }
                if self.session.cwd.is_none() {
                    self.session.cwd = payload.cwd.get().map(str::to_owned);
                }
            }
            (Some("event_msg"), Some("token_count")) => self.add_tokens(&payload),
            (Some("response_item"), Some("function_call"))
                if payload.name.get().is_some_and(|n| SHELL_FUNCTIONS.contains(&n)) =>
            {
                let args =
                    payload.arguments.get().and_then(|a| serde_json::from_str::<Args>(a).ok());
                let command = args.and_then(|a| a.command.0.or(a.cmd.0));
                self.add_call(&payload, command, time);
            }
            (Some("response_item"), Some("local_shell_call")) => {
                let command = payload.action.0.as_ref().and_then(|a| a.command.0.clone());
                self.add_call(&payload, command, time);
            }
            (Some("response_item"), Some("function_call_output" | "local_shell_call_output")) => {
                self.add_result(&payload, time);
            }
            _ => {}
        }
    }

    fn add_tokens(&mut self, payload: &Payload<'_>) {
        let Some(info) = &payload.info.0 else { return };
        let Some(total) = info.total_token_usage.0 else { return };
        if self.last_total == Some(total) {
            return;
        }
        self.last_total = Some(total);
        if let Some(last) = info.last_token_usage.0 {
            self.session.calls.push(last.usage());
        }
    }

    fn add_call(&mut self, payload: &Payload<'_>, command: Option<String>, time: Option<u64>) {
        let (Some(id), Some(command)) = (payload.call_id.get(), command) else { return };
        if self.pending.contains_key(id) {
            return;
        }
        let via = if super::runs_tj(&command) { Via::Command } else { Via::No };
        let shell = &mut self.session.shell;
        shell.push(ShellCall { command: super::clip(command), time, via, ..ShellCall::default() });
        self.pending.insert(id.to_owned(), shell.len() - 1);
    }

    fn add_result(&mut self, payload: &Payload<'_>, time: Option<u64>) {
        let Some(id) = payload.call_id.get() else { return };
        let Some(&c) = self.pending.get(id) else { return };
        let call = &mut self.session.shell[c];
        if call.done.is_some() {
            return;
        }
        call.done = time.or(call.time);
        call.chars = payload.output.tally.chars();
        call.tokens = payload.output.tally.tokens();
        if call.via == Via::No && payload.output.marker {
            call.via = Via::Marker;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_id_comes_from_the_rollout_name_when_no_line_gives_it() {
        let path =
            Path::new("/x/rollout-2026-11-30T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl");
        assert_eq!(id_from_name(path), "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b");
        assert_eq!(id_from_name(Path::new("/x/rollout-odd.jsonl")), "rollout-odd");
    }

    #[test]
    fn the_last_total_is_the_usage_and_repeats_are_not_calls() {
        let count = |total_in: u32, total_cached: u32, last_in: u32| {
            format!(
                r#"{{"timestamp":"2026-11-30T10:00:01.000Z","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{total_in},"cached_input_tokens":{total_cached},"output_tokens":10,"reasoning_output_tokens":4,"total_tokens":0}},"last_token_usage":{{"input_tokens":{last_in},"cached_input_tokens":0,"output_tokens":5,"reasoning_output_tokens":0,"total_tokens":0}},"model_context_window":272000}},"rate_limits":null}}}}"#
            )
        };
        let text = [count(100, 0, 100), count(100, 0, 100), count(250, 80, 150)].join("\n");
        let mut lines = Lines::new(text.as_bytes(), 1 << 20);
        let sessions = read(&mut lines, Path::new("rollout-x.jsonl")).unwrap();
        assert_eq!(sessions[0].calls.len(), 2);
        assert_eq!(
            sessions[0].usage,
            Usage { input: 170, cache_read: 80, cache_write: None, output: 10 }
        );
    }
}
