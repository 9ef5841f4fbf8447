//! Outputs too large to reduce whole: read as a stream of chunks, numbered as a whole
//! (issue 10, defect 4).
//!
//! The engine ([`super::reduce`]) holds an output, its rendering and its lines in memory at
//! once, so `tj run` gives it outputs up to [`WHOLE_MAX`] bytes only. Larger ones used to be
//! cut to their first and last 3 MiB and reduced as if that were the output: line numbers
//! and counts were the window's, and the jump between the halves had no marker. Here the
//! whole output goes through in chunks of [`CHUNK`] bytes, in bounded memory:
//!
//! - lines are numbered over the whole output, as `tj expand ID --lines` numbers them
//!   (both cut it with [`chunks`] and render each chunk with [`render_chunk`]);
//! - the selected rule's window applies to the whole output: its first `head` and last
//!   `tail` lines are kept, adjacent repeats fold, and every distinct evidence line (the
//!   built-in classifier and the rule's own patterns) is kept with one line on each side,
//!   wherever it is, up to [`MAX_EVIDENCE`] of them;
//! - every omitted run becomes a marker naming its lines, in the format of
//!   [`super::window`], and so does a stretch the capture could not keep (the disk cap).
//!
//! Skip and keep patterns, counters and shapes are not applied: they need the whole output
//! in memory, and the window bounds the rendition without them.
//!
//! Chunking: a chunk is at most [`CHUNK`] bytes and ends after its last newline, unless it
//! has none (a line longer than a chunk is then broken in two) or its region ends first.
//! Rendering is per chunk, so a cursor movement that reaches back across a chunk boundary
//! (a multi-line progress area redrawn exactly there) leaves both frames; numbering stays
//! consistent because `tj expand` renders the same chunks.
//!
//! Pure: the caller reads the chunks ([`crate::capture::Captured::for_each_chunk`], or
//! memory) and passes them in. Through [`run`], helper threads prepare the chunks on the
//! other processors; what comes out does not depend on them.

use std::collections::{HashSet, VecDeque};
use std::fmt::Write as _;
use std::sync::mpsc;

use super::binary::{self, Binary};
use super::evidence;
use super::tokens::{self, Tally};
use super::window::{MAX_LINE_BYTES, Omitted};
use super::{ArtifactRef, Input, Options, Reduction};
use crate::rules::compiled::{Budget, CompiledRule, Compiler, EVIDENCE};
use crate::rules::select::{self, Query};
use crate::rules::{Layer, RuleSet};

/// Outputs up to this many bytes are reduced whole, in memory; larger ones as a stream. The
/// engine needs about four times its input (the bytes, their rendering, the lines and a
/// passthrough), and `tj run` stays under 32 MiB resident whatever the command writes
/// (DESIGN.md "Performance budget").
pub const WHOLE_MAX: usize = 6 << 20;

/// Bytes rendered at a time when an output is read as a stream.
pub const CHUNK: usize = 1 << 20;

/// Distinct evidence lines kept at most: the engine's own limit (DESIGN.md "Evidence").
pub const MAX_EVIDENCE: usize = 512;

/// An evidence line longer than this is cut in the middle too: the rendition stays bounded.
const MAX_EVIDENCE_LINE: usize = 4096;

/// Where the chunk at the start of `buf` ends. `buf` holds the next bytes of a region, at
/// most [`CHUNK`] of them; `region_ends` says whether the region ends with it.
///
/// ```
/// use tj::reduce::stream::cut;
///
/// assert_eq!(cut(b"a\nb\nc", true), 5);
/// assert_eq!(cut(b"a\nb\nc", false), 4);
/// assert_eq!(cut(b"abc", false), 3);
/// ```
pub fn cut(buf: &[u8], region_ends: bool) -> usize {
    let window = &buf[..buf.len().min(CHUNK)];
    if region_ends && window.len() == buf.len() {
        return buf.len();
    }
    window.iter().rposition(|&b| b == b'\n').map_or(window.len(), |i| i + 1)
}

/// The chunks of `bytes`, one region, as [`cut`] makes them.
pub fn chunks(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let window = &rest[..rest.len().min(CHUNK)];
        let end = cut(window, window.len() == rest.len());
        let (chunk, after) = rest.split_at(end);
        rest = after;
        Some(chunk)
    })
}

/// The text of one chunk as a streamed reduction reads it: bytes that are not UTF-8
/// compacted ([`binary::compact`]), then rendered at the PTY's width, and the number of
/// bytes replaced.
pub fn render_chunk(raw: &[u8], cols: Option<u16>) -> (String, usize) {
    let (bytes, replaced) = binary::compact(raw);
    (super::screen_width(&bytes, cols).into_owned(), replaced)
}

/// The lines of a rendered chunk: split at `\n`, trailing whitespace trimmed, the empty
/// piece after a final `\n` dropped (so the chunks' lines joined are the output's lines).
pub fn chunk_lines(text: &str) -> impl Iterator<Item = &str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let empty = text.is_empty();
    body.split('\n').map(str::trim_end).filter(move |_| !empty)
}

/// [`chunk_lines`] into `out`: the same lines, their ends found by `memchr`, which beats
/// the `str` searcher on the short lines that make outputs this long.
fn collect_lines<'t>(text: &'t str, out: &mut Vec<&'t str>) {
    if text.is_empty() {
        return;
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', body.as_bytes()) {
        // A `\n` is one byte of its own, so both ends are character boundaries.
        out.push(body[start..end].trim_end());
        start = end + 1;
    }
    out.push(body[start..].trim_end());
}

/// Returns true if and only if `text` holds a letter (ASCII, or any non-ASCII character).
fn has_words(text: &str) -> bool {
    // Without an early exit per byte, each block is one vectorised pass.
    text.as_bytes().chunks(4096).any(|block| {
        block.iter().fold(false, |any, &b| any | b.is_ascii_alphabetic() | (b >= 0x80))
    })
}

/// `a == b`, looking at the last bytes first: adjacent lines of long outputs differ there
/// (a counter, a timestamp) far more often than they are equal.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.as_bytes().last() == b.as_bytes().last() && a == b
}

/// A line kept for now: within the last lines seen, not yet known to be in the tail.
struct Entry {
    /// 1-based line number.
    no: u64,
    text: String,
    is_evidence: bool,
    /// Kept whatever comes after: evidence, or next to it.
    keep: bool,
    /// Lines right after it that repeat it.
    repeats_after: u64,
    /// A stretch the capture could not keep: `(bytes, lines)`; `text` is empty then.
    lost: Option<(u64, u64)>,
}

/// The omitted lines since the last line shown.
#[derive(Default)]
struct Gap {
    repeats: u64,
    others: u64,
    /// The texts of the gap's lines while they are few and short: shown instead of a marker
    /// that would cost more than they do.
    small: Vec<String>,
    small_bytes: usize,
    small_over: bool,
}

impl Gap {
    #[inline]
    fn add(&mut self, text: &str, count: u64, repeat: bool) {
        if count == 0 {
            return;
        }
        if repeat {
            self.repeats += count;
        } else {
            self.others += count;
        }
        if self.small_over {
            return;
        }
        let cost = (text.len() + 1).saturating_mul(usize::try_from(count).unwrap_or(usize::MAX));
        if self.small_bytes + cost > 64 {
            self.small_over = true;
            self.small.clear();
            return;
        }
        self.small_bytes += cost;
        for _ in 0..count {
            self.small.push(text.to_owned());
        }
    }

    fn lines(&self) -> u64 {
        self.repeats + self.others
    }
}

/// A reduction of an output read as a stream: [`Stream::push`] each chunk in order,
/// [`Stream::push_lost`] for a stretch that was not kept, then [`Stream::finish`].
pub struct Stream<'a> {
    rule: String,
    family: String,
    layer: Layer,
    fallback: bool,
    command: String,
    compiled: CompiledRule,
    /// What the rule's patterns may still cost, if it is a user or project rule. Once it
    /// runs out, the rule's own patterns are no longer asked (the built-in evidence
    /// classifier still keeps every error line) and one problem names the rule.
    budget: Budget,
    exit_code: Option<i64>,
    /// The exit code as the rendition shows it (`Options::shown_exit`).
    shown_exit: Option<i64>,
    cols: Option<u16>,
    artifact: Option<&'a ArtifactRef>,
    tail: usize,
    head_left: usize,
    ring_cap: usize,

    /// Lines seen.
    lines: u64,
    /// The text of the last line seen, for repeats across chunks (`None` at the start and
    /// after a lost stretch).
    last: Option<String>,
    body: Vec<String>,
    ring: VecDeque<Entry>,
    last_shown: u64,
    gap: Gap,
    /// The last candidate of the previous chunk was evidence: the next one is context.
    keep_next: bool,
    evidence: HashSet<String>,
    evidence_over: u64,
    first_over: Option<u64>,
    omitted: Omitted,
    lost_bytes: u64,
    raw_bytes: u64,
    tally: Tally,
    replaced: usize,
    binary: Option<Binary>,
    /// Bytes pushed so far, kept or lost, counted as they come (a chunk with the helpers is
    /// not in `raw_bytes` yet).
    seen: u64,
    /// Threads that prepare the chunks after the first ([`run`]); `None`: all are
    /// prepared on the calling thread.
    helpers: Option<Helpers>,
}

/// Reduces an output read a chunk at a time: `feed` pushes its chunks into the [`Stream`].
/// The same fail-open boundary as [`super::run`]: `None` if the reducer panicked, and the
/// caller then gives the agent the whole original.
///
/// The chunks are prepared (rendered, split into lines, classified) by helper threads, one
/// per processor up to [`MAX_HELPERS`], while this thread reads the next ones and takes
/// them in order; the reduction is the one a single thread makes, byte for byte. On one
/// processor, there are no helpers.
pub fn run<'a>(
    input: &Input<'_>,
    head: &[u8],
    rules: &RuleSet,
    opts: &Options<'a>,
    feed: impl FnOnce(&mut Stream<'a>),
) -> Option<Reduction> {
    let helpers = std::thread::available_parallelism().map_or(1, usize::from).min(MAX_HELPERS);
    run_with(helpers, input, head, rules, opts, feed)
}

/// [`run`] with `helpers` helper threads (none below two: the calling thread would only
/// wait for the one).
fn run_with<'a>(
    helpers: usize,
    input: &Input<'_>,
    head: &[u8],
    rules: &RuleSet,
    opts: &Options<'a>,
    feed: impl FnOnce(&mut Stream<'a>),
) -> Option<Reduction> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        std::thread::scope(|scope| {
            let mut stream = Stream::new(input, head, rules, opts);
            if helpers > 1 {
                stream.helpers = Helpers::start(scope, helpers, stream.cols, stream.failing());
            }
            feed(&mut stream);
            // Ends the helpers, whose threads the scope then joins: a panic in one of them
            // comes out of the scope, and `catch_unwind` turns it into `None`.
            stream.finish()
        })
    }))
    .ok()
}

/// Line breaks in a chunk beyond which it is prepared on the calling thread rather than on
/// a helper: 64 Ki lines (16 bytes a line on average in a full chunk) cost a chunk in
/// flight 1 MiB of spans at most, and its helper as much again of line slices.
const MAX_HELPED_LINES: usize = 1 << 16;

/// Returns true if and only if `raw` holds more than [`MAX_HELPED_LINES`] line breaks.
fn many_lines(raw: &[u8]) -> bool {
    let mut count = 0;
    // Counted into a `u8` per 255 bytes, which the compiler turns into byte-wide vector
    // lanes (a `usize` count per byte is several times slower); stopping once over.
    for block in raw.chunks(1 << 14) {
        count += block
            .chunks(255)
            .map(|piece| usize::from(piece.iter().fold(0u8, |n, &b| n + u8::from(b == b'\n'))))
            .sum::<usize>();
        if count > MAX_HELPED_LINES {
            return true;
        }
    }
    false
}

/// Helper threads at most: each holds up to two chunks and their rendering, so more would
/// cost the resident size more than the time they save (DESIGN.md "Performance budget").
pub const MAX_HELPERS: usize = 2;

/// A chunk rendered ([`render_chunk`]) and counted: the first part of taking it, which
/// depends on the chunk alone.
struct Rendered {
    raw_len: usize,
    text: String,
    /// Bytes that were not UTF-8, replaced in `text`.
    replaced: usize,
    /// The tokens of the raw chunk.
    tally: Tally,
}

impl Rendered {
    fn new(raw: &[u8], cols: Option<u16>) -> Rendered {
        let (text, replaced) = render_chunk(raw, cols);
        let mut tally = Tally::default();
        match std::str::from_utf8(raw) {
            Ok(valid) => tally.add(valid),
            Err(_) => tally.add(&String::from_utf8_lossy(&binary::compact(raw).0)),
        }
        Rendered { raw_len: raw.len(), text, replaced, tally }
    }
}

/// The lines of a rendered chunk ([`collect_lines`]) and, for each, whether the built-in
/// classifier (and, on a failing run, the failure words) keep it: the second part of
/// taking a chunk that depends on the chunk alone.
fn verdicts(text: &str, failing: bool) -> (Vec<&str>, Vec<bool>) {
    let mut lines: Vec<&str> = Vec::with_capacity(text.len() / 16);
    collect_lines(text, &mut lines);
    // Every built-in evidence pattern names something (`error`, `FAILED`, `at`, a file); a
    // chunk without a letter holds none, and skipping the classifier on it makes a stream
    // of numbers several times cheaper.
    let has_words = has_words(text);
    let mut flags =
        if has_words { evidence::classify_in(text, &lines) } else { vec![false; lines.len()] };
    if has_words && failing {
        evidence::mark_failure_words_in(text, &lines, &mut flags);
    }
    (lines, flags)
}

/// A chunk as a helper prepares it ([`Rendered`], [`verdicts`]), to be taken in the order
/// the chunks came.
struct Prepared {
    rendered: Rendered,
    /// Where each line lies in the text: 16 bytes a line, which [`MAX_HELPED_LINES`]
    /// bounds for a chunk in flight.
    spans: Vec<(usize, usize)>,
    flags: Vec<bool>,
}

impl Prepared {
    fn new(raw: &[u8], cols: Option<u16>, failing: bool) -> Prepared {
        let rendered = Rendered::new(raw, cols);
        let (lines, flags) = verdicts(&rendered.text, failing);
        let base = rendered.text.as_ptr() as usize;
        let spans = lines
            .iter()
            .map(|line| {
                let start = line.as_ptr() as usize - base;
                (start, start + line.len())
            })
            .collect();
        Prepared { rendered, spans, flags }
    }
}

/// A chunk for a helper to prepare, and where its [`Prepared`] goes.
struct Job {
    raw: Vec<u8>,
    done: mpsc::SyncSender<Prepared>,
}

/// The helper threads of a [`Stream`]: the chunks sent to them, oldest first.
struct Helpers {
    jobs: mpsc::Sender<Job>,
    /// One receiver per chunk sent and not yet taken, in the order they were sent.
    pending: VecDeque<mpsc::Receiver<Prepared>>,
    /// Chunks sent and not yet taken at most, beyond which [`Helpers::next_ready`] waits
    /// for the oldest: enough to keep every helper busy while the caller reads the next.
    ahead: usize,
}

impl Helpers {
    /// Starts `count` helper threads in `scope`, which prepare chunks rendered at `cols`
    /// columns, of a failing run if `failing`; `None` (the caller prepares the chunks
    /// itself) if not even one could be started.
    fn start<'scope>(
        scope: &'scope std::thread::Scope<'scope, '_>,
        count: usize,
        cols: Option<u16>,
        failing: bool,
    ) -> Option<Helpers> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let queue = std::sync::Arc::new(std::sync::Mutex::new(queue));
        let mut started = 0;
        for _ in 0..count {
            let queue = std::sync::Arc::clone(&queue);
            let helper = std::thread::Builder::new().name("tj-reduce".into()).spawn_scoped(
                scope,
                move || {
                    loop {
                        // The lock is held while waiting, not while preparing.
                        let job = match queue.lock() {
                            Ok(queue) => queue.recv(),
                            Err(_) => return,
                        };
                        let Ok(job) = job else { return };
                        let _ = job.done.send(Prepared::new(&job.raw, cols, failing));
                    }
                },
            );
            started += usize::from(helper.is_ok());
        }
        (started > 0).then(|| Helpers { jobs, pending: VecDeque::new(), ahead: started })
    }

    fn send(&mut self, raw: Vec<u8>) {
        let (done, prepared) = mpsc::sync_channel(1);
        // The helpers live as long as `self` (they end when `jobs` closes), so this cannot
        // fail; if it did, `next` would find the chunk's sender gone and panic, and the
        // stream's caller gives the whole original (fail open).
        let _ = self.jobs.send(Job { raw, done });
        self.pending.push_back(prepared);
    }

    /// The oldest chunk if more than [`Helpers::ahead`] are with the helpers, waiting for
    /// it.
    fn next_ready(&mut self) -> Option<Prepared> {
        if self.pending.len() > self.ahead { self.next() } else { None }
    }

    /// The oldest chunk with the helpers, waiting for it; `None` once none is left.
    fn next(&mut self) -> Option<Prepared> {
        let prepared = self.pending.pop_front()?;
        Some(prepared.recv().expect("a helper preparing a chunk of the stream failed"))
    }
}

impl<'a> Stream<'a> {
    /// A streamed reduction of the output `input` describes; `head` is its start (the first
    /// chunk will do), used to select rules that look at the output. `input.raw` is not read
    /// otherwise: the chunks come through [`push`](Stream::push).
    pub fn new(input: &Input<'_>, head: &[u8], rules: &RuleSet, opts: &Options<'a>) -> Stream<'a> {
        let (text, _) = render_chunk(&head[..head.len().min(CHUNK)], input.cols);
        let lines: Vec<&str> = chunk_lines(&text).collect();
        let query = Query {
            argv: input.argv,
            command: input.command,
            tool_name: input.tool_name,
            exit_code: input.exit_code,
        };
        // Untrusted rules are held to a budget that grows with each chunk pushed; builtins
        // are never metered (rules::compiled).
        let budget = Budget::for_input(0);
        let selection = select::select_within(rules, &query, Some(&lines), &budget);
        let rule = &selection.rule.rule;
        let compiled =
            CompiledRule::compile_with(rule, &Compiler::for_layer(selection.rule.layer, &budget));
        let (head_lines, tail) = rule.window(input.exit_code);
        Stream {
            rule: rule.id.clone(),
            family: rule.family.clone(),
            layer: selection.rule.layer,
            fallback: selection.is_fallback(),
            command: selection.identity.command.clone(),
            compiled,
            budget,
            exit_code: input.exit_code,
            shown_exit: opts.shown_exit(input.exit_code),
            cols: input.cols,
            artifact: opts.artifact,
            tail,
            head_left: head_lines,
            ring_cap: tail.max(1),
            lines: 0,
            last: None,
            body: Vec::new(),
            ring: VecDeque::new(),
            last_shown: 0,
            gap: Gap::default(),
            keep_next: false,
            evidence: HashSet::new(),
            evidence_over: 0,
            first_over: None,
            omitted: Omitted::default(),
            lost_bytes: 0,
            raw_bytes: 0,
            tally: Tally::default(),
            replaced: 0,
            binary: None,
            seen: 0,
            helpers: None,
        }
    }

    /// Takes the next chunk of the output, as [`chunks`] (or the capture) cut it.
    pub fn push(&mut self, raw: &[u8]) {
        if self.seen == 0 {
            self.binary = binary::detect(raw);
        }
        self.seen += raw.len() as u64;
        if self.binary.is_some() {
            self.push_binary(raw);
            return;
        }
        match self.helpers.as_mut() {
            Some(helpers) if !many_lines(raw) => helpers.send(raw.to_vec()),
            _ => {
                // Taken here, after the chunks before it: a chunk of very short lines costs
                // 16 bytes a line, which several chunks in flight would multiply.
                self.take_pending();
                let rendered = Rendered::new(raw, self.cols);
                let (lines, flags) = verdicts(&rendered.text, self.failing());
                self.count(&rendered);
                self.take_lines(&lines, flags);
                return;
            }
        }
        while let Some(chunk) = self.helpers.as_mut().and_then(Helpers::next_ready) {
            self.take(chunk);
        }
    }

    /// A failing run: lines naming a failure are evidence, whatever their dialect.
    fn failing(&self) -> bool {
        self.exit_code.is_some_and(|code| code != 0)
    }

    /// Takes the chunks still with the helpers, in order.
    fn take_pending(&mut self) {
        while let Some(chunk) = self.helpers.as_mut().and_then(Helpers::next) {
            self.take(chunk);
        }
    }

    /// A chunk of an output read as binary: only its evidence lines are kept.
    fn push_binary(&mut self, raw: &[u8]) {
        self.raw_bytes += raw.len() as u64;
        self.budget.grant(raw.len());
        let (text, _) = render_chunk(raw, self.cols);
        // Never lose the signal: an error printed among the bytes is still kept.
        let mut lines = Vec::new();
        collect_lines(&text, &mut lines);
        for (line, flag) in lines.iter().zip(evidence::classify_in(&text, &lines)) {
            if flag
                && self.evidence.len() < MAX_EVIDENCE
                && self.evidence.insert((*line).to_owned())
            {
                self.body.push((*line).to_owned());
            }
        }
    }

    /// Takes a chunk a helper prepared.
    fn take(&mut self, chunk: Prepared) {
        self.count(&chunk.rendered);
        let text = chunk.rendered.text.as_str();
        let lines: Vec<&str> = chunk.spans.iter().map(|&(start, end)| &text[start..end]).collect();
        self.take_lines(&lines, chunk.flags);
    }

    /// Counts a chunk's bytes, tokens and replaced bytes, and grants an untrusted rule its
    /// budget for them, before its lines are taken.
    fn count(&mut self, chunk: &Rendered) {
        self.raw_bytes += chunk.raw_len as u64;
        self.budget.grant(chunk.raw_len);
        self.replaced += chunk.replaced;
        self.tally.merge(chunk.tally);
    }

    /// Takes a stretch of `bytes` bytes holding `newlines` line breaks that was counted but
    /// not kept (the disk cap, a disk error).
    pub fn push_lost(&mut self, bytes: u64, newlines: u64) {
        if bytes == 0 {
            return;
        }
        self.take_pending();
        self.seen += bytes;
        self.lost_bytes += bytes;
        let count = newlines.max(1);
        let no = self.lines + 1;
        self.lines += count;
        self.last = None;
        self.keep_next = false;
        self.enter(Entry {
            no,
            text: String::new(),
            is_evidence: false,
            keep: true,
            repeats_after: 0,
            lost: Some((bytes, count)),
        });
    }

    /// Takes the `lines` of a chunk, with the built-in classifier's `flags` for them
    /// ([`verdicts`]) and the rule's own evidence patterns ([`Stream::add_rule_evidence`]).
    /// A line that repeats the one before it is counted, not kept; each other line is shown
    /// (in the head, or next to evidence), left to the gap, or entered in the tail's ring.
    fn take_lines(&mut self, lines: &[&str], mut flags: Vec<bool>) {
        self.add_rule_evidence(lines, &mut flags);
        let candidates = self.candidates(lines);
        let base = self.lines;
        let is_evidence = self.evidence_among(lines, &candidates, &flags);
        if is_evidence.first() == Some(&true)
            && let Some(prev) = self.ring.back_mut()
            && prev.lost.is_none()
        {
            prev.keep = true;
        }
        let n = candidates.len();
        let mut next = 0;
        for (i, line) in lines.iter().enumerate() {
            let no = base + i as u64 + 1;
            if candidates.get(next) != Some(&i) {
                self.repeat(line);
                continue;
            }
            let c = next;
            next += 1;
            let keep = is_evidence[c]
                || (c > 0 && is_evidence[c - 1])
                || (c == 0 && self.keep_next)
                || is_evidence.get(c + 1) == Some(&true);
            if self.head_left > 0 && self.ring.is_empty() {
                self.head_left -= 1;
                self.show(no, line, is_evidence[c]);
            } else if n - 1 - c >= self.ring_cap {
                // At least a window's worth of lines follow in this chunk: this one is not
                // in the tail, so it is decided now, without a copy.
                if !self.ring.is_empty() {
                    self.drain_ring(0);
                }
                if keep {
                    self.show(no, line, is_evidence[c]);
                } else {
                    self.gap.add(line, 1, false);
                }
            } else {
                self.enter(Entry {
                    no,
                    text: (*line).to_owned(),
                    is_evidence: is_evidence[c],
                    keep,
                    repeats_after: 0,
                    lost: None,
                });
            }
        }
        if let Some(&last) = is_evidence.last() {
            self.keep_next = last;
        }
        self.lines = base + lines.len() as u64;
        if let Some(last) = lines.last() {
            self.last = Some((*last).to_owned());
        }
    }

    /// Adds the rule's own evidence patterns to `flags`. They run here, in order, as an
    /// untrusted rule's budget is granted per chunk and spent per line.
    fn add_rule_evidence(&self, lines: &[&str], flags: &mut [bool]) {
        if !self.compiled.lines.has(EVIDENCE) || self.budget.exhausted().is_some() {
            return;
        }
        let mut scratch = self.compiled.lines.scratch();
        let metered = self.layer != Layer::Builtin;
        let _meter = metered.then(|| self.budget.meter());
        for (flag, line) in flags.iter_mut().zip(lines) {
            if metered && !self.budget.check() {
                break;
            }
            let kinds = self.compiled.lines.kinds(line, &mut scratch, &self.budget);
            *flag = *flag || kinds & EVIDENCE != 0;
        }
    }

    /// The indices of the `lines` that do not repeat the line before them (the last line
    /// of the previous chunk, for the first).
    fn candidates(&self, lines: &[&str]) -> Vec<usize> {
        let mut candidates = Vec::with_capacity(lines.len());
        for (i, line) in lines.iter().enumerate() {
            let prev = if i == 0 { self.last.as_deref() } else { Some(lines[i - 1]) };
            if !prev.is_some_and(|prev| same(prev, line)) {
                candidates.push(i);
            }
        }
        candidates
    }

    /// Which of the `candidates` are evidence to keep: flagged, and each distinct line once,
    /// up to [`MAX_EVIDENCE`] (past it, counted in `evidence_over`).
    fn evidence_among(
        &mut self,
        lines: &[&str],
        candidates: &[usize],
        flags: &[bool],
    ) -> Vec<bool> {
        let base = self.lines;
        candidates
            .iter()
            .map(|&i| {
                if !flags[i] || self.evidence.contains(lines[i]) {
                    return false;
                }
                if self.evidence.len() < MAX_EVIDENCE {
                    self.evidence.insert(lines[i].to_owned());
                    return true;
                }
                self.evidence_over += 1;
                self.first_over.get_or_insert(base + i as u64 + 1);
                false
            })
            .collect()
    }

    /// A line that repeats the one before it.
    fn repeat(&mut self, line: &str) {
        match self.ring.back_mut() {
            Some(entry) => entry.repeats_after += 1,
            None => self.gap.add(line, 1, true),
        }
    }

    /// Adds an entry to the lines kept for now, deciding the oldest when there are too many.
    fn enter(&mut self, entry: Entry) {
        self.ring.push_back(entry);
        self.drain_ring(self.ring_cap);
    }

    /// Decides the oldest entries until at most `keep` remain.
    fn drain_ring(&mut self, keep: usize) {
        while self.ring.len() > keep {
            let Some(entry) = self.ring.pop_front() else { break };
            self.decide(&entry, false);
        }
    }

    /// Shows `entry` (if it is kept, or `in_tail`) or adds it to the gap.
    fn decide(&mut self, entry: &Entry, in_tail: bool) {
        if let Some((bytes, lines)) = entry.lost {
            self.close_gap(entry.no);
            let last = entry.no + lines - 1;
            self.body.push(format!(
                "… {lines} lines not kept (L{}–{last}): {} bytes past the disk cap or lost to a disk error …",
                entry.no,
                super::group(usize::try_from(bytes).unwrap_or(usize::MAX)),
            ));
            self.last_shown = last;
            return;
        }
        if entry.keep || in_tail {
            self.show(entry.no, &entry.text, entry.is_evidence);
            self.gap.add(&entry.text, entry.repeats_after, true);
        } else {
            self.gap.add(&entry.text, 1, false);
            self.gap.add(&entry.text, entry.repeats_after, true);
        }
    }

    /// Shows line `no`, after the marker for the gap before it.
    fn show(&mut self, no: u64, line: &str, is_evidence: bool) {
        self.close_gap(no);
        let max = if is_evidence { MAX_EVIDENCE_LINE } else { MAX_LINE_BYTES };
        self.body.push(trim_long(line, max, &mut self.omitted));
        self.last_shown = no;
    }

    /// Ends the gap before line `next`: a marker, or its lines when they cost less.
    fn close_gap(&mut self, next: u64) {
        let gap = std::mem::take(&mut self.gap);
        let count = next - 1 - self.last_shown;
        if count == 0 {
            return;
        }
        let (first, last) = (self.last_shown + 1, next - 1);
        let what = match (gap.others == 0, count == 1) {
            (true, true) => "repeated line",
            (true, false) => "repeated lines",
            (false, true) => "line",
            (false, false) => "lines",
        };
        let marker = if count == 1 {
            format!("… 1 {what} omitted (L{first}) …")
        } else {
            format!("… {count} {what} omitted (L{first}–{last}) …")
        };
        if !gap.small_over && gap.lines() == count && gap.small_bytes <= marker.len() + 1 {
            // Lossless: cheaper to show the lines than to say they went.
            self.body.extend(gap.small);
            return;
        }
        let add = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        self.omitted.repeats += add(gap.repeats);
        // Lines counted but not seen by the gap (none today) are the window's.
        self.omitted.window += add(count.saturating_sub(gap.repeats));
        self.body.push(marker);
    }

    /// The rendition.
    pub fn finish(mut self) -> Reduction {
        self.take_pending();
        let total_bytes = self.raw_bytes + self.lost_bytes;
        if let Some(found) = self.binary {
            let mut text = binary::describe(&found, total_bytes, self.shown_exit, self.artifact);
            if !self.body.is_empty() {
                let count = super::group(self.body.len());
                let what = if self.body.len() == 1 { "line" } else { "lines" };
                let _ = write!(text, "\n[tj] {count} text {what} in it read as evidence:");
                for line in &self.body {
                    text.push('\n');
                    text.push_str(line);
                }
            }
            return self.reduction(text);
        }
        let n = self.ring.len();
        let entries: Vec<Entry> = self.ring.drain(..).collect();
        for (i, entry) in entries.into_iter().enumerate() {
            let in_tail = i + self.tail >= n;
            self.decide(&entry, in_tail);
        }
        self.close_gap(self.lines + 1);
        let mut text = String::new();
        super::push_exit_line(&mut text, self.shown_exit);
        for line in &self.body {
            text.push_str(line);
            text.push('\n');
        }
        let omitted = self.omitted;
        let lines = usize::try_from(self.lines).unwrap_or(usize::MAX);
        let _ = write!(
            text,
            "[tj] {} of {} lines omitted",
            super::group(omitted.lines()),
            super::group(lines)
        );
        let parts: Vec<String> = [
            (omitted.repeats, "repeats"),
            (omitted.window, "outside the window"),
            (omitted.trimmed_lines, "long lines cut"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{} {what}", super::group(*n)))
        .collect();
        if !parts.is_empty() {
            let _ = write!(text, " ({})", parts.join(", "));
        }
        let _ = write!(
            text,
            " · {} bytes, read as a stream: the first and last lines and every evidence line kept",
            super::group(usize::try_from(total_bytes).unwrap_or(usize::MAX))
        );
        if let Some(artifact) = self.artifact {
            let _ = write!(text, " · full output: tj expand {} ({})", artifact.id, artifact.path);
        }
        if self.evidence_over > 0 {
            let _ = write!(
                text,
                "\n[tj] {} more evidence lines past the first {MAX_EVIDENCE} distinct ones are shown only where the window reaches; the first is L{}",
                super::group(usize::try_from(self.evidence_over).unwrap_or(usize::MAX)),
                self.first_over.unwrap_or(0)
            );
        }
        if self.replaced > 0 {
            text.push('\n');
            text.push_str(&binary::note(self.replaced, self.artifact));
        }
        self.reduction(text)
    }

    fn reduction(self, text: String) -> Reduction {
        let mut problems: Vec<String> =
            self.compiled.problems.iter().map(ToString::to_string).collect();
        if let Some(what) = self.budget.exhausted() {
            problems.push(format!(
                "rule `{}` was given up: {what}; its own patterns were not applied past that point",
                crate::rules::printable(&self.rule)
            ));
        }
        let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        Reduction {
            rule: self.rule,
            family: self.family,
            layer: self.layer,
            fallback: self.fallback,
            command: self.command,
            facts: Vec::new(),
            passthrough: None,
            lossless: false,
            shape: Some(if self.binary.is_some() { "binary" } else { "stream" }),
            omitted: self.omitted,
            exit_code: self.exit_code,
            raw_bytes: size(self.raw_bytes + self.lost_bytes),
            raw_chars: self.tally.chars(),
            reduced_chars: text.chars().count(),
            raw_tokens: self.tally.tokens(),
            reduced_tokens: tokens::estimate(&text),
            lines: size(self.lines),
            artifact: self.artifact.cloned(),
            problems,
            replaced_bytes: self.replaced,
            text,
        }
    }
}

/// `line`, cut in the middle past `max` bytes as [`super::window`] cuts long lines.
fn trim_long(line: &str, max: usize, omitted: &mut Omitted) -> String {
    if line.len() <= max {
        return line.to_owned();
    }
    super::window::cut_middle(line, max / 2, max / 4, omitted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn artifact() -> ArtifactRef {
        ArtifactRef { id: "0123456789ab".into(), path: "/s/0123456789ab.log".into() }
    }

    /// Reduces `raw` as a stream, in the chunks [`chunks`] cuts.
    fn reduce(raw: &[u8], argv: &[&str], exit_code: Option<i64>) -> Reduction {
        let argv: Vec<String> = argv.iter().map(|a| (*a).to_owned()).collect();
        let art = artifact();
        let opts = Options { artifact: Some(&art), ..Options::default() };
        let input = Input { argv: &argv, exit_code, ..Input::default() };
        let rules = RuleSet::builtin();
        let mut stream = Stream::new(&input, raw, &rules, &opts);
        chunks(raw).for_each(|c| stream.push(c));
        stream.finish()
    }

    #[test]
    fn failure_words_are_kept_in_a_failing_stream_only() {
        let mut raw = String::new();
        for i in 0..20_000 {
            raw.push_str(&format!("2026-12-01 INFO request {i} handled in 3ms\n"));
            if i == 10_000 {
                raw.push_str("deploy aborted by pre-deploy hook\n");
            }
        }
        let failing = reduce(raw.as_bytes(), &["./deploy"], Some(1));
        assert!(failing.is_reduced());
        assert!(failing.text.lines().any(|l| l == "deploy aborted by pre-deploy hook"));
        let passing = reduce(raw.as_bytes(), &["./deploy"], Some(0));
        assert!(passing.is_reduced());
        assert!(!passing.text.contains("deploy aborted"));
    }

    /// About 4 MB of a log: numbered lines, errors every 97 lines (more than
    /// [`MAX_EVIDENCE`] distinct ones), a run of repeats across a chunk boundary, bytes that
    /// are not UTF-8, CJK text, colours, CRLF ends and lines a project rule calls evidence.
    fn mixed_log() -> Vec<u8> {
        let mut raw = Vec::new();
        for i in 0..60_000u32 {
            let line = match i % 97 {
                0 => format!("error: E{i} failed at src/lib.rs:{}:5\n", i % 300),
                1 => format!("\x1b[31mwarning\x1b[0m: 漢字 {i}\r\n"),
                2 => format!("custom-signal {i}\n"),
                3 => "bad byte \u{fffd} here\n".to_owned(),
                _ => format!("2026-12-01 INFO request {i} handled in {}ms\n", i % 7),
            };
            raw.extend_from_slice(line.as_bytes());
            if i % 4999 == 0 {
                raw.extend_from_slice(b"raw \xff\xfe bytes\n");
            }
            if i == 20_000 {
                raw.extend_from_slice(&b"tick\n".repeat(300_000));
            }
        }
        raw
    }

    /// The reduction of `raw` with `helpers` helper threads, a stretch of 5,000 bytes and
    /// 400 lines lost after the chunk `lost_after` if given.
    fn reduce_with(
        helpers: usize,
        raw: &[u8],
        argv: &[&str],
        exit_code: Option<i64>,
        rules: &RuleSet,
        lost_after: Option<usize>,
    ) -> Reduction {
        let argv: Vec<String> = argv.iter().map(|a| (*a).to_owned()).collect();
        let art = artifact();
        let opts = Options { artifact: Some(&art), ..Options::default() };
        let input = Input { argv: &argv, exit_code, ..Input::default() };
        run_with(helpers, &input, raw, rules, &opts, |stream| {
            assert_eq!(stream.helpers.is_some(), helpers > 1);
            for (n, chunk) in chunks(raw).enumerate() {
                stream.push(chunk);
                if lost_after == Some(n) {
                    stream.push_lost(5000, 400);
                }
            }
        })
        .expect("the reducer did not panic")
    }

    #[test]
    fn many_lines_counts_line_breaks_past_the_bound() {
        assert!(!many_lines(&b"x\n".repeat(MAX_HELPED_LINES)));
        assert!(many_lines(&b"x\n".repeat(MAX_HELPED_LINES + 1)));
        // 255 line breaks in a row fill a piece's count exactly.
        assert!(!many_lines(&vec![b'\n'; MAX_HELPED_LINES]));
        assert!(many_lines(&vec![b'\n'; MAX_HELPED_LINES + 1]));
        assert!(!many_lines(b""));
    }

    #[test]
    fn helpers_change_no_byte_of_the_reduction() {
        let raw = mixed_log();
        assert!(raw.len() > 3 * CHUNK, "{}", raw.len());
        // Some chunks go to the helpers, and the run of repeats is taken between them.
        assert!(chunks(&raw).any(many_lines) && chunks(&raw).any(|c| !many_lines(c)));
        let project = r#"{"id":"proj/mytool","family":"p","priority":9,
            "match":{"argv0":["mytool"]},"evidence":["^custom-signal \\d+$"]}"#;
        let builtins = crate::rules::builtin_files()
            .iter()
            .map(|b| (Layer::Builtin, std::path::PathBuf::from(b.path), b.json));
        let rules = RuleSet::from_sources(
            builtins.chain([(Layer::Project, ".tokenjuice/rules/x.json".into(), project)]),
            false,
        );
        let mut binary = b"\x1f\x8b\x08\x00".to_vec();
        binary.extend_from_slice(&raw);
        // The output, the command, its exit code, the chunk after which a stretch is lost.
        type Case<'c> = (&'c [u8], &'c [&'c str], Option<i64>, Option<usize>);
        let cases: [Case<'_>; 6] = [
            (&raw, &["some-tool"], Some(0), None),
            (&raw, &["some-tool"], Some(1), None),
            (&raw, &["mytool"], None, None),
            (&raw, &["mytool"], Some(2), Some(1)),
            (&raw, &["cargo", "test"], Some(101), Some(0)),
            (&binary, &["cat"], Some(0), None),
        ];
        for (n, (raw, argv, exit_code, lost_after)) in cases.into_iter().enumerate() {
            let alone = reduce_with(1, raw, argv, exit_code, &rules, lost_after);
            assert!(alone.is_reduced(), "{argv:?}: {:?}", alone.passthrough);
            for helpers in if n < 2 { &[2, 3][..] } else { &[2] } {
                let helpers = *helpers;
                let helped = reduce_with(helpers, raw, argv, exit_code, &rules, lost_after);
                assert_eq!(
                    format!("{helped:?}"),
                    format!("{alone:?}"),
                    "{argv:?}, exit {exit_code:?}, {helpers} helpers"
                );
            }
        }
        // What the cases are there to cover did happen.
        let out = reduce_with(2, &raw, &["mytool"], Some(2), &rules, Some(1));
        assert!(out.text.contains("custom-signal 2"), "{}", out.text);
        assert!(out.text.contains("more evidence lines past the first 512"), "{}", out.text);
        assert!(out.text.contains("lines not kept"), "{}", out.text);
        assert!(out.omitted.repeats >= 299_998, "{:?}", out.omitted);
        assert!(out.replaced_bytes > 0);
    }

    #[test]
    fn run_is_a_fail_open_boundary() {
        let argv = vec!["cargo".to_owned(), "test".to_owned()];
        let input = Input { argv: &argv, ..Input::default() };
        let rules = RuleSet::builtin();
        let opts = Options::default();
        let fine = run(&input, b"ok\n", &rules, &opts, |s| s.push(b"ok\n"));
        assert!(fine.is_some());
        // The panic message is printed; the hook is left alone, as other tests run meanwhile.
        let failed = run(&input, b"ok\n", &rules, &opts, |_| panic!("a bug in a reducer"));
        assert!(failed.is_none(), "a panic gives None, not a crash");
    }

    /// Checks that the body accounts for lines `1..=total` exactly once, in order: each
    /// kept line (`line N` text gives its number) or marker range follows the one before.
    fn assert_covers(text: &str, total: u64) {
        let mut next = 1;
        for line in text.lines() {
            if line.starts_with("[tj]") {
                continue;
            }
            let (first, last) = if line.starts_with("… ") {
                let range = line.split("(L").nth(1).unwrap().split(')').next().unwrap();
                match range.split_once('–') {
                    Some((a, b)) => (a.parse::<u64>().unwrap(), b.parse::<u64>().unwrap()),
                    None => (range.parse().unwrap(), range.parse().unwrap()),
                }
            } else {
                let n = line.rsplit(' ').next().unwrap().parse::<u64>().unwrap();
                (n, n)
            };
            assert_eq!(first, next, "gap or overlap before {line:?}\n{text}");
            next = last + 1;
        }
        assert_eq!(next, total + 1, "lines after the last shown are unaccounted for\n{text}");
    }

    #[test]
    fn cut_ends_chunks_after_their_last_newline() {
        let big = [b"ab\n".repeat(CHUNK / 3), b"tail".to_vec()].concat();
        let pieces: Vec<&[u8]> = chunks(&big).collect();
        assert!(pieces.len() >= 2);
        assert!(pieces[..pieces.len() - 1].iter().all(|p| p.ends_with(b"\n")));
        assert_eq!(pieces.concat(), big);
        // A line longer than a chunk is broken at the chunk's end.
        let long = vec![b'x'; CHUNK + 10];
        assert_eq!(chunks(&long).map(<[u8]>::len).collect::<Vec<_>>(), [CHUNK, 10]);
    }

    #[test]
    fn the_fast_line_split_is_chunk_lines() {
        for text in ["a\n\nb\n", "\n", "", "x  \ny", "é\r\n\n\nz", "\n\n"] {
            let mut fast = Vec::new();
            collect_lines(text, &mut fast);
            assert_eq!(fast, chunk_lines(text).collect::<Vec<_>>(), "{text:?}");
        }
        assert!(has_words("123 é"));
        assert!(has_words(&format!("{}x", "1".repeat(10_000))));
        assert!(!has_words(&"12 34\n".repeat(2000)));
    }

    #[test]
    fn chunk_lines_number_an_empty_line_alone_in_a_chunk() {
        assert_eq!(chunk_lines("a\n\nb\n").collect::<Vec<_>>(), ["a", "", "b"]);
        assert_eq!(chunk_lines("\n").collect::<Vec<_>>(), [""]);
        assert_eq!(chunk_lines("").count(), 0);
        assert_eq!(chunk_lines("x  \ny").collect::<Vec<_>>(), ["x", "y"]);
    }

    #[test]
    fn lines_are_numbered_over_the_whole_output_and_every_gap_is_marked() {
        let mut raw = String::new();
        for n in 1..=300_000u64 {
            if n == 150_000 {
                raw.push_str("error: MIDDLE-SIGNAL at line 150000\n");
            } else {
                raw.push_str(&format!("plain line {n}\n"));
            }
        }
        assert!(raw.len() > 2 * CHUNK);
        let out = reduce(raw.as_bytes(), &["some-tool"], Some(1));
        assert!(out.text.starts_with("[tj] exit 1\n"), "{}", out.text);
        let line = out.text.lines().find(|l| l.contains("MIDDLE-SIGNAL")).unwrap();
        assert_eq!(line, "error: MIDDLE-SIGNAL at line 150000");
        // One line of context on each side, then markers whose ranges are the whole
        // output's line numbers.
        assert!(out.text.contains("plain line 149999\nerror: MIDDLE"), "{}", out.text);
        assert!(out.text.contains("line 150000\nplain line 150001\n"), "{}", out.text);
        assert!(out.text.contains("lines omitted (L150002–"), "{}", out.text);
        assert!(out.text.contains("of 300,000 lines omitted"), "{}", out.text);
        assert_covers(&out.text, 300_000);
        assert_eq!(out.lines, 300_000);
        assert_eq!(out.raw_bytes, raw.len());
        assert!(out.text.len() < 8 * 1024, "{}", out.text.len());
    }

    #[test]
    fn repeats_fold_with_the_whole_outputs_line_numbers() {
        let mut raw = String::from("1\n2\n3\n");
        raw.push_str(&"y\n".repeat(1_500_000));
        raw.push_str("100\n101\n102\n");
        let out = reduce(raw.as_bytes(), &["sh"], Some(0));
        assert!(
            out.text.starts_with(
                "1\n2\n3\ny\n… 1499999 repeated lines omitted (L5–1500003) …\n100\n101\n102\n"
            ),
            "{}",
            out.text
        );
        assert_eq!(out.omitted.repeats, 1_499_999);
    }

    #[test]
    fn a_lost_stretch_is_marked_and_numbering_continues_after_it() {
        let art = artifact();
        let opts = Options { artifact: Some(&art), ..Options::default() };
        let argv = vec!["x".to_owned()];
        let input = Input { argv: &argv, ..Input::default() };
        let rules = RuleSet::builtin();
        let head: String = (1..=100).map(|n| format!("line {n}\n")).collect();
        let mut stream = Stream::new(&input, head.as_bytes(), &rules, &opts);
        stream.push(head.as_bytes());
        stream.push_lost(5000, 400);
        let tail: String = (501..=600).map(|n| format!("line {n}\n")).collect();
        stream.push(tail.as_bytes());
        let out = stream.finish();
        assert!(out.text.contains("… 400 lines not kept (L101–500): 5,000 bytes"), "{}", out.text);
        assert!(out.text.contains("line 600"), "{}", out.text);
        assert_eq!(out.lines, 600);
        assert_eq!(out.raw_bytes, head.len() + tail.len() + 5000);
    }

    #[test]
    fn distinct_evidence_is_kept_up_to_the_limit_and_the_rest_counted() {
        let mut raw = String::new();
        for n in 0..MAX_EVIDENCE + 50 {
            raw.push_str(&format!(
                "error: failure number {n}\nfiller {n}\nfiller again {n}\nmore filler {n}\n"
            ));
        }
        let out = reduce(raw.as_bytes(), &["x"], Some(1));
        let shown: Vec<usize> = out
            .text
            .lines()
            .filter_map(|l| l.strip_prefix("error: failure number "))
            .map(|n| n.parse().unwrap())
            .collect();
        // The first 512 everywhere; past them, only those the tail window reaches.
        assert_eq!(shown[..MAX_EVIDENCE], (0..MAX_EVIDENCE).collect::<Vec<_>>());
        assert!(shown[MAX_EVIDENCE..].iter().all(|&n| n >= MAX_EVIDENCE + 30), "{shown:?}");
        let first = 4 * MAX_EVIDENCE + 1;
        let note = format!(
            "50 more evidence lines past the first 512 distinct ones are shown only where the window reaches; the first is L{first}"
        );
        assert!(out.text.contains(&note), "{}", out.text);
    }

    #[test]
    fn binary_output_is_described_not_streamed() {
        let mut raw = b"\x1f\x8b\x08\x00".to_vec();
        raw.extend(std::iter::repeat_n(0u8, 3 * CHUNK));
        let out = reduce(&raw, &["cat"], Some(0));
        assert!(
            out.text.starts_with("[tj] binary output: 3,145,732 bytes of gzip"),
            "{}",
            out.text
        );
        assert_eq!(out.shape, Some("binary"));
    }

    #[test]
    fn a_marker_never_costs_more_than_the_lines_it_stands_for() {
        // Tail 40 under the fallback: line 41 is alone between two kept lines.
        let mut raw = String::new();
        for n in 1..=200 {
            raw.push_str(&format!("line {n}\n"));
        }
        raw.push_str("a\n");
        let out = reduce(raw.as_bytes(), &["x"], None);
        assert!(!out.text.contains("(L201)"), "{}", out.text);
    }
}
