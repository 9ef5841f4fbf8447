//! Regexes of one rule, compiled only when that rule is selected (DESIGN.md "Only the
//! selected rule's regexes need compiling").
//!
//! Rule files carry JavaScript regexes (tokenjuice compatibility). Most are valid for the
//! `regex` crate; the ones that use lookaround fall back to `fancy-regex`. A pattern neither
//! accepts is disabled alone, with a [`PatternError`] naming the rule and the field.
//!
//! # Limits
//!
//! Builtin rules are ours: they compile to the fastest engines (`meta` with its lazy DFA and
//! fallbacks), and a test holds them to the limits below (`every_builtin_rule_…`: every
//! pattern compiles under [`PATTERN_SIZE_LIMIT`], every rule under [`RULE_SIZE_LIMIT`] as
//! an untrusted rule would, and none needs backtracking). User and project rules can be
//! hostile (a repository nobody vetted), so a [`Compiler`] for them builds bounded engines
//! and charges a per-run [`Budget`]:
//!
//! - **Size.** Every pattern, builtin or not, compiles under [`PATTERN_SIZE_LIMIT`] of NFA
//!   and [`DFA_CACHE_CAPACITY`] of lazy DFA cache. An untrusted rule's patterns together may
//!   take [`RULE_SIZE_LIMIT`] (a pattern that fails a limit is charged the limit): past it
//!   the rule is dropped with one warning and the next matching rule is used, so a compile
//!   bomb (a 43 KB rule of `[a-z]{1,65535}N`, 3 MB of NFA each) costs one build that fails
//!   at 4 MiB (about 25 ms), not two thousand that each take the whole limit. The run's
//!   untrusted patterns together may take [`RUN_SIZE_LIMIT`].
//! - **Matching.** An untrusted linear pattern runs on a lazy DFA alone ([`Bounded`]),
//!   which gives up when its cache thrashes instead of falling back to a slower engine (a
//!   97 KB NFA thrashing over one 1 MiB line took 26 s in `meta`). A backtracking pattern
//!   is first compiled as a linear one with its lookarounds and backreferences softened to
//!   plain groups, under the same size limit (the parts `fancy-regex` delegates to `regex`
//!   are parts of that), sees lines of at most [`BACKTRACK_MAX_HAYSTACK`], and each search
//!   that hits [`BACKTRACK_LIMIT`] is charged to the run's [`RUN_BACKTRACK_LIMIT`].
//! - **Time.** The work on untrusted patterns (compiling, selecting with `commandRegex` and
//!   `outputRegex`, the line pass, counters, `matchOutput`) is metered; past
//!   [`TIME_BUDGET`] plus [`TIME_BUDGET_PER_MIB`] per MiB of output the reducer gives up and
//!   the original goes out, with one warning naming the rule (`reduce`).
//!
//! When any of these runs out the [`Budget`] says what ([`Exhausted`]); the reducer stops at
//! its next check and passes the original through. Nothing here depends on the time of
//! day except the time budget, and builtin rules are never metered, so a builtin reduction
//! stays deterministic.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use regex_automata::hybrid;
use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_automata::{Input, MatchKind, meta};

use super::Layer;
use super::schema::Rule;
use crate::matchers::spec::ascii_word_boundaries;
use crate::matchers::{self, Dfa, Flags, Spec};

/// The largest NFA one pattern may compile to, builtin or not. The largest builtin pattern
/// needs 36 KB (`tests/phpunit`'s, with Unicode `\w`); a compile bomb like `[a-z]{1,65535}N`
/// needs 3 MB. Failing at the limit takes about 15 ms (release build).
pub const PATTERN_SIZE_LIMIT: usize = 1 << 20;
/// The lazy DFA's cache, per matcher (the `regex` crate's default). An untrusted pattern
/// whose NFA needs a larger minimum cache than this is refused as too large.
pub const DFA_CACHE_CAPACITY: usize = 2 << 20;
/// The full and one-pass DFAs `meta` may build for small builtin patterns.
pub const DFA_SIZE_LIMIT: usize = 1 << 20;
/// What one rule's patterns may compile to together: 4 MiB, a hundred times what the
/// largest builtin rule needs (41 KB, `build/xcodebuild`). An untrusted rule past it is
/// dropped; builtin rules are held to it by a test.
pub const RULE_SIZE_LIMIT: usize = 4 << 20;
/// What the untrusted patterns of one run may compile to together (several rules'
/// `commandRegex` and `outputRegex` during selection, then the selected rule).
pub const RUN_SIZE_LIMIT: usize = 16 << 20;
/// Steps the backtracking engine may take in one search (a line, or the whole text for
/// `matchOutput`); a search that hits it counts as no match. 2 to 13 ms (release).
pub const BACKTRACK_LIMIT: usize = 100_000;
/// Steps all backtracking searches of one run may take, counted as [`BACKTRACK_LIMIT`] for
/// each search that hit the limit (`fancy-regex` reports no count otherwise; the time
/// budget covers searches that stay under it).
pub const RUN_BACKTRACK_LIMIT: usize = 10 * BACKTRACK_LIMIT;
/// The longest text an untrusted backtracking pattern is run on: its cost grows with the
/// haystack in ways the step limit does not count (the delegated parts).
pub const BACKTRACK_MAX_HAYSTACK: usize = 16 << 10;
/// Time the untrusted patterns of one run may take, plus [`TIME_BUDGET_PER_MIB`].
///
/// Measured (release build, a 2-core machine shared with other builds): every builtin rule
/// loaded as a project rule, so that it runs on these bounded engines and is metered,
/// reduces each of the 525 fixtures with at most 0.6 % of its budget (3.3 ms of 562 ms,
/// `devops/docker-logs-api`); all 525 together meter 230 ms. A debug build is about ten
/// times slower, still far below. A lookaround pattern built to backtrack costs 2 to 13 ms
/// a line, so the budget is a few dozen lines of it (and [`RUN_BACKTRACK_LIMIT`] usually
/// stops it first). `tj run` adds the budget to the command's own time at worst: the
/// hostile-repository test holds tj to 2 s over the command.
pub const TIME_BUDGET: Duration = Duration::from_millis(500);
/// See [`TIME_BUDGET`]: the allowance grows with the output, so a big output is not cut
/// short by a legitimate rule.
pub const TIME_BUDGET_PER_MIB: Duration = Duration::from_millis(500);

/// What ran out of a [`Budget`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exhausted {
    /// The time budget.
    Time(Duration),
    /// [`RUN_SIZE_LIMIT`].
    Size,
    /// [`RUN_BACKTRACK_LIMIT`].
    Backtracking,
    /// A lazy DFA gave up: its cache thrashed on this output.
    LazyDfa,
    /// A backtracking pattern met a text longer than [`BACKTRACK_MAX_HAYSTACK`].
    LongText,
}

impl fmt::Display for Exhausted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exhausted::Time(limit) => {
                write!(f, "its patterns took more than {} ms", limit.as_millis())
            }
            Exhausted::Size => write!(
                f,
                "user and project patterns needed more than {} MiB to compile",
                RUN_SIZE_LIMIT >> 20
            ),
            Exhausted::Backtracking => {
                write!(f, "its backtracking patterns took more than {RUN_BACKTRACK_LIMIT} steps")
            }
            Exhausted::LazyDfa => write!(f, "its patterns are too costly for this output"),
            Exhausted::LongText => write!(
                f,
                "a backtracking pattern met a text longer than {} KiB",
                BACKTRACK_MAX_HAYSTACK >> 10
            ),
        }
    }
}

/// What the untrusted patterns of one reduction may cost: time, compiled size and
/// backtracking steps (see the module doc). Not `Sync`: one reduction, one thread.
#[derive(Debug)]
pub struct Budget {
    time: Option<Duration>,
    spent: Cell<Duration>,
    since: Cell<Option<Instant>>,
    size_left: Cell<usize>,
    backtrack_left: Cell<usize>,
    exhausted: Cell<Option<Exhausted>>,
    culprit: RefCell<Option<String>>,
}

impl Budget {
    /// The budget for reducing `bytes` of output: [`TIME_BUDGET`] plus
    /// [`TIME_BUDGET_PER_MIB`] per MiB, and the size and step limits.
    pub fn for_input(bytes: usize) -> Budget {
        let mib = bytes as f64 / f64::from(1 << 20);
        Budget::with_time(TIME_BUDGET + TIME_BUDGET_PER_MIB.mul_f64(mib))
    }

    /// Grants the time [`TIME_BUDGET_PER_MIB`] allows for `bytes` more of output, for a
    /// reduction that reads its output a chunk at a time (`reduce::stream`).
    pub fn grant(&mut self, bytes: usize) {
        if let Some(time) = &mut self.time {
            let mib = bytes as f64 / f64::from(1 << 20);
            *time += TIME_BUDGET_PER_MIB.mul_f64(mib);
        }
    }

    /// A budget of `time`, with the run's size and step limits.
    pub fn with_time(time: Duration) -> Budget {
        Budget { time: Some(time), ..Budget::without_time() }
    }

    /// No limit at all (for `tj rules verify` and `explain`, which run no output); the
    /// per-pattern and per-rule size limits still hold, they belong to the [`Compiler`].
    pub fn unlimited() -> Budget {
        Budget {
            time: None,
            spent: Cell::new(Duration::ZERO),
            since: Cell::new(None),
            size_left: Cell::new(usize::MAX),
            backtrack_left: Cell::new(usize::MAX),
            exhausted: Cell::new(None),
            culprit: RefCell::new(None),
        }
    }

    /// A budget with the run's size and step limits but no time limit.
    pub fn without_time() -> Budget {
        Budget {
            size_left: Cell::new(RUN_SIZE_LIMIT),
            backtrack_left: Cell::new(RUN_BACKTRACK_LIMIT),
            ..Budget::unlimited()
        }
    }

    /// Starts metering time until the returned guard drops (nested guards meter once).
    pub fn meter(&self) -> Meter<'_> {
        let started = self.since.get().is_none();
        if started {
            self.since.set(Some(Instant::now()));
        }
        Meter { budget: self, started }
    }

    /// Returns true if and only if the budget is not exhausted, checking the time.
    pub fn check(&self) -> bool {
        if self.exhausted.get().is_some() {
            return false;
        }
        if let Some(limit) = self.time {
            let running = self.since.get().map_or(Duration::ZERO, |t| t.elapsed());
            if self.spent.get() + running > limit {
                self.exhaust(Exhausted::Time(limit));
                return false;
            }
        }
        true
    }

    /// Marks the budget exhausted (the first cause is kept).
    pub fn exhaust(&self, what: Exhausted) {
        if self.exhausted.get().is_none() {
            self.exhausted.set(Some(what));
        }
    }

    /// What ran out, if anything did.
    pub fn exhausted(&self) -> Option<Exhausted> {
        self.exhausted.get()
    }

    /// The time metered so far (for benchmarks and diagnostics).
    pub fn spent(&self) -> Duration {
        self.spent.get() + self.since.get().map_or(Duration::ZERO, |t| t.elapsed())
    }

    /// The time limit, if there is one.
    pub fn time_limit(&self) -> Option<Duration> {
        self.time
    }

    /// Names the rule that was being worked on when the budget ran out (the first is kept).
    pub fn blame(&self, rule: &str) {
        let mut culprit = self.culprit.borrow_mut();
        if culprit.is_none() {
            *culprit = Some(rule.to_owned());
        }
    }

    /// The rule [`blame`](Self::blame) named.
    pub fn culprit(&self) -> Option<String> {
        self.culprit.borrow().clone()
    }

    /// Takes `bytes` of the run's compile size; false (and exhausted) past it.
    fn charge_size(&self, bytes: usize) -> bool {
        match self.size_left.get().checked_sub(bytes) {
            Some(left) => {
                self.size_left.set(left);
                true
            }
            None => {
                self.size_left.set(0);
                self.exhaust(Exhausted::Size);
                false
            }
        }
    }

    /// Counts a backtracking search that hit [`BACKTRACK_LIMIT`].
    fn charge_backtrack(&self) {
        match self.backtrack_left.get().checked_sub(BACKTRACK_LIMIT) {
            Some(left) if left > 0 => self.backtrack_left.set(left),
            _ => {
                self.backtrack_left.set(0);
                self.exhaust(Exhausted::Backtracking);
            }
        }
    }

    /// Returns true if and only if this budget limits anything (not [`Budget::unlimited`]).
    fn is_limited(&self) -> bool {
        self.time.is_some() || self.size_left.get() != usize::MAX
    }
}

/// Meters time for a [`Budget`] while it lives.
#[derive(Debug)]
pub struct Meter<'b> {
    budget: &'b Budget,
    started: bool,
}

impl Drop for Meter<'_> {
    fn drop(&mut self) {
        if self.started
            && let Some(since) = self.budget.since.take()
        {
            self.budget.spent.set(self.budget.spent.get() + since.elapsed());
        }
    }
}

/// How one rule's patterns are compiled: as a builtin's (the fastest engines) or as an
/// untrusted rule's (bounded engines, sizes charged to the rule and to a [`Budget`]).
#[derive(Debug)]
pub struct Compiler<'b> {
    untrusted: Option<&'b Budget>,
    spent: Cell<usize>,
}

impl<'b> Compiler<'b> {
    /// For builtin rules.
    pub fn builtin() -> Compiler<'static> {
        Compiler { untrusted: None, spent: Cell::new(0) }
    }

    /// For a user or project rule, charging `budget`.
    pub fn untrusted(budget: &'b Budget) -> Compiler<'b> {
        Compiler { untrusted: Some(budget), spent: Cell::new(0) }
    }

    /// [`builtin`](Self::builtin) for [`Layer::Builtin`], else [`untrusted`](Self::untrusted).
    pub fn for_layer(layer: Layer, budget: &'b Budget) -> Compiler<'b> {
        match layer {
            Layer::Builtin => Compiler::builtin(),
            _ => Compiler::untrusted(budget),
        }
    }

    /// Returns true if and only if the rule's patterns went past [`RULE_SIZE_LIMIT`] or
    /// the run's budget ran out: the rule is to be dropped.
    pub fn is_over(&self) -> bool {
        self.untrusted.is_some_and(|b| {
            self.spent.get() >= RULE_SIZE_LIMIT || b.exhausted() == Some(Exhausted::Size)
        })
    }

    /// Bytes of NFA the rule's patterns took so far (untrusted rules only).
    pub fn spent(&self) -> usize {
        self.spent.get()
    }

    /// Charges `bytes` to the rule and the run; false once either is over.
    fn charge(&self, bytes: usize) -> bool {
        self.spent.set(self.spent.get().saturating_add(bytes));
        let run = self.untrusted.is_none_or(|b| b.charge_size(bytes));
        run && !self.is_over()
    }

    /// The NFA size left for one more build of this rule.
    fn room(&self, wanted: usize) -> usize {
        wanted.min(RULE_SIZE_LIMIT.saturating_sub(self.spent.get())).max(1)
    }

    /// Compiles one pattern with JavaScript-style `flags` (`i`, `m`, `s`; others ignored).
    pub fn pattern(&self, pattern: &str, flags: Option<&str>) -> Result<Pattern, String> {
        let flags = Flags::parse(flags);
        match self.untrusted {
            None => trusted_pattern(pattern, flags),
            Some(budget) => self.untrusted_pattern(pattern, flags, budget),
        }
    }

    /// [`Compiler::pattern`] for a pattern asked once about one short text, such as
    /// `match.commandRegex` against the command line: a builtin ASCII pattern is built
    /// without a dense DFA (a lazy one is built as the search needs it). It matches exactly
    /// what [`Compiler::pattern`]'s matcher matches.
    pub fn one_shot(&self, pattern: &str, flags: Option<&str>) -> Result<Pattern, String> {
        let parsed = Flags::parse(flags);
        if self.untrusted.is_none() {
            if let Some(dfa) = prebuilt(&[pattern], parsed) {
                return Ok(Pattern::Prebuilt(Box::new(dfa)));
            }
            if pattern.is_ascii()
                && let Ok(re) = build_ascii_with(&[pattern], parsed, PATTERN_SIZE_LIMIT, false)
            {
                matchers::count_runtime_compile();
                return Ok(Pattern::Ascii(Box::new(re)));
            }
        }
        self.pattern(pattern, flags)
    }

    fn untrusted_pattern(
        &self,
        pattern: &str,
        flags: Flags,
        budget: &Budget,
    ) -> Result<Pattern, String> {
        if self.is_over() {
            return Err(OVER_RULE_LIMIT.to_owned());
        }
        let _meter = budget.meter();
        match self.bounded(&[pattern], !pattern.is_ascii(), flags, MatchKind::LeftmostFirst) {
            Ok(bounded) => Ok(Pattern::Bounded(Box::new(bounded))),
            Err(BuildFail::Size(reason)) => Err(reason),
            Err(BuildFail::Syntax(reason)) => self
                .backtracking(pattern, flags)
                .map(|re| Pattern::Backtracking(Box::new(re)))
                .map_err(|fancy| fancy.unwrap_or(reason)),
        }
    }

    /// Builds a [`Bounded`] matcher of `patterns`, charging its NFA (or the limit, when it
    /// was over it).
    fn bounded(
        &self,
        patterns: &[&str],
        unicode: bool,
        flags: Flags,
        kind: MatchKind,
    ) -> Result<Bounded, BuildFail> {
        let limit = self.room(PATTERN_SIZE_LIMIT.saturating_mul(patterns.len()));
        let rewritten: Vec<String>;
        let patterns: Vec<&str> = if unicode {
            // A Unicode `\b` makes the lazy DFA quit on any non-ASCII byte, which counts as
            // giving up (`install/pip-install`'s `[kMG]?B\b` met `×` in pip's output).
            rewritten = patterns.iter().map(|p| ascii_word_boundaries(p)).collect();
            rewritten.iter().map(String::as_str).collect()
        } else {
            patterns.to_vec()
        };
        let nfa = thompson::Compiler::new()
            // Not UTF-8 mode: it forbids `(?-u:\B)`, and only `&str` haystacks are searched.
            .syntax(flags.syntax(unicode).utf8(false))
            .configure(
                thompson::Config::new()
                    .which_captures(WhichCaptures::None)
                    .nfa_size_limit(Some(limit)),
            )
            .build_many(&patterns);
        let nfa = match nfa {
            Ok(nfa) => nfa,
            Err(err) if err.size_limit().is_some() => {
                self.charge(limit);
                return Err(BuildFail::Size(too_large(limit)));
            }
            Err(err) => return Err(BuildFail::Syntax(err.to_string())),
        };
        if !self.charge(nfa.memory_usage()) {
            return Err(BuildFail::Size(OVER_RULE_LIMIT.to_owned()));
        }
        hybrid::dfa::Builder::new()
            .configure(bounded_config(kind))
            .build_from_nfa(nfa)
            .map(Bounded::new)
            // The NFA needs a larger cache than the limit allows.
            .map_err(|_| BuildFail::Size(too_large(DFA_CACHE_CAPACITY)))
    }

    /// Compiles a pattern the linear engines refused (lookaround, backreferences), after
    /// checking that its softened form fits the size limit. `Err(None)`: `fancy-regex`
    /// refused it too (the linear engine's reason is the better one).
    fn backtracking(
        &self,
        pattern: &str,
        flags: Flags,
    ) -> Result<fancy_regex::Regex, Option<String>> {
        let text = inline(flags, pattern);
        let tree = fancy_regex::Expr::parse_tree(&text).map_err(|_| None)?;
        let mut soft = String::new();
        soften(tree.expr).to_str(&mut soft, 0);
        match self.bounded(&[&soft], !soft.is_ascii(), Flags::default(), MatchKind::LeftmostFirst) {
            Err(BuildFail::Size(reason)) => return Err(Some(reason)),
            // Softening made something the linear parser refuses: fancy-regex decides.
            Err(BuildFail::Syntax(_)) | Ok(_) => {}
        }
        fancy_builder(&text).build().map_err(|_| None)
    }
}

const OVER_RULE_LIMIT: &str = "the rule's patterns are over tj's compile limit";

fn too_large(limit: usize) -> String {
    format!("larger than tj's compile limit ({} KiB)", limit >> 10)
}

/// Why a [`Bounded`] build failed.
enum BuildFail {
    /// Over a size limit (charged).
    Size(String),
    /// Not a linear regex (lookaround, backreference) or not a regex at all.
    Syntax(String),
}

/// `fancy-regex`'s tree with what only backtracking can do replaced by what a linear
/// engine compiles to about the same size: lookarounds and atomic groups by their
/// contents, backreferences and other zero-width oddities by nothing.
fn soften(expr: fancy_regex::Expr) -> fancy_regex::Expr {
    use fancy_regex::Expr;
    match expr {
        Expr::LookAround(inner, _) | Expr::AtomicGroup(inner) => soften(*inner),
        Expr::Backref(_)
        | Expr::KeepOut
        | Expr::ContinueFromPreviousMatchEnd
        | Expr::BackrefExistsCondition(_) => Expr::Empty,
        Expr::Conditional { condition, true_branch, false_branch } => Expr::Alt(vec![
            Expr::Concat(vec![soften(*condition), soften(*true_branch)]),
            soften(*false_branch),
        ]),
        Expr::Concat(children) => Expr::Concat(children.into_iter().map(soften).collect()),
        Expr::Alt(children) => Expr::Alt(children.into_iter().map(soften).collect()),
        Expr::Group(inner) => Expr::Group(Box::new(soften(*inner))),
        Expr::Repeat { child, lo, hi, greedy } => {
            Expr::Repeat { child: Box::new(soften(*child)), lo, hi, greedy }
        }
        other => other,
    }
}

fn fancy_builder(text: &str) -> fancy_regex::RegexBuilder {
    let mut builder = fancy_regex::RegexBuilder::new(text);
    builder
        .backtrack_limit(BACKTRACK_LIMIT)
        .delegate_size_limit(PATTERN_SIZE_LIMIT)
        .delegate_dfa_size_limit(DFA_CACHE_CAPACITY);
    builder
}

/// The lazy DFA of an untrusted matcher: it gives up (and the run's budget is exhausted)
/// once its cache has been cleared three times while making fewer than ten bytes of
/// progress per state built, the point where `meta` would fall back to a slower engine.
fn bounded_config(kind: MatchKind) -> hybrid::dfa::Config {
    hybrid::dfa::DFA::config()
        .match_kind(kind)
        .cache_capacity(DFA_CACHE_CAPACITY)
        .minimum_cache_clear_count(Some(3))
        .minimum_bytes_per_state(Some(10))
        // A Unicode `\b` would make the DFA quit on the first non-ASCII byte, which counts
        // as giving up: untrusted patterns get ASCII ones (`ascii_word_boundaries`), so
        // this only lets a build through that would otherwise fail.
        .unicode_word_boundary(true)
}

/// `pattern` with `flags` inline, for `fancy-regex`.
fn inline(flags: Flags, pattern: &str) -> String {
    let mut inline = String::new();
    for (on, c) in [(flags.case_insensitive, 'i'), (flags.multi_line, 'm'), (flags.dot_all, 's')] {
        if on {
            inline.push(c);
        }
    }
    if inline.is_empty() { pattern.to_owned() } else { format!("(?{inline}){pattern}") }
}

/// An untrusted linear matcher: a lazy DFA alone, which gives up rather than slows down
/// (after three cache clears at under ten bytes a state). Its cache lives as long as it
/// does, so giving up is counted over the whole run, not per line.
#[derive(Debug)]
pub struct Bounded {
    dfa: hybrid::dfa::DFA,
    cache: Mutex<hybrid::dfa::Cache>,
}

impl Bounded {
    fn new(dfa: hybrid::dfa::DFA) -> Bounded {
        let cache = Mutex::new(dfa.create_cache());
        Bounded { dfa, cache }
    }

    /// Whether some pattern matches `text`; `None` when the DFA gave up.
    fn is_match(&self, text: &str) -> Option<bool> {
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        let input = Input::new(text.as_bytes()).earliest(true);
        self.dfa.try_search_fwd(&mut cache, &input).ok().map(|m| m.is_some())
    }
}

/// Builds builtin ASCII patterns as one `meta` matcher. Only "does it match" is ever asked,
/// so no capture groups are compiled, and Unicode classes are off (JavaScript's `\d`, `\w`,
/// `\b` are ASCII too): together a third of the cost of `regex::RegexSet` to build.
fn build_ascii(patterns: &[&str], flags: Flags, limit: usize) -> Result<meta::Regex, String> {
    build_ascii_with(patterns, flags, limit, true)
}

/// [`build_ascii`], with or without the dense DFA: determinizing a pattern up front pays
/// when it searches a whole output, not when it is asked once about a command line (the
/// help rule's alternation cost a hook 1.4 M instructions, half its run).
fn build_ascii_with(
    patterns: &[&str],
    flags: Flags,
    limit: usize,
    dense: bool,
) -> Result<meta::Regex, String> {
    meta::Builder::new()
        .configure(
            meta::Config::new()
                .dfa(dense)
                .auto_prefilter(false)
                .which_captures(WhichCaptures::None)
                .nfa_size_limit(Some(limit))
                .onepass_size_limit(Some(DFA_SIZE_LIMIT))
                .dfa_size_limit(Some(DFA_SIZE_LIMIT))
                .hybrid_cache_capacity(DFA_CACHE_CAPACITY),
        )
        .syntax(flags.syntax(false))
        .build_many(patterns)
        .map_err(|e| e.to_string())
}

/// The matcher the build embedded for builtin `patterns` (Unicode syntax when one of them
/// is not ASCII), if it did.
fn prebuilt(patterns: &[&str], flags: Flags) -> Option<Dfa> {
    let unicode = !patterns.iter().all(|p| p.is_ascii());
    matchers::prebuilt(&Spec { unicode, flags, patterns })
}

/// A builtin pattern: the matcher embedded when tj was built, else (counted as a run-time
/// compilation) `meta` for ASCII, `regex` for the rest, `fancy-regex` for what only
/// backtracking can do.
fn trusted_pattern(pattern: &str, flags: Flags) -> Result<Pattern, String> {
    if let Some(dfa) = prebuilt(&[pattern], flags) {
        return Ok(Pattern::Prebuilt(Box::new(dfa)));
    }
    matchers::count_runtime_compile();
    if pattern.is_ascii()
        && let Ok(re) = build_ascii(&[pattern], flags, PATTERN_SIZE_LIMIT)
    {
        return Ok(Pattern::Ascii(Box::new(re)));
    }
    // ASCII word boundaries, as the embedded DFA has them (`matchers::spec`).
    let linear = regex::RegexBuilder::new(&ascii_word_boundaries(pattern))
        .case_insensitive(flags.case_insensitive)
        .multi_line(flags.multi_line)
        .dot_matches_new_line(flags.dot_all)
        .size_limit(PATTERN_SIZE_LIMIT)
        .dfa_size_limit(DFA_CACHE_CAPACITY)
        .build();
    match linear {
        Ok(re) => Ok(Pattern::Linear(re)),
        Err(regex::Error::CompiledTooBig(limit)) => Err(too_large(limit)),
        Err(linear_err) => match fancy_builder(&inline(flags, pattern)).build() {
            Ok(re) => Ok(Pattern::Backtracking(Box::new(re))),
            Err(_) => Err(linear_err.to_string()),
        },
    }
}

/// A compiled pattern: the linear-time engine when it can, the backtracking one when the
/// pattern needs lookaround or backreferences.
///
/// An ASCII pattern compiles as a byte regex with Unicode classes off: `\d`, `\w` and `\b`
/// are then ASCII, as they are in JavaScript, and compiling costs a third of what the
/// Unicode tables do (start-up is a budget, DESIGN.md "Performance budget"). A pattern with
/// non-ASCII text keeps Unicode semantics, so `━+` repeats the character, not its last byte.
#[derive(Debug)]
pub enum Pattern {
    /// A builtin pattern compiled when tj was built (`matchers`).
    Prebuilt(Box<Dfa>),
    /// A builtin ASCII pattern, compiled without Unicode classes or capture groups.
    Ascii(Box<meta::Regex>),
    /// A builtin pattern compiled by `regex` with Unicode semantics.
    Linear(regex::Regex),
    /// Compiled by `fancy-regex`; runtime errors (backtrack limit) count as no match.
    Backtracking(Box<fancy_regex::Regex>),
    /// A user or project pattern on a lazy DFA that gives up rather than slows down.
    Bounded(Box<Bounded>),
}

/// Why one pattern of a rule was disabled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatternError {
    /// The rule's id.
    pub rule: String,
    /// Where in the rule, e.g. `filters.skipPatterns[2]`.
    pub field: String,
    /// The pattern text (never shown: see [`PatternError`]'s `Display`).
    pub pattern: String,
    /// The regex engine's message.
    pub reason: String,
}

impl fmt::Display for PatternError {
    /// Names the rule and the field, never the pattern: it comes from a file nobody vetted
    /// (see [`super::LoadError`]), and a compile bomb is tens of kilobytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The regex crates' last line is the kind of error (`error: unclosed group`); the
        // lines above it quote the pattern.
        let reason = self.reason.lines().last().unwrap_or_default().trim();
        let reason = reason.strip_prefix("error: ").unwrap_or(reason);
        write!(
            f,
            "rule `{}`: invalid regex in {}: {}; that pattern is disabled",
            super::printable(&self.rule),
            self.field,
            super::printable(reason)
        )
    }
}

impl std::error::Error for PatternError {}

impl Pattern {
    /// Compiles `pattern` as a builtin's, with JavaScript-style `flags` (`i`, `m`, `s`; `g`,
    /// `u`, `y`, `d` are meaningless here and ignored). For a user or project rule's
    /// pattern, use [`Compiler::untrusted`].
    pub fn new(pattern: &str, flags: Option<&str>) -> Result<Pattern, String> {
        trusted_pattern(pattern, Flags::parse(flags))
    }

    /// Returns true if and only if the pattern matches somewhere in `text`. A search that
    /// gives up (a backtrack limit, a lazy DFA) counts as no match.
    pub fn is_match(&self, text: &str) -> bool {
        self.is_match_within(text, &Budget::unlimited())
    }

    /// [`is_match`](Self::is_match), charging `budget`: a backtracking search that hits its
    /// limit, or meets a text past [`BACKTRACK_MAX_HAYSTACK`] under a limited budget, and a
    /// lazy DFA that gives up, are charged or exhaust it (and count as no match).
    pub fn is_match_within(&self, text: &str, budget: &Budget) -> bool {
        match self {
            Pattern::Prebuilt(dfa) => dfa.is_match(text.as_bytes()),
            Pattern::Ascii(re) => re.is_match(Input::new(text.as_bytes())),
            Pattern::Linear(re) => re.is_match(text),
            Pattern::Backtracking(re) => backtrack(re, text, budget),
            Pattern::Bounded(re) => re.is_match(text).unwrap_or_else(|| {
                budget.exhaust(Exhausted::LazyDfa);
                false
            }),
        }
    }
}

/// One backtracking search under `budget` (see [`Pattern::is_match_within`]).
fn backtrack(re: &fancy_regex::Regex, text: &str, budget: &Budget) -> bool {
    if budget.is_limited() && text.len() > BACKTRACK_MAX_HAYSTACK {
        budget.exhaust(Exhausted::LongText);
        return false;
    }
    if !budget.check() {
        return false;
    }
    match re.is_match(text) {
        Ok(found) => found,
        Err(_) => {
            budget.charge_backtrack();
            false
        }
    }
}

/// A list of linear patterns matched as one.
#[derive(Debug)]
enum Linear {
    Prebuilt(Dfa),
    Meta(meta::Regex),
    Set(regex::RegexSet),
    Bounded(Box<Bounded>),
}

impl Linear {
    fn is_match(&self, text: &str, budget: &Budget) -> bool {
        match self {
            Linear::Prebuilt(dfa) => dfa.is_match(text.as_bytes()),
            Linear::Meta(re) => re.is_match(Input::new(text.as_bytes())),
            Linear::Set(set) => set.is_match(text),
            Linear::Bounded(re) => re.is_match(text).unwrap_or_else(|| {
                budget.exhaust(Exhausted::LazyDfa);
                false
            }),
        }
    }
}

/// A list of patterns matched as one: a line matches if any pattern does.
#[derive(Debug, Default)]
pub struct PatternSet {
    ascii: Option<Linear>,
    linear: Option<Linear>,
    backtracking: Vec<fancy_regex::Regex>,
}

impl PatternSet {
    /// Compiles builtin `patterns` (no flags, as tokenjuice compiles filters), reporting each
    /// invalid one in `problems` and leaving it out.
    pub fn new(
        rule: &str,
        field: &str,
        patterns: &[String],
        problems: &mut Vec<PatternError>,
    ) -> PatternSet {
        PatternSet::compile(rule, field, patterns, problems, &Compiler::builtin())
    }

    /// [`new`](Self::new) with `compiler`'s engines and limits.
    pub fn compile(
        rule: &str,
        field: &str,
        patterns: &[String],
        problems: &mut Vec<PatternError>,
        compiler: &Compiler<'_>,
    ) -> PatternSet {
        if patterns.is_empty() {
            return PatternSet::default();
        }
        let (ascii, unicode): (Vec<&str>, Vec<&str>) =
            patterns.iter().map(String::as_str).partition(|p| p.is_ascii());
        // Fast path: one matcher per kind; compile one by one only to find a culprit.
        if let (Ok(ascii), Ok(linear)) =
            (linear_set(&ascii, false, compiler), linear_set(&unicode, true, compiler))
        {
            return PatternSet { ascii, linear, backtracking: Vec::new() };
        }
        let mut ascii_ok = Vec::new();
        let mut linear_ok = Vec::new();
        let mut backtracking = Vec::new();
        for (i, pattern) in patterns.iter().enumerate() {
            if compiler.is_over() {
                break;
            }
            match compiler.pattern(pattern, None) {
                Ok(Pattern::Ascii(_)) => ascii_ok.push(pattern.as_str()),
                Ok(Pattern::Prebuilt(_)) if pattern.is_ascii() => ascii_ok.push(pattern.as_str()),
                Ok(Pattern::Prebuilt(_)) => linear_ok.push(pattern.as_str()),
                Ok(Pattern::Linear(_)) => linear_ok.push(pattern.as_str()),
                Ok(Pattern::Bounded(_)) if pattern.is_ascii() => ascii_ok.push(pattern.as_str()),
                Ok(Pattern::Bounded(_)) => linear_ok.push(pattern.as_str()),
                Ok(Pattern::Backtracking(re)) => backtracking.push(*re),
                Err(reason) => problems.push(PatternError {
                    rule: rule.to_owned(),
                    field: format!("{field}[{i}]"),
                    pattern: pattern.clone(),
                    reason,
                }),
            }
        }
        let ascii = linear_set(&ascii_ok, false, compiler).ok().flatten();
        let linear = linear_set(&linear_ok, true, compiler).ok().flatten();
        PatternSet { ascii, linear, backtracking }
    }

    /// Returns true if and only if the set holds no usable pattern.
    pub fn is_empty(&self) -> bool {
        self.ascii.is_none()
            && self.linear.as_ref().is_none_or(|s| matches!(s, Linear::Set(s) if s.is_empty()))
            && self.backtracking.is_empty()
    }

    /// Returns true if and only if some pattern matches `line`.
    pub fn is_match(&self, line: &str) -> bool {
        self.is_match_within(line, &Budget::unlimited())
    }

    /// [`is_match`](Self::is_match), charging `budget` (see [`Pattern::is_match_within`]).
    pub fn is_match_within(&self, line: &str, budget: &Budget) -> bool {
        self.ascii.as_ref().is_some_and(|s| s.is_match(line, budget))
            || self.linear.as_ref().is_some_and(|s| s.is_match(line, budget))
            || self.backtracking.iter().any(|re| backtrack(re, line, budget))
    }
}

/// `patterns` as one linear matcher (`None` for no patterns): builtin ASCII ones in `meta`,
/// builtin Unicode ones in a `RegexSet`, untrusted ones in a [`Bounded`].
fn linear_set(
    patterns: &[&str],
    unicode: bool,
    compiler: &Compiler<'_>,
) -> Result<Option<Linear>, String> {
    if patterns.is_empty() {
        return Ok(None);
    }
    if compiler.untrusted.is_none() {
        if let Some(dfa) = prebuilt(patterns, Flags::default()) {
            return Ok(Some(Linear::Prebuilt(dfa)));
        }
        matchers::count_runtime_compile();
    }
    let limit = compiler.room(RULE_SIZE_LIMIT);
    match (compiler.untrusted, unicode) {
        (None, false) => build_ascii(patterns, Flags::default(), limit).map(Linear::Meta),
        (None, true) => {
            regex::RegexSetBuilder::new(patterns.iter().map(|p| ascii_word_boundaries(p)))
                .size_limit(limit)
                .dfa_size_limit(DFA_CACHE_CAPACITY)
                .build()
                .map(Linear::Set)
                .map_err(|e| e.to_string())
        }
        (Some(_), _) => {
            match compiler.bounded(patterns, unicode, Flags::default(), MatchKind::LeftmostFirst) {
                Ok(bounded) => Ok(Linear::Bounded(Box::new(bounded))),
                Err(BuildFail::Size(reason) | BuildFail::Syntax(reason)) => Err(reason),
            }
        }
    }
    .map(Some)
}

/// The kinds of line a rule's line patterns recognise, as bits of [`LineKinds::kinds`].
pub const SKIP: u8 = 1;
/// See [`SKIP`].
pub const KEEP: u8 = 2;
/// See [`SKIP`].
pub const EVIDENCE: u8 = 4;

/// A rule's skip, keep and evidence patterns, matched against a line in one pass.
///
/// Every ASCII pattern of the three lists goes into one matcher that reports all the
/// patterns a line matches (one lazy-DFA scan instead of three searches per line: this is
/// the hot loop of a reduction). Non-ASCII and lookaround patterns stay in per-kind sets.
#[derive(Debug, Default)]
pub struct LineKinds {
    ascii: Option<(Lines, Vec<u8>)>,
    rest: [PatternSet; 3],
    present: u8,
    /// The lazy DFA is an untrusted rule's: giving up exhausts the budget.
    bounded: bool,
}

/// The matchers of a rule's ASCII line patterns.
#[derive(Debug)]
enum Lines {
    /// Embedded when tj was built (a builtin rule): one per list (skip, keep, evidence),
    /// each asked whether any of its patterns matches.
    Prebuilt(Box<[Option<List>; 3]>),
    /// A lazy DFA compiled now: an untrusted rule's (bounded), or a builtin one the build
    /// did not embed.
    Lazy(Box<hybrid::dfa::DFA>),
}

/// One embedded list of a builtin rule's ASCII line patterns.
#[derive(Debug)]
struct List {
    dfa: Dfa,
    /// Literals one of which every line the list matches holds
    /// ([`matchers::prefilter_literals`]): [`LineKinds::candidates`] walks the DFA only on
    /// lines that hold one.
    literals: Option<&'static [&'static str]>,
    /// Their searcher, built on the first scan (a run of an empty output builds none).
    prefilter: OnceLock<Option<matchers::Literals>>,
    /// Line shapes some pattern is sure to match ([`matchers::sure_shapes`]): a line of one
    /// is in the list without a walk of its DFA.
    sure: &'static [matchers::Sure],
}

impl List {
    /// Returns true if and only if some pattern of the list matches `line`.
    fn is_match(&self, line: &[u8]) -> bool {
        self.sure.iter().any(|shape| shape.matches(line)) || self.dfa.is_match(line)
    }

    /// The list's prefilter, if it has one and the CPU a packed searcher.
    fn prefilter(&self) -> Option<&matchers::Literals> {
        let literals = self.literals?;
        self.prefilter.get_or_init(|| matchers::Literals::simd(literals)).as_ref()
    }
}

/// Scratch space for [`LineKinds::kinds`], reused across lines: the lazy DFA's
/// matched-pattern set and state cache.
#[derive(Debug)]
pub struct Scratch {
    set: regex_automata::PatternSet,
    cache: Option<hybrid::dfa::Cache>,
}

impl LineKinds {
    /// Compiles the three builtin lists (skip, keep, evidence, in that order), reporting
    /// each invalid pattern in `problems` under its own field and index.
    pub fn new(
        rule: &str,
        lists: [(&str, &Vec<String>); 3],
        problems: &mut Vec<PatternError>,
    ) -> LineKinds {
        LineKinds::compile(rule, lists, problems, &Compiler::builtin())
    }

    /// [`new`](Self::new) with `compiler`'s engines and limits.
    pub fn compile(
        rule: &str,
        lists: [(&str, &Vec<String>); 3],
        problems: &mut Vec<PatternError>,
        compiler: &Compiler<'_>,
    ) -> LineKinds {
        let bits = [SKIP, KEEP, EVIDENCE];
        let mut ascii: Vec<&str> = Vec::new();
        let mut kinds: Vec<u8> = Vec::new();
        let mut rest: [Vec<String>; 3] = Default::default();
        for (k, (_, list)) in lists.iter().enumerate() {
            for pattern in list.iter() {
                if pattern.is_ascii() {
                    ascii.push(pattern);
                    kinds.push(bits[k]);
                } else {
                    rest[k].push(pattern.clone());
                }
            }
        }
        let mut matcher = match compiler.untrusted {
            None => embedded_lists(&lists).map(|dfas| Ok(Some(Lines::Prebuilt(dfas)))),
            Some(_) => None,
        }
        .unwrap_or_else(|| build_all(&ascii, compiler));
        if matcher.is_err() {
            // Find the culprits one by one; the valid ASCII ones are rebuilt together.
            let (mut ok, mut ok_kinds) = (Vec::new(), Vec::new());
            for (k, (field, list)) in lists.iter().enumerate() {
                for (i, pattern) in list.iter().enumerate().filter(|(_, p)| p.is_ascii()) {
                    if compiler.is_over() {
                        break;
                    }
                    match compiler.pattern(pattern, None) {
                        Ok(Pattern::Ascii(_) | Pattern::Bounded(_)) => {
                            ok.push(pattern.as_str());
                            ok_kinds.push(bits[k]);
                        }
                        Ok(_) => rest[k].push(pattern.clone()),
                        Err(reason) => problems.push(PatternError {
                            rule: rule.to_owned(),
                            field: format!("{field}[{i}]"),
                            pattern: pattern.clone(),
                            reason,
                        }),
                    }
                }
            }
            kinds = ok_kinds;
            matcher = build_all(&ok, compiler);
        }
        let mut present = kinds.iter().fold(0, |acc, k| acc | k);
        let rest = [0, 1, 2].map(|k| {
            let set = PatternSet::compile(rule, lists[k].0, &rest[k], problems, compiler);
            if !set.is_empty() {
                present |= bits[k];
            }
            set
        });
        let ascii = matcher.ok().flatten().map(|re| (re, kinds));
        LineKinds { ascii, rest, present, bounded: compiler.untrusted.is_some() }
    }

    /// Returns true if and only if some pattern of these kinds exists.
    pub fn has(&self, kinds: u8) -> bool {
        self.present & kinds != 0
    }

    /// Scratch space for [`kinds`](Self::kinds).
    pub fn scratch(&self) -> Scratch {
        match self.ascii.as_ref().map(|(lines, _)| lines) {
            Some(Lines::Lazy(dfa)) => Scratch {
                set: regex_automata::PatternSet::new(dfa.pattern_len()),
                cache: Some(dfa.create_cache()),
            },
            Some(Lines::Prebuilt(_)) | None => {
                Scratch { set: regex_automata::PatternSet::new(0), cache: None }
            }
        }
    }

    /// The kinds of the patterns `line` matches. An untrusted rule's matchers charge
    /// `budget` (see [`Pattern::is_match_within`]); the caller checks it after each line.
    pub fn kinds(&self, line: &str, scratch: &mut Scratch, budget: &Budget) -> u8 {
        self.kinds_among(line, SKIP | KEEP | EVIDENCE, scratch, budget)
    }

    /// Per line of `lines`, the kinds whose embedded list could match it: a list's bit is
    /// clear where its prefilter found none of its literals, set everywhere for a list
    /// without one. `lines` are `text`'s, as `reduce::split_lines` cuts them (else every
    /// bit is set). What [`kinds_among`](Self::kinds_among) takes.
    pub fn candidates(&self, text: &str, lines: &[&str]) -> Vec<u8> {
        let all = SKIP | KEEP | EVIDENCE;
        let Some((Lines::Prebuilt(lists), _)) = &self.ascii.as_ref().filter(|_| !lines.is_empty())
        else {
            return vec![all; lines.len()];
        };
        let filtered = lists
            .iter()
            .zip([SKIP, KEEP, EVIDENCE])
            .filter(|(list, _)| list.as_ref().is_some_and(|l| l.prefilter().is_some()))
            .fold(0, |acc, (_, bit)| acc | bit);
        let mut out = vec![all & !filtered; lines.len()];
        for (list, bit) in lists.iter().zip([SKIP, KEEP, EVIDENCE]) {
            let Some(finder) = list.as_ref().and_then(List::prefilter) else {
                continue;
            };
            if !worth_scanning(finder, text, lines) {
                out.iter_mut().for_each(|k| *k |= bit);
            } else if !matchers::scan_in_place(finder, text, lines, |k| out[k] |= bit) {
                return vec![all; lines.len()];
            }
        }
        out
    }

    /// [`kinds`](Self::kinds), walking only the embedded lists of kinds in `among` (the
    /// others are taken not to match: see [`candidates`](Self::candidates)).
    pub fn kinds_among(&self, line: &str, among: u8, scratch: &mut Scratch, budget: &Budget) -> u8 {
        let mut out = 0;
        if let Some((Lines::Prebuilt(lists), _)) = &self.ascii {
            for (list, bit) in lists.iter().zip([SKIP, KEEP, EVIDENCE]) {
                if among & bit != 0
                    && list.as_ref().is_some_and(|list| list.is_match(line.as_bytes()))
                {
                    out |= bit;
                }
            }
        }
        if let (Some((Lines::Lazy(dfa), kinds)), Some(cache)) =
            (&self.ascii, scratch.cache.as_mut())
        {
            scratch.set.clear();
            match dfa.try_which_overlapping_matches(
                cache,
                &Input::new(line.as_bytes()),
                &mut scratch.set,
            ) {
                Ok(()) => {
                    for pid in scratch.set.iter() {
                        out |= kinds[pid.as_usize()];
                    }
                }
                // An untrusted rule's lazy DFA gave up: its patterns cost too much here.
                Err(_) if self.bounded => budget.exhaust(Exhausted::LazyDfa),
                // A builtin's lazy DFA has no reason to give up configured, so this should
                // not happen: never drop what could not be classified.
                Err(_) => out |= KEEP | EVIDENCE,
            }
        }
        for (k, set) in self.rest.iter().enumerate() {
            if !set.is_empty() && set.is_match_within(line, budget) {
                out |= [SKIP, KEEP, EVIDENCE][k];
            }
        }
        out
    }
}

/// How many lines, spread over the output, [`worth_scanning`] tries a prefilter on.
const PREFILTER_SAMPLE: usize = 64;

/// Returns true unless `finder` flags more than half of a sample of `lines` (cut from
/// `text`): a prefilter that flags most lines (`... ok` for the skip list of a passing
/// `cargo test`) saves no DFA walk and costs a search per line. Short outputs are scanned.
fn worth_scanning(finder: &matchers::Literals, text: &str, lines: &[&str]) -> bool {
    if lines.len() < PREFILTER_SAMPLE * 4 {
        return true;
    }
    let sample: Vec<&str> = lines.iter().step_by(lines.len() / PREFILTER_SAMPLE).copied().collect();
    let mut flagged = 0;
    matchers::scan_in_place(finder, text, &sample, |_| flagged += 1) && flagged * 2 <= sample.len()
}

/// Each line list of `rule` (skip, keep, evidence) as the build embeds it: its ASCII
/// patterns, one matcher per list (its other patterns are compiled at run time). A list
/// with none is empty, and nothing is embedded for it.
pub fn embedded_line_lists(rule: &Rule) -> [Vec<&str>; 3] {
    [&rule.filters.skip_patterns, &rule.filters.keep_patterns, &rule.evidence]
        .map(|list| ascii_patterns(list))
}

/// The ASCII patterns of `list`: those the build embeds (see [`embedded_line_lists`]).
fn ascii_patterns(list: &[String]) -> Vec<&str> {
    list.iter().filter(|p| p.is_ascii()).map(String::as_str).collect()
}

/// The embedded matchers of a builtin rule's ASCII line patterns, one per list, if the
/// build embedded them all.
fn embedded_lists(lists: &[(&str, &Vec<String>); 3]) -> Option<Box<[Option<List>; 3]>> {
    let mut out: [Option<List>; 3] = Default::default();
    for (slot, (_, list)) in out.iter_mut().zip(lists) {
        let ascii = ascii_patterns(list);
        if !ascii.is_empty() {
            let spec = Spec { unicode: false, flags: Flags::default(), patterns: &ascii };
            let dfa = matchers::prebuilt(&spec)?;
            let literals = matchers::prefilter_literals(&spec);
            let sure = matchers::sure_shapes(&spec);
            *slot = Some(List { dfa, literals, prefilter: OnceLock::new(), sure });
        }
    }
    Some(Box::new(out))
}

/// One matcher reporting every ASCII pattern a haystack matches (`None` for no patterns).
///
/// A lazy DFA used directly, not through `meta`: only "which patterns match" is asked, on
/// short lines, and skipping meta's other engines halves both the build and the per-line
/// cost of the reduction's hot loop. An untrusted rule's gives up when its cache thrashes
/// ([`bounded_config`]).
fn build_all(patterns: &[&str], compiler: &Compiler<'_>) -> Result<Option<Lines>, String> {
    if patterns.is_empty() {
        return Ok(None);
    }
    if compiler.untrusted.is_some() {
        return match compiler.bounded(patterns, false, Flags::default(), MatchKind::All) {
            Ok(bounded) => Ok(Some(Lines::Lazy(Box::new(bounded.dfa)))),
            Err(BuildFail::Size(reason) | BuildFail::Syntax(reason)) => Err(reason),
        };
    }
    matchers::count_runtime_compile();
    hybrid::dfa::DFA::builder()
        .configure(
            hybrid::dfa::DFA::config()
                .match_kind(MatchKind::All)
                .cache_capacity(DFA_CACHE_CAPACITY),
        )
        .syntax(Flags::default().syntax(false))
        .thompson(
            thompson::Config::new()
                .which_captures(WhichCaptures::None)
                .nfa_size_limit(Some(compiler.room(RULE_SIZE_LIMIT))),
        )
        .build_many(patterns)
        .map(|dfa| Some(Lines::Lazy(Box::new(dfa))))
        .map_err(|e| e.to_string())
}

/// The selected rule's regexes, ready to run.
#[derive(Debug, Default)]
pub struct CompiledRule {
    /// `filters.skipPatterns`, `filters.keepPatterns` and `evidence`, matched in one pass.
    pub lines: LineKinds,
    /// `counters`, by name; a counter whose pattern is invalid is left out.
    pub counters: Vec<(String, Pattern)>,
    /// `matchOutput`, with their messages.
    pub outputs: Vec<(Pattern, String)>,
    /// Every pattern that was disabled, for one warning each.
    pub problems: Vec<PatternError>,
    /// For an untrusted rule: its patterns went past [`RULE_SIZE_LIMIT`] (or the run's
    /// size budget ran out), so the rule is to be dropped, not used with what compiled.
    pub over_limit: bool,
}

impl CompiledRule {
    /// Compiles every pattern of a builtin `rule`. Never fails: invalid patterns are
    /// disabled and listed in `problems`.
    pub fn compile(rule: &Rule) -> CompiledRule {
        CompiledRule::compile_with(rule, &Compiler::builtin())
    }

    /// Compiles every pattern of `rule` with `compiler`'s engines and limits. For an
    /// untrusted rule, compiling stops once the rule is over its limit ([`over_limit`]).
    ///
    /// [`over_limit`]: CompiledRule::over_limit
    pub fn compile_with(rule: &Rule, compiler: &Compiler<'_>) -> CompiledRule {
        let mut problems = Vec::new();
        let id = rule.id.as_str();
        let lines = LineKinds::compile(
            id,
            [
                ("filters.skipPatterns", &rule.filters.skip_patterns),
                ("filters.keepPatterns", &rule.filters.keep_patterns),
                ("evidence", &rule.evidence),
            ],
            &mut problems,
            compiler,
        );
        let mut compile = |field: String, pattern: &str, flags: Option<&str>| {
            if compiler.is_over() {
                return None;
            }
            match compiler.pattern(pattern, flags) {
                Ok(re) => Some(re),
                Err(reason) => {
                    problems.push(PatternError {
                        rule: id.to_owned(),
                        field,
                        pattern: pattern.to_owned(),
                        reason,
                    });
                    None
                }
            }
        };
        let counters = (rule.counters.iter().enumerate())
            .filter_map(|(i, c)| {
                let re = compile(format!("counters[{i}]"), &c.pattern, c.flags.as_deref())?;
                Some((c.name.clone(), re))
            })
            .collect();
        let outputs = (rule.match_output.iter().enumerate())
            .filter_map(|(i, o)| {
                let re = compile(format!("matchOutput[{i}]"), &o.pattern, o.flags.as_deref())?;
                Some((re, o.message.clone()))
            })
            .collect();
        let over_limit = compiler.is_over();
        CompiledRule { lines, counters, outputs, problems, over_limit }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `f` on another thread: a hang fails the test instead of stalling it.
    fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(Duration::from_secs(secs)).expect("finished in time")
    }

    fn rule_with_skips(patterns: Vec<String>) -> Rule {
        Rule {
            id: "proj/x".to_owned(),
            filters: crate::rules::schema::Filters {
                skip_patterns: patterns,
                ..Default::default()
            },
            ..Rule::default()
        }
    }

    const REDOS: &str = r"^((?=[a-z])[a-z]+)+!$";

    #[test]
    fn a_compile_bomb_is_dropped_after_one_failed_build() {
        // A 43 KB rule of `[a-z]{1,65535}N`: 3 MB of NFA each.
        let rule = rule_with_skips(vec!["[a-z]{1,65535}N".to_owned(); 2900]);
        let compiled = within(60, move || {
            let budget = Budget::without_time();
            let compiler = Compiler::untrusted(&budget);
            let compiled = CompiledRule::compile_with(&rule, &compiler);
            (compiled.over_limit, compiled.problems.len(), compiler.spent())
        });
        assert_eq!(compiled, (true, 0, RULE_SIZE_LIMIT));
        // One such pattern alone is refused by the per-pattern limit and disabled alone.
        let budget = Budget::without_time();
        let compiler = Compiler::untrusted(&budget);
        let rule = rule_with_skips(vec!["[a-z]{1,65535}N".to_owned(), "^ok$".to_owned()]);
        let compiled = CompiledRule::compile_with(&rule, &compiler);
        assert!(!compiled.over_limit);
        assert_eq!(compiled.problems.len(), 1, "{:?}", compiled.problems);
        assert!(compiled.problems[0].to_string().contains("larger than tj's compile limit"));
        let mut scratch = compiled.lines.scratch();
        assert_eq!(compiled.lines.kinds("ok", &mut scratch, &budget), SKIP);
        // The trusted path holds the same per-pattern limit.
        assert!(Pattern::new("[a-z]{1,65535}N", None).unwrap_err().contains("compile limit"));
    }

    #[test]
    fn a_lookaround_bomb_is_refused_before_fancy_regex_compiles_it() {
        let budget = Budget::without_time();
        let compiler = Compiler::untrusted(&budget);
        let err = within(30, || {
            let budget = Budget::without_time();
            let compiler = Compiler::untrusted(&budget);
            compiler.pattern(&"(?=[a-z]{1,20000}N)x".repeat(60), None).err()
        });
        assert!(err.is_some_and(|e| e.contains("compile limit")));
        // A small lookaround pattern still compiles, to the backtracking engine.
        assert!(matches!(compiler.pattern(r"^(?!ok).*done", None), Ok(Pattern::Backtracking(_))));
    }

    #[test]
    fn every_builtin_rule_fits_the_untrusted_limits_and_needs_no_backtracking() {
        for file in crate::rules::builtin_files() {
            let rule: Rule = serde_json::from_str(file.json).unwrap();
            let budget = Budget::without_time();
            let compiler = Compiler::untrusted(&budget);
            let compiled = CompiledRule::compile_with(&rule, &compiler);
            assert!(compiled.problems.is_empty(), "{}: {:?}", file.path, compiled.problems);
            assert!(
                !compiled.over_limit && compiler.spent() < RULE_SIZE_LIMIT / 16,
                "{}",
                file.path
            );
            // The fast path: no builtin pattern needs the backtracking engine, so a
            // builtin reduction never meets a backtracking limit.
            let compiled = CompiledRule::compile(&rule);
            let backtracking =
                compiled.lines.rest.iter().map(|s| s.backtracking.len()).sum::<usize>()
                    + compiled
                        .counters
                        .iter()
                        .filter(|(_, p)| matches!(p, Pattern::Backtracking(_)))
                        .count()
                    + compiled
                        .outputs
                        .iter()
                        .filter(|(p, _)| matches!(p, Pattern::Backtracking(_)))
                        .count();
            assert_eq!(backtracking, 0, "{}", file.path);
        }
    }

    #[test]
    fn a_thrashing_lazy_dfa_gives_up_and_exhausts_the_budget() {
        // The DFA of `(a|b)*a(a|b){20}` has 2^20 states: over random a/b the cache thrashes.
        let mut rng = crate::testing::Rng::new(0x9E37_79B9_7F4A_7C15);
        let line: String =
            (0..1 << 20).map(|_| if rng.next_u64() & 1 == 0 { 'a' } else { 'b' }).collect();
        let exhausted = within(60, move || {
            let budget = Budget::without_time();
            let compiler = Compiler::untrusted(&budget);
            let re = compiler.pattern("(a|b)*a(a|b){20}X", None).unwrap();
            assert!(!re.is_match_within(&line, &budget));
            budget.exhausted()
        });
        assert_eq!(exhausted, Some(Exhausted::LazyDfa));
    }

    #[test]
    fn the_backtracking_budget_is_counted_per_run_not_per_line() {
        let budget = Budget::without_time();
        let compiler = Compiler::untrusted(&budget);
        let re = compiler.pattern(REDOS, None).unwrap();
        let line = "a".repeat(28);
        let mut searched = 0;
        while budget.check() {
            assert!(!re.is_match_within(&line, &budget));
            searched += 1;
        }
        assert_eq!(searched, RUN_BACKTRACK_LIMIT / BACKTRACK_LIMIT);
        assert_eq!(budget.exhausted(), Some(Exhausted::Backtracking));
        // Without a budget (explain, verify), a search over the limit is only no match.
        assert!(!re.is_match(&line));
    }

    #[test]
    fn a_backtracking_pattern_never_sees_a_long_text_under_a_budget() {
        let budget = Budget::without_time();
        let re = Compiler::untrusted(&budget).pattern(r"(?<=x)y", None).unwrap();
        assert!(re.is_match_within("xy", &budget));
        let long = format!("{}xy", " ".repeat(BACKTRACK_MAX_HAYSTACK));
        assert!(!re.is_match_within(&long, &budget));
        assert_eq!(budget.exhausted(), Some(Exhausted::LongText));
    }

    #[test]
    fn time_is_counted_only_while_metered() {
        let budget = Budget::with_time(Duration::from_millis(20));
        std::thread::sleep(Duration::from_millis(40));
        assert!(budget.check(), "unmetered time does not count");
        {
            let _meter = budget.meter();
            std::thread::sleep(Duration::from_millis(40));
            assert!(!budget.check());
        }
        assert_eq!(budget.exhausted(), Some(Exhausted::Time(Duration::from_millis(20))));
        budget.blame("proj/a");
        budget.blame("proj/b");
        assert_eq!(budget.culprit().as_deref(), Some("proj/a"));
    }

    #[test]
    fn untrusted_patterns_match_as_builtin_ones_do() {
        let budget = Budget::without_time();
        let untrusted = Compiler::untrusted(&budget);
        for (pattern, flags, yes, no) in [
            ("^error", Some("i"), "ERROR: x", "an error"),
            ("^b$", Some("m"), "a\nb\nc", "abc"),
            (r"^\d+ ok\b", None, "12 ok", "12 okay"),
            ("^━+$", None, "━━━", "━x"),
            (r"^(?!ok).*done", None, "build done", "ok done"),
        ] {
            for p in
                [Pattern::new(pattern, flags).unwrap(), untrusted.pattern(pattern, flags).unwrap()]
            {
                assert!(p.is_match_within(yes, &budget), "{pattern} {p:?}");
                assert!(!p.is_match_within(no, &budget), "{pattern} {p:?}");
            }
        }
        assert!(matches!(untrusted.pattern("^ok", None), Ok(Pattern::Bounded(_))));
        assert_eq!(budget.exhausted(), None);
    }

    #[test]
    fn untrusted_unicode_patterns_get_ascii_word_boundaries() {
        assert_eq!(ascii_word_boundaries(r"━+ [kMG]?B\b"), r"━+ [kMG]?B(?-u:\b)");
        assert_eq!(ascii_word_boundaries(r"\Bé[\b\]]\\b"), r"(?-u:\B)é[\b\]]\\b");
        assert_eq!(ascii_word_boundaries(r"[]\b][^]x]\b"), r"[]\b][^]x](?-u:\b)");
        // The lazy DFA no longer quits on non-ASCII bytes.
        let budget = Budget::without_time();
        let re =
            Compiler::untrusted(&budget).pattern(r"^\s*[━─]+\s+[\d.]+ [kMG]?B\b", None).unwrap();
        assert!(!re.is_match_within("  × Getting requirements │ failed", &budget));
        assert!(re.is_match_within("━━━━ 1.2 MB eta", &budget));
        assert!(!re.is_match_within("━━━━ 1.2 MBytes", &budget));
        assert_eq!(budget.exhausted(), None);
    }

    #[test]
    fn the_budget_for_an_output_holds_every_run_limit() {
        let budget = Budget::for_input(3 << 20);
        assert_eq!(budget.time_limit(), Some(TIME_BUDGET + TIME_BUDGET_PER_MIB * 3));
        assert!(budget.is_limited());
        for _ in 1..RUN_BACKTRACK_LIMIT / BACKTRACK_LIMIT {
            budget.charge_backtrack();
        }
        assert!(budget.check());
        budget.charge_backtrack();
        assert_eq!(budget.exhausted(), Some(Exhausted::Backtracking));
        let budget = Budget::for_input(0);
        assert!(budget.charge_size(RUN_SIZE_LIMIT));
        assert!(!budget.charge_size(1));
        assert_eq!(budget.exhausted(), Some(Exhausted::Size));
    }

    #[test]
    fn flags_apply() {
        let re = Pattern::new("^error", Some("i")).unwrap();
        assert!(re.is_match("ERROR: x"));
        let re = Pattern::new("^b$", Some("m")).unwrap();
        assert!(re.is_match("a\nb\nc"));
        assert!(!Pattern::new("^b$", None).unwrap().is_match("a\nb\nc"));
    }

    #[test]
    fn lookaround_falls_back_to_backtracking() {
        let re = Pattern::new(r"^(?!ok).*done", None).unwrap();
        assert!(matches!(re, Pattern::Backtracking(_)));
        assert!(matches!(Pattern::new(r"^\d+ ok", None).unwrap(), Pattern::Ascii(_)));
        assert!(matches!(Pattern::new("^━+$", None).unwrap(), Pattern::Linear(_)));
        assert!(re.is_match("build done"));
        assert!(!re.is_match("ok done"));
    }

    #[test]
    fn invalid_regex_disables_that_pattern_only() {
        let mut problems = Vec::new();
        let set = PatternSet::new(
            "x/y",
            "filters.skipPatterns",
            &["^Compiling".to_owned(), "(unclosed".to_owned(), "(?<=a)b".to_owned()],
            &mut problems,
        );
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].field, "filters.skipPatterns[1]");
        assert!(problems[0].to_string().contains("that pattern is disabled"));
        assert!(set.is_match("Compiling foo"));
        assert!(set.is_match("ab"));
        assert!(!set.is_match("cb"));
    }

    #[test]
    fn non_ascii_patterns_keep_unicode_semantics() {
        // In a byte regex `━+` would repeat the character's last byte only.
        assert!(Pattern::new("^━+$", None).unwrap().is_match("━━━━"));
        let mut problems = Vec::new();
        let set =
            PatternSet::new("x/y", "f", &["^━+$".to_owned(), "^ok$".to_owned()], &mut problems);
        assert!(set.is_match("━━━") && set.is_match("ok") && !set.is_match("nope"));
        // Digits and word characters are ASCII, as in JavaScript.
        assert!(!Pattern::new(r"^\d$", None).unwrap().is_match("٣"));
    }

    #[test]
    fn line_kinds_report_every_kind_a_line_matches() {
        let mut problems = Vec::new();
        let skip = vec![r"^test .* ok$".to_owned(), "(bad".to_owned()];
        let keep = vec!["^test".to_owned()];
        let evidence = vec!["FAILED$".to_owned(), "━━ FAIL".to_owned(), r"(?<!x)panic".to_owned()];
        let kinds = LineKinds::new(
            "x/y",
            [
                ("filters.skipPatterns", &skip),
                ("filters.keepPatterns", &keep),
                ("evidence", &evidence),
            ],
            &mut problems,
        );
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].field, "filters.skipPatterns[1]");
        let mut scratch = kinds.scratch();
        let budget = Budget::unlimited();
        assert_eq!(kinds.kinds("test a ... ok", &mut scratch, &budget), SKIP | KEEP);
        assert_eq!(kinds.kinds("test b ... FAILED", &mut scratch, &budget), KEEP | EVIDENCE);
        assert_eq!(kinds.kinds("━━ FAIL here", &mut scratch, &budget), EVIDENCE);
        assert_eq!(kinds.kinds("a panic", &mut scratch, &budget), EVIDENCE);
        assert_eq!(kinds.kinds("nothing", &mut scratch, &budget), 0);
        assert!(kinds.has(SKIP) && kinds.has(KEEP) && kinds.has(EVIDENCE));
    }

    #[test]
    fn js_style_escapes_compile() {
        // Escaped slashes and hyphens are common in JavaScript-authored rules.
        assert!(Pattern::new(r"^src\/.*\.ts$", None).unwrap().is_match("src/a.ts"));
        assert!(Pattern::new(r"[\w\-]+", None).is_ok());
    }

    #[test]
    fn a_prefilter_narrows_the_lists_and_kinds_stay_the_same() {
        let rules = crate::rules::RuleSet::builtin();
        let rule = &rules.rules().iter().find(|r| r.rule.id == "tests/cargo-test").unwrap().rule;
        let compiled = CompiledRule::compile(rule);
        let mut text = String::from("   Compiling x v0.1.0\nrunning 900 tests\n");
        for i in 0..900 {
            text.push_str(&format!("test m::case_{i} ... ok  \n"));
        }
        text.push_str("test m::bad ... FAILED\n\nfailures:\n");
        let lines = crate::reduce::split_lines(&text);
        let among = compiled.lines.candidates(&text, &lines);
        // Every `... ok` line holds the skip list's literals: that list is not narrowed.
        assert!(among.iter().all(|k| k & SKIP != 0));
        // Only the lines that could be evidence are walked by the evidence list.
        let walked = among.iter().filter(|k| *k & EVIDENCE != 0).count();
        assert!(walked <= 4, "{walked} lines walked by the evidence list");
        let (budget, mut scratch) = (Budget::unlimited(), compiled.lines.scratch());
        for (line, among) in lines.iter().zip(among) {
            assert_eq!(
                compiled.lines.kinds_among(line, among, &mut scratch, &budget),
                compiled.lines.kinds(line, &mut scratch, &budget),
                "{line:?}"
            );
        }
        // Lines that are not the text's own are not narrowed.
        assert!(compiled.lines.candidates("", &lines).iter().all(|k| *k == SKIP | KEEP | EVIDENCE));
    }
}
