//! `tj reduce-json`: tokenjuice's machine protocol, so that an adapter written for
//! tokenjuice works unchanged.
//!
//! Input: a `ToolExecutionInput` object (`toolName`, `command`, `argv`, `combinedText` or
//! `stdout`/`stderr`, `exitCode`, `cwd`, …) or `{input, options}`. Output: a superset of
//! tokenjuice's `CompactResult`. Bad input gives `{"error": …}` on stdout and exit 1.
//!
//! The output text is whatever the tool printed, so it is read leniently: a `\u0000` is
//! text like any other, and what JSON can carry but Rust strings cannot — a lone surrogate
//! escape (`"\ud800"`, which JavaScript's `JSON.stringify` emits for half of a cut emoji),
//! or raw bytes that are not UTF-8 — becomes U+FFFD instead of failing the request. Only the
//! fields that name things (`toolName`, `command`, `cwd`) still refuse a NUL.

use std::path::PathBuf;

use anyhow::Result;
use serde_json::{Map, Value};

use super::reduce::{Request, reduce_and_store};
use crate::emit;
use crate::env::Env;
use crate::exit::Status;

/// Reduce a tool execution given as JSON (tokenjuice's reduce-json protocol)
///
/// Reads a ToolExecutionInput object, or {"input": …, "options": …}, from FILE or stdin and
/// prints the result as JSON: inlineText, facts, stats, classification, rawRef, plus tj's
/// exitCode, tokens, lossless and omitted. tj also reads `input.cols`, the width of the PTY
/// the output was captured from, if it was.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The request; stdin when absent or `-`
    file: Option<PathBuf>,
}

pub(crate) fn run(args: &Args, env: &Env) -> Result<Status> {
    let bytes = super::read_input(args.file.as_deref())?;
    match parse(&bytes) {
        Ok(request) => {
            let argv = request.argv;
            let outcome = reduce_and_store(
                request.text.as_bytes(),
                &Request {
                    argv: &argv,
                    command: request.command.as_deref(),
                    tool_name: Some(&request.tool_name),
                    exit_code: request.exit_code,
                    raw: request.raw,
                    classifier: request.classifier.as_deref(),
                    cols: request.cols,
                    no_redact: false,
                    give_back: true,
                },
                env,
            );
            emit::json(&outcome.to_json(request.duration_ms, None))?;
            Ok(Status::Ok)
        }
        Err(errors) => {
            emit::json(&serde_json::json!({ "error": errors.join("\n"), "errors": errors }))?;
            Ok(Status::Failure)
        }
    }
}

/// A validated request.
#[derive(Debug, Default, PartialEq)]
struct Parsed {
    tool_name: String,
    command: Option<String>,
    argv: Vec<String>,
    text: String,
    exit_code: Option<i64>,
    duration_ms: Option<u64>,
    raw: bool,
    classifier: Option<String>,
    /// tj: the width of the PTY the output was captured from (`input.cols`), so progress
    /// bars that rely on autowrap render as they did.
    cols: Option<u16>,
}

fn parse(bytes: &[u8]) -> Result<Parsed, Vec<String>> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(vec!["reduce-json requires a JSON object on stdin or in a file".to_owned()]);
    }
    let text = String::from_utf8_lossy(bytes);
    let value: Value = serde_json::from_str(&replace_lone_surrogates(&text))
        .map_err(|e| vec![format!("invalid JSON: {e}")])?;
    let Value::Object(map) = value else {
        return Err(vec!["reduce-json payload must be an object".to_owned()]);
    };
    // A direct ToolExecutionInput has a toolName; otherwise it is {input, options}.
    match input(&map) {
        Ok(parsed) => Ok(parsed),
        Err(direct_errors) => {
            let Some(Value::Object(inner)) = map.get("input") else {
                return Err(direct_errors);
            };
            let mut parsed = input(inner)?;
            match map.get("options") {
                None | Some(Value::Null) => {}
                Some(Value::Object(opts)) => options(opts, &mut parsed)?,
                Some(_) => return Err(vec!["options must be an object".to_owned()]),
            }
            Ok(parsed)
        }
    }
}

fn input(map: &Map<String, Value>) -> Result<Parsed, Vec<String>> {
    let mut errors = Vec::new();
    let string = |key: &str, errors: &mut Vec<String>| match map.get(key) {
        None | Some(Value::Null) => None,
        // The output itself may hold anything; a name may not hold a NUL.
        Some(Value::String(s)) if s.contains('\0') && !TEXT_KEYS.contains(&key) => {
            errors.push(format!("input.{key} must not contain NUL bytes"));
            None
        }
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            errors.push(format!("input.{key} must be a string"));
            None
        }
    };
    let tool_name = string("toolName", &mut errors).unwrap_or_default();
    if tool_name.is_empty() && !errors.iter().any(|e| e.contains("toolName")) {
        errors.push("input.toolName must be a non-empty string".to_owned());
    }
    let command = string("command", &mut errors);
    let combined = string("combinedText", &mut errors);
    let stdout = string("stdout", &mut errors);
    let stderr = string("stderr", &mut errors);
    let _ = string("cwd", &mut errors);
    let argv = match map.get("argv") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
            items.iter().filter_map(Value::as_str).map(str::to_owned).collect()
        }
        Some(_) => {
            errors.push("input.argv must be an array of strings".to_owned());
            Vec::new()
        }
    };
    let mut number = |key: &str| match map.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.as_f64().is_some_and(f64::is_finite) => n.as_f64(),
        Some(_) => {
            errors.push(format!("input.{key} must be a finite number"));
            None
        }
    };
    let exit_code = number("exitCode").map(|n| n as i64);
    let duration_ms = number("durationMs").map(|n| n.max(0.0) as u64);
    let cols = number("cols");
    for key in ["startedAt", "finishedAt"] {
        number(key);
    }
    let cols = match cols {
        Some(n) if (1.0..=f64::from(u16::MAX)).contains(&n) => Some(n as u16),
        Some(_) => {
            errors.push("input.cols must be a terminal width from 1 to 65535".to_owned());
            None
        }
        None => None,
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    // tokenjuice's buildRawText: combinedText, else stdout and stderr joined by a newline.
    let text = combined.unwrap_or_else(|| match (stdout, stderr) {
        (Some(o), Some(e)) if !o.is_empty() && !e.is_empty() => format!("{o}\n{e}"),
        (Some(o), Some(e)) => o + &e,
        (Some(o), None) => o,
        (None, Some(e)) => e,
        (None, None) => String::new(),
    });
    Ok(Parsed { tool_name, command, argv, text, exit_code, duration_ms, cols, ..Parsed::default() })
}

/// The fields that carry the tool's output, taken as they are.
const TEXT_KEYS: [&str; 3] = ["combinedText", "stdout", "stderr"];

/// `json` with every `\uXXXX` escape of a lone surrogate (one not part of a high–low pair)
/// replaced by `\ufffd`, which serde_json refuses in a `String` where JavaScript's
/// `JSON.stringify` produces it. Borrows when there is none. Only escapes are looked at: in
/// valid JSON a backslash occurs only inside strings, and `\\` is skipped as a pair, so
/// `"\\ud800"` (a backslash, then text) is left alone.
fn replace_lone_surrogates(json: &str) -> std::borrow::Cow<'_, str> {
    if !json.contains("\\u") {
        return std::borrow::Cow::Borrowed(json);
    }
    let bytes = json.as_bytes();
    let escape = |i: usize| -> Option<u16> {
        let hex = json.get(i + 2..i + 6)?;
        (bytes.get(i + 1) == Some(&b'u')).then(|| u16::from_str_radix(hex, 16).ok()).flatten()
    };
    let mut out = String::with_capacity(json.len());
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        let Some(unit) = escape(i) else {
            i += 2; // `\\`, `\"`, `\n`, …: never the start of a `\u` escape
            continue;
        };
        let paired = (0xd800..0xdc00).contains(&unit)
            && bytes.get(i + 6) == Some(&b'\\')
            && escape(i + 6).is_some_and(|low| (0xdc00..0xe000).contains(&low));
        if paired {
            i += 12;
        } else if (0xd800..0xe000).contains(&unit) {
            out.push_str(&json[copied..i]);
            out.push_str("\\ufffd");
            i += 6;
            copied = i;
        } else {
            i += 6;
        }
    }
    if copied == 0 {
        return std::borrow::Cow::Borrowed(json);
    }
    out.push_str(&json[copied..]);
    std::borrow::Cow::Owned(out)
}

fn options(map: &Map<String, Value>, parsed: &mut Parsed) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    for key in ["raw", "noOmit", "store", "trace", "recordStats"] {
        match map.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::Bool(b)) => {
                // noOmit means "drop nothing": the whole original, as --raw.
                if matches!(key, "raw" | "noOmit") && *b {
                    parsed.raw = true;
                }
            }
            Some(_) => errors.push(format!("options.{key} must be a boolean")),
        }
    }
    match map.get("classifier") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => parsed.classifier = Some(s.clone()),
        Some(_) => errors.push("options.classifier must be a string".to_owned()),
    }
    // maxInlineChars is accepted and not applied: clamping text blindly would cut evidence.
    match map.get("maxInlineChars") {
        None | Some(Value::Null) => {}
        Some(Value::Number(n)) if n.as_u64().is_some_and(|n| n > 0) => {}
        Some(_) => errors.push("options.maxInlineChars must be a positive integer".to_owned()),
    }
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direct_input_parses() {
        let p = parse(
            br#"{"toolName":"exec","command":"cargo test","combinedText":"x","exitCode":101}"#,
        )
        .unwrap();
        assert_eq!(p.command.as_deref(), Some("cargo test"));
        assert_eq!(p.exit_code, Some(101));
        assert_eq!(p.text, "x");
    }

    #[test]
    fn wrapped_input_with_options_parses() {
        let p = parse(br#"{"input":{"toolName":"exec","argv":["git","status"],"stdout":"a","stderr":"b"},"options":{"raw":true}}"#)
            .unwrap();
        assert_eq!(p.argv, vec!["git", "status"]);
        assert_eq!(p.text, "a\nb");
        assert!(p.raw);
    }

    #[test]
    fn cols_is_read_and_checked() {
        let p =
            parse(br#"{"toolName":"exec","argv":["x"],"combinedText":"a","cols":100}"#).unwrap();
        assert_eq!(p.cols, Some(100));
        let errs =
            parse(br#"{"toolName":"exec","argv":["x"],"combinedText":"a","cols":0}"#).unwrap_err();
        assert!(errs.iter().any(|e| e.contains("input.cols")), "{errs:?}");
    }

    #[test]
    fn output_text_may_hold_nul_and_lone_surrogates() {
        let p =
            parse(br#"{"toolName":"exec","combinedText":"a\u0000b \ud83d end \udc00"}"#).unwrap();
        assert_eq!(p.text, "a\0b \u{fffd} end \u{fffd}");
        // A valid pair is kept, and an escaped backslash before `u` is text.
        let p = parse(br#"{"toolName":"exec","stdout":"\ud83d\ude00 \\ud800"}"#).unwrap();
        assert_eq!(p.text, "\u{1f600} \\ud800");
        // Raw bytes that are not UTF-8 are replaced, not refused.
        let p = parse(b"{\"toolName\":\"exec\",\"stdout\":\"a\xffb\"}").unwrap();
        assert_eq!(p.text, "a\u{fffd}b");
        let errs = parse(br#"{"toolName":"exec","command":"a\u0000b"}"#).unwrap_err();
        assert!(errs[0].contains("input.command must not contain NUL"), "{errs:?}");
    }

    #[test]
    fn bad_input_lists_every_problem() {
        let errs = parse(br#"{"toolName":"","argv":"git","exitCode":"1"}"#).unwrap_err();
        assert!(errs.iter().any(|e| e.contains("toolName")));
        assert!(errs.iter().any(|e| e.contains("argv")));
        assert!(errs.iter().any(|e| e.contains("exitCode")));
        assert!(parse(b"[1,2]").unwrap_err()[0].contains("must be an object"));
        assert!(parse(b"{nope").unwrap_err()[0].contains("invalid JSON"));
        assert!(parse(b"").unwrap_err()[0].contains("requires a JSON object"));
    }
}
