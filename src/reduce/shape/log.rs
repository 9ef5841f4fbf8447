//! Long logs (DESIGN.md "Reduction", the `log` shape): runs of lines that differ only in
//! timestamps, ids, durations and counts, folded into their first and last block.
//!
//! The head/tail window, blank-run collapsing and long-line trimming live in
//! [`crate::reduce::window`]; this module only finds the runs. [`normalize`] masks the
//! volatile parts of a line, [`fold`] finds maximal runs whose normalized forms repeat with a
//! period of one to [`MAX_PERIOD`] lines. The window's plan drops what a fold omits
//! ([`Plan::fold_similar`](crate::reduce::window::Plan::fold_similar)) and names it with its
//! usual marker, `… N similar lines omitted (La–b) …`, so `tj expand ID --lines a:b` brings
//! it back.
//!
//! A warning or error line is never folded: neither a line the caller flags as evidence nor
//! one that looks alarming on its own (see [`is_alarm`]). Such a line splits a run, so every
//! one of them stays visible between the folds around it.
//!
//! What this module does not do: decide whether a log is long enough to fold, render the
//! folds, or judge the result. The pipeline in `reduce` and the gate do that.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::LazyLock;

use crate::matchers::Dfa;
use crate::reduce::patterns::ALARM_WORDS;

/// The longest repeating block [`fold`] looks for, in lines (request/response pairs, a
/// three-line progress stanza, …).
pub const MAX_PERIOD: usize = 4;

/// The fewest blocks a run needs to be folded: the first and last stay, so three is the
/// least that omits anything.
const MIN_REPS: usize = 3;

/// What every volatile token becomes in a normalized line.
const MASK: u8 = b'#';

/// A run of lines that repeat modulo their volatile parts.
///
/// Lines `start..end` (0-based, `end` exclusive) are `(end - start) / period` repetitions of
/// a block of `period` lines. Rendered, the first and last blocks stay verbatim (so the
/// first and last timestamps stay visible) and the lines between them, [`Fold::omitted`],
/// become one marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fold {
    /// The first line of the run, 0-based.
    pub start: usize,
    /// One past the last line of the run, 0-based.
    pub end: usize,
    /// The length of the repeating block, in lines: 1 to [`MAX_PERIOD`].
    pub period: usize,
}

impl Fold {
    /// The lines the fold omits when rendered: all but the first and last block (0-based,
    /// end exclusive). Empty when the run is shorter than three blocks.
    pub fn omitted(&self) -> std::ops::Range<usize> {
        let from = self.start + self.period;
        let to = self.end.saturating_sub(self.period).max(from);
        from..to
    }
}

/// Masks the volatile parts of `line` with `#`, so lines that differ only in them compare
/// equal. Borrows when there is nothing to mask.
///
/// Masked, each to one `#` (adjacent masks merge, so `1m30.5s` and `45s` agree):
///
/// - numbers, with a decimal part and a duration or size unit (`3ms`, `1.2s`, `250µs`,
///   `12KB`, `5%` keeps its `%`): so `chunk 5/100` and `chunk 6/100` agree, as do epoch
///   timestamps and the fields of ISO-8601 / RFC 3339 (`2026-11-30T10:00:01.123Z`), syslog
///   (`Nov 30 10:00:01`), nginx/apache (`[30/Nov/2026:10:00:01 +0000]`) timestamps, times
///   (`10:00:01.123`), IPv4 addresses and ports (`10.0.0.1:8080`) and `(0.01 sec)`;
/// - UUIDs (`8-4-4-4-12` hex digits);
/// - hex ids: a whole word of at least 7 hex digits containing a digit (git shas, container
///   and request ids). A word of hex letters only (`deadbeef`, `facade`) is left alone.
///
/// Month and weekday names are kept: a log that crosses midnight at the end of a month
/// splits one run in two, which costs a marker, not a line.
///
/// ```
/// use tj::reduce::shape::log::normalize;
///
/// assert_eq!(
///     normalize("2026-11-30T10:00:01.123Z GET /health 200 3ms"),
///     normalize("2026-11-30T10:00:02.456Z GET /health 200 1.2s"),
/// );
/// assert_eq!(normalize("no digits here"), "no digits here");
/// ```
pub fn normalize(line: &str) -> Cow<'_, str> {
    let mut buf = Vec::new();
    if !normalize_into(line, &mut buf) {
        return Cow::Borrowed(line);
    }
    // The mask and every cut are ASCII, so no UTF-8 sequence was split; lossy only to
    // avoid an unwrap.
    match String::from_utf8(buf) {
        Ok(s) => Cow::Owned(s),
        Err(err) => Cow::Owned(String::from_utf8_lossy(err.as_bytes()).into_owned()),
    }
}

/// Writes the normalized form of `line` into `buf` (cleared first) and returns true, or
/// returns false, leaving `buf` empty, when `line` has nothing to mask. Bytes, not a
/// `String`, so [`fold`] can reuse one buffer for every line.
fn normalize_into(line: &str, buf: &mut Vec<u8>) -> bool {
    buf.clear();
    let b = line.as_bytes();
    // Every volatile token holds a digit: a line without one is its own normal form.
    if !b.iter().any(u8::is_ascii_digit) {
        return false;
    }
    let n = b.len();
    let mut i = 0;
    // Word by word: the bytes between words (and non-ASCII text) are copied in bulk.
    while i < n {
        let gap = b[i..].iter().position(u8::is_ascii_alphanumeric).map_or(n, |p| i + p);
        buf.extend_from_slice(&b[i..gap]);
        i = gap;
        if i == n {
            break;
        }
        let end = b[i..].iter().position(|x| !x.is_ascii_alphanumeric()).map_or(n, |p| i + p);
        let word = &b[i..end];
        if word.len() == 8
            && word.iter().all(u8::is_ascii_hexdigit)
            && let Some(len) = uuid_len(&b[i..])
        {
            push_mask(buf);
            i += len;
            continue;
        }
        if !word.iter().any(u8::is_ascii_digit) {
            buf.extend_from_slice(word);
            i = end;
            continue;
        }
        if word.len() >= 7 && word.iter().all(u8::is_ascii_hexdigit) {
            push_mask(buf);
            i = end;
            continue;
        }
        // Digits inside a word (`case_001` has none: `_` ends a word; `v2`, `30T10` do).
        // A number may run past the word: `1.5`, `250µs`.
        while i < end {
            if b[i].is_ascii_digit() {
                i = skip_number(b, i);
                push_mask(buf);
            } else {
                buf.push(b[i]);
                i += 1;
            }
        }
    }
    true
}

fn push_mask(buf: &mut Vec<u8>) {
    if buf.last() != Some(&MASK) {
        buf.push(MASK);
    }
}

/// The end of the number starting at `b[i]` (a digit): digits, an optional `.digits`, and
/// a duration or size unit when one follows directly and ends the word.
fn skip_number(b: &[u8], mut i: usize) -> usize {
    let n = b.len();
    while i < n && b[i].is_ascii_digit() {
        i += 1;
    }
    if i + 1 < n && b[i] == b'.' && b[i + 1].is_ascii_digit() {
        i += 1;
        while i < n && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    i + unit_len(&b[i..])
}

/// The length of the duration or size unit at the start of `rest` (`ns`, `us`, `µs`,
/// `ms`, `s`, `sec`, `secs`, `m`, `min`, `h`, `B`, `kB`, `KB`, `KiB`, `MB`, `MiB`, `GB`,
/// `GiB`), or 0. A unit must end the word or be followed by the next number of a compound
/// duration (`1m30s`, `2h5m`). Dispatched on the first byte: most numbers are followed by
/// punctuation, and this runs after every number.
fn unit_len(rest: &[u8]) -> usize {
    let candidates: &[&[u8]] = match rest.first() {
        Some(b's') => &[b"secs", b"sec", b"s"],
        Some(b'm') => &[b"min", b"ms", b"m"],
        Some(b'n') => &[b"ns"],
        Some(b'u') => &[b"us"],
        Some(0xC2) => &["µs".as_bytes()],
        Some(b'h') => &[b"h"],
        Some(b'k') => &[b"kB"],
        Some(b'K') => &[b"KiB", b"KB"],
        Some(b'M') => &[b"MiB", b"MB"],
        Some(b'G') => &[b"GiB", b"GB"],
        Some(b'B') => &[b"B"],
        _ => return 0,
    };
    for unit in candidates {
        if rest.starts_with(unit) && rest.get(unit.len()).is_none_or(|x| !x.is_ascii_alphabetic()) {
            return unit.len();
        }
    }
    0
}

/// The length of the UUID at the start of `b`, if there is one (`8-4-4-4-12` hex digits,
/// not followed by another word character).
fn uuid_len(b: &[u8]) -> Option<usize> {
    const GROUPS: [usize; 5] = [8, 4, 4, 4, 12];
    if b.len() < 36 {
        return None;
    }
    let mut i = 0;
    for (g, &len) in GROUPS.iter().enumerate() {
        if g > 0 {
            if b[i] != b'-' {
                return None;
            }
            i += 1;
        }
        if !b[i..i + len].iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        i += len;
    }
    if b.get(i).is_some_and(u8::is_ascii_alphanumeric) {
        return None;
    }
    Some(i)
}

/// Finds `ALARM_WORDS` in any ASCII case; compiled when tj was built.
static ALARM: LazyLock<Option<Dfa>> =
    LazyLock::new(|| crate::matchers::ascii_literals(ALARM_WORDS, true).ok());

/// Returns true if and only if `line` contains one of `reduce::patterns::ALARM_WORDS`, in
/// any ASCII case.
pub fn is_alarm(line: &str) -> bool {
    match ALARM.as_ref() {
        Some(dfa) => dfa.is_match(line.as_bytes()),
        // Building a fixed automaton cannot fail; if it did, folding nothing is safe.
        None => true,
    }
}

/// The most non-blank lines [`looks_like_log`] reads: enough to judge a log by its prefix,
/// few enough that the judgement costs nothing next to the reduction.
const LOG_SAMPLE: usize = 256;

/// The least share (percent) of sampled unindented lines that must start like a log line
/// for [`looks_like_log`]. Not all: a log interleaves tracebacks (a JVM trace's exception
/// line is unindented), banners and multi-line messages whose unindented lines start
/// otherwise.
const LOG_SHARE: usize = 50;

/// Returns true if and only if `lines`, the output of a command no rule knows, reads as a
/// log: at least five of the non-blank lines it samples, and most of the unindented ones
/// (a stack frame or a message's continuation is indented), [`starts_like_log`].
///
/// At most 256 non-blank lines are read, spread evenly over the output, so the
/// cost does not grow with it. A listing, a test run, a table or a JSON document reads as no
/// log: their lines start with a path, a word or a brace. A CSV or TSV whose first column is
/// a date does not either: a log's timestamp carries a time of day.
///
/// ```
/// use tj::reduce::shape::log::looks_like_log;
///
/// let log: Vec<String> = (0..20)
///     .map(|i| format!("2026-12-01 10:00:{i:02},123 INFO app: request {i} handled"))
///     .collect();
/// let lines: Vec<&str> = log.iter().map(String::as_str).collect();
/// assert!(looks_like_log(&lines));
/// assert!(!looks_like_log(&["./src", "./src/main.rs", "./src/lib.rs", "./Cargo.toml"]));
/// ```
pub fn looks_like_log(lines: &[&str]) -> bool {
    let step = (lines.len() / (LOG_SAMPLE * 2)).max(1);
    let (mut sampled, mut unindented, mut logs) = (0usize, 0usize, 0usize);
    for line in lines.iter().step_by(step) {
        if line.trim().is_empty() {
            continue;
        }
        sampled += 1;
        if !line.starts_with([' ', '\t']) {
            unindented += 1;
            if starts_like_log(line) {
                logs += 1;
            }
        }
        if sampled == LOG_SAMPLE {
            break;
        }
    }
    logs >= 5 && logs * 100 >= unindented * LOG_SHARE && logs * 4 >= sampled
}

/// `line` without the prefix a log multiplexer puts before each line: `docker compose`'s
/// service column (`web-1  | `) and `kubectl logs --prefix`'s `[pod/name/container] `.
pub fn strip_log_prefix(line: &str) -> &str {
    let b = line.as_bytes();
    if line.starts_with("[pod/")
        && let Some(end) = line.find("] ")
    {
        return &line[end + 2..];
    }
    // A service name, at least one space, then `| `.
    let name = b.iter().take_while(|&&c| c.is_ascii_alphanumeric() || b"_.-".contains(&c)).count();
    let spaces = b[name..].iter().take_while(|&&c| c == b' ').count();
    if name > 0 && spaces > 0 && b[name + spaces..].starts_with(b"| ") {
        return &line[name + spaces + 2..];
    }
    line
}

/// Returns true if and only if `line` (after a [`strip_log_prefix`] prefix) starts the way
/// log lines start:
///
/// - a date with a time of day (`2026-12-01T10:00:00Z`, `2026/12/01 10:00:00`,
///   `01/Dec/2026:10:00:00`, `01-Dec-2026 10:00:00.123`), a time of day (`10:00:00.123`,
///   `3:04PM`), a syslog or Java stamp (`Dec  1 10:00:00`, `Dec 01, 2026 10:00:00 AM`,
///   `Mon Dec 01 10:00:00`), an epoch (`1764583200.123 `), each possibly in brackets;
/// - a kernel stamp (`[   12.345678]`), a klog header (`E1201 10:00:00.123`), a syslog
///   priority (`<3>`), Ruby's `E, [`;
/// - a client address (`127.0.0.1 - - [`, `::1 - -`), as access logs start;
/// - a level word (`INFO:root:`, `WARN[0000]`, `[ERROR]`, `fail: `), a logfmt field
///   (`time=`, `ts=`, `level=`), or a JSON object whose first key is a log key
///   (`{"level":`, `{"time":`, `{"ts":`, `{"t":`, `{"@timestamp":`, `{"msg":`).
pub fn starts_like_log(line: &str) -> bool {
    let s = strip_log_prefix(line).as_bytes();
    if s.first() == Some(&b'{') {
        return starts_json_log(s);
    }
    let inner = match s.first() {
        Some(b'[') => s[1..].trim_ascii_start(),
        _ => s,
    };
    stamp_len(inner).is_some()
        || (s.first() == Some(&b'[') && inner.first().is_some_and(u8::is_ascii_digit) && {
            // dmesg: `[   12.345678]`.
            let digits = inner.iter().take_while(|c| c.is_ascii_digit() || **c == b'.').count();
            inner.get(digits) == Some(&b']')
        })
        || is_klog_header(s)
        || syslog_priority(s).is_some()
        || (s.len() > 3 && b"DIWEFAU".contains(&s[0]) && s[1..].starts_with(b", ["))
        || starts_with_address(s)
        || starts_with_level(inner)
        || starts_with_logfmt(s)
}

/// The length of the timestamp `s` starts with, if it starts with one (see
/// [`starts_like_log`]).
fn stamp_len(s: &[u8]) -> Option<usize> {
    let digits = |at: usize, n: usize| {
        s.get(at..at + n).is_some_and(|d| d.iter().all(u8::is_ascii_digit)).then_some(at + n)
    };
    let byte_in = |at: usize, set: &[u8]| s.get(at).is_some_and(|c| set.contains(c));
    // A time of day: `H:MM` or `HH:MM`, then `:SS`, `AM`/`PM`.
    let time = |at: usize| {
        let h = digits(at, 2).or_else(|| digits(at, 1))?;
        let m = digits(h + 1, 2).filter(|_| byte_in(h, b":"))?;
        if byte_in(m, b":") {
            digits(m + 1, 2)
        } else if s.get(m..m + 2).is_some_and(|x| x == b"AM" || x == b"PM") {
            Some(m + 2)
        } else {
            None
        }
    };
    // `2026-12-01T10:00:00`, `2026/12/01 10:00`, `2026.12.01 10:00`.
    if let Some(y) = digits(0, 4)
        && byte_in(y, b"-/.")
        && let Some(mo) = digits(y + 1, 2)
        && byte_in(mo, b"-/.")
        && let Some(d) = digits(mo + 1, 2)
        && byte_in(d, b"T _")
    {
        return time(d + 1);
    }
    // `01/Dec/2026:10:00:00`, `01-Dec-2026 10:00:00`.
    if let Some(d) = digits(0, 2)
        && byte_in(d, b"-/ ")
        && month(&s[d + 1..])
        && byte_in(d + 4, b"-/ ")
        && let Some(y) = digits(d + 5, 4)
        && byte_in(y, b": ")
    {
        return time(y + 1);
    }
    // `Mon Dec 01 …`: a weekday before the month.
    let s2 = if weekday(s) && byte_in(3, b" ") { &s[4..] } else { s };
    if month(s2) && s2.get(3) == Some(&b' ') {
        // `Dec  1 10:00:00`, `Dec 01 10:00:00`, `Dec 01, 2026 10:00:00 AM`.
        let rest = s2[4..].trim_ascii_start();
        let day = rest.iter().take_while(|c| c.is_ascii_digit()).count();
        if (1..=2).contains(&day) {
            let mut after = &rest[day..];
            if after.starts_with(b", ")
                && after.len() > 7
                && after[2..6].iter().all(u8::is_ascii_digit)
            {
                after = &after[6..];
            }
            let after = after.trim_ascii_start();
            let offset = s.len() - after.len();
            return stamp_len_time(after).map(|n| offset + n);
        }
        return None;
    }
    if let Some(t) = time(0)
        && !s.get(t).is_some_and(u8::is_ascii_alphanumeric)
    {
        return Some(t);
    }
    // An epoch in seconds or milliseconds, then a fraction or a space.
    let epoch = s.iter().take_while(|c| c.is_ascii_digit()).count();
    ((10..=13).contains(&epoch) && byte_in(epoch, b". \t")).then_some(epoch)
}

/// The length of the time of day `s` starts with (`10:00:00`, `10:00:00.123`), if any.
fn stamp_len_time(s: &[u8]) -> Option<usize> {
    let ok = s.len() >= 8
        && s[..2].iter().all(u8::is_ascii_digit)
        && s[2] == b':'
        && s[3..5].iter().all(u8::is_ascii_digit)
        && s[5] == b':'
        && s[6..8].iter().all(u8::is_ascii_digit);
    ok.then_some(8)
}

/// Returns true if and only if `s` starts with an English month abbreviation.
fn month(s: &[u8]) -> bool {
    const MONTHS: [&[u8]; 12] = [
        b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov",
        b"Dec",
    ];
    MONTHS.iter().any(|m| s.starts_with(m))
}

/// Returns true if and only if `s` starts with an English weekday abbreviation.
fn weekday(s: &[u8]) -> bool {
    const DAYS: [&[u8]; 7] = [b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat", b"Sun"];
    DAYS.iter().any(|d| s.starts_with(d))
}

/// Returns true if and only if `s` starts with a klog/glog header: a level letter, `MMDD`,
/// a space and a time (`E1201 10:00:00.123456`).
pub fn is_klog_header(s: &[u8]) -> bool {
    s.len() >= 14
        && b"IWEF".contains(&s[0])
        && s[1..5].iter().all(u8::is_ascii_digit)
        && s[5] == b' '
        && stamp_len_time(&s[6..]).is_some()
}

/// The syslog priority `s` starts with (`<3>` is 3, `<11>` is 11), if any.
pub fn syslog_priority(s: &[u8]) -> Option<u8> {
    let rest = s.strip_prefix(b"<")?;
    let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    if !(1..=3).contains(&digits) || rest.get(digits) != Some(&b'>') {
        return None;
    }
    std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()
}

/// Returns true if and only if `s` starts with an IPv4 address followed by a space or a
/// port, or with `::1 ` (an access log's client column).
fn starts_with_address(s: &[u8]) -> bool {
    if s.starts_with(b"::1 ") || s.starts_with(b"::ffff:") {
        return true;
    }
    let mut at = 0;
    for part in 0..4 {
        let n = s[at..].iter().take_while(|c| c.is_ascii_digit()).count();
        if !(1..=3).contains(&n) {
            return false;
        }
        at += n;
        if part < 3 {
            if s.get(at) != Some(&b'.') {
                return false;
            }
            at += 1;
        }
    }
    matches!(s.get(at), Some(b' ' | b':'))
}

/// The level words a log line may start with, uppercase (`INFO`, `WARN`, logrus's `ERRO`,
/// log15's `EROR`, serilog's `WRN`, …).
pub const LEVEL_WORDS: &[&str] = &[
    "TRACE",
    "TRAC",
    "TRC",
    "VRB",
    "VERBOSE",
    "DEBUG",
    "DEBU",
    "DBUG",
    "DBG",
    "INFO",
    "INF",
    "NOTICE",
    "FINE",
    "FINER",
    "FINEST",
    "CONFIG",
    "LOG",
    "WARN",
    "WARNING",
    "WRN",
    "ERROR",
    "ERRO",
    "EROR",
    "ERR",
    "FATAL",
    "FATA",
    "FTL",
    "CRITICAL",
    "CRIT",
    "PANIC",
    "PANI",
    "SEVERE",
    "EMERG",
    "EMERGENCY",
    "ALERT",
];

/// Returns true if and only if `s` starts with a level word (see [`LEVEL_WORDS`]) that a
/// separator ends (`INFO `, `ERROR:root:`, `WARN[0000]`, `INFO]`), or with ASP.NET Core's or
/// winston's lowercase `level: ` (but `error: `, which compilers print too).
fn starts_with_level(s: &[u8]) -> bool {
    let word = s.iter().take_while(|c| c.is_ascii_alphabetic()).count();
    if word == 0 || s.get(word).is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_') {
        return false;
    }
    let w = &s[..word];
    if LEVEL_WORDS.iter().any(|l| l.as_bytes() == w) {
        return true;
    }
    // Not `error: `: that is how compilers start a diagnostic.
    const LOWER: [&[u8]; 7] = [b"trce", b"dbug", b"debug", b"info", b"warn", b"fail", b"crit"];
    s[word..].starts_with(b": ") && LOWER.contains(&w)
}

/// Returns true if and only if `s` starts with a logfmt field a log line starts with
/// (`time=`, `ts=`, `t=`, `timestamp=`, `level=`, `lvl=`).
fn starts_with_logfmt(s: &[u8]) -> bool {
    const KEYS: [&[u8]; 6] = [b"time=", b"ts=", b"t=", b"timestamp=", b"level=", b"lvl="];
    KEYS.iter().any(|k| s.starts_with(k))
}

/// Returns true if and only if `s`, starting with `{`, opens a JSON log record: its first
/// key is one log libraries put first (zap, logrus, pino, slog, MongoDB, ECS), or it holds
/// both a `"level"` and a `"msg"` (bunyan starts with `"name"`).
fn starts_json_log(s: &[u8]) -> bool {
    const KEYS: [&[u8]; 10] = [
        b"\"level\"",
        b"\"lvl\"",
        b"\"severity\"",
        b"\"time\"",
        b"\"ts\"",
        b"\"t\"",
        b"\"timestamp\"",
        b"\"@timestamp\"",
        b"\"msg\"",
        b"\"message\"",
    ];
    let rest = s[1..].trim_ascii_start();
    let has = |needle: &[u8]| s.windows(needle.len()).any(|w| w == needle);
    KEYS.iter().any(|k| rest.starts_with(k)) || (has(b"\"level\":") && has(b"\"msg\":"))
}

/// Finds the runs of at least three lines (or three blocks of up to [`MAX_PERIOD`] lines)
/// whose [`normalize`]d forms repeat, none of them an evidence line or an [`is_alarm`] line.
///
/// Runs are maximal, sorted, disjoint and deterministic. At each line the period that
/// covers the most lines wins, the shorter on a tie; a run holds whole blocks only. A block
/// of blank lines only is never folded (the window collapses blank runs already). Lines past
/// the end of `evidence` count as not evidence.
///
/// Linear in the input: each line is normalized once and interned, and each starting line
/// tries at most [`MAX_PERIOD`] periods.
///
/// ```
/// use tj::reduce::shape::log::{fold, Fold};
///
/// let log: Vec<String> =
///     (0..10).map(|i| format!("10:00:{i:02} GET /health 200 {}ms", i * 7 % 5)).collect();
/// let lines: Vec<&str> = log.iter().map(String::as_str).collect();
/// assert_eq!(fold(&lines, &[]), vec![Fold { start: 0, end: 10, period: 1 }]);
/// ```
pub fn fold(lines: &[&str], evidence: &[bool]) -> Vec<Fold> {
    let n = lines.len();
    // Interned normal forms; `BLOCKED` marks a line that may not be folded.
    const BLOCKED: u32 = u32::MAX;
    let mut ids: Vec<u32> = Vec::with_capacity(n);
    let mut blank: Vec<bool> = Vec::with_capacity(n);
    let mut intern: HashMap<Box<[u8]>, u32, BuildHasherDefault<FxHasher>> = HashMap::default();
    let mut buf = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        blank.push(line.trim().is_empty());
        if evidence.get(i).copied().unwrap_or(false) || is_alarm(line) {
            ids.push(BLOCKED);
            continue;
        }
        let key: &[u8] = if normalize_into(line, &mut buf) { &buf } else { line.as_bytes() };
        let next = intern.len() as u32;
        let id = match intern.get(key) {
            Some(&id) => id,
            None => {
                intern.insert(key.into(), next);
                next
            }
        };
        ids.push(id);
    }

    let mut folds = Vec::new();
    let mut i = 0;
    while i < n {
        let mut best: Option<(usize, usize)> = None; // (covered lines, period)
        for period in 1..=MAX_PERIOD {
            if i + period * MIN_REPS > n {
                break;
            }
            let block = &ids[i..i + period];
            if block.contains(&BLOCKED) || blank[i..i + period].iter().all(|&b| b) {
                continue;
            }
            let mut j = i + period;
            while j < n && ids[j] != BLOCKED && ids[j] == ids[j - period] {
                j += 1;
            }
            let reps = (j - i) / period;
            if reps < MIN_REPS {
                continue;
            }
            let covered = reps * period;
            if best.is_none_or(|(c, _)| covered > c) {
                best = Some((covered, period));
            }
        }
        match best {
            Some((covered, period)) => {
                folds.push(Fold { start: i, end: i + covered, period });
                i += covered;
            }
            None => i += 1,
        }
    }
    folds
}

/// The multiply-rotate hash of rustc's `FxHasher`, for interning normalized lines: several
/// times faster than SipHash on short keys. Not flood-resistant, which is fine for one
/// command's output: the worst an adversarial log can do is slow its own reduction.
#[derive(Clone, Copy, Debug, Default)]
struct FxHasher(u64);

impl FxHasher {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(owned: &[String]) -> Vec<&str> {
        owned.iter().map(String::as_str).collect()
    }

    #[test]
    fn normalize_masks_timestamps() {
        let cases = [
            ("2026-11-30T10:00:01Z start", "2026-12-01T23:59:59.999999Z start"),
            ("2026-11-30T10:00:01+01:00 start", "2026-11-30T10:00:02.5+01:00 start"),
            ("Nov 30 10:00:01 host sshd[123]: ok", "Nov 30 10:07:59 host sshd[98765]: ok"),
            (
                r#"10.0.0.1 - - [30/Nov/2026:10:00:01 +0000] "GET / HTTP/1.1" 200 512"#,
                r#"192.168.100.20 - - [30/Nov/2026:11:12:13 +0000] "GET / HTTP/1.1" 200 9"#,
            ),
            ("ts=1764496801123 tick", "ts=1764496802000 tick"),
            ("10:00:01.123 tick", "9:07:00.5 tick"),
            ("connect 10.0.0.1:8080", "connect 172.16.254.3:443"),
        ];
        for (a, b) in cases {
            assert_eq!(normalize(a), normalize(b), "{a} vs {b}");
        }
    }

    #[test]
    fn normalize_masks_ids_and_durations() {
        let cases = [
            (
                "req 550e8400-e29b-41d4-a716-446655440000 done",
                "req 6fa459ea-ee8a-3ca4-894e-db77e160355e done",
            ),
            ("commit 1a2b3c4 merged", "commit deadbee9f00d1234 merged"),
            ("container f00dcafe1234 up", "container 0123456789ab up"),
            ("took 3ms", "took 1.2s"),
            ("took 250µs", "took 1m30.5s"),
            ("query (0.01 sec)", "query (12.5 sec)"),
            ("chunk 5/100", "chunk 6/100"),
            ("sent 12KB", "sent 1.5MB"),
        ];
        for (a, b) in cases {
            assert_eq!(normalize(a), normalize(b), "{a} vs {b}");
        }
        assert_eq!(normalize("took 3ms"), "took #");
        assert_eq!(normalize("v1.2.3"), "v#.#");
    }

    #[test]
    fn normalize_keeps_words() {
        assert!(matches!(normalize("plain words only"), Cow::Borrowed(_)));
        // Hex letters only: a word, not an id.
        assert_eq!(normalize("deadbeef facade 1"), "deadbeef facade #");
        assert_ne!(normalize("GET /a 200"), normalize("GET /b 200"));
        assert_ne!(normalize("took 3ms"), normalize("took 3 apples"));
        // Non-ASCII text survives intact.
        assert_eq!(normalize("naïve café 42 ünits"), "naïve café # ünits");
        assert_eq!(normalize("日本 3 語"), "日本 # 語");
    }

    #[test]
    fn alarm_words_in_any_case() {
        for line in [
            "ERROR db down",
            "Warning: x",
            "WARN y",
            "fatal: z",
            "thread panicked",
            "java.lang.NullPointerException",
            "Traceback (most recent call last):",
            "FAIL pkg",
            "connection failed",
        ] {
            assert!(is_alarm(line), "{line}");
        }
        assert!(!is_alarm("GET /health 200 3ms"));
    }

    /// 10k lines of health checks with three ERROR lines in the middle.
    fn server_log() -> Vec<String> {
        (0..10_000)
            .map(|i| match i {
                4000 | 4001 | 7000 => format!(
                    "2026-11-30T10:{:02}:{:02}.{:03}Z ERROR upstream timed out after {}ms",
                    i / 60 % 60,
                    i % 60,
                    i % 1000,
                    i
                ),
                _ => format!(
                    "2026-11-30T10:{:02}:{:02}.{:03}Z INFO GET /health 200 {}µs req={:08x}",
                    i / 60 % 60,
                    i % 60,
                    i * 7 % 1000,
                    i * 13 % 997,
                    0x1a2b_0000_u32 + i
                ),
            })
            .collect()
    }

    #[test]
    fn server_log_folds_around_errors() {
        let owned = server_log();
        let lines = refs(&owned);
        let folds = fold(&lines, &vec![false; lines.len()]);
        assert_eq!(
            folds,
            vec![
                Fold { start: 0, end: 4000, period: 1 },
                Fold { start: 4002, end: 7000, period: 1 },
                Fold { start: 7001, end: 10_000, period: 1 },
            ]
        );
        for f in &folds {
            assert!(lines[f.start..f.end].iter().all(|l| !l.contains("ERROR")));
        }
        assert_eq!(folds[0].omitted(), 1..3999);
    }

    #[test]
    fn request_response_pairs_fold_with_period_two() {
        let owned: Vec<String> = (0..100)
            .map(|i| {
                if i % 2 == 0 {
                    format!("10:00:{:02} -> GET /api/items?page={}", i % 60, i / 2)
                } else {
                    format!("10:00:{:02} <- 200 OK {} bytes in {}ms", i % 60, i * 31, i % 17)
                }
            })
            .collect();
        let lines = refs(&owned);
        assert_eq!(fold(&lines, &[]), vec![Fold { start: 0, end: 100, period: 2 }]);
        assert_eq!(Fold { start: 0, end: 100, period: 2 }.omitted(), 2..98);
    }

    #[test]
    fn progress_lines_fold() {
        let mut owned = vec!["Resolving dependencies".to_string()];
        owned.extend((1..=300).map(|i| format!("Downloading {i}/300")));
        owned.push("Done".to_string());
        let lines = refs(&owned);
        assert_eq!(fold(&lines, &[]), vec![Fold { start: 1, end: 301, period: 1 }]);
    }

    #[test]
    fn partial_block_is_left_out() {
        let owned: Vec<String> = (0..7)
            .map(|i| if i % 2 == 0 { format!("req {i}") } else { format!("resp {i}") })
            .collect();
        let lines = refs(&owned);
        assert_eq!(fold(&lines, &[]), vec![Fold { start: 0, end: 6, period: 2 }]);
    }

    #[test]
    fn no_repetition_no_folds() {
        let lines = [
            "Starting server",
            "Loaded config from /etc/app.toml",
            "Listening on 0.0.0.0:8080",
            "Connected to database",
            "Worker pool ready",
            "Accepting connections",
        ];
        assert!(fold(&lines, &[]).is_empty());
        assert!(fold(&[], &[]).is_empty());
        assert!(fold(&["a 1", "a 2"], &[]).is_empty());
    }

    #[test]
    fn evidence_splits_a_run() {
        let owned: Vec<String> = (0..20).map(|i| format!("tick {i}")).collect();
        let lines = refs(&owned);
        let mut ev = vec![false; 20];
        ev[10] = true;
        assert_eq!(
            fold(&lines, &ev),
            vec![Fold { start: 0, end: 10, period: 1 }, Fold { start: 11, end: 20, period: 1 }]
        );
        // Too short on one side: only the long side folds.
        ev[10] = false;
        ev[2] = true;
        assert_eq!(fold(&lines, &ev), vec![Fold { start: 3, end: 20, period: 1 }]);
    }

    #[test]
    fn blank_blocks_are_not_folded() {
        let lines = ["", "", "", "", "x"];
        assert!(fold(&lines, &[]).is_empty());
        let lines = ["a 1", "", "a 2", "", "a 3", ""];
        assert_eq!(fold(&lines, &[]), vec![Fold { start: 0, end: 6, period: 2 }]);
    }

    #[test]
    fn fold_is_deterministic() {
        let owned = server_log();
        let lines = refs(&owned);
        assert_eq!(fold(&lines, &[]), fold(&lines, &[]));
    }

    /// `make(i)` for 40 lines, as an output.
    fn output(make: impl Fn(usize) -> String) -> Vec<String> {
        (0..40).map(make).collect()
    }

    #[test]
    fn real_log_shapes_look_like_logs() {
        let shapes: Vec<Vec<String>> = vec![
            output(|i| {
                format!(
                    "127.0.0.1 - - [01/Dec/2026 15:12:{:02}] \"GET /{i} HTTP/1.1\" 200 -",
                    i % 60
                )
            }),
            output(|i| format!("INFO:     127.0.0.1:5{i:04} - \"GET /items HTTP/1.1\" 200 OK")),
            output(|i| format!("2026/12/01 10:00:{:02} [notice] 1#1: worker {i} started", i % 60)),
            output(|i| format!("Dec  1 10:00:{:02} web-1 sshd[{i}]: session opened", i % 60)),
            output(|i| {
                format!("I1201 10:00:{:02}.123456       1 controller.go:{i}] synced", i % 60)
            }),
            output(|i| {
                format!("time=\"2026-12-01T10:00:{:02}Z\" level=info msg=\"tick {i}\"", i % 60)
            }),
            output(|i| format!("{{\"level\":\"info\",\"ts\":1764583200.{i},\"msg\":\"tick\"}}")),
            output(|i| format!("{{\"name\":\"app\",\"pid\":7,\"level\":30,\"msg\":\"tick {i}\"}}")),
            output(|i| format!("INFO:app.worker:processed job {i}")),
            output(|i| format!("[2026-12-01T10:00:{:02}Z INFO  app] tick {i}", i % 60)),
            output(|i| {
                format!("web-1  | 2026-12-01 10:00:{:02},123 INFO [main] app - tick {i}", i % 60)
            }),
            output(|i| {
                format!("Dec 01, 2026 10:00:{:02} AM com.example.App run\nINFO: tick {i}", i % 60)
            }),
            // ASP.NET: one header line, one indented message line per entry.
            output(|i| {
                if i % 2 == 0 {
                    "info: App.Worker[0]".to_owned()
                } else {
                    format!("      tick {i}")
                }
            }),
            // A log whose entries carry stack traces.
            output(|i| match i % 4 {
                0 => format!("2026-12-01 10:00:{:02},123 ERROR [main] app - boom", i % 60),
                1 => "java.lang.IllegalStateException: boom".to_owned(),
                _ => format!("\tat com.example.App.run(App.java:{i})"),
            }),
        ];
        for shape in &shapes {
            let owned: Vec<String> =
                shape.iter().flat_map(|l| l.lines().map(str::to_owned)).collect();
            assert!(looks_like_log(&refs(&owned)), "not a log: {:?}", &owned[..2]);
        }
    }

    #[test]
    fn listings_runs_tables_and_documents_are_not_logs() {
        let shapes: Vec<Vec<String>> = vec![
            output(|i| format!("./src/module_{}/file_{i}.rs", i % 7)),
            output(|i| format!("test parser::tests::case_{i} ... ok")),
            output(|i| format!("src/lib.rs:{i}:    let x = compute({i});")),
            output(|i| format!("{i:07x} fix: handle case {i}")),
            output(|i| format!("2026-12-01,{i},widget-{i}")),
            output(|i| format!("2026-12-01\t{i}\twidget-{i}")),
            output(|i| format!("  \"key_{i}\": {i},")),
            output(|i| format!("{{\"id\":{i},\"name\":\"pkg-{i}\",\"version\":\"1.0.{i}\"}}")),
            output(|i| format!("-rw-r--r-- 1 root root {i} Dec  1 10:00 file_{i}")),
            output(|i| format!("web-{i:<20}1/1     Running   0          3d")),
        ];
        for shape in &shapes {
            assert!(!looks_like_log(&refs(shape)), "a log: {:?}", &shape[..2]);
        }
        assert!(!looks_like_log(&[]));
        assert!(!looks_like_log(&["2026-12-01 10:00:00 INFO a", "2026-12-01 10:00:01 INFO b"]));
    }

    #[test]
    fn log_prefixes_are_recognised() {
        for line in [
            "2026-12-01T10:00:00.123Z  INFO app: x",
            "2026-12-01 10:00:00,123 WARN x",
            "01-Dec-2026 10:00:05.123 SEVERE [main] x",
            "[01/Dec/2026:10:00:00 +0000] x",
            "[Mon Dec 01 10:00:07.123456 2026] [core:error] x",
            "Dec  1 10:00:00 host app[1]: x",
            "10:00:00.123 [main] INFO x",
            "3:04PM ERR x",
            "1764583200.123 x",
            "[   12.345678] usb 1-1: x",
            "<3>Dec  1 10:00:00 host x",
            "E, [2026-12-01T10:00:03.123456 #4711] ERROR -- : x",
            "::1 - - [01/Dec/2026 10:00:00] x",
            "ERROR:root:x",
            "WARN[0043] x",
            "fail: Microsoft.AspNetCore[1]",
            "ts=2026-12-01T10:00:00Z level=info",
            "[pod/web-1/web] 2026-12-01T10:00:00Z x",
        ] {
            assert!(starts_like_log(line), "{line}");
        }
        for line in
            ["./src/main.rs", "Compiling x v0.1.0", "2026-12-01,3", "error: x", "{\"id\":1}", ""]
        {
            assert!(!starts_like_log(line), "{line}");
        }
        assert_eq!(strip_log_prefix("web-1  | hello"), "hello");
        assert_eq!(strip_log_prefix("a | b"), "b");
        assert_eq!(strip_log_prefix("a| b"), "a| b");
    }

    #[test]
    fn folds_render_as_the_window_marker() {
        let owned: Vec<String> = (0..50)
            .map(|i| {
                format!("2026-11-30T10:00:{i:02}Z GET /health 200 in {}ms from 10.0.0.{i}", i % 9)
            })
            .collect();
        let lines = refs(&owned);
        let evidence = vec![false; lines.len()];
        let folds = fold(&lines, &evidence);
        let mut plan = crate::reduce::window::Plan::keep_all(lines.len());
        plan.fold_similar(&folds, &evidence);
        let (body, omitted) = plan.render(&lines, &evidence);
        assert_eq!(body.len(), 3);
        assert_eq!(body[1], "… 48 similar lines omitted (L2–49) …");
        assert!(crate::reduce::window::is_marker(&body[1]));
        assert_eq!(omitted.similar, 48);
    }
}
