//! The agent harnesses' own session logs (issue 14), read into what each session was billed
//! and what its shell calls put in the context: Claude Code's transcripts
//! (`<claude dir>/projects/<project>/<session>.jsonl`, subagents under
//! `<session>/subagents/`) and Codex's rollouts
//! (`<codex home>/sessions/YYYY/MM/DD/rollout-*.jsonl`).
//!
//! This module owns finding the files, reading them line by line under a bound, and the
//! model both formats are read into ([`Session`]); [`claude`] and [`codex`] own the two
//! formats, [`ledger`] the join with tj's ledger. Presenting is `cli::stats_transcripts`'s
//! and `cli::discover`'s; nothing here writes.
//!
//! **Bad input.** A line that is not a JSON object, or is longer than [`MAX_LINE`], is
//! skipped and counted; a field of an unexpected shape reads as absent (`lenient`). Files
//! are found by walking the directories named without following a symbolic link below them
//! (a link is skipped and counted), in sorted order, so the same files give the same
//! result.
//!
//! **Through tj.** A shell call went through tj when any of these holds, checked in this
//! order ([`Via`]): its command runs tj (`tj run -- …`, a path to tj, the line a hook rewrote
//! it to when the harness records that one); its output has a line starting with `[tj] `,
//! which only a rendition tj made carries (an exit code, what was omitted); or tj's ledger
//! has a run of the same command inside the call's time window (a hook rewrote it, or the
//! shell hook wrapped it, and tj passed the output on unchanged, with no mark).

pub mod claude;
pub mod codex;
pub mod ledger;
mod lenient;

use std::collections::BTreeMap;
use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::env::Env;

/// Lines longer than this are skipped (and counted): no record a harness writes is near it,
/// and reading one costs memory up to the bound.
pub const MAX_LINE: usize = 64 << 20;

/// Directories deeper than this below a root are not entered (Codex's are 4 deep, Claude
/// Code's subagents 3).
pub const MAX_DEPTH: usize = 8;

/// The harness a session belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Harness {
    /// Claude Code.
    ClaudeCode,
    /// OpenAI Codex.
    Codex,
}

impl Harness {
    /// The name tj uses for it (`tj install NAME`).
    pub fn name(self) -> &'static str {
        self.host().name()
    }

    /// Its name for people: `Claude Code`, `Codex`.
    pub fn title(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "Claude Code",
            Harness::Codex => "Codex",
        }
    }

    /// The host tj knows it as.
    pub fn host(self) -> crate::host::Host {
        match self {
            Harness::ClaudeCode => crate::host::Host::ClaudeCode,
            Harness::Codex => crate::host::Host::Codex,
        }
    }
}

/// Tokens billed, as the harness recorded them.
///
/// `input` is the prompt tokens neither read from nor written to the cache. Codex reports
/// its input with the cached part included; it is taken out here, so the four numbers add
/// up to everything sent and received for both harnesses. Codex records no cache writes:
/// `cache_write` is `None` for it, not zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Uncached prompt tokens.
    pub input: u64,
    /// Prompt tokens read from the cache.
    pub cache_read: u64,
    /// Prompt tokens written to the cache, where the harness records them.
    pub cache_write: Option<u64>,
    /// Output tokens (reasoning included).
    pub output: u64,
}

impl Usage {
    /// Adds `other`; the sum has a cache-write count when either has one.
    pub fn add(&mut self, other: &Usage) {
        self.input += other.input;
        self.cache_read += other.cache_read;
        self.output += other.output;
        self.cache_write = match (self.cache_write, other.cache_write) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
    }

    /// Every prompt token: uncached, read from the cache, written to it.
    pub fn prompt(&self) -> u64 {
        self.input + self.cache_read + self.cache_write.unwrap_or(0)
    }

    /// The cache hit rate: the share of prompt tokens read from the cache,
    /// `cache_read / (input + cache_read + cache_write)`. `None` without prompt tokens.
    pub fn hit_rate(&self) -> Option<f64> {
        let prompt = self.prompt();
        // Lossy: token counts far below 2^52 convert exactly.
        #[allow(clippy::cast_precision_loss)]
        (prompt > 0).then(|| self.cache_read as f64 / prompt as f64)
    }
}

/// How a shell call is known to have gone through tj (see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Via {
    /// Not through tj, as far as can be told.
    #[default]
    No,
    /// The command runs tj.
    Command,
    /// The output carries tj's `[tj] ` lines.
    Marker,
    /// tj's ledger recorded the same command at that time.
    Ledger,
}

impl Via {
    /// Returns true if and only if the call went through tj.
    pub fn is_tj(self) -> bool {
        self != Via::No
    }
}

/// One shell command the agent ran, and what its output cost.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShellCall {
    /// The command line, as the agent wrote it (cut at [`MAX_COMMAND`] bytes).
    pub command: String,
    /// When the call was made, in milliseconds since the Unix epoch.
    pub time: Option<u64>,
    /// When its result was recorded.
    pub done: Option<u64>,
    /// Characters of the output the agent was given.
    pub chars: usize,
    /// Its estimated tokens (`reduce::tokens`, the estimate tj's ledger uses).
    pub tokens: usize,
    /// Whether it went through tj, and how that is known.
    pub via: Via,
}

/// Commands are kept up to this many bytes: a heredoc can make one megabytes long, and
/// what is shown and grouped is its start.
pub const MAX_COMMAND: usize = 4096;

/// One harness session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    /// Its harness.
    pub harness: Harness,
    /// The harness's session id.
    pub id: String,
    /// The directory it ran in, as first recorded.
    pub cwd: Option<String>,
    /// Its first and last record, in milliseconds since the Unix epoch.
    pub first: Option<u64>,
    /// See `first`.
    pub last: Option<u64>,
    /// Everything billed, subagents' calls included.
    pub usage: Usage,
    /// API calls billed, subagents' included.
    pub api_calls: usize,
    /// The usage of each API call of the main conversation, in order: what the hit-rate
    /// trend is judged on. A subagent's calls are left out: they start a cache of their
    /// own, cold, and would read as a fall wherever they came.
    pub calls: Vec<Usage>,
    /// The shell calls, in order.
    pub shell: Vec<ShellCall>,
}

impl Session {
    fn new(harness: Harness, id: String) -> Session {
        Session {
            harness,
            id,
            cwd: None,
            first: None,
            last: None,
            usage: Usage::default(),
            api_calls: 0,
            calls: Vec::new(),
            shell: Vec::new(),
        }
    }

    /// Widens the session's time span to take in `time`.
    fn saw(&mut self, time: Option<u64>) {
        if let Some(t) = time {
            self.first = Some(self.first.map_or(t, |f| f.min(t)));
            self.last = Some(self.last.map_or(t, |l| l.max(t)));
        }
    }

    /// Estimated tokens of all shell output, and of the part that went through tj.
    pub fn shell_tokens(&self) -> (u64, u64) {
        let mut all = 0u64;
        let mut tj = 0u64;
        for call in &self.shell {
            let tokens = call.tokens as u64;
            all += tokens;
            if call.via.is_tj() {
                tj += tokens;
            }
        }
        (all, tj)
    }

    /// The hit-rate trend over the session's API calls, if it is long enough to have one.
    pub fn trend(&self) -> Option<Trend> {
        trend(&self.calls)
    }
}

/// The cache hit rate early and late in a series of API calls (or sessions).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trend {
    /// Over the first two thirds.
    pub before: f64,
    /// Over the last third.
    pub after: f64,
}

impl Trend {
    /// Returns true if and only if the rate fell by more than [`FALLING_POINTS`]
    /// percentage points.
    pub fn is_falling(&self) -> bool {
        self.after < self.before - FALLING_POINTS / 100.0
    }
}

/// A hit rate that falls by more than this many percentage points is flagged.
pub const FALLING_POINTS: f64 = 10.0;

/// Fewer API calls (or sessions) than this have no trend.
pub const TREND_MIN: usize = 6;

/// The hit rate (token-weighted) over the first two thirds of `series` and over the last
/// third. Entries without prompt tokens (a failed call) are left out; `None` when fewer
/// than [`TREND_MIN`] remain.
pub fn trend(series: &[Usage]) -> Option<Trend> {
    let calls: Vec<&Usage> = series.iter().filter(|u| u.prompt() > 0).collect();
    if calls.len() < TREND_MIN {
        return None;
    }
    let split = calls.len() - calls.len() / 3;
    let rate = |part: &[&Usage]| {
        let mut sum = Usage::default();
        part.iter().for_each(|u| sum.add(u));
        sum.hit_rate()
    };
    Some(Trend { before: rate(&calls[..split])?, after: rate(&calls[split..])? })
}

/// What was skipped while reading.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Skipped {
    /// Lines that were not a JSON object, or too long.
    pub lines: usize,
    /// Files with such lines.
    pub files: usize,
    /// Files that could not be opened or read to the end, and directories that could not
    /// be listed.
    pub unreadable: usize,
    /// Symbolic links below a directory named (not followed).
    pub links: usize,
}

/// Everything read from a set of directories.
#[derive(Clone, Debug, Default)]
pub struct Scan {
    /// The sessions, in order of harness then id.
    pub sessions: Vec<Session>,
    /// Transcript files read.
    pub files: usize,
    /// What was skipped.
    pub skipped: Skipped,
    /// Directories named that do not exist.
    pub missing: Vec<PathBuf>,
}

impl Scan {
    /// One message for everything skipped, if anything was.
    pub fn skipped_message(&self) -> Option<String> {
        let s = self.skipped;
        let mut parts = Vec::new();
        if s.lines > 0 {
            parts.push(format!(
                "{} {} in {} {} (not JSON, or longer than {} MiB)",
                s.lines,
                plural(s.lines, "line", "lines"),
                s.files,
                plural(s.files, "file", "files"),
                MAX_LINE >> 20
            ));
        }
        if s.unreadable > 0 {
            let what = plural(s.unreadable, "file or directory", "files or directories");
            parts.push(format!("{} unreadable {what}", s.unreadable));
        }
        if s.links > 0 {
            parts.push(format!("{} symbolic {}", s.links, plural(s.links, "link", "links")));
        }
        (!parts.is_empty())
            .then(|| format!("transcripts: skipped {}; the rest was read", parts.join(", ")))
    }
}

fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

/// The harnesses' own directories: `<claude dir>/projects` (`CLAUDE_CONFIG_DIR`, default
/// `~/.claude`), and `<codex home>/sessions` and `archived_sessions` (`CODEX_HOME`, default
/// `~/.codex`).
pub fn default_roots(env: &Env) -> Vec<PathBuf> {
    let home = env.home.as_deref();
    let claude = env.claude_config_dir.clone().or_else(|| home.map(|h| h.join(".claude")));
    let codex = env.codex_home.clone().or_else(|| home.map(|h| h.join(".codex")));
    let mut roots = Vec::new();
    roots.extend(claude.map(|d| d.join("projects")));
    if let Some(codex) = codex {
        roots.push(codex.join("sessions"));
        roots.push(codex.join("archived_sessions"));
    }
    roots
}

/// How much is read.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Longer lines are skipped.
    pub max_line: usize,
    /// Deeper directories are not entered.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_line: MAX_LINE, max_depth: MAX_DEPTH }
    }
}

/// Reads every transcript under `roots` (directories, or transcript files themselves).
/// A file named `rollout-*.jsonl` is read as Codex's, any other `*.jsonl` as Claude Code's.
pub fn scan(roots: &[PathBuf]) -> Scan {
    scan_with(roots, Limits::default())
}

/// [`scan`] under `limits`.
pub fn scan_with(roots: &[PathBuf], limits: Limits) -> Scan {
    let mut scan = Scan::default();
    let mut files = Vec::new();
    for root in roots {
        match std::fs::metadata(root) {
            Ok(meta) if meta.is_dir() => walk(root, 0, limits, &mut files, &mut scan.skipped),
            Ok(meta) if meta.is_file() => files.push(root.clone()),
            Ok(_) => scan.skipped.unreadable += 1,
            Err(_) => scan.missing.push(root.clone()),
        }
    }
    files.sort();
    files.dedup();
    let mut sessions: BTreeMap<(Harness, String), Session> = BTreeMap::new();
    let mut claimed = HashSet::new();
    for path in &files {
        let Ok(file) = open(path, roots) else {
            scan.skipped.unreadable += 1;
            continue;
        };
        let mut lines = Lines::new(file, limits.max_line);
        let read = if is_codex_file(path) {
            codex::read(&mut lines, path)
        } else {
            claude::read(&mut lines, &mut claimed)
        };
        scan.files += 1;
        if lines.skipped > 0 {
            scan.skipped.lines += lines.skipped;
            scan.skipped.files += 1;
        }
        match read {
            Ok(found) => found.into_iter().for_each(|s| merge(&mut sessions, s)),
            Err(_) => scan.skipped.unreadable += 1,
        }
    }
    scan.sessions =
        sessions.into_values().filter(|s| s.api_calls > 0 || !s.shell.is_empty()).collect();
    scan
}

/// Adds `session` (read from one file) to what other files gave for the same session.
fn merge(sessions: &mut BTreeMap<(Harness, String), Session>, session: Session) {
    let key = (session.harness, session.id.clone());
    let Some(into) = sessions.get_mut(&key) else {
        sessions.insert(key, session);
        return;
    };
    into.saw(session.first);
    into.saw(session.last);
    into.cwd = into.cwd.take().or(session.cwd);
    into.usage.add(&session.usage);
    into.api_calls += session.api_calls;
    into.calls.extend(session.calls);
    into.shell.extend(session.shell);
    into.shell.sort_by_key(|c| c.time);
}

/// Opens a transcript: a file a root names as it is, any other never through a symbolic
/// link (the walk skipped links already; this closes the window between the two).
fn open(path: &Path, roots: &[PathBuf]) -> io::Result<File> {
    if roots.iter().any(|r| r == path) { File::open(path) } else { crate::fsx::open_read(path) }
}

/// Returns true if and only if `path` is named as Codex names its rollouts.
fn is_codex_file(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("rollout-"))
}

/// Collects the `*.jsonl` files below `dir`, in no particular order, entering
/// subdirectories down to `limits.max_depth` and never a symbolic link.
fn walk(dir: &Path, depth: usize, limits: Limits, files: &mut Vec<PathBuf>, skipped: &mut Skipped) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        skipped.unreadable += 1;
        return;
    };
    for entry in entries.flatten() {
        // `file_type` does not follow a symbolic link: a link is seen as one.
        let Ok(kind) = entry.file_type() else { continue };
        let path = entry.path();
        if kind.is_symlink() {
            skipped.links += 1;
        } else if kind.is_dir() {
            if depth < limits.max_depth {
                walk(&path, depth + 1, limits, files, skipped);
            }
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "jsonl") {
            files.push(path);
        }
    }
}

/// A file's lines, each at most a bound long; longer ones are skipped and counted.
pub(crate) struct Lines<R> {
    reader: BufReader<R>,
    buf: Vec<u8>,
    max: usize,
    /// Lines skipped: too long here, not JSON by the parser.
    pub(crate) skipped: usize,
}

impl<R: Read> Lines<R> {
    pub(crate) fn new(inner: R, max: usize) -> Lines<R> {
        Lines {
            reader: BufReader::with_capacity(256 << 10, inner),
            buf: Vec::new(),
            max,
            skipped: 0,
        }
    }

    /// The next non-blank line, without its line ending; `None` at the end.
    pub(crate) fn next_line(&mut self) -> io::Result<Option<&[u8]>> {
        loop {
            self.buf.clear();
            let limit = u64::try_from(self.max).unwrap_or(u64::MAX).saturating_add(1);
            let n = (&mut self.reader).take(limit).read_until(b'\n', &mut self.buf)?;
            if n == 0 {
                return Ok(None);
            }
            let ended = self.buf.last() == Some(&b'\n');
            if !ended && self.buf.len() > self.max {
                self.skipped += 1;
                self.skip_rest()?;
                continue;
            }
            let mut end = self.buf.len();
            while end > 0 && matches!(self.buf[end - 1], b'\n' | b'\r' | b' ' | b'\t') {
                end -= 1;
            }
            if end > 0 {
                return Ok(Some(&self.buf[..end]));
            }
        }
    }

    /// Reads past the rest of a line that was too long, a megabyte at a time.
    fn skip_rest(&mut self) -> io::Result<()> {
        loop {
            self.buf.clear();
            let n = (&mut self.reader).take(1 << 20).read_until(b'\n', &mut self.buf)?;
            if n == 0 || self.buf.last() == Some(&b'\n') {
                self.buf.clear();
                return Ok(());
            }
        }
    }
}

/// Milliseconds since the Unix epoch of an RFC 3339 time (`2026-11-30T10:00:00.123Z`,
/// `…+02:00`); `None` if it is not one, or is before 1970.
pub fn parse_time(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        if part.bytes().all(|c| c.is_ascii_digit()) { part.parse().ok() } else { None }
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut rest = &text[19..];
    let mut millis = 0;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        let padded = format!("{:0<3}", &frac[..digits.min(3)]);
        millis = padded.parse::<i64>().ok()?;
        rest = &frac[digits..];
    }
    let offset = match rest.as_bytes() {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2]
            if [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit()) =>
        {
            let hours = i64::from((h1 - b'0') * 10 + (h2 - b'0'));
            let minutes = i64::from((m1 - b'0') * 10 + (m2 - b'0'));
            let secs = hours * 3600 + minutes * 60;
            if *sign == b'+' { secs } else { -secs }
        }
        _ => return None,
    };
    let secs =
        days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset;
    u64::try_from(secs * 1000 + millis).ok()
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`); `tj stats --since` reads its dates with it too.
pub(crate) fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Returns true if and only if one of the simple commands in `line` runs tj (by name or
/// by a path to it), wrappers and assignments aside.
pub fn runs_tj(line: &str) -> bool {
    simple_commands(line).iter().any(|argv| {
        let identity = crate::rules::identity::normalize(argv);
        identity.first().is_some_and(|p| p == "tj")
    })
}

/// The simple commands of a shell line, each as its words (quotes removed, redirections
/// left out), split at `&&`, `||`, `;`, `|`, `&`, parentheses and newlines. A line the
/// lexer refuses (a command substitution, a heredoc, an unterminated quote) is split on
/// those operators and on blanks instead: close enough to name its programs.
pub fn simple_commands(line: &str) -> Vec<Vec<String>> {
    use crate::rewrite::lex::{Kind, lex};
    let Ok(tokens) = lex(line) else {
        return line
            .split(['&', '|', ';', '\n', '(', ')', '`'])
            .map(|part| {
                part.split_whitespace().map(|w| w.trim_matches(['"', '\'']).to_owned()).collect()
            })
            .filter(|words: &Vec<String>| !words.is_empty())
            .collect();
    };
    let mut commands = Vec::new();
    let mut words = Vec::new();
    for token in tokens {
        match token.kind {
            Kind::Word(word) => words.push(word.text),
            Kind::Op(_) if !words.is_empty() => commands.push(std::mem::take(&mut words)),
            Kind::Op(_) | Kind::Redirect(_) | Kind::Comment => {}
        }
    }
    if !words.is_empty() {
        commands.push(words);
    }
    commands
}

/// `command` cut to at most [`MAX_COMMAND`] bytes, at a character boundary.
fn clip(mut command: String) -> String {
    command.truncate(crate::text::floor_char_boundary(&command, MAX_COMMAND));
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_rfc_3339() {
        assert_eq!(parse_time("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_time("2026-11-30T10:00:00.123Z"), Some(1_796_032_800_123));
        assert_eq!(parse_time("2026-11-30T12:00:00.5+02:00"), Some(1_796_032_800_500));
        assert_eq!(parse_time("2026-11-30T10:00:00.123456789Z"), Some(1_796_032_800_123));
        for bad in [
            "",
            "2026-11-30",
            "2026-13-01T00:00:00Z",
            "2026-11-30T10:00:00",
            "1969-12-31T23:59:59Z",
            "2026-11-30T10:00:00+2",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn tj_is_found_in_any_simple_command() {
        for yes in [
            "tj run -- cargo test",
            "/home/me/.local/bin/tj run --agent --host claude-code -- cargo test",
            "cd /x && TJ_SESSION=1 tj run -- make",
            "timeout 60 tj run -- go test ./...",
            "'/opt/my tools/tj' run -- npm test 2>&1 | tail -5",
            "echo $(date) && tj expand abc",
        ] {
            assert!(runs_tj(yes), "{yes}");
        }
        for no in ["cargo test", "echo tj run", "grep -r tj src", "tjx run", "cat tj"] {
            assert!(!runs_tj(no), "{no}");
        }
    }

    #[test]
    fn the_trend_compares_the_last_third_with_the_rest() {
        let call = |read, input| Usage { input, cache_read: read, cache_write: Some(0), output: 1 };
        let steady: Vec<Usage> = (0..9).map(|_| call(90, 10)).collect();
        let t = trend(&steady).unwrap();
        assert!(!t.is_falling(), "{t:?}");
        let mut falling = steady.clone();
        falling[6..].fill(call(60, 40));
        let t = trend(&falling).unwrap();
        assert!((t.before - 0.9).abs() < 1e-9 && (t.after - 0.6).abs() < 1e-9, "{t:?}");
        assert!(t.is_falling());
        assert_eq!(trend(&steady[..5]), None);
    }

    #[test]
    fn a_long_line_is_skipped_and_the_next_one_read() {
        let text = format!("{{\"a\":1}}\n{}\n\n{{\"b\":2}}\r\n{{\"c\":3}}", "x".repeat(100));
        let mut lines = Lines::new(text.as_bytes(), 50);
        let mut got = Vec::new();
        while let Some(line) = lines.next_line().unwrap() {
            got.push(String::from_utf8(line.to_vec()).unwrap());
        }
        assert_eq!(got, ["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"]);
        assert_eq!(lines.skipped, 1);
    }
}
