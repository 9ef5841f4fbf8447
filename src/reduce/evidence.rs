//! The built-in evidence classifier: which rendered lines are *evidence* (DESIGN,
//! "Evidence").
//!
//! Evidence is what an agent needs to act on a run: failure and error headlines, assertion
//! diffs, locations, stack frames, panics, tracebacks and run summaries, in the dialects of
//! cargo/rustc, pytest, jest/vitest, mocha, go test, JUnit/Maven/Gradle, rspec, tsc, eslint,
//! gcc/clang/make/ld, Python, Node, Go and the JVM, plus generic `error`/`warning` headlines.
//!
//! This module owns only the judgement "is this line evidence". It does not own the
//! invariant that a lossy candidate keeps every distinct evidence line, nor the 512-line
//! cap (both `evidence::check`, run by the gate), nor the head/tail window that keeps
//! evidence lines (`window`), nor the evidence patterns a rule adds (`rules`).
//!
//! Precision matters as much as recall: every evidence line is one more line a reduction
//! must keep, and past 512 distinct ones the output is declined as unverifiable. So
//! passing-test lines, progress, `Compiling …`-style chatter and the word "error" inside
//! identifiers (`errors.rs`, `is_error()`, `-Werror`) are not evidence. Where a line names
//! a failure and the call is close, it is evidence.
//!
//! Deliberate choices:
//! - A count of zero (`0 errors`, `0 failed`, `no errors found`) does not by itself make a
//!   line evidence: it reports the absence of a failure. A tally of passes (`239 passed`,
//!   `3 passing`) does, because it is the run's outcome.
//! - Of an assertion diff (jest/vitest/mocha), the header and the changed (`-`/`+`) lines
//!   are evidence; the unchanged context lines are not.
//! - A location makes a line evidence when a severity follows it directly
//!   (`x.c:3:5: error:`, `x.py:12: AssertionError`), as every compiler and linter prints it;
//!   a location followed by code that merely mentions an error (`rg` hits) is not.
//! - [`is_evidence`] judges one line alone. [`classify`] adds lines that are evidence only
//!   by position (the source line under a Python `File` line, an eslint file header, a
//!   panic message on the line after `panicked at …:`, …), so it marks a superset.
//!
//! Performance (DESIGN, "Performance budget"): each line pays one anchored match, which
//! fails within a few bytes on an ordinary line. The unanchored patterns run only on lines
//! holding one of a few keywords, found by one literal scan over the whole text, chunk by
//! chunk (a literal set scanned per short line costs several times more than over a
//! buffer, where it runs as a SIMD search).

use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{LazyLock, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickKind};
use regex_automata::Input;

use super::patterns::{
    ALARM_KEYS, ANYWHERE, AT_START, FAILURE_KEYS, FAILURE_NOISE, FAILURE_WORD, FirstWord,
};
use crate::matchers::{self, Dfa, Literals};

use crate::reduce::shape::log::{
    is_klog_header, looks_like_log, starts_like_log, strip_log_prefix, syslog_priority,
};

/// What the first word of `token` (a line with its indentation trimmed, or just its first
/// word) can lead: see [`FirstWord`].
fn first_word(token: &[u8]) -> FirstWord {
    let end = first_word_end(token);
    if end > token.len() {
        FirstWord::Located
    } else if token.first().is_some_and(u8::is_ascii_uppercase)
        && token[..end].last().is_some_and(u8::is_ascii_digit)
    {
        FirstWord::Code
    } else {
        FirstWord::Plain
    }
}

/// The end of the first word of `line` (which starts with a non-blank): the index of its
/// first ASCII whitespace, or its length; past the length (`usize::MAX`) if the word holds
/// a `:`, a `(` or one of the exception words, which makes it [`FirstWord::Located`].
///
/// Every line pays it, over its whole length when it has no blank (a 99-byte token of
/// base64): so the line is read 32 bytes at a time, each block tested at once (in vector
/// registers) for a stop (a blank or a mark); only the block that holds one is read byte
/// by byte.
fn first_word_end(line: &[u8]) -> usize {
    let (blocks, _) = line.as_chunks::<32>();
    let from = blocks.iter().take_while(|block| !has_stop(block)).count() * 32;
    let end = match line[from..].iter().position(|&b| is_stop(b)) {
        Some(i) if matches!(line[from + i], b':' | b'(') => return usize::MAX,
        Some(i) => from + i,
        None => line.len(),
    };
    if holds_exception_word(&line[..end]) { usize::MAX } else { end }
}

/// Whether `b` ends a first word: a blank, or a mark (`:`, `(`) that makes it located.
#[inline]
fn is_stop(b: u8) -> bool {
    // Comparisons joined with `|`, not a `matches!` (compiled to a bit test): so a block of
    // them is a few vector instructions.
    (b == b' ')
        | (b == b'\t')
        | (b == b'\n')
        | (b == 0x0c)
        | (b == b'\r')
        | (b == b':')
        | (b == b'(')
}

/// Returns true if and only if one of the bytes of `block` [`is_stop`]: tested at once.
fn has_stop(block: &[u8; 32]) -> bool {
    block.iter().fold(0u8, |any, &b| any | u8::from(is_stop(b))) != 0
}

/// Returns true if and only if `word` holds `Error`, `Exception`, `Warning`, `Exit` or
/// `Interrupt`. Each begins with a pair of letters (`Er`, `Ex`, `Wa`, `In`), which 32
/// positions at a time are tested for at once; only where one is found are the words
/// compared.
fn holds_exception_word(word: &[u8]) -> bool {
    const WORDS: [&[u8]; 5] = [b"Error", b"Exception", b"Warning", b"Exit", b"Interrupt"];
    let pair = |a: u8, b: u8| {
        ((a == b'E') & ((b == b'r') | (b == b'x')))
            | ((a == b'W') & (b == b'a'))
            | ((a == b'I') & (b == b'n'))
    };
    let starts_one = |at: usize| WORDS.iter().any(|w| word[at..].starts_with(w));
    // Block `k` of `firsts` is positions `32k..32k + 32`; of `seconds`, the bytes after them.
    let (firsts, _) = word.as_chunks::<32>();
    let (seconds, _) = word.get(1..).unwrap_or_default().as_chunks::<32>();
    let mut from = 0;
    for (firsts, seconds) in firsts.iter().zip(seconds) {
        let hits = firsts.iter().zip(seconds).fold(0u8, |any, (&a, &b)| any | u8::from(pair(a, b)));
        if hits != 0 && (from..from + 32).any(starts_one) {
            return true;
        }
        from += 32;
    }
    (from..word.len().saturating_sub(1)).any(|at| pair(word[at], word[at + 1]) && starts_one(at))
}

/// The built-in patterns, ready to run: the lead table and key finder that guard them, and
/// one DFA per pattern, each compiled when tj was built (`matchers`) and taken from the
/// binary on first need.
///
/// Each line pays a byte comparison against its leads; only a line with a lead (or a
/// located first word) runs the few start patterns that lead, and only a line holding a key
/// runs the anywhere patterns that own it. A cargo test run touches a handful of patterns.
struct Compiled {
    /// Per first byte of a trimmed line: the [`AT_START`] leads that begin with it, with
    /// the pattern each belongs to.
    leads: Vec<Vec<(&'static [u8], u8)>>,
    /// The [`AT_START`] patterns a [`FirstWord::Located`] first word may lead.
    located_patterns: u128,
    /// The [`AT_START`] patterns a [`FirstWord::Code`] first word may lead.
    code_patterns: u128,
    /// Finds lines with any [`ANYWHERE`] key.
    keys: Literals,
    /// Every key with the [`ANYWHERE`] patterns that own it, for the exact mask of a line.
    key_owners: Vec<(&'static str, u32)>,
    /// Finds every occurrence of every key of `key_owners` (by index) in one pass over a
    /// line, overlapping ones included; built on the first line holding a key past the
    /// first [`KEY_BY_KEY`] of the process.
    every_key: OnceLock<AhoCorasick>,
    /// Lines holding a key seen so far, up to a little past [`KEY_BY_KEY`].
    keyed_lines: AtomicUsize,
    /// [`AT_START`]'s matchers, each anchored at the start of the line.
    start: Vec<OnceLock<Dfa>>,
    /// [`ANYWHERE`]'s matchers.
    anywhere: Vec<OnceLock<Dfa>>,
}

/// Lines holding a key searched key by key before [`Compiled::any_mask`] builds its
/// automaton: 60 searches of a line cost about a fortieth of building it.
const KEY_BY_KEY: usize = 24;

static COMPILED: LazyLock<Compiled> = LazyLock::new(|| {
    let mut leads: Vec<Vec<(&'static [u8], u8)>> = vec![Vec::new(); 256];
    let (mut located_patterns, mut code_patterns) = (0u128, 0u128);
    for (i, pattern) in AT_START.iter().enumerate() {
        let index = u8::try_from(i).expect("AT_START has fewer than 128 patterns (a test checks)");
        for lead in pattern.leads {
            leads[usize::from(lead.as_bytes()[0])].push((lead.as_bytes(), index));
        }
        match pattern.word {
            FirstWord::Plain => {}
            FirstWord::Located => located_patterns |= 1 << i,
            FirstWord::Code => code_patterns |= 1 << i,
        }
    }
    let mut keys: Vec<&'static str> =
        ANYWHERE.iter().flat_map(|p| p.keys.iter().copied()).collect();
    keys.sort_unstable();
    keys.dedup();
    let key_owners = keys
        .iter()
        .map(|k| {
            let owners = ANYWHERE
                .iter()
                .enumerate()
                .filter(|(_, p)| p.keys.contains(k))
                .fold(0u32, |mask, (i, _)| mask | (1 << i));
            (*k, owners)
        })
        .collect();
    Compiled {
        leads,
        located_patterns,
        code_patterns,
        keys: literals(&keys),
        key_owners,
        every_key: OnceLock::new(),
        keyed_lines: AtomicUsize::new(0),
        start: AT_START.iter().map(|_| OnceLock::new()).collect(),
        anywhere: ANYWHERE.iter().map(|_| OnceLock::new()).collect(),
    }
});

impl Compiled {
    /// The [`AT_START`] patterns `line` has a lead for.
    fn start_mask(&self, line: &str) -> u128 {
        let trimmed = line.as_bytes().trim_ascii_start();
        let Some(&first) = trimmed.first() else { return 0 };
        let mut mask = 0u128;
        for (lead, index) in &self.leads[usize::from(first)] {
            if trimmed.starts_with(lead) {
                mask |= 1 << index;
            }
        }
        match first_word(trimmed) {
            FirstWord::Plain => mask,
            FirstWord::Located => mask | self.located_patterns,
            FirstWord::Code => mask | self.code_patterns,
        }
    }

    /// The [`ANYWHERE`] patterns `line` holds a key of. Exact (every key is looked for),
    /// so only run in full on the few lines the finder flags.
    fn any_mask(&self, line: &str) -> u32 {
        if !self.keys.is_match(line.as_bytes()) {
            return 0;
        }
        // The first lines holding a key are searched key by key: an output with a failure
        // or two has a few such lines, and they cost less than building the automaton.
        if self.every_key.get().is_none() && self.keyed_lines.fetch_add(1, Relaxed) < KEY_BY_KEY {
            return self
                .key_owners
                .iter()
                .filter(|(key, _)| line.contains(key))
                .fold(0, |mask, (_, owners)| mask | owners);
        }
        let every = self.every_key.get_or_init(|| {
            // An NFA: built in microseconds, where a DFA would cost a millisecond on the
            // first failing line of a run, for lines that are few.
            AhoCorasick::builder()
                .kind(Some(AhoCorasickKind::NoncontiguousNFA))
                .prefilter(false)
                .build(self.key_owners.iter().map(|(key, _)| key))
                .expect("a few dozen short literals always build")
        });
        every
            .find_overlapping_iter(line)
            .fold(0, |mask, found| mask | self.key_owners[found.pattern().as_usize()].1)
    }

    /// Returns true if and only if one of the [`AT_START`] patterns in `mask` matches.
    fn starts(&self, mask: u128, line: &[u8]) -> bool {
        bits(mask).any(|i| {
            self.start[i]
                .get_or_init(|| builtin(&format!("^(?:{})", AT_START[i].regex)))
                .is_match(line)
        })
    }

    /// Returns true if and only if one of the [`ANYWHERE`] patterns in `mask` matches.
    fn anywhere(&self, mask: u32, line: &[u8]) -> bool {
        bits(u128::from(mask))
            .any(|i| self.anywhere[i].get_or_init(|| builtin(ANYWHERE[i].regex)).is_match(line))
    }

    /// Returns true if and only if `line` is evidence on its own.
    fn is_evidence(&self, line: &str, start: u128, any: u32) -> bool {
        let bytes = line.as_bytes();
        ((start != 0 && self.starts(start, bytes)) || (any != 0 && self.anywhere(any, bytes)))
            && !is_node_internal_frame(line)
    }

    /// Returns, per line, the [`ANYWHERE`] patterns whose keys it holds (`text`: see
    /// [`scan_lines`]).
    fn triggered_lines(&self, text: &str, lines: &[&str]) -> Vec<u32> {
        let mut masks = vec![0u32; lines.len()];
        scan_lines(&self.keys, text, lines, |i| masks[i] = self.any_mask(lines[i]));
        masks
    }
}

/// The indices of the bits set in `mask`, lowest first.
fn bits(mut mask: u128) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            i
        })
    })
}

/// The DFA of one built-in regex, matched on bytes with ASCII classes: taken from the
/// binary, compiled when tj was built.
fn builtin(regex: &str) -> Dfa {
    matchers::ascii(regex, false)
        .expect("built-in evidence patterns are valid regexes (checked by a unit test)")
}

/// A finder for any of `literals` (see [`matchers::Literals`]).
fn literals(literals: &[&str]) -> Literals {
    Literals::new(literals).expect("literals always compile")
}

/// Calls `hit` with the index of every line in which `finder` finds a match, in order.
///
/// `lines` cut from `text` by `reduce::split_lines` are searched in `text`, in place
/// ([`matchers::scan_in_place`]). Other lines (`text` is then anything, `""`) are joined
/// with `\n` into chunks of about [`SCAN_CHUNK`] bytes and each chunk is searched once;
/// after a hit the search resumes at the next line. No key contains `\n`, and none is
/// empty, so a hit's last byte is in the line it was found in.
fn scan_lines(finder: &Literals, text: &str, lines: &[&str], mut hit: impl FnMut(usize)) {
    if matchers::scan_in_place(finder, text, lines, &mut hit) {
        return;
    }
    let mut chunk: Vec<u8> = Vec::with_capacity(SCAN_CHUNK + 1024);
    let mut starts: Vec<usize> = Vec::new();
    let mut first = 0;
    while first < lines.len() {
        if lines[first].len() >= SCAN_CHUNK {
            // A huge line is searched in place rather than copied.
            if finder.is_match(lines[first].as_bytes()) {
                hit(first);
            }
            first += 1;
            continue;
        }
        chunk.clear();
        starts.clear();
        let mut end = first;
        while end < lines.len() && chunk.len() + lines[end].len() < SCAN_CHUNK {
            starts.push(chunk.len());
            chunk.extend_from_slice(lines[end].as_bytes());
            chunk.push(b'\n');
            end += 1;
        }
        let mut at = 0;
        loop {
            let k = match finder.find_end(&Input::new(&chunk).span(at..chunk.len())) {
                Some(None) => break,
                // `starts[0] == 0 < found`, so the index is at least 0.
                Some(Some(found)) => starts.partition_point(|&s| s < found) - 1,
                // A failed search (it cannot fail on these DFAs): every line left is a hit.
                None => starts.partition_point(|&s| s <= at) - 1,
            };
            hit(first + k);
            match starts.get(k + 1) {
                Some(&next) => at = next,
                None => break,
            }
        }
        first = end;
    }
}

/// Returns true if and only if `line`, taken on its own, is evidence by the built-in
/// classifier.
///
/// `line` is one rendered line: no ANSI, no `\r`, no trailing newline. Lines that are
/// evidence only by their position (see [`classify`]) are not recognised here.
///
/// ```
/// use tj::reduce::evidence::is_evidence;
///
/// assert!(is_evidence("test math::tests::mul ... FAILED"));
/// assert!(!is_evidence("test math::tests::add ... ok"));
/// ```
pub fn is_evidence(line: &str) -> bool {
    let compiled = &*COMPILED;
    compiled.is_evidence(line, compiled.start_mask(line), compiled.any_mask(line))
}

/// Marks which lines are evidence. `lines` are already rendered (no ANSI, no `\r`).
///
/// The result has one entry per line. A line is marked if [`is_evidence`] holds for it, or
/// if it is evidence by position in a block that an evidence line opens:
/// - the source line printed under a Python `File "…", line N` frame;
/// - an eslint-style file header directly above a `  line:col  error|warning` problem line;
/// - the changed (`-`/`+`) lines of a jest/vitest/mocha diff after its `- Expected` header;
/// - the message lines after a Rust `panicked at file:line:col:` line;
/// - the indented test names under cargo's second `failures:` header, the indented causes
///   under a bare `Caused by:` (anyhow), and the lines under Gradle's `* What went wrong:`;
/// - the function line above a Go frame location (`\tfile.go:12 +0x1d`).
///
/// ```
/// use tj::reduce::evidence::classify;
///
/// let lines = ["running 2 tests", "test a ... ok", "test b ... FAILED", ""];
/// assert_eq!(classify(&lines), [false, false, true, false]);
/// ```
pub fn classify(lines: &[&str]) -> Vec<bool> {
    classify_in("", lines)
}

/// [`classify`] of `lines` cut from `text` by `reduce::split_lines`: the literal scan
/// searches `text` in place rather than copying the lines (any other `text` is ignored).
pub fn classify_in(text: &str, lines: &[&str]) -> Vec<bool> {
    let compiled = &*COMPILED;
    let triggered = compiled.triggered_lines(text, lines);
    let base: Vec<bool> = lines
        .iter()
        .zip(&triggered)
        .map(|(line, &any)| compiled.is_evidence(line, compiled.start_mask(line), any))
        .collect();
    let mut marked = base.clone();
    let mut diff_end = 0;
    for (i, _) in base.iter().enumerate().filter(|(_, is)| **is) {
        mark_context(lines, &base, i, &mut marked, &mut diff_end);
    }
    marked
}

/// The generic rule's matchers, built on the first failing run.
struct FailureWords {
    /// Finds lines with any [`FAILURE_KEYS`] literal.
    keys: Literals,
    word: Dfa,
    noise: Dfa,
}

static FAILURE_WORDS: LazyLock<FailureWords> = LazyLock::new(|| FailureWords {
    keys: literals(FAILURE_KEYS),
    word: builtin(FAILURE_WORD),
    noise: builtin(FAILURE_NOISE),
});

impl FailureWords {
    fn holds_failure_word(&self, line: &str) -> bool {
        self.word.is_match(line.as_bytes()) && !self.noise.is_match(line.as_bytes())
    }
}

/// Returns true if and only if `line` is evidence of a *failing* run: evidence by
/// [`is_evidence`], or a line holding a failure word (`error`, `fatal`, `failed`,
/// `exception`, `denied`, `killed`, `panic`, `abort`, `not found`, `cannot`, `could not`,
/// and a few kin, in any case, as words) that is not a known noise shape.
///
/// ```
/// use tj::reduce::evidence::{is_evidence, is_failure_evidence};
///
/// assert!(is_failure_evidence("deploy aborted by pre-deploy hook"));
/// assert!(!is_evidence("deploy aborted by pre-deploy hook"));
/// assert!(!is_failure_evidence("test error_paths::retries ... ok"));
/// ```
pub fn is_failure_evidence(line: &str) -> bool {
    let words = &*FAILURE_WORDS;
    is_evidence(line) || (words.keys.is_match(line.as_bytes()) && words.holds_failure_word(line))
}

/// The last line of defence on a failing run (exit code ≠ 0): marks, in `marked`, every
/// line that holds a failure word and is not a known noise shape (see
/// [`is_failure_evidence`]). An error in a dialect no pattern knows is then still kept.
///
/// Not applied to a passing run, where such lines are chatter (`retrying after error`)
/// far more often than news.
pub fn mark_failure_words(lines: &[&str], marked: &mut [bool]) {
    mark_failure_words_in("", lines, marked);
}

/// [`mark_failure_words`] of `lines` cut from `text` (see [`classify_in`]).
pub fn mark_failure_words_in(text: &str, lines: &[&str], marked: &mut [bool]) {
    let words = &*FAILURE_WORDS;
    scan_lines(&words.keys, text, lines, |i| {
        if !marked[i] && words.holds_failure_word(lines[i]) {
            marked[i] = true;
        }
    });
}

static ALARM_FINDER: LazyLock<Literals> = LazyLock::new(|| literals(ALARM_KEYS));

/// Marks, in `evidence`, the *alarms* of a data output (a log, a listing, a table the agent
/// asked to read), whatever the exit code: the lines an agent reading it must not miss.
///
/// - An HTTP request answered with a status of 400 or more, in the access-log formats of
///   nginx, Apache, Python's `http.server`, Django, werkzeug, uvicorn, gunicorn, Traefik
///   (`"GET /x HTTP/1.1" 404 153`, `"GET /x HTTP/1.1" 500 Internal Server Error`), morgan
///   (`GET /x 404 1.2 ms - 9`), chi (`"GET … HTTP/1.1" from 1.2.3.4 - 500 …`), gin and
///   fiber (`| 404 | … | GET`), Rails (`Completed 500 Internal Server Error`), curl's
///   `HTTP/1.1 404`, logfmt and JSON (`status=503`, `"status":503`, `"statusCode":500`);
///   and `http.server`'s own `code 404, message File not found`. The status decides such a
///   line: a `200` for `/errors.html` is no alarm, a `500` under uvicorn's `INFO:` is one.
/// - A line whose level is a warning or worse (see [`line_level`]): `[ERROR]`, `[core:error]`,
///   ` WARN `, `ERRO[0000]`, `level=error`, `lvl=eror`, `"level":"error"`,
///   `"severity":"ERROR"`, pino's `"level":50`, journald's `"PRIORITY":"3"`, klog's `E1201`,
///   syslog's `<3>`, `ERROR:root:`, `SEVERE:`, ASP.NET's `fail: `. The level field decides:
///   `level=info msg="retrying after error"` is no alarm.
/// - In an output that [`looks_like_log`], a log line with no level and no status (syslog,
///   `journalctl`, Go's `log`) that holds a failure word (`Failed password`, `http: TLS handshake error`; see
///   [`is_failure_evidence`]); `panic: `, `Traceback (` and `fatal error: ` behind a
///   `docker compose` prefix.
/// - The rows a table flags (see [`crate::reduce::shape::table::flagged`]): a non-zero
///   `Exited (N)`, `CrashLoopBackOff`, `failed` units and releases, a short `READY`, ….
///   Only a table that starts within the first 64 lines is looked for.
///
/// Never clears a mark. One literal scan finds the candidate lines (two: the failure words
/// have their own), and a byte test reads each line's first bytes; only candidates are
/// parsed, by hand.
///
/// ```
/// use tj::reduce::evidence::mark_alarms;
///
/// let lines = [
///     r#"127.0.0.1 - - [01/Dec/2026 15:12:01] "GET / HTTP/1.1" 200 -"#,
///     r#"127.0.0.1 - - [01/Dec/2026 15:12:01] code 404, message File not found"#,
///     r#"127.0.0.1 - - [01/Dec/2026 15:12:01] "GET /nope HTTP/1.1" 404 -"#,
///     r#"time="2026-12-01T10:00:00Z" level=info msg="retrying after error""#,
/// ];
/// let mut evidence = vec![false; lines.len()];
/// mark_alarms(&lines, &mut evidence);
/// assert_eq!(evidence, [false, true, true, false]);
/// ```
pub fn mark_alarms(lines: &[&str], evidence: &mut [bool]) {
    mark_alarms_in("", lines, evidence);
}

/// [`mark_alarms`] of `lines` cut from `text` (see [`classify_in`]).
pub fn mark_alarms_in(text: &str, lines: &[&str], evidence: &mut [bool]) {
    mark_line_alarms_in(text, lines, evidence);
    mark_table_alarms(lines, evidence);
}

/// [`mark_alarms`] but for the rows an aligned table flags: for a caller that runs the
/// `table` shape's detection itself, which flags them.
pub fn mark_line_alarms(lines: &[&str], evidence: &mut [bool]) {
    mark_line_alarms_in("", lines, evidence);
}

/// [`mark_line_alarms`] of `lines` cut from `text` (see [`classify_in`]).
pub fn mark_line_alarms_in(text: &str, lines: &[&str], evidence: &mut [bool]) {
    scan_lines(&ALARM_FINDER, text, lines, |i| {
        if !evidence[i] && is_alarm_line(lines[i]) {
            evidence[i] = true;
        }
    });
    // What no literal finds: a level at the start (klog's `E1201 10:…`, syslog's `<3>`,
    // Ruby's `E, [`), and a delimited row (`sqlite3` list mode, `psql -A`, TSV) whose
    // field is a failed state.
    for (line, flag) in lines.iter().zip(evidence.iter_mut()) {
        *flag = *flag
            || (matches!(line.as_bytes().first(), Some(b'E' | b'W' | b'F' | b'<'))
                && start_level(line.as_bytes()) == Some(true))
            || has_failed_field(line);
    }
    // The failure-word fallback is for logs only (see below); elsewhere its scan is saved.
    let words = &*FAILURE_WORDS;
    let is_log = looks_like_log(lines);
    scan_lines(&words.keys, text, if is_log { lines } else { &[] }, |i| {
        let line = lines[i];
        if !evidence[i]
            && !strip_log_prefix(line).starts_with('{')
            && starts_like_log(line)
            && http_status(line).is_none()
            && line_level(line).is_none()
            && words.holds_failure_word(line)
        {
            evidence[i] = true;
        }
    });
}

/// The rows an aligned table at the top of the output flags (see [`mark_alarms`]).
fn mark_table_alarms(lines: &[&str], evidence: &mut [bool]) {
    // Detecting a table costs a few times the scans above; data tables (`docker ps`,
    // `kubectl get`, `systemctl`, `helm list`, a query) start at the top, so a table is
    // looked for in the whole output only when one starts in its first lines.
    let head = &lines[..lines.len().min(TABLE_REACH)];
    if crate::reduce::shape::table::detect(head).is_some()
        && let Some(layout) = crate::reduce::shape::table::detect(lines)
    {
        for i in crate::reduce::shape::table::flagged(lines, &layout) {
            evidence[i] = true;
        }
    }
}

/// How many first lines of an output [`mark_alarms`] reads for a table header.
const TABLE_REACH: usize = 64;

/// Returns true if and only if `line` is an alarm by its HTTP status, its level, or a crash
/// start behind a log prefix (see [`mark_alarms`]; the failure-word fallback and table rows
/// are judged there).
pub fn is_alarm_line(line: &str) -> bool {
    // A request's status decides an access-log line; a status field (`"status":200`) is
    // one field among others, and an `error` level beside it still counts.
    if let Some(status) = request_status(line.as_bytes()) {
        return status >= 400;
    }
    let status = field_status(line.as_bytes());
    if status.is_some_and(|s| s >= 400) {
        return true;
    }
    if let Some(alarm) = line_level(line) {
        return alarm;
    }
    if status.is_some() {
        return false;
    }
    let rest = strip_log_prefix(line);
    rest.starts_with("panic: ")
        || rest.starts_with("Traceback (")
        || rest.starts_with("fatal error: ")
}

/// The states that mark a failed row when one is a whole field of a delimited row.
const FAILED_STATES: [&str; 10] = [
    "failed",
    "failure",
    "error",
    "errored",
    "fatal",
    "crashed",
    "aborted",
    "timeout",
    "timed out",
    "dead",
];

/// Whether `line` is a row delimited by `|` or tabs with a whole field (spaces trimmed)
/// that is a failed state (`331|charge|failed|…`, `7\terror\t…`), in any case.
fn has_failed_field(line: &str) -> bool {
    let delimiter = if line.contains('|') {
        '|'
    } else if line.contains('\t') {
        '\t'
    } else {
        return false;
    };
    line.split(delimiter).any(|field| {
        let field = field.trim();
        field.len() <= 9 && FAILED_STATES.iter().any(|s| field.eq_ignore_ascii_case(s))
    })
}

/// The HTTP methods an access log names.
const METHODS: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/// The HTTP response status `line` reports, if it reads as an access-log line or an HTTP
/// status line (see [`mark_alarms`] for the formats). Only 100 to 599 count.
pub fn http_status(line: &str) -> Option<u16> {
    let b = line.as_bytes();
    request_status(b).or_else(|| field_status(b))
}

/// The status of an access-log request line or an HTTP status line (every form of
/// [`http_status`] but the logfmt and JSON fields).
fn request_status(b: &[u8]) -> Option<u16> {
    quoted_request_status(b)
        .or_else(|| {
            after_all(b, b"HTTP/", |rest| {
                // curl -v's `< HTTP/1.1 404 Not Found`, morgan's short format.
                let v = rest.iter().take_while(|c| c.is_ascii_digit() || **c == b'.').count();
                (v > 0).then(|| status_at(&rest[v..], b" ")).flatten()
            })
        })
        .or_else(|| method_path_status(b))
        .or_else(|| after_all(b, b"Completed ", |rest| status_at(rest, b"")))
        .or_else(|| {
            after_all(b, b"code ", |rest| {
                status_at(rest, b"").filter(|_| rest[3..].starts_with(b", message"))
            })
        })
        .or_else(|| {
            // gin, fiber: `| 404 |` on a line naming a method.
            let names_method = b.split(|c| !c.is_ascii_uppercase()).any(is_method);
            if !names_method {
                return None;
            }
            after_all(b, b"| ", |rest| {
                status_at(rest, b"").filter(|_| rest[3..].trim_ascii_start().starts_with(b"|"))
            })
        })
}

/// The status `rest` starts with, after the `lead` it must start with: three digits from
/// 100 to 599 not followed by another digit or a letter.
fn status_at(rest: &[u8], lead: &[u8]) -> Option<u16> {
    let rest = rest.strip_prefix(lead)?;
    let digits = rest.get(..3)?;
    if !digits.iter().all(u8::is_ascii_digit) || rest.get(3).is_some_and(u8::is_ascii_alphanumeric)
    {
        return None;
    }
    let n = digits.iter().fold(0u16, |n, d| n * 10 + u16::from(d - b'0'));
    (100..=599).contains(&n).then_some(n)
}

/// The first `Some` that `parse` gives for the text after an occurrence of `needle`.
fn after_all(b: &[u8], needle: &[u8], parse: impl Fn(&[u8]) -> Option<u16>) -> Option<u16> {
    let mut at = 0;
    while let Some(found) = find(&b[at..], needle) {
        let end = at + found + needle.len();
        if let Some(status) = parse(&b[end..]) {
            return Some(status);
        }
        at = end;
    }
    None
}

/// The index of the first `needle` (not empty) in `hay`: a scan for its first byte, then a
/// comparison (needles here are short and their first bytes rare in a line).
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let last = hay.len().checked_sub(needle.len())?;
    hay[..=last]
        .iter()
        .enumerate()
        .filter(|&(_, &c)| c == first)
        .find(|&(i, _)| hay[i + 1..].starts_with(rest))
        .map(|(i, _)| i)
}

/// The status after a quoted request (`"GET /x HTTP/1.1" 404`, `"GARBAGE" 400`, chi's
/// `"GET … HTTP/1.1" from 1.2.3.4:5 - 500`). The quoted text must read as a request: it
/// names `HTTP/` or starts with a method, or its quote follows `] ` (a bracketed time).
fn quoted_request_status(b: &[u8]) -> Option<u16> {
    let mut open: Option<usize> = None;
    for (i, &c) in b.iter().enumerate() {
        if c != b'"' {
            continue;
        }
        let Some(start) = open else {
            open = Some(i);
            continue;
        };
        open = None;
        let rest = &b[i + 1..];
        let status = status_at(rest, b" ").or_else(|| {
            let after = rest.strip_prefix(b" from ")?;
            let addr = after.iter().take_while(|c| **c != b' ').count();
            status_at(&after[addr..], b" - ")
        });
        let Some(status) = status else { continue };
        let quoted = &b[start + 1..i];
        let request = find(quoted, b" HTTP/").is_some()
            || METHODS
                .iter()
                .any(|m| quoted.starts_with(m.as_bytes()) && quoted.get(m.len()) == Some(&b' '))
            || b[..start].ends_with(b"] ");
        if request {
            return Some(status);
        }
    }
    None
}

/// The status after an unquoted `METHOD /path` (morgan's `GET /x 404 1.2 ms - 9`).
fn method_path_status(b: &[u8]) -> Option<u16> {
    // One pass over the spaces: a method word before, a path after.
    for (sp, _) in b.iter().enumerate().filter(|&(_, &c)| c == b' ') {
        let rest = &b[sp + 1..];
        if !(rest.starts_with(b"/") || rest.starts_with(b"http")) {
            continue;
        }
        let word_start = b[..sp].iter().rposition(|c| !c.is_ascii_uppercase()).map_or(0, |p| p + 1);
        if !is_method(&b[word_start..sp]) {
            continue;
        }
        let path = rest.iter().take_while(|c| **c != b' ').count();
        if let Some(status) = status_at(&rest[path..], b" ") {
            return Some(status);
        }
    }
    None
}

/// Returns true if and only if `word` is one of [`METHODS`].
fn is_method(word: &[u8]) -> bool {
    (3..=7).contains(&word.len()) && METHODS.iter().any(|m| m.as_bytes() == word)
}

/// The status in a logfmt or JSON field whose key ends in `status`, `statuscode` or
/// `status_code` (`status=404`, `"status":503`, `"statusCode":500`,
/// `"DownstreamStatus":502`). A JSON key counts only on a line that opens an object before
/// it (a JSON record, not a line of a pretty-printed document).
fn field_status(b: &[u8]) -> Option<u16> {
    let ends_with = |key: &[u8], tail: &[u8]| {
        key.len() >= tail.len() && key[key.len() - tail.len()..].eq_ignore_ascii_case(tail)
    };
    fields(b).find_map(|(key, value)| {
        let status_key = ends_with(key, b"status")
            || ends_with(key, b"statuscode")
            || ends_with(key, b"status_code");
        status_key.then(|| status_at(value, b"")).flatten()
    })
}

/// The `key`, `value` pairs of logfmt (`key=value`) and JSON (`"key": value`) fields in
/// `b`, the value with its opening quote and leading spaces removed. A JSON field counts
/// only when a `{` comes before it on the line.
fn fields(b: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    let object = b.iter().position(|&c| c == b'{');
    b.iter().enumerate().filter_map(move |(p, &c)| {
        let (key, value) = match c {
            b'=' => {
                let start = b[..p]
                    .iter()
                    .rposition(|c| !(c.is_ascii_alphanumeric() || b"_.@-".contains(c)))
                    .map_or(0, |q| q + 1);
                if start == p || (start > 0 && !b" \t,{([".contains(&b[start - 1])) {
                    return None;
                }
                (&b[start..p], &b[p + 1..])
            }
            b':' => {
                if p < 2 || b[p - 1] != b'"' {
                    return None;
                }
                let open = b[..p - 1].iter().rposition(|&c| c == b'"')?;
                if object.is_none_or(|o| o > open) {
                    return None;
                }
                (&b[open + 1..p - 1], &b[p + 1..])
            }
            _ => return None,
        };
        let value = value.trim_ascii_start();
        Some((key, value.strip_prefix(b"\"").unwrap_or(value)))
    })
}

/// Whether a level word names a warning or worse (`Some(true)`), a lesser level
/// (`Some(false)`), or no level (`None`). Any ASCII case.
fn level_word(word: &[u8]) -> Option<bool> {
    const ALARM: &[&str] = &[
        "warn",
        "warning",
        "wrn",
        "error",
        "err",
        "eror",
        "erro",
        "fatal",
        "fata",
        "ftl",
        "critical",
        "crit",
        "panic",
        "dpanic",
        "pani",
        "severe",
        "emerg",
        "emergency",
        "alert",
        "fail",
    ];
    const QUIET: &[&str] = &[
        "trace",
        "trac",
        "trc",
        "verbose",
        "vrb",
        "debug",
        "debu",
        "dbug",
        "dbg",
        "info",
        "information",
        "informational",
        "inf",
        "notice",
        "note",
        "fine",
        "finer",
        "finest",
        "config",
        "log",
        "system",
        "default",
    ];
    if !(2..=13).contains(&word.len()) {
        return None;
    }
    let is = |w: &&str| w.as_bytes().eq_ignore_ascii_case(word);
    if ALARM.iter().any(is) {
        Some(true)
    } else if QUIET.iter().any(is) {
        Some(false)
    } else {
        None
    }
}

/// The level of `line`: `Some(true)` for a warning or worse, `Some(false)` for a lesser
/// level, `None` when it has none.
///
/// The first that applies decides:
/// 1. a level field (`level=`, `lvl=`, `severity=`, `"level":`, `"severity":`, `"@l":`,
///    `"log.level":`, `"levelname":`, pino's numeric `"level":50` (40 and up is a warning),
///    journald's `"PRIORITY":"3"` (4 and below), MongoDB's `"s":"E"`), whatever the
///    message around it says;
/// 2. a level the line starts with (after a `docker compose` prefix): klog's `E1201 …`,
///    syslog's `<3>`, Ruby's `E, [`, `ERROR:root:`, `WARN[0000]`, `fail: `;
/// 3. the first level word in the line's first 160 bytes: in brackets in any case
///    (`[error]`, `[core:error]`, `[Warning]`, `[10:00:00 ERR]`), or standing alone in
///    uppercase on a line that [`starts_like_log`] (`2026-… ERROR app - …`).
pub fn line_level(line: &str) -> Option<bool> {
    let b = line.as_bytes();
    if let Some(level) = field_level(b) {
        return Some(level);
    }
    let rest = strip_log_prefix(line).as_bytes();
    if let Some(level) = start_level(rest) {
        return Some(level);
    }
    word_level(rest, starts_like_log(line))
}

/// The level of a level field of `b` (see [`line_level`], step 1).
fn field_level(b: &[u8]) -> Option<bool> {
    fields(b).find_map(|(key, value)| {
        let key = key_name(key);
        let word_len = value.iter().take_while(|c| c.is_ascii_alphanumeric()).count();
        let word = &value[..word_len];
        let number = || std::str::from_utf8(word).ok()?.parse::<u32>().ok();
        match key {
            b"level" => level_word(word).or_else(|| {
                // pino and bunyan: 10 trace … 30 info, 40 warn, 50 error, 60 fatal.
                number().filter(|n| (10..=60).contains(n)).map(|n| n >= 40)
            }),
            b"lvl" | b"severity" | b"levelname" | b"loglevel" | b"log_level" | b"log.level"
            | b"level_name" | b"severity_text" | b"severitytext" | b"@l" | b"@level" => {
                level_word(word)
            }
            // syslog severities: 0 emerg … 4 warning, 5 notice, 6 info, 7 debug.
            b"priority" => number().filter(|n| *n <= 7).map(|n| n <= 4),
            // MongoDB: F, E, W, I, D1…D5.
            b"s" if word.len() <= 2 && value.get(word_len) == Some(&b'"') => match word.first() {
                Some(b'F' | b'E' | b'W') => Some(true),
                Some(b'I' | b'D') => Some(false),
                _ => None,
            },
            _ => None,
        }
    })
}

/// The level-field name `key` spells, in any ASCII case, as a lowercase literal.
fn key_name(key: &[u8]) -> &'static [u8] {
    const NAMES: &[&str] = &[
        "level",
        "lvl",
        "severity",
        "levelname",
        "loglevel",
        "log_level",
        "log.level",
        "level_name",
        "severity_text",
        "severitytext",
        "@l",
        "@level",
        "priority",
        "s",
    ];
    if key.len() > 13 {
        return b"";
    }
    NAMES.iter().find(|n| n.as_bytes().eq_ignore_ascii_case(key)).map_or(b"", |n| n.as_bytes())
}

/// The level `s` (a line without its multiplexer prefix) starts with (see [`line_level`],
/// step 2).
fn start_level(s: &[u8]) -> Option<bool> {
    let alarm_letter = |c: u8| matches!(c, b'E' | b'W' | b'F' | b'A');
    if is_klog_header(s)
        || (s.len() > 3 && b"DIWEFAU".contains(&s[0]) && s[1..].starts_with(b", ["))
    {
        return Some(alarm_letter(s[0]));
    }
    if let Some(priority) = syslog_priority(s) {
        return Some(priority % 8 <= 4);
    }
    let word = s.iter().take_while(|c| c.is_ascii_alphabetic()).count();
    let next = s.get(word);
    if word == 0 || next.is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_') {
        return None;
    }
    let w = &s[..word];
    let upper = w.iter().all(u8::is_ascii_uppercase);
    // `ERROR:root:`, `WARN[0000]`, `SEVERE: `, `INFO  `; ASP.NET's and winston's `fail: `.
    if upper && (next.is_none() || matches!(next, Some(b':' | b'[' | b' ' | b'\t' | b'|' | b'/'))) {
        return level_word(w);
    }
    const LOWER: [&[u8]; 7] = [b"trce", b"dbug", b"debug", b"info", b"warn", b"fail", b"crit"];
    (s[word..].starts_with(b": ") && LOWER.contains(&w)).then(|| level_word(w)).flatten()
}

/// How far into a line [`word_level`] looks for a level word: past the timestamp, host,
/// thread and logger columns, short of most messages.
const LEVEL_REACH: usize = 160;

/// The first level word in the head of `s` (see [`line_level`], step 3); `log_line` says
/// whether the line starts like a log, which lets a bare uppercase word count.
fn word_level(s: &[u8], log_line: bool) -> Option<bool> {
    let head = &s[..s.len().min(LEVEL_REACH)];
    let mut depth = 0usize;
    let mut i = 0;
    while i < head.len() {
        let c = head[i];
        if !c.is_ascii_alphanumeric() {
            match c {
                b'[' => depth += 1,
                b']' => depth = depth.saturating_sub(1),
                _ => {}
            }
            i += 1;
            continue;
        }
        let end = head[i..]
            .iter()
            .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
            .map_or(head.len(), |p| i + p);
        let word = &head[i..end];
        let before = head[..i].trim_ascii_end().last().copied();
        let after = head[end..].trim_ascii_start().first().copied();
        let bracketed = depth > 0
            && matches!(before, Some(b'[' | b':' | b' '))
            && matches!(after, Some(b']' | b'/'))
            || before == Some(b'[') && matches!(after, Some(b']'));
        let bare = log_line && word.iter().all(u8::is_ascii_uppercase) && word.len() >= 3;
        if (bracketed || bare)
            && let Some(level) = level_word(word)
        {
            return Some(level);
        }
        i = end;
    }
    None
}

/// A frame inside Node.js itself (`    at Module._compile (node:internal/modules/cjs/
/// loader:1105:14)`): the runtime's plumbing under every stack, never where a fix goes. Not
/// evidence, so a rule may skip it.
fn is_node_internal_frame(line: &str) -> bool {
    let trimmed = line.trim_start();
    trimmed.starts_with("at ")
        && (trimmed.contains("(node:internal/") || trimmed.starts_with("at node:internal/"))
}

/// How many bytes of lines [`Compiled::triggered_lines`] joins before scanning: large enough
/// for the SIMD literal search to pay off, small enough that the copy stays far below the
/// size of the input (DESIGN: reduce memory under 1.2× the input).
const SCAN_CHUNK: usize = 32 * 1024;

/// The most lines one positional block may add. A block longer than this is a dump, not a
/// message; its head is kept and the rest left to the window, rather than letting one
/// panic payload push the evidence count past the verifiable limit.
const BLOCK_CAP: usize = 64;

/// The most lines a diff block may span. Assertion diffs are kept whole (DESIGN: "every
/// assertion diff kept verbatim"); this only bounds the scan when no end marker appears.
const DIFF_SPAN_CAP: usize = 2000;

/// Marks the lines that evidence line `i` makes evidence by position.
///
/// `diff_end` is where the last diff scan stopped; a diff header before it resumes there, so
/// that many headers in a row cost one scan, not one each.
fn mark_context(
    lines: &[&str],
    base: &[bool],
    i: usize,
    marked: &mut [bool],
    diff_end: &mut usize,
) {
    let line = lines[i];
    let trimmed = line.trim();
    let next = lines.get(i + 1).copied();

    if trimmed.starts_with("File \"") {
        // The source line under a frame is indented deeper than the frame; caret lines
        // (`~~~^^^`) and the next frame are not source.
        if let Some(src) = next
            && indent(src) > indent(line)
            && !src.trim().is_empty()
            && !src.trim_start().starts_with("File \"")
            && !src.trim().bytes().all(|b| matches!(b, b'^' | b'~' | b' '))
        {
            marked[i + 1] = true;
        }
    } else if is_eslint_problem(line) {
        // The file header of the stylish format is the unindented line above the first
        // problem; it carries the path the problems belong to.
        if i > 0 && !lines[i - 1].trim().is_empty() && indent(lines[i - 1]) == 0 && !base[i - 1] {
            marked[i - 1] = true;
        }
    } else if is_diff_header(trimmed) || (indent(line) == 0 && line.starts_with("AssertionError: "))
    {
        // unittest prints its difflib diff under a bare `AssertionError:` line.
        *diff_end = mark_diff(lines, i, (i + 1).max(*diff_end), marked);
    } else if trimmed.ends_with(':') && line.contains("panicked at ") {
        // Since Rust 1.73 the panic message follows on its own lines.
        mark_block(lines, i, marked, |l| {
            let t = l.trim_start();
            !t.is_empty() && !t.starts_with("note: ") && !t.starts_with("stack backtrace:")
        });
    } else if trimmed == "failures:" {
        mark_block(lines, i, marked, |l| indent(l) > 0 && l.split_whitespace().count() == 1);
    } else if trimmed == "Caused by:" {
        mark_block(lines, i, marked, |l| indent(l) > 0 && !l.trim().is_empty());
    } else if trimmed == "* What went wrong:" {
        mark_block(lines, i, marked, |l| !l.trim().is_empty());
    } else if is_go_frame_location(line)
        && i > 0
        && indent(lines[i - 1]) == 0
        && lines[i - 1].trim_end().ends_with(')')
    {
        marked[i - 1] = true;
    }
}

/// Marks the lines after `i` while `keep` holds, at most [`BLOCK_CAP`] of them.
fn mark_block(lines: &[&str], i: usize, marked: &mut [bool], keep: impl Fn(&str) -> bool) {
    for (j, line) in lines.iter().enumerate().skip(i + 1).take(BLOCK_CAP) {
        if !keep(line) {
            break;
        }
        marked[j] = true;
    }
}

/// Marks the changed lines of an assertion diff that starts at header line `i`.
///
/// The diff ends at what follows it in every dialect: a code frame (jest), a stack frame
/// (vitest, mocha), a line indented less than the header (node's TAP block), the next
/// failure, or two blank lines in a row. Blank lines inside do not end it, since a
/// multi-line string diff can contain them.
///
/// The scan starts at `from` (after the header, or where an earlier scan stopped) and
/// returns the index where it stopped.
fn mark_diff(lines: &[&str], i: usize, from: usize, marked: &mut [bool]) -> usize {
    let header_indent = indent(lines[i]);
    let mut blanks = 0;
    let end = lines.len().min(from.saturating_add(DIFF_SPAN_CAP));
    for (j, line) in lines.iter().enumerate().take(end).skip(from) {
        let t = line.trim();
        if t.is_empty() {
            blanks += 1;
            if blanks == 2 {
                return j;
            }
            continue;
        }
        blanks = 0;
        if is_diff_header(t) {
            // `+ Received` after `- Expected`: part of the same header.
            continue;
        }
        if ends_diff(t) || indent(line) < header_indent {
            return j;
        }
        if t.starts_with('-') || t.starts_with('+') {
            marked[j] = true;
        }
    }
    end
}

/// Returns true if and only if `trimmed` heads an assertion diff: jest/vitest
/// (`- Expected`, `+ Received`, `- Snapshot`), mocha (`+ expected - actual`), node's assert
/// (`+ actual - expected`).
fn is_diff_header(trimmed: &str) -> bool {
    trimmed.starts_with("- Expected")
        || trimmed.starts_with("- Snapshot")
        || trimmed.starts_with("+ Received")
        || trimmed.starts_with("+ expected - actual")
        || trimmed.starts_with("+ actual - expected")
}

/// Lines that follow an assertion diff and so end it.
fn ends_diff(trimmed: &str) -> bool {
    let code_frame = {
        let t = trimmed.trim_start_matches('>').trim_start();
        let digits = t.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && t[digits..].trim_start().starts_with('|')
    };
    code_frame
        || trimmed.starts_with("at ")
        || trimmed.starts_with('❯')
        || trimmed.starts_with('●')
        || trimmed.starts_with('⎯')
        || trimmed.starts_with("FAIL")
        || trimmed.starts_with("---")
        || trimmed.starts_with("===")
        || trimmed.starts_with("Traceback ")
}

/// Returns true if and only if `line` is an eslint stylish problem line
/// (`  9:37  error  message  rule`).
fn is_eslint_problem(line: &str) -> bool {
    if indent(line) == 0 {
        return false;
    }
    let mut words = line.split_whitespace();
    let Some(position) = words.next() else { return false };
    let Some((row, col)) = position.split_once(':') else { return false };
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    numeric(row) && numeric(col) && matches!(words.next(), Some("error" | "warning"))
}

/// Returns true if and only if `line` is a Go stack frame location (`\t/x/y.go:12 +0x1d`).
fn is_go_frame_location(line: &str) -> bool {
    indent(line) > 0 && line.contains(".go:") && !line.contains(": ")
}

/// The width of the leading whitespace of `line`, in bytes.
fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex_automata::hybrid;

    /// Every distinct line of every fixture (tests/fixtures), for the round-trip checks.
    fn fixture_lines() -> Vec<String> {
        let mut lines = std::collections::BTreeSet::new();
        for case in crate::testing::fixtures() {
            lines.extend(case.text.lines().map(|l| l.trim_end_matches('\r').to_owned()));
        }
        lines.into_iter().collect()
    }

    /// [`fixture_lines`], then `more`.
    fn fixture_lines_and(more: &[&str]) -> Vec<String> {
        let mut lines = fixture_lines();
        lines.extend(more.iter().map(|line| (*line).to_owned()));
        lines
    }

    /// The kind of first word, by its definition, word by word, as it was written before
    /// the one-pass scan.
    fn first_word_by_definition(line: &[u8]) -> FirstWord {
        const WORDS: [&[u8]; 5] = [b"Error", b"Exception", b"Warning", b"Exit", b"Interrupt"];
        let token = line.split(u8::is_ascii_whitespace).next().unwrap_or(line);
        if token.iter().any(|&b| b == b':' || b == b'(')
            || WORDS.iter().any(|word| token.windows(word.len()).any(|w| w == *word))
        {
            FirstWord::Located
        } else if token.first().is_some_and(u8::is_ascii_uppercase)
            && token.last().is_some_and(u8::is_ascii_digit)
        {
            FirstWord::Code
        } else {
            FirstWord::Plain
        }
    }

    #[test]
    fn a_first_word_is_judged_as_by_its_definition_on_every_fixture_line() {
        let mut lines =
            fixture_lines_and(&["E1", "Err", "IOError: x", "a(b", "ExitCode", "W 1", "F401 x", ""]);
        // A stop or an exception word on either side of the scan's 32-byte blocks.
        for at in [0, 1, 30, 31, 32, 33, 62, 63, 64, 65, 95] {
            let pad = "Q".repeat(at);
            for tail in [" x", ":", "(", "Error", "Exit x", "Interrupt", "Warn9", "Ex", "E", "7"] {
                lines.push(format!("{pad}{tail}"));
                lines.push(format!("A{pad}{tail}"));
            }
        }
        for line in &lines {
            let trimmed = line.as_bytes().trim_ascii_start();
            assert_eq!(first_word(trimmed), first_word_by_definition(trimmed), "{line:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn a_first_word_is_judged_as_by_its_definition(
            line in "[A-Z]?(Error|Exc|Exception|Wa|Warning|Exit|In|Interrupt|[a-zEWIrxan09+/:( \t]{1,9}){0,14}",
        ) {
            let trimmed = line.as_bytes().trim_ascii_start();
            proptest::prop_assert_eq!(first_word(trimmed), first_word_by_definition(trimmed));
        }
    }

    /// Wherever an [`AT_START`] pattern matches a line, the guard lets it run there: on
    /// every fixture line, and on lines each pattern is written for.
    #[test]
    fn the_start_guard_lets_every_matching_pattern_run_on_every_fixture_line() {
        let (start, _) = &*SINGLE;
        let lines = fixture_lines_and(&[
            "F401 [*] `os` imported but unused",
            "E501 Line too long (89 > 88)",
            "src/a.py:3:1: F401 `os` imported but unused",
            "collect2: error: ld returned 1 exit status",
            "KeyError: 'x'",
            "  main.go:12 +0x1d",
            "a.ts(3,24): error TS2322: nope",
        ]);
        let mut matched = 0;
        for line in &lines {
            let mask = COMPILED.start_mask(line);
            for (i, (pattern, dfa)) in AT_START.iter().zip(start).enumerate() {
                if dfa.is_match(line.as_bytes()) {
                    assert!(mask & (1 << i) != 0, "{:?} matches {line:?} unguarded", pattern.name);
                    matched += 1;
                }
            }
        }
        assert!(matched > 1000, "only {matched} matches: the check saw too little");
    }

    /// One pattern on the engine tj compiled the classifier to before the build did it: a
    /// lazy DFA built now, from the same text with the same syntax.
    fn lazy(regex: &str) -> (hybrid::dfa::DFA, hybrid::dfa::Cache) {
        use regex_automata::nfa::thompson::{self, WhichCaptures};
        let dfa = hybrid::dfa::DFA::builder()
            .syntax(regex_automata::util::syntax::Config::new().unicode(false).utf8(false))
            .thompson(thompson::Config::new().which_captures(WhichCaptures::None))
            .build(regex)
            .unwrap();
        let cache = dfa.create_cache();
        (dfa, cache)
    }

    fn lazy_match(engine: &mut (hybrid::dfa::DFA, hybrid::dfa::Cache), line: &str) -> bool {
        let input = Input::new(line.as_bytes()).earliest(true);
        engine.0.try_search_fwd(&mut engine.1, &input).unwrap().is_some()
    }

    /// The build-time check of issue 13 for the classifier: every embedded matcher, taken
    /// from the binary, matches exactly the lines its pattern compiled now matches, on every
    /// line of every fixture its guard lets through (the guards themselves are checked by
    /// `assert_guards_hold`), and every literal finder finds exactly the lines that hold
    /// one of its literals.
    #[test]
    fn embedded_classifier_matches_as_its_patterns_compiled_now_on_the_fixtures() {
        let lines = fixture_lines();
        assert!(lines.len() > 50_000, "{} fixture lines", lines.len());
        let compiled = &*COMPILED;
        let mut start: Vec<_> =
            AT_START.iter().map(|p| lazy(&format!("^(?:{})", p.regex))).collect();
        let mut anywhere: Vec<_> = ANYWHERE.iter().map(|p| lazy(p.regex)).collect();
        let (mut word, mut noise) = (lazy(FAILURE_WORD), lazy(FAILURE_NOISE));
        let words = &*FAILURE_WORDS;
        // The literal finders against Aho-Corasick automata of the same literals.
        let keys: Vec<&str> = ANYWHERE.iter().flat_map(|p| p.keys.iter().copied()).collect();
        let ac = |keys: &[&str], nocase: bool| {
            aho_corasick::AhoCorasick::builder().ascii_case_insensitive(nocase).build(keys).unwrap()
        };
        let references = [
            ac(&keys, false),
            ac(FAILURE_KEYS, false),
            ac(ALARM_KEYS, false),
            ac(super::super::patterns::ALARM_WORDS, true),
        ];
        let mut checked = 0;
        for line in &lines {
            let bytes = line.as_bytes();
            for i in bits(compiled.start_mask(line)) {
                let embedded = compiled.starts(1 << i, bytes);
                assert_eq!(
                    embedded,
                    lazy_match(&mut start[i], line),
                    "{:?} on {line:?}",
                    AT_START[i].name
                );
                checked += 1;
            }
            for i in bits(u128::from(compiled.any_mask(line))) {
                let embedded = compiled.anywhere(1 << i, bytes);
                assert_eq!(
                    embedded,
                    lazy_match(&mut anywhere[i], line),
                    "{:?} on {line:?}",
                    ANYWHERE[i].name
                );
                checked += 1;
            }
            for (finder, reference) in [
                (&compiled.keys, &references[0]),
                (&words.keys, &references[1]),
                (&*ALARM_FINDER, &references[2]),
            ] {
                assert_eq!(finder.is_match(bytes), reference.is_match(bytes), "{line:?}");
            }
            let alarm = references[3].is_match(bytes);
            assert_eq!(crate::reduce::shape::log::is_alarm(line), alarm, "{line:?}");
            assert_eq!(words.word.is_match(bytes), lazy_match(&mut word, line), "{line:?}");
            assert_eq!(words.noise.is_match(bytes), lazy_match(&mut noise, line), "{line:?}");
        }
        assert!(checked > 10_000, "only {checked} guarded matches compared");
    }

    #[test]
    fn pattern_sets_fit_their_masks() {
        // Subsets are u128 (start) and u32 (anywhere) bit masks.
        assert!(AT_START.len() <= 128, "{} start patterns", AT_START.len());
        assert!(ANYWHERE.len() <= 32, "{} anywhere patterns", ANYWHERE.len());
    }

    /// The mask of a line, found in one pass, is the owners of every key the line holds:
    /// keys inside other keys and overlapping ones included.
    #[test]
    fn a_lines_mask_names_the_owners_of_every_key_it_holds() {
        let compiled = &*COMPILED;
        let by_key = |line: &str| {
            compiled
                .key_owners
                .iter()
                .filter(|(key, _)| line.contains(key))
                .fold(0, |mask, (_, owners)| mask | owners)
        };
        // Keys that overlap, and one inside another.
        let lines = fixture_lines_and(&[
            "3 failed; Exited with error code 2 (ELIFECYCLE) SIGSEGV",
            "passing, failing: 2 passed, 1 failure",
            "ERR!ERR_PNPM_X [Error/[Warning/",
            "Segmentation faultcore dumpedKilledBus error",
        ]);
        let mut held = 0;
        for line in &lines {
            let expected = by_key(line);
            assert_eq!(compiled.any_mask(line), expected, "{line:?}");
            held += usize::from(expected != 0);
        }
        assert!(held > 1000, "only {held} lines hold a key: the check saw too little");
    }

    #[test]
    fn key_sets_fit_the_simd_searcher() {
        // Past 64 literals aho-corasick gives up its SIMD (Teddy) searcher and the scan
        // every line pays gets several times slower.
        let mut keys: Vec<&str> = ANYWHERE.iter().flat_map(|p| p.keys.iter().copied()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert!(keys.len() <= 64, "{} anywhere keys", keys.len());
        // The searcher compares fingerprints as long as the shortest key, up to 4 bytes: a
        // key of 3 makes most positions of lowercase text a candidate to verify.
        let short: Vec<&&str> = keys.iter().filter(|k| k.len() < 4).collect();
        assert!(short.is_empty(), "anywhere keys shorter than 4 bytes: {short:?}");
        assert!(FAILURE_KEYS.len() <= 64, "{} failure keys", FAILURE_KEYS.len());
        assert!(ALARM_KEYS.len() <= 64, "{} alarm keys", ALARM_KEYS.len());
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("ssse3") {
            for finder in [&COMPILED.keys, &FAILURE_WORDS.keys, &*ALARM_FINDER] {
                assert!(matches!(finder, Literals::Simd(_)), "{finder:?}");
            }
        }
    }

    /// `scan_lines` (whole chunks, resumed after each hit) flags exactly the lines a search
    /// of each line alone flags, with the SIMD finders and with the DFAs they fall back to.
    #[test]
    fn a_scan_flags_the_lines_each_line_alone_would() {
        let lines = fixture_lines();
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        for keys in [FAILURE_KEYS, ALARM_KEYS] {
            let simd = Literals::new(keys).unwrap();
            let dfa = Literals::Dfa(matchers::ascii_literals(keys, false).unwrap());
            let alone: Vec<usize> =
                (0..lines.len()).filter(|&i| dfa.is_match(lines[i].as_bytes())).collect();
            assert!(alone.len() > 100, "{} lines hold a key", alone.len());
            // In place, on a text the lines are cut from (trailing white space trimmed).
            let text = lines.join("\n");
            let cut = crate::reduce::split_lines(&text);
            let cut_alone: Vec<usize> =
                (0..cut.len()).filter(|&i| dfa.is_match(cut[i].as_bytes())).collect();
            for finder in [&simd, &dfa] {
                let mut scanned = Vec::new();
                scan_lines(finder, "", &lines, |i| scanned.push(i));
                assert_eq!(scanned, alone);
                let mut in_place = Vec::new();
                assert!(matchers::scan_in_place(finder, &text, &cut, |i| in_place.push(i)));
                assert_eq!(in_place, cut_alone);
            }
        }
    }

    /// The lines `mark_alarms` marks in `lines`, alone (no classifier).
    fn alarms(lines: &[&str]) -> Vec<bool> {
        let mut marked = vec![false; lines.len()];
        mark_alarms(lines, &mut marked);
        marked
    }

    #[test]
    fn an_access_line_is_judged_by_its_status() {
        let lines = [
            r#"10.1.2.3 - - [01/Dec/2026:10:14:13 +0000] "GET /errors.html HTTP/1.1" 200 5120 "-" "curl/8.5.0""#,
            r#"10.1.2.3 - - [01/Dec/2026:10:14:13 +0000] "GET /x HTTP/1.1" 404 153 "-" "curl/8.5.0""#,
            r#"INFO:     127.0.0.1:51234 - "GET /items/42 HTTP/1.1" 500 Internal Server Error"#,
            r#"INFO:     127.0.0.1:51234 - "GET /error HTTP/1.1" 200 OK"#,
            "GET /api/errors 200 2.001 ms - 512",
            "GET /api/users/99 404 3.112 ms - 24",
            "< HTTP/1.1 503 Service Unavailable",
            "< HTTP/2 200",
        ];
        assert_eq!(alarms(&lines), [false, true, true, false, false, true, true, false]);
        assert_eq!(http_status(lines[0]), Some(200));
        assert_eq!(http_status("GET /x 9999 1 ms - 2"), None);
        assert_eq!(http_status("code 404, message File not found"), Some(404));
        assert_eq!(http_status(r#"{"msg":"done","status":503}"#), Some(503));
        // A pretty-printed JSON member is a document's data, not a log record.
        assert_eq!(http_status(r#"  "status": 503,"#), None);
    }

    #[test]
    fn the_level_field_decides_over_the_message() {
        assert_eq!(line_level(r#"time="t" level=info msg="retrying after error""#), Some(false));
        assert_eq!(line_level(r#"{"level":"debug","msg":"ERROR: none","errors":[]}"#), Some(false));
        assert_eq!(line_level(r#"{"level":50,"msg":"x"}"#), Some(true));
        assert_eq!(line_level(r#"{"level":30,"msg":"error"}"#), Some(false));
        assert_eq!(line_level(r#"{"PRIORITY":"4","MESSAGE":"x"}"#), Some(true));
        assert_eq!(line_level("t=2026-12-01T10:00:06+0000 lvl=eror msg=x"), Some(true));
        assert_eq!(
            line_level("2026-12-01 10:00:09,123 INFO  [main] ErrorHandler - ERROR page"),
            Some(false)
        );
        assert_eq!(line_level("2026/12/01 10:00:03 [error] 29#29: *1 open() failed"), Some(true));
        assert_eq!(
            line_level("[Mon Dec 01 10:00:07 2026] [core:error] [pid 1] AH00126"),
            Some(true)
        );
        assert_eq!(line_level("E1201 10:00:03.123456       1 reflector.go:138] x"), Some(true));
        assert_eq!(
            line_level("<6>Dec  1 10:00:05 web-1 app[700]: error reporting enabled"),
            Some(false)
        );
        assert_eq!(line_level("fail: Microsoft.AspNetCore.Server.Kestrel[13]"), Some(true));
        // Uppercase words count only on a line that starts like a log.
        assert_eq!(line_level("src/log.rs:12:    Level::ERROR => 40,"), None);
        assert_eq!(line_level("2026/12/01 10:00:03 http: TLS handshake error"), None);
    }

    #[test]
    fn unleveled_log_lines_fall_back_to_failure_words() {
        let mut owned: Vec<String> =
            (0..20).map(|i| format!("2026/12/01 10:00:{i:02} handled /api/{i} in 3ms")).collect();
        owned[7] = "2026/12/01 10:00:07 http: TLS handshake error from 10.0.0.9:41822: EOF".into();
        owned[9] = "2026/12/01 10:00:09 retry budget: 0 errors in the last minute".into();
        let lines: Vec<&str> = owned.iter().map(String::as_str).collect();
        let marked = alarms(&lines);
        assert!(marked[7]);
        assert_eq!(marked.iter().filter(|m| **m).count(), 1, "only the failure is an alarm");
        // Not a log: the same line among paths is left to the classifier.
        let listing = ["./a", "./b", lines[7], "./c", "./d", "./e", "./f"];
        assert!(!alarms(&listing)[2]);
    }

    #[test]
    fn mark_alarms_never_clears_a_mark() {
        let lines = ["INFO: fine", "INFO: also fine"];
        let mut marked = vec![true, false];
        mark_alarms(&lines, &mut marked);
        assert_eq!(marked, [true, false]);
        assert!(alarms(&[]).is_empty());
    }

    #[test]
    fn table_alarms_come_from_the_table_shape() {
        let mut owned =
            vec![format!("{:<14}{:<12}{:<30}{}", "CONTAINER ID", "IMAGE", "STATUS", "NAMES")];
        for i in 0..12 {
            let status = match i {
                4 => "Exited (137) 5 minutes ago",
                6 => "Exited (0) 3 hours ago",
                _ => "Up 3 hours",
            };
            owned.push(format!("{:<14}{:<12}{status:<30}svc-{i}", format!("{i:012x}"), "redis:7"));
        }
        let lines: Vec<&str> = owned.iter().map(String::as_str).collect();
        let marked = alarms(&lines);
        assert!(marked[5], "Exited (137)");
        assert_eq!(marked.iter().filter(|m| **m).count(), 1, "{marked:?}");
    }

    #[test]
    fn only_the_patterns_an_input_can_need_are_built() {
        let lines = ["test a ... ok", "test b ... FAILED"];
        let starts = lines.iter().fold(0u128, |m, l| m | COMPILED.start_mask(l));
        assert!(starts.count_ones() < 10, "{} start patterns for a cargo run", starts.count_ones());
    }

    /// Each pattern compiled alone, to check its guard on sample lines.
    static SINGLE: LazyLock<(Vec<Dfa>, Vec<Dfa>)> = LazyLock::new(|| {
        let start = AT_START.iter().map(|p| builtin(&format!("^(?:{})", p.regex))).collect();
        let anywhere = ANYWHERE.iter().map(|p| builtin(p.regex)).collect();
        (start, anywhere)
    });

    /// Checks that wherever a pattern matches `line`, its declared leads or keys are there,
    /// so the guards in front of the combined regexes never hide a match.
    fn assert_guards_hold(line: &str) {
        let bytes = line.as_bytes();
        let trimmed = bytes.trim_ascii_start();
        let token = trimmed.split(u8::is_ascii_whitespace).next().unwrap_or(trimmed);
        let (start, anywhere) = &*SINGLE;
        for (pattern, re) in AT_START.iter().zip(start) {
            if re.is_match(bytes) {
                let led = pattern.leads.iter().any(|l| trimmed.starts_with(l.as_bytes()))
                    || (pattern.word != FirstWord::Plain && first_word(token) == pattern.word);
                assert!(led, "{:?} matches {line:?} without a lead", pattern.name);
            }
        }
        for (pattern, re) in ANYWHERE.iter().zip(anywhere) {
            if re.is_match(bytes) {
                let keyed = pattern.keys.iter().any(|k| line.contains(k));
                assert!(keyed, "{:?} matches {line:?} without a key", pattern.name);
                assert!(COMPILED.any_mask(line) != 0, "no trigger for {line:?}");
            }
        }
    }

    fn assert_evidence(lines: &[&str]) {
        for line in lines {
            assert_guards_hold(line);
            assert!(is_evidence(line), "should be evidence: {line:?}");
        }
    }

    fn assert_not_evidence(lines: &[&str]) {
        for line in lines {
            assert_guards_hold(line);
            assert!(!is_evidence(line), "should not be evidence: {line:?}");
        }
    }

    #[test]
    fn every_builtin_pattern_compiles() {
        let sources = AT_START.iter().map(|p| (p.name, p.regex));
        for (name, regex) in sources.chain(ANYWHERE.iter().map(|p| (p.name, p.regex))) {
            let built = regex::bytes::RegexBuilder::new(regex).unicode(false).build();
            assert!(built.is_ok(), "pattern {name:?} does not compile: {built:?}");
        }
        // Forces the combined, lazily built regexes.
        assert!(!is_evidence("plain text"));
    }

    #[test]
    fn every_lead_and_key_is_non_empty() {
        // The lead table is indexed by a lead's first byte.
        assert!(AT_START.iter().flat_map(|p| p.leads).all(|lead| !lead.is_empty()));
        assert!(
            ANYWHERE.iter().all(|p| !p.keys.is_empty() && p.keys.iter().all(|k| !k.is_empty()))
        );
    }

    #[test]
    fn anywhere_patterns_match_mid_line() {
        assert_evidence(&[
            "2024-05-01T10:00:00Z ERROR api: request failed",
            "ts=1 level=error msg=boom",
            "{\"level\":\"error\",\"msg\":\"boom\"}",
            "bash: line 1: 4242 Segmentation fault      (core dumped) ./a.out",
            "Process completed with exit code 1.",
            "[INFO] Tests run: 5, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.1 s",
            "a.out: x.c:10: main: Assertion `x == 1' failed.",
            "/p/a.js:1:2: Missing semicolon. [Error/semi]",
            "    1 Error(s)",
            "thread 'worker' has overflowed its stack",
        ]);
    }

    #[test]
    fn blank_line_is_not_evidence() {
        assert_not_evidence(&["", "   ", "\t"]);
    }

    // --- cargo / rustc ---

    #[test]
    fn rustc_diagnostics_and_locations_are_evidence() {
        assert_evidence(&[
            "error[E0425]: cannot find value `retries` in this scope",
            "error: could not compile `broken` (lib) due to 3 previous errors; 1 warning emitted",
            "warning: unused import: `std::collections::HashMap`",
            "warning: `lints` (lib) generated 7 warnings",
            " --> src/net.rs:5:23",
            "  --> src/config.rs:10:24",
            "   ::: /rustc/abc/library/core/src/option.rs:12:5",
            "   |                  ---   ^^^^^^^^ expected `u32`, found `&str`",
            "   = note: expected struct `Foo`",
            "              found struct `Bar`",
            "error: aborting due to 2 previous errors",
            "warning: build failed, waiting for other jobs to finish...",
            "src/lib.rs:2:5: warning: unneeded `return` statement",
        ]);
    }

    #[test]
    fn cargo_progress_lines_are_not_evidence() {
        assert_not_evidence(&[
            "   Compiling memchr v2.7.4",
            "    Checking lints v0.1.0 (/home/dev/work/lints)",
            "  Downloaded serde v1.0.200",
            "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 0.10s",
            "     Running unittests src/lib.rs (target/debug/deps/bigtests-5bf5c160dce122bd)",
            "       Fresh itoa v1.0.11",
            "running 305 tests",
            "  |",
            "5 |     for attempt in 0..retries {",
            "  = help: for further information visit https://rust-lang.github.io/rust-clippy/",
            "help: remove `return`",
            "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
        ]);
    }

    #[test]
    fn cargo_failing_test_lines_are_evidence() {
        assert_evidence(&[
            "test config::tests::loads_default_profile ... FAILED",
            "failures:",
            "---- math::tests::checked_mul_overflow_is_none stdout ----",
            "thread 'math::tests::x' (7120) panicked at src/math.rs:326:9:",
            "thread 'main' panicked at 'boom', src/main.rs:2:5",
            "assertion `left == right` failed: product mismatch for 6 * 7",
            "assertion failed: v.is_empty()",
            "  left: 42",
            " right: 41",
            "test result: FAILED. 301 passed; 3 failed; 1 ignored; 0 measured; 0 filtered out",
            "error: test failed, to rerun pass `--lib`",
            "stack backtrace:",
            "   0: __rustc::rust_begin_unwind",
            "   3: bigtests::math::tests::checked_mul::{{closure}}",
            "   7: <fn() -> core::result::Result<(), String> as core::ops::FnOnce<()>>::call_once",
            "note: test did not panic as expected at src/main.rs:8:32",
            "             at ./src/math.rs:326:9",
            "        FAIL [   0.004s] bigtests math::tests::checked_mul",
            "     SIGSEGV [   0.010s] bigtests ffi::tests::deref",
        ]);
    }

    #[test]
    fn cargo_passing_test_line_is_not_evidence() {
        assert_not_evidence(&[
            "test collections::tests::collections_case_000 ... ok",
            "test config::tests::panics_on_boom - should panic ... ok",
            "test parser::tests::fuzz_corpus_roundtrip ... ignored, slow fuzz corpus",
            "test errors::tests::error_display_is_lowercase ... ok",
            "        PASS [   0.004s] bigtests math::tests::add",
        ]);
    }

    #[test]
    fn cargo_panic_message_lines_follow_the_panic() {
        let lines = [
            "thread 'config::tests::loads' (7118) panicked at src/config.rs:326:9:",
            "profile 'release' missing from [\"dev\", \"test\", \"bench\"]",
            "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
            "",
            "plain",
        ];
        assert_eq!(classify(&lines), [true, true, false, false, false]);
    }

    #[test]
    fn cargo_failures_list_names_are_evidence() {
        let lines = [
            "failures:",
            "    config::tests::loads_default_profile",
            "    math::tests::checked_mul_overflow_is_none",
            "",
            "test result: FAILED. 1 passed; 2 failed",
        ];
        assert_eq!(classify(&lines), [true, true, true, false, true]);
    }

    // --- pytest ---

    #[test]
    fn pytest_failure_lines_are_evidence() {
        assert_evidence(&[
            "FAILED tests/test_core.py::test_slugify[Hello  World!-hello-world!] - AssertionError",
            "ERROR tests/test_core.py::test_stock_sync - ConnectionError: could not connect",
            "E       AssertionError: assert 'hello-world' == 'hello-world!'",
            "E         Right contains 1 more item:",
            "E         {'discontinued': 1}",
            "tests/test_core.py:6: AssertionError",
            "tests/test_core.py:18: ",
            "inventory/core.py:24: in reorder_level",
            ">       assert slugify(raw) == expected",
            "_______________ test_merge_stock_drops_nothing ________________",
            "___________ ERROR at setup of test_stock_sync ____________",
            "================= short test summary info ==================",
            "======================= FAILURES ===========================",
            "===== 3 failed, 239 passed, 1 skipped, 1 error in 0.14s =====",
            "===== 242 passed in 0.51s =====",
            "/p/tests/test_x.py:12: DeprecationWarning: call is deprecated",
        ]);
    }

    #[test]
    fn pytest_progress_and_header_lines_are_not_evidence() {
        assert_not_evidence(&[
            "============================= test session starts ==============================",
            "platform linux -- Python 3.11.7, pytest-8.3.4, pluggy-1.7.0",
            "rootdir: /home/dev/work/pyproj",
            "collected 244 items",
            "tests/test_core.py ........................................ [ 38%]",
            "tests/test_api.py::test_get PASSED                           [ 50%]",
            "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _",
            "    def test_reorder_level_new_sku():",
            "raw = 'Hello  World!', expected = 'hello-world!'",
        ]);
    }

    #[test]
    fn pytest_xfail_is_not_a_failure() {
        assert_not_evidence(&["tests/test_a.py::test_b XFAIL (known bug)"]);
    }

    // --- Python tracebacks ---

    #[test]
    fn python_traceback_lines_are_evidence() {
        assert_evidence(&[
            "Traceback (most recent call last):",
            "  File \"/home/dev/work/pyproj/tools/migrate.py\", line 23, in run",
            "KeyError: 'invoices'",
            "MigrationError: step 2 references unknown table 'invoices'",
            "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='x', port=443)",
            "KeyboardInterrupt",
            "SystemExit: 2",
            "The above exception was the direct cause of the following exception:",
            "During handling of the above exception, another exception occurred:",
        ]);
    }

    #[test]
    fn python_source_line_under_a_frame_is_evidence() {
        let lines = [
            "Traceback (most recent call last):",
            "  File \"/p/migrate.py\", line 15, in apply_step",
            "    table = state[\"tables\"][step[\"table\"]]",
            "            ~~~~~~~~~~~~~~~^^^^^^^^^^^^^^^",
            "KeyError: 'invoices'",
        ];
        assert_eq!(classify(&lines), [true, true, true, false, true]);
    }

    #[test]
    fn unittest_failure_and_diff_are_evidence() {
        let lines = [
            "FAIL: test_bad (__main__.T.test_bad)",
            "----------------------------------------------------------------------",
            "Traceback (most recent call last):",
            "  File \"/p/test_u.py\", line 4, in test_bad",
            "    self.assertEqual([1, 2, 3], [1, 2, 4])",
            "AssertionError: Lists differ: [1, 2, 3] != [1, 2, 4]",
            "",
            "First differing element 2:",
            "- [1, 2, 3]",
            "?        ^",
            "",
            "+ [1, 2, 4]",
            "",
            "",
            "- unrelated",
            "Ran 3 tests in 0.001s",
            "FAILED (failures=1, errors=1)",
        ];
        let marked = classify(&lines);
        let expected = [
            true, false, true, true, true, true, false, false, true, false, false, true, false,
            false, false, true, true,
        ];
        assert_eq!(marked, expected);
    }

    #[test]
    fn python_code_mentioning_errors_is_not_evidence() {
        assert_not_evidence(&[
            "    raise ValueError(\"bad\")",
            "    except KeyError:",
            "from errors import error_handler",
            "applying step 2: add_column invoices",
        ]);
    }

    // --- jest / vitest / mocha ---

    #[test]
    fn jest_failure_lines_are_evidence() {
        assert_evidence(&[
            " FAIL  __tests__/coupon.test.js",
            "  ● applyCoupon › unknown code keeps cart and records code",
            "    expect(received).toEqual(expected) // deep equality",
            "    - Expected  - 1",
            "    + Received  + 0",
            "    Expected: 0.3",
            "    Received: 0.30000000000000004",
            "    >  8 |     expect(applyCoupon({ id: 'c2' })).toEqual({ id: 'c2' });",
            "      at Object.toEqual (__tests__/coupon.test.js:8:58)",
            "      at Object.<anonymous> (src/x.test.js:5:13)",
            "Test Suites: 1 failed, 8 passed, 9 total",
            "Tests:       2 failed, 242 passed, 244 total",
            "    TypeError: Cannot read properties of undefined (reading 'id')",
            "    ✕ sums price times quantity (3 ms)",
        ]);
    }

    #[test]
    fn jest_passing_and_progress_lines_are_not_evidence() {
        assert_not_evidence(&[
            " PASS  __tests__/suite0.test.js",
            " RUNS  __tests__/coupon.test.js",
            "    ✓ normalizes sku (2 ms)",
            "Snapshots:   0 total",
            "Time:        0.512 s, estimated 1 s",
            "Ran all test suites.",
            "Determining test suites to run...",
            "       6 |   });",
            "      Object {",
            "⠙",
        ]);
    }

    #[test]
    fn jest_diff_keeps_changed_lines_only() {
        let lines = [
            "    - Expected  - 1",
            "    + Received  + 0",
            "",
            "      Object {",
            "        \"discount\": 0,",
            "    -   \"rejectedCode\": \"BOGUS\",",
            "      }",
            "",
            "       6 |   });",
            "    -1 | not diff",
        ];
        let marked = classify(&lines);
        assert_eq!(marked, [true, true, false, false, false, true, false, false, false, false]);
    }

    #[test]
    fn vitest_failure_lines_are_evidence() {
        assert_evidence(&[
            " FAIL  test/invoice.test.js > splitInvoice > distributes the remainder",
            "AssertionError: expected [ 333, 333, 333 ] to deeply equal [ 334, 333, 333 ]",
            " ❯ test/invoice.test.js:6:35",
            " ❯ Module.parseAmount src/money.js:9:35",
            "     × distributes the remainder",
            " Test Files  1 failed | 6 passed (7)",
            "      Tests  2 failed | 151 passed (153)",
            "⎯⎯⎯⎯⎯⎯ Failed Tests 2 ⎯⎯⎯⎯⎯⎯",
        ]);
        assert_not_evidence(&[
            " ✓ test/format0.test.js (25)",
            " · test/format2.test.js (25)",
            " RUN  v2.1.8 /home/dev/work/vitestproj",
            "   Start at  01:03:46",
            "      4| describe('splitInvoice', () => {",
        ]);
    }

    #[test]
    fn vitest_diff_ends_at_the_frame() {
        let lines = [
            "- Expected",
            "+ Received",
            "",
            "  Array [",
            "-   334,",
            "+   333,",
            "    333,",
            "  ]",
            "",
            " ❯ test/invoice.test.js:6:35",
            "- not a diff line",
        ];
        let marked = classify(&lines);
        assert_eq!(
            marked,
            [true, true, false, false, true, true, false, false, false, true, false]
        );
    }

    #[test]
    fn node_internal_frames_are_not_evidence() {
        assert_not_evidence(&[
            "    at Module._compile (node:internal/modules/cjs/loader:1105:14)",
            "    at node:internal/main/run_main_module:23:47",
            "    at Function.executeUserEntryPoint [as runMain] (node:internal/run_main:164:12)",
        ]);
        assert_evidence(&["    at Object.<anonymous> (/app/src/index.js:3:9)"]);
    }

    #[test]
    fn numbered_replies_are_not_failures() {
        assert_not_evidence(&["1) \"job-1\"", "  2) (integer) 5", "150) 'x'"]);
    }

    #[test]
    fn mocha_lines_are_evidence() {
        assert_evidence(&[
            "  3 passing (12ms)",
            "  1 failing",
            "  1) Array #indexOf() should return -1:",
            "     AssertionError [ERR_ASSERTION]: 4 == 5",
            "      + expected - actual",
        ]);
        let lines = [
            "      + expected - actual",
            "",
            "      -4",
            "      +5",
            "",
            "      at Context.<anonymous> (test/a.js:3:12)",
        ];
        assert_eq!(classify(&lines), [true, false, true, true, false, true]);
    }

    #[test]
    fn node_test_runner_failure_lines_are_evidence() {
        assert_evidence(&[
            "not ok 2 - fails",
            "  location: '/p/t.test.mjs:4:1'",
            "    Expected values to be strictly deep-equal:",
            "# fail 2",
            "# pass 1",
        ]);
        assert_not_evidence(&[
            "ok 1 - adds",
            "  duration_ms: 1.059584",
            "# suites 0",
            "TAP version 13",
        ]);
        // The diff ends where the TAP block dedents.
        let lines = [
            "    + actual - expected",
            "    ",
            "      {",
            "    +     2",
            "    -     3",
            "      }",
            "  code: 'ERR_ASSERTION'",
            "  ---",
        ];
        assert_eq!(classify(&lines), [true, false, false, true, true, false, false, false]);
    }

    // --- go test ---

    #[test]
    fn go_test_failure_lines_are_evidence() {
        assert_evidence(&[
            "--- FAIL: TestParse (0.00s)",
            "    --- FAIL: TestParse/empty (0.00s)",
            "    parse_test.go:12: got 3, want 4",
            "FAIL",
            "FAIL\tgithub.com/x/y/parse\t0.012s",
            "panic: runtime error: index out of range [5] with length 3",
            "goroutine 7 [running]:",
            "\t/home/dev/go/src/x/parse.go:41 +0x1d",
            "created by testing.(*T).Run in goroutine 1",
            "./main.go:12:5: undefined: foo",
            "vet: ./main.go:3:35: undeclared name: y",
            "exit status 1",
        ]);
    }

    #[test]
    fn go_test_passing_lines_are_not_evidence() {
        assert_not_evidence(&[
            "ok  \tgithub.com/x/y/parse\t0.012s",
            "?   \tgithub.com/x/y/cmd\t[no test files]",
            "=== RUN   TestParse",
            "--- PASS: TestParse (0.00s)",
            "PASS",
            "exit status 0",
        ]);
    }

    #[test]
    fn go_frame_function_line_is_evidence_by_position() {
        let lines =
            ["goroutine 7 [running]:", "x/parse.Parse({0x0, 0x0})", "\t/p/parse.go:41 +0x1d"];
        assert_eq!(classify(&lines), [true, true, true]);
    }

    // --- JVM: JUnit, Maven, Gradle ---

    #[test]
    fn jvm_build_and_test_failures_are_evidence() {
        assert_evidence(&[
            "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.5:test",
            "[ERROR] Tests run: 5, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.05 s <<< FAILURE!",
            "[INFO] Tests run: 120, Failures: 0, Errors: 0, Skipped: 2",
            "[INFO] BUILD FAILURE",
            "BUILD FAILED in 3s",
            "FAILURE: Build failed with an exception.",
            "> Task :app:test FAILED",
            "* What went wrong:",
            "Execution failed for task ':app:compileJava'.",
            "\tat com.foo.Bar.baz(Bar.java:12)",
            "\tat java.base/java.lang.Thread.run(Thread.java:833)",
            "\t... 3 more",
            "Caused by: java.lang.IllegalStateException: boom",
            "Exception in thread \"main\" java.lang.RuntimeException: x",
            "org.opentest4j.AssertionFailedError: expected: <3> but was: <4>",
            "e: file:///p/src/Main.kt:12:5 Unresolved reference: foo",
            "[WARNING] /p/src/Foo.java:[12,5] unchecked conversion",
            "FooTest > testBar() FAILED",
            "FAILURES!!!",
            "Tests run: 5,  Failures: 1",
        ]);
    }

    #[test]
    fn jvm_progress_lines_are_not_evidence() {
        assert_not_evidence(&[
            "[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.05 s - in com.foo.BarTest",
            "[INFO] BUILD SUCCESS",
            "> Task :app:compileJava",
            "> Task :app:test UP-TO-DATE",
            "[WARNING] Using platform encoding (UTF-8 actually) to copy filtered resources",
            "[INFO] --- maven-surefire-plugin:3.2.5:test (default-test) @ app ---",
            "BUILD SUCCESSFUL in 2s",
        ]);
    }

    #[test]
    fn gradle_what_went_wrong_block_is_evidence() {
        let lines = [
            "* What went wrong:",
            "Execution failed for task ':app:compileJava'.",
            "> Compilation failed; see the compiler error output for details.",
            "",
            "* Try:",
        ];
        assert_eq!(classify(&lines), [true, true, true, false, false]);
    }

    // --- rspec ---

    #[test]
    fn rspec_failure_lines_are_evidence() {
        assert_evidence(&[
            "Failures:",
            "  1) Calculator adds two numbers",
            "     Failure/Error: expect(add(1, 2)).to eq(4)",
            "       expected: 4",
            "            got: 3",
            "     # ./spec/calculator_spec.rb:5:in `block (2 levels) in <top (required)>'",
            "rspec ./spec/calculator_spec.rb:4 # Calculator adds two numbers",
            "3 examples, 1 failure",
            "3 examples, 0 failures",
        ]);
        assert_not_evidence(&["Finished in 0.00235 seconds (files took 0.1 seconds to load)"]);
    }

    // --- tsc / eslint ---

    #[test]
    fn tsc_errors_are_evidence() {
        assert_evidence(&[
            "src/handlers.ts(3,24): error TS7006: Parameter 'req' implicitly has an 'any' type.",
            "src/service.ts:4:28 - error TS2367: This comparison appears to be unintentional",
            "error TS5023: Unknown compiler option 'foo'.",
            "Found 8 errors in 2 files.",
            "Found 1 error.",
        ]);
    }

    #[test]
    fn zero_counts_are_not_evidence() {
        assert_not_evidence(&[
            "Found 0 errors. Watching for file changes.",
            "no errors found",
            "Success: no issues found in 12 source files",
            "0 errors, 0 warnings",
        ]);
    }

    #[test]
    fn eslint_problems_and_summary_are_evidence() {
        assert_evidence(&[
            "  7:5  error  Unexpected 'debugger' statement  no-debugger",
            "  4:7   warning  'count' is never reassigned. Use 'const' instead  prefer-const",
            "✖ 6 problems (4 errors, 2 warnings)",
            "/p/a.js:1:2: Missing semicolon. [Error/semi]",
        ]);
    }

    #[test]
    fn eslint_file_header_is_evidence_by_position() {
        let lines = [
            "",
            "/home/dev/work/eslintproj/src/store.js",
            "  7:5  error  Unexpected 'debugger' statement  no-debugger",
            "",
            "/home/dev/work/eslintproj/README.md",
        ];
        assert_eq!(classify(&lines), [false, true, true, false, false]);
    }

    // --- gcc / clang / make / ld ---

    #[test]
    fn gcc_and_make_diagnostics_are_evidence() {
        assert_evidence(&[
            "src/main.c:6:14: warning: format ‘%d’ expects argument of type ‘int’",
            "src/parser.c:10:16: error: ‘totl’ undeclared (first use in this function)",
            "src/parser.c:10:16: note: each undeclared identifier is reported only once",
            "src/main.c: In function ‘main’:",
            "src/util.c: At top level:",
            "In file included from src/main.c:3:",
            "                 from src/all.h:2,",
            "make: *** [Makefile:10: build/parser.o] Error 1",
            "make[2]: *** [src/CMakeFiles/app.dir/build.make:76: src/main.o] Error 1",
            "make: Target 'all' not remade because of errors.",
            "main.c:(.text+0x1b): undefined reference to `lookup_default'",
            "/usr/bin/ld: build/main.o: in function `main':",
            "collect2: error: ld returned 1 exit status",
            "clang: error: linker command failed with exit code 1 (use -v to see invocation)",
            "ninja: build stopped: subcommand failed.",
            "FAILED: src/CMakeFiles/app.dir/main.c.o",
            "CMake Error at CMakeLists.txt:12 (find_package):",
            "x.cpp(10): error C2065: 'foo': undeclared identifier",
        ]);
    }

    #[test]
    fn compiler_command_lines_are_not_evidence() {
        assert_not_evidence(&[
            "cc -Wall -Wextra -O1 -g -Iinclude -c src/lexer.c -o build/lexer.o",
            "cc -Wall -Werror -c x.c",
            "gcc -o build/app build/main.o build/errors.o -lm",
            "make[1]: Entering directory '/home/dev/work/app'",
            "    6 |     printf(\"%d words\\n\", count_words(argv[0]));",
            "      |             ~^           ~~~~~~~~~~~~~~~~~~~~",
            "[ 50%] Building C object src/CMakeFiles/app.dir/main.c.o",
            "[100%] Built target app",
        ]);
    }

    // --- generic ---

    #[test]
    fn generic_failure_words_are_evidence() {
        assert_evidence(&[
            "error: something broke",
            "Error: Cannot find module 'left-pad'",
            "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'x'",
            "ERROR: Could not find a version that satisfies the requirement foo",
            "fatal: not a git repository (or any of the parent directories): .git",
            "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
            "WARNING: DATA RACE",
            "Warning: Accessing non-existent property 'x'",
            "Segmentation fault (core dumped)",
            "Killed",
            "Aborted (core dumped)",
            "npm ERR! code ELIFECYCLE",
            "npm error Missing script: \"tset\"",
            " ERR_PNPM_NO_SCRIPT  Missing script: tset",
            "error Command failed with exit code 1.",
            "2024-05-01 10:00:00,123 ERROR [main] db: connection refused",
            "src/app.py:12: error: Incompatible return value type",
            "x.py:1:8: F401 [*] `os` imported but unused",
            "not ok 3 - parses empty input",
            "# fail 1",
        ]);
    }

    #[test]
    fn error_inside_identifiers_is_not_evidence() {
        assert_not_evidence(&[
            "        Error::new(span, message)",
            "    error::new_at(self.scope, self.cursor, message)",
            "            panic::catch_unwind(|| {",
            "        left: Expr::Tuple,",
            "        error: e,",
            "   Compiling errors v0.3.1",
            "src/errors.rs",
            "error_handler registered for /api",
            "if is_error() { return; }",
            "ErrorKind::NotFound => {}",
            "src/runner.rs:94:            Regex::new(r\"(?i)^.*error[\\s:\\[].*$\").unwrap(),",
            "src/tree.rs:48:    if tree_check.is_err() || !tree_check.unwrap().status.success() {",
        ]);
    }

    #[test]
    fn install_and_noise_lines_are_not_evidence() {
        assert_not_evidence(&[
            "Collecting requests==2.32.3",
            "  Downloading requests-2.32.3-py3-none-any.whl (64 kB)",
            "     ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 64.9/64.9 kB 180.4 MB/s eta 0:00:00",
            "Installing collected packages: urllib3, pygments, mdurl, idna",
            "Successfully installed certifi-2026.10.19.post1 requests-2.32.3",
            "added 123 packages in 4s",
            "⠹20 packages are looking for funding",
            "npm WARN deprecated request@2.88.2: request has been deprecated",
            "......................................................",
            "On branch main",
            "\tmodified:   src/hosts/adal/index.ts",
            "commit d67ade9ecfc69631e3f6d8a6e52e4f6af2a6b07f",
            "USER       PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND",
        ]);
    }

    // --- dialects of issue 12 and the failing-run rule ---

    /// The buried-error table of the integration test `evidence_dialects`.
    const BURIED: &str = include_str!("../../tests/evidence/buried.txt");

    #[test]
    fn every_buried_table_line_is_failure_evidence_and_guarded() {
        let lines = BURIED.lines().filter(|l| !l.trim().is_empty() && !l.starts_with("# "));
        for line in lines {
            assert_guards_hold(line);
            assert!(is_failure_evidence(line), "should be evidence of a failing run: {line:?}");
        }
    }

    #[test]
    fn dialect_error_lines_are_evidence_on_any_run() {
        assert_evidence(&[
            "Exited with error code 137",
            "##[error]Process completed with exit code 1.",
            "gyp ERR! stack Error: `make` failed with exit code: 2",
            "Error response from daemon: pull access denied for x, repository does not exist",
            "      Reason:       OOMKilled",
            "web-7d9f8b6c5d-x2k4j   0/1     CrashLoopBackOff   5 (32s ago)   4m",
            "Unhandled exception. System.NullReferenceException: Object reference not set",
            "curl: (6) Could not resolve host: nonexistent-host-xyz.invalid",
            "git@github.com: Permission denied (publickey).",
            "Error: connect ECONNREFUSED 127.0.0.1:1",
            "ssh: connect to host 127.0.0.1 port 1: Connection refused",
            "app.rb:1:in `<main>': undefined method `foo' for nil:NilClass (NoMethodError)",
            "Traceback (innermost last):",
            "fatal error: all goroutines are asleep - deadlock!",
            "ld: library not found for -lssl",
            "Undefined symbols for architecture x86_64:",
            "ERROR:  relation \"users\" does not exist",
            "Makefile:3: *** missing separator.  Stop.",
            "bash: line 19: nosuchcmd: command not found",
            "sh: 1: nosuchcmd: not found",
            "Terminated",
            " ! [rejected]        main -> main (fetch first)",
            "go: updates to go.mod needed; to update it:",
            "E: Unable to locate package nosuchpkg",
        ]);
    }

    #[test]
    fn dialect_near_misses_are_not_evidence() {
        assert_not_evidence(&[
            // JSON values are data; the JSON routes keep them.
            r#"{"name":"web-0","reason":"CrashLoopBackOff","restarts":17}"#,
            "     --retry-connrefused  Retry on connection refused (use with --retry)",
            "Terminated pods are garbage collected after 1h",
            "go: downloading github.com/foo/bar v1.2.3",
            "go: finding module for package github.com/foo/bar",
            "Step 3/12 : RUN make || echo Stop.",
            "E2E tests: 12 suites",
        ]);
    }

    #[test]
    fn failure_words_outside_known_dialects_count_on_a_failing_run_only() {
        for line in [
            "xx error yy",
            "deploy aborted by pre-deploy hook",
            // Printed by failing runs only, so left to this rule.
            "An error occurred while installing nokogiri (1.15.4), and Bundler cannot continue.",
            "> Build error occurred",
            "Failed to compile.",
            "[vite]: Rollup failed to resolve import \"lodash\" from \"/app/src/main.ts\".",
            "Parse error near line 1: no such table: t",
            "The job exceeded the maximum time limit for jobs, and has been terminated.",
            "the configuration file could not be parsed at line 12",
            "2026-12-01T13:57:58.096Z worker-3: nightly job failed after 3 retries",
            "worker process was killed by the OOM killer",
            "upload of artifact.tar.gz failed: 503 Service Unavailable",
            "Build step 'Invoke top-level Maven targets' marked build as failure",
        ] {
            assert_guards_hold(line);
            assert!(!is_evidence(line), "evidence on any run, not only a failing one: {line:?}");
            assert!(is_failure_evidence(line), "should be evidence of a failing run: {line:?}");
        }
    }

    #[test]
    fn failure_word_noise_shapes_are_refused_on_a_failing_run() {
        for line in [
            "0 errors, 0 warnings",
            "Found 0 errors. Watching for file changes.",
            "no failures",
            "finished without errors",
            "[INFO] Tests run: 20, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.6 s",
            "localhost : ok=12 changed=3 unreachable=0 failed=0 skipped=2",
            "error_count=0 warn_count=2",
            "cc -Wall -Werror -c x.c",
            "ok  \tgithub.com/x/y/errors\t0.012s",
            "src/errors.go",
            "test error_handling ... ok",
            "test parser::error paths ... ok",
            "tests/test_api.py::test_error_page PASSED",
            "tj run --on-error=keep -- make",
            "   Compiling failure v0.1.8",
            "   Compiling thiserror v1.0.58",
            "Downloading error-stack-parser-2.1.4.tgz",
            "errors",
            "|error      |2      |NC       |NC         |",
            "% errors / warnings by module",
            "     --retry-all-errors   Retry all errors (use with --retry)",
            "204\t        except Exception:",
            "   12 |     panic!(\"boom\");",
            "-- Looking for kqueue - not found",
            "    Error::new(span, message)",
            "if is_error() { abort(); }",
        ] {
            assert!(!is_failure_evidence(line), "should not be evidence: {line:?}");
        }
    }

    #[test]
    fn failure_words_are_marked_across_chunks_and_keep_existing_marks() {
        let huge = format!("{} failed", "x".repeat(SCAN_CHUNK + 10));
        let mut owned: Vec<String> = Vec::new();
        for i in 0..6000 {
            owned.push(match i % 5 {
                0 => format!("job {i} FAILED upstream"),
                1 => format!("test m::t::case_{i} ... ok"),
                2 if i % 2000 == 2 => huge.clone(),
                3 => format!("step {i} could not finish"),
                _ => format!("log line {i} mentions error_handler"),
            });
        }
        let lines: Vec<&str> = owned.iter().map(String::as_str).collect();
        let mut marked = classify(&lines);
        let before = marked.clone();
        mark_failure_words(&lines, &mut marked);
        for ((line, was), is) in lines.iter().zip(&before).zip(&marked) {
            assert!(!was || *is, "an existing mark was cleared: {line:?}");
            assert_eq!(*is, is_failure_evidence(line) || *was, "{line:?}");
        }
        assert!(marked.iter().filter(|m| **m).count() >= 2400);
    }

    #[test]
    fn anyhow_cause_chain_is_evidence_by_position() {
        let lines = [
            "Error: failed to load config",
            "",
            "Caused by:",
            "    0: could not read /etc/tj.json",
            "    1: No such file or directory (os error 2)",
            "",
        ];
        assert_eq!(classify(&lines), [true, false, true, true, true, false]);
    }

    #[test]
    fn classify_agrees_with_is_evidence_across_chunks() {
        // More than one scan chunk, with trigger hits at chunk edges and a huge line.
        let huge = format!("{} FAILED", "x".repeat(SCAN_CHUNK + 10));
        let mut owned: Vec<String> = Vec::new();
        for i in 0..4000 {
            owned.push(match i % 7 {
                0 => format!("Tests:       {i} failed, 3 passed"),
                1 => format!("test m::t::case_{i} ... ok"),
                2 => format!("2024-01-01 ERROR job {i} aborted"),
                3 => String::new(),
                4 => format!("log line {i} mentions an error_handler"),
                5 if i % 1000 == 5 => huge.clone(),
                _ => format!("  at Object.<anonymous> (src/x{i}.test.js:5:13)"),
            });
        }
        let lines: Vec<&str> = owned.iter().map(String::as_str).collect();
        let hits: Vec<bool> =
            COMPILED.triggered_lines("", &lines).iter().map(|m| *m != 0).collect();
        for (line, hit) in lines.iter().zip(&hits) {
            assert_eq!(*hit, COMPILED.any_mask(line) != 0, "{line:?}");
        }
        let marked = classify(&lines);
        for (line, is) in lines.iter().zip(&marked) {
            assert_eq!(*is, is_evidence(line), "{line:?}");
        }
    }

    #[test]
    fn many_diff_headers_in_a_row_are_scanned_once() {
        // Each header used to rescan up to the span cap; now scans resume. This checks the
        // result, which must not change with the resumption.
        let mut owned = vec!["- Expected".to_string(); 3000];
        owned.push("-   removed".to_string());
        let lines: Vec<&str> = owned.iter().map(String::as_str).collect();
        let marked = classify(&lines);
        assert!(marked.iter().all(|m| *m));
    }

    #[test]
    fn classify_is_one_flag_per_line() {
        assert!(classify(&[]).is_empty());
        let lines = ["ok", "error: x", ""];
        assert_eq!(classify(&lines).len(), lines.len());
    }
}
