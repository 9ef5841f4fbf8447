//! `tj hook <host>`: one harness's pre-tool-use payload in, that harness's JSON answer (or
//! nothing) out. Never fails: a payload tj cannot judge gets no answer (issue 11).
//!
//! This module owns what every host shares: the capped, BOM-tolerant payload, the shell call
//! inside it, the rewrite through [`crate::rewrite::rewrite`] and the copy of the tool input
//! with only `command` replaced. Each host's file owns its payload fields, its answer shape
//! and its permission judgement; `permissions` holds Claude Code's rules. What a host does
//! with a wrong answer is in `HARNESSES.md`; the rule here is simple: whenever tj cannot
//! show that the rewritten command gets the same permission the original would have got,
//! it gives no answer and the harness runs the original as if tj were not installed.
//!
//! It does not own reading stdin or writing stdout (`cli::hook`), nor the rewrite engine.

mod claude;
mod codex;
mod copilot;
mod cursor;
mod gemini;
mod permissions;

use std::io::Read;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use serde_json::{Map, Value};

use crate::env::Env;
use crate::fsx::{ReadError, read_regular};
use crate::host::Host;
use crate::rewrite::{self, Rewrite};

/// The largest payload read: a tool call is a few kilobytes; past this the hook answers
/// nothing rather than parse it.
pub const MAX_PAYLOAD: usize = 1 << 20;

/// The largest settings or rules file read while judging permissions.
const MAX_SETTINGS: u64 = 4 << 20;

/// What the hook needs besides the payload.
#[derive(Clone, Copy, Debug)]
pub struct Context<'a> {
    /// The environment snapshot (settings directories, Claude Code's entrypoint).
    pub env: &'a Env,
    /// The absolute path of the running tj, put into the rewritten line.
    pub tj: &'a Path,
    /// `rewrite.exclude` from the configuration.
    pub exclude: &'a [String],
    /// Where system-wide policy files live (`/` outside tests).
    pub system_root: &'a Path,
}

/// The hook's answer: the bytes for stdout (possibly empty) and, when it is the host's
/// no-op, why (for `TJ_HOOK_DEBUG`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// Exactly what goes to stdout.
    pub stdout: String,
    /// Why nothing was rewritten, if nothing was.
    pub skipped: Option<String>,
}

/// Why a call gets no rewrite: said on stderr only with `TJ_HOOK_DEBUG=1`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skip(pub String);

impl Skip {
    fn new(why: impl Into<String>) -> Skip {
        Skip(why.into())
    }
}

/// How long the hook waits for its payload. Hosts write it at once and close stdin; one
/// that keeps stdin open gets its answer as soon as the payload is one whole JSON value,
/// and one that sends an unfinished payload gets the no-op after this long, well within
/// the 10 s timeout `tj install` gives the hook.
pub const PAYLOAD_WAIT: Duration = Duration::from_secs(5);

/// Reads a payload from `input`: until end of file, or until the bytes read are one whole
/// JSON value (a host that never closes stdin), at most [`MAX_PAYLOAD`] bytes and for at
/// most `wait`. The error says why nothing can be judged.
pub fn read_payload(mut input: impl Read + AsFd, wait: Duration) -> Result<Vec<u8>, Skip> {
    let deadline = Instant::now() + wait;
    let mut bytes = Vec::new();
    let mut chunk = vec![0; 64 * 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let timeout = PollTimeout::try_from(left).unwrap_or(PollTimeout::MAX);
        let mut fds = [PollFd::new(input.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, timeout) {
            Ok(0) => {
                return Err(Skip::new(format!(
                    "the payload did not end within {} s",
                    wait.as_secs_f32()
                )));
            }
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(err) => return Err(Skip::new(format!("stdin cannot be read: {err}"))),
        }
        let n = match input.read(&mut chunk) {
            Ok(n) => n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(Skip::new(format!("stdin cannot be read: {err}"))),
        };
        bytes.extend_from_slice(&chunk[..n]);
        if bytes.len() > MAX_PAYLOAD {
            return Err(Skip::new(format!("the payload is larger than {MAX_PAYLOAD} bytes")));
        }
        if n == 0 || is_whole_json(&bytes) {
            return Ok(bytes);
        }
    }
}

/// Whether `bytes` are one complete JSON object (cheap test first: it must end with `}`).
fn is_whole_json(bytes: &[u8]) -> bool {
    bytes.trim_ascii_end().ends_with(b"}")
        && serde_json::from_slice::<serde::de::IgnoredAny>(strip_boms(bytes)).is_ok()
}

/// `bytes` after any leading UTF-8 byte order marks (Windows hosts send them).
fn strip_boms(bytes: &[u8]) -> &[u8] {
    let mut rest = bytes;
    while let Some(tail) = rest.strip_prefix(b"\xEF\xBB\xBF") {
        rest = tail;
    }
    rest
}

/// The host's answer to `payload`, or to the reason it could not be read.
pub fn answer(host: Host, payload: Result<&[u8], Skip>, ctx: &Context<'_>) -> Answer {
    let result =
        payload.and_then(|bytes| parse(bytes).and_then(|value| dispatch(host, &value, ctx)));
    match result {
        Ok(value) => Answer { stdout: format!("{value}\n"), skipped: None },
        Err(Skip(why)) => Answer { stdout: no_op(host).to_owned(), skipped: Some(why) },
    }
}

/// What a host reads as "go on unchanged": nothing, or `{}` where the host wants JSON on
/// every path (HARNESSES.md 1).
pub fn no_op(host: Host) -> &'static str {
    match host {
        Host::Gemini | Host::Cursor => "{}\n",
        Host::ClaudeCode | Host::Codex | Host::Copilot | Host::OpenCode => "",
    }
}

fn dispatch(host: Host, payload: &Value, ctx: &Context<'_>) -> Result<Value, Skip> {
    match host {
        Host::ClaudeCode => claude::answer(payload, ctx),
        Host::Codex => codex::answer(payload, ctx),
        Host::Gemini => gemini::answer(payload, ctx),
        Host::Cursor => cursor::answer(payload, ctx),
        Host::Copilot => copilot::answer(payload, ctx),
        Host::OpenCode => Err(Skip::new("OpenCode asks `tj rewrite` from its plugin, not a hook")),
    }
}

/// The payload as JSON, after any leading UTF-8 byte order marks (Windows hosts send them).
fn parse(bytes: &[u8]) -> Result<Value, Skip> {
    serde_json::from_slice(strip_boms(bytes))
        .map_err(|err| Skip::new(format!("the payload is not JSON: {err}")))
}

/// The shell call inside a payload: the tool's input object and its command.
struct ShellCall<'a> {
    input: &'a Map<String, Value>,
    command: &'a str,
}

/// The shell call in `payload` if its `tool_field` names one of `shells` and its
/// `input_field` holds a non-empty `command` that runs in the foreground.
fn shell_call<'a>(
    payload: &'a Value,
    tool_field: &str,
    shells: &[&str],
    input_field: &str,
) -> Result<ShellCall<'a>, Skip> {
    let tool = payload.get(tool_field).and_then(Value::as_str).unwrap_or_default();
    if !shells.contains(&tool) {
        return Err(Skip::new(format!("`{tool}` is not the shell tool")));
    }
    let input = payload
        .get(input_field)
        .and_then(Value::as_object)
        .ok_or_else(|| Skip::new(format!("`{input_field}` is not an object")))?;
    shell_input(input)
}

/// The command of a shell tool's input object.
fn shell_input(input: &Map<String, Value>) -> Result<ShellCall<'_>, Skip> {
    let command = input.get("command").and_then(Value::as_str).unwrap_or_default();
    if command.trim().is_empty() {
        return Err(Skip::new("no command"));
    }
    // A background command's output goes to a file the agent reads later, not through tj.
    for flag in ["run_in_background", "is_background", "background"] {
        if input.get(flag).is_some_and(|v| v != &Value::Bool(false) && !v.is_null()) {
            return Err(Skip::new(format!("`{flag}` is set")));
        }
    }
    Ok(ShellCall { input, command })
}

/// The command rewritten for `host`, or why not.
fn rewrite_for(command: &str, host: Host, ctx: &Context<'_>) -> Result<Rewrite, Skip> {
    let rctx =
        rewrite::Context { env: ctx.env, tj: ctx.tj, host: Some(host), exclude: ctx.exclude };
    rewrite::rewrite(command, &rctx).map_err(|why| Skip::new(format!("not eligible: {why}")))
}

/// `input` with `command` replaced and every other key kept (hosts *replace* the input with
/// what the hook returns: a command-only object would drop `timeout`).
fn with_command(input: &Map<String, Value>, command: &str) -> Value {
    let mut out = input.clone();
    out.insert("command".to_owned(), Value::String(command.to_owned()));
    Value::Object(out)
}

/// The reason shown with a decision: what tj did, and the command as the agent wrote it.
fn reason(original: &str) -> String {
    const MAX: usize = 80;
    let original = original.trim();
    let shown = match original.char_indices().nth(MAX) {
        Some((end, _)) => format!("{}…", &original[..end]),
        None => original.to_owned(),
    };
    format!("tj: reduced output for the agent (original: {shown})")
}

/// The simple commands of the *rewritten* line, as source text: each original segment with
/// the inserted `tj run … -- ` where the rewrite put it. Harnesses that judge permissions
/// after the hook see these.
fn rewritten_segments(original: &str, rewrite: &Rewrite) -> Vec<String> {
    let new = rewrite.line.as_str();
    // The rewrite only inserts: the first differing byte is where, the length difference
    // how much.
    let at = original.bytes().zip(new.bytes()).take_while(|(a, b)| a == b).count();
    let added = new.len().saturating_sub(original.len());
    let mut out = Vec::new();
    let mut from = 0;
    for segment in &rewrite.segments {
        let Some(found) = original.get(from..).and_then(|rest| rest.find(&segment.text)) else {
            continue;
        };
        let start = from + found;
        let end = start + segment.text.len();
        from = end;
        let range = if at < start {
            start + added..end + added
        } else if at <= end {
            start..end + added
        } else {
            start..end
        };
        if let Some(text) = new.get(range) {
            out.push(text.to_owned());
        }
    }
    // Whatever went wrong above, the whole line is judged too.
    out.push(new.trim().to_owned());
    out
}

/// A JSON settings file: `Ok(None)` when there is none, an error when it exists but cannot
/// be read or parsed (the host would then not run with what tj thinks it runs with).
fn read_json(path: &Path, comments: bool) -> Result<Option<Value>, Skip> {
    let bytes = match read_regular(path, true, MAX_SETTINGS) {
        Ok(bytes) => bytes,
        Err(ReadError::Io(err)) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(ReadError::Io(err))
            if err.kind() == std::io::ErrorKind::NotADirectory
                || err.raw_os_error() == Some(libc::ENOTDIR) =>
        {
            return Ok(None);
        }
        Err(_) => return Err(Skip::new(format!("cannot read `{}`", path.display()))),
    };
    let text = String::from_utf8_lossy(&bytes);
    let text = if comments { strip_json_comments(&text) } else { text.into_owned() };
    let text = text.trim_start_matches('\u{feff}');
    serde_json::from_str(text)
        .map(Some)
        .map_err(|err| Skip::new(format!("`{}` does not parse: {err}", path.display())))
}

/// `text` without `//` and `/* */` comments outside strings (Gemini CLI's settings allow
/// them).
fn strip_json_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for c in chars.by_ref() {
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

/// The working directory the payload names (`cwd`), else tj's own.
fn payload_cwd(payload: &Value, env: &Env) -> Option<PathBuf> {
    payload
        .get("cwd")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .or_else(|| env.cwd.clone())
}

/// Returns true if and only if `words` starts with `prefix` word for word, the first word
/// also compared by its last path component (`/usr/bin/cargo` is `cargo`).
fn starts_with_words(words: &[String], prefix: &[String]) -> bool {
    if prefix.is_empty() || words.len() < prefix.len() {
        return false;
    }
    words.iter().zip(prefix).enumerate().all(|(i, (w, p))| {
        w == p || (i == 0 && Path::new(w).file_name().is_some_and(|name| name == p.as_str()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_byte_order_marks_are_stripped() {
        assert_eq!(parse(b"\xEF\xBB\xBF\xEF\xBB\xBF{}").unwrap(), serde_json::json!({}));
        assert!(parse(b"\xEF\xBB{}").is_err());
    }

    /// A file holding `bytes`, open for reading.
    fn file_with(bytes: &[u8]) -> std::fs::File {
        use std::io::{Seek, Write};
        let mut file = tempfile_in_target();
        file.write_all(bytes).unwrap();
        file.rewind().unwrap();
        file
    }

    fn tempfile_in_target() -> std::fs::File {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let path = std::env::temp_dir().join(format!("tj-payload-{}-{n}", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        let _ = std::fs::remove_file(&path);
        file
    }

    #[test]
    fn an_oversized_payload_is_not_read() {
        let wait = Duration::from_secs(5);
        let exact = read_payload(file_with(&vec![b' '; MAX_PAYLOAD]), wait);
        assert_eq!(exact.map(|b| b.len()), Ok(MAX_PAYLOAD));
        let over = read_payload(file_with(&vec![b' '; MAX_PAYLOAD + 1]), wait);
        assert!(over.is_err_and(|e| e.0.contains("larger than")));
    }

    #[test]
    fn reading_stops_at_a_whole_json_value_or_the_deadline() {
        let (read, mut write) = std::io::pipe().unwrap();
        std::io::Write::write_all(&mut write, b"\xEF\xBB\xBF{\"a\": \"}\"}\n").unwrap();
        let got = read_payload(read, Duration::from_secs(5)).unwrap();
        assert_eq!(got, b"\xEF\xBB\xBF{\"a\": \"}\"}\n");

        let (read, mut write) = std::io::pipe().unwrap();
        std::io::Write::write_all(&mut write, b"{\"a\": \"}").unwrap();
        let start = Instant::now();
        let got = read_payload(read, Duration::from_millis(200));
        assert!(got.is_err_and(|e| e.0.contains("did not end")));
        assert!(start.elapsed() < Duration::from_secs(3));
        drop(write);
    }

    #[test]
    fn comments_outside_strings_are_stripped() {
        let text = "{\"a\": \"//x/*y*/\", // c\n/* d */ \"b\": 1}";
        let v: Value = serde_json::from_str(&strip_json_comments(text)).unwrap();
        assert_eq!(v, serde_json::json!({"a": "//x/*y*/", "b": 1}));
    }

    #[test]
    fn the_reason_cuts_a_long_command() {
        assert_eq!(
            reason(" cargo test "),
            "tj: reduced output for the agent (original: cargo test)"
        );
        let long = "x".repeat(200);
        assert!(reason(&long).ends_with("x…)"));
        assert!(reason(&long).len() < 150);
    }

    #[test]
    fn the_rewritten_segments_carry_the_insertion() {
        let rewrite = Rewrite {
            line: "cd app && /t run -- cargo test".to_owned(),
            segments: vec![
                rewrite::Segment { text: "cd app".to_owned(), words: vec![] },
                rewrite::Segment { text: "cargo test".to_owned(), words: vec![] },
            ],
        };
        assert_eq!(
            rewritten_segments("cd app && cargo test", &rewrite),
            ["cd app", "/t run -- cargo test", "cd app && /t run -- cargo test"]
        );
    }

    #[test]
    fn words_match_a_prefix_by_word_and_program_name() {
        let w = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        assert!(starts_with_words(&w("cargo test --lib"), &w("cargo test")));
        assert!(starts_with_words(&w("/usr/bin/cargo test"), &w("cargo")));
        assert!(!starts_with_words(&w("cargo testx"), &w("cargo test")));
        assert!(!starts_with_words(&w("cargo"), &w("cargo test")));
    }
}
