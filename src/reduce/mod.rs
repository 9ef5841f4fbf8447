//! The reduction engine: from a command's raw output to the rendition an agent reads.
//!
//! ```text
//! raw bytes ─▶ terminal::render ─▶ lines ─▶ rules::select ─▶ evidence::classify
//!   ─▶ matchOutput / skip / keep / dedupe / counters / onEmpty / window (a lossy candidate)
//!   ─▶ gate::judge (evidence invariant, ratio, bytes, tokens) ─▶ Reduction
//! ```
//!
//! Pure from end to end: no environment, no files, no printing (STYLE.md 2.1). The caller
//! passes the artifact reference the notice names and prints the result. [`run`] is the one
//! `catch_unwind` boundary: a panic anywhere in here yields the original text.

pub mod binary;
pub mod data;
pub mod delta;
pub mod density;
pub mod evidence;
pub mod gate;
pub(crate) mod patterns;
pub mod shape;
pub mod stream;
pub mod terminal;
pub mod tokens;
pub mod window;

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::panic::{self, AssertUnwindSafe};

use serde::Serialize;

pub use gate::{Limits, Rejection};
pub use window::Omitted;

use crate::rules::compiled::{
    Budget, CompiledRule, Compiler, EVIDENCE, Exhausted, KEEP, RULE_SIZE_LIMIT, SKIP,
};
use crate::rules::schema::{CounterSource, Kind};
use crate::rules::select::{self, Query};
use crate::rules::{Layer, LoadedRule, RuleSet, printable, printable_path};
use window::{Drop, Plan};

/// What to reduce.
#[derive(Clone, Copy, Debug, Default)]
pub struct Input<'a> {
    /// The command's output as captured: arbitrary bytes, ANSI, `\r` redraws and all.
    pub raw: &'a [u8],
    /// The argv as run, if known.
    pub argv: &'a [String],
    /// The command as a shell string, if known (used when `argv` is empty).
    pub command: Option<&'a str>,
    /// The harness's tool name.
    pub tool_name: Option<&'a str>,
    /// The command's exit code.
    pub exit_code: Option<i64>,
    /// The width of the terminal the output was written to, if it was a PTY: the renderer
    /// wraps at it as the terminal did (progress bars that pad to the width rely on it).
    pub cols: Option<u16>,
}

/// Where the original is kept, for the closing notice.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ArtifactRef {
    /// The artifact id (`tj expand ID`).
    pub id: String,
    /// The spill file.
    pub path: String,
}

/// How to reduce.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options<'a> {
    /// Gate thresholds.
    pub limits: Limits,
    /// Emit the whole original (ANSI stripped), never a reduction.
    pub raw: bool,
    /// The stored original. Without one, nothing lossy is adopted: a reduction that cannot
    /// be undone would be a deletion.
    pub artifact: Option<&'a ArtifactRef>,
    /// The reader already has the exit code (a harness shows it with the tool's result, or
    /// the caller of `tj reduce` passed it in): no `[tj] exit N` line. The code still
    /// decides what is evidence.
    pub hide_exit: bool,
    /// The previous run of the same command in the same session and place, if its output
    /// differed: an adopted rendition leads with what changed since ([`delta`]).
    pub previous: Option<&'a delta::Previous>,
}

impl Options<'_> {
    /// The exit code as the rendition shows it: `None` when [`Options::hide_exit`].
    pub fn shown_exit(&self, exit_code: Option<i64>) -> Option<i64> {
        if self.hide_exit { None } else { exit_code }
    }
}

/// Why the original went out.
#[derive(Clone, Debug, PartialEq)]
pub enum Passthrough {
    /// `--raw` / `TJ_RAW`.
    Raw,
    /// The rule is `verbatim`: data a developer reads.
    Verbatim,
    /// No rule matched and the output is dense (ρ at or above the threshold).
    Dense(f64),
    /// The original is not stored, so nothing may be dropped.
    NotStored,
    /// The gate rejected the candidate.
    Rejected(Rejection),
    /// The reducer panicked; the original went out (fail open).
    Panicked,
    /// A data output (a listing, search, query, log) within the data budget: every line is
    /// kept, and no lossless re-encoding paid.
    Data {
        /// The original's estimated tokens.
        tokens: usize,
        /// The data budget.
        budget: usize,
    },
    /// A user or project rule used up the run's budget (see `rules::compiled`): the reducer
    /// gave up on it.
    OverBudget {
        /// The rule's id.
        rule: String,
        /// What ran out.
        what: Exhausted,
    },
}

/// The result of a reduction.
#[derive(Clone, Debug)]
pub struct Reduction {
    /// The rendition text, as emitted.
    pub text: String,
    /// The selected rule's id.
    pub rule: String,
    /// The selected rule's family.
    pub family: String,
    /// The selected rule's layer.
    pub layer: Layer,
    /// True when the fallback was selected.
    pub fallback: bool,
    /// The command as rules saw it.
    pub command: String,
    /// Counter results, in rule order.
    pub facts: Vec<(String, usize)>,
    /// `None` when a reduction was adopted; otherwise why the original went out.
    pub passthrough: Option<Passthrough>,
    /// True when the adopted rendition dropped nothing.
    pub lossless: bool,
    /// The shape reducer that made the adopted rendition, if one did (`json-table`,
    /// `ndjson-table`, `json-elided`, `table`, `log`, `search-hits`).
    pub shape: Option<&'static str>,
    /// What was omitted.
    pub omitted: Omitted,
    /// The exit code.
    pub exit_code: Option<i64>,
    /// Bytes of raw input.
    pub raw_bytes: usize,
    /// Characters of the raw input, decoded as text (escapes and redraws included).
    pub raw_chars: usize,
    /// Characters of the rendition.
    pub reduced_chars: usize,
    /// Estimated tokens of the raw input, decoded as text.
    pub raw_tokens: usize,
    /// Estimated tokens of the rendition.
    pub reduced_tokens: usize,
    /// Lines of the rendered original.
    pub lines: usize,
    /// The stored original, if any.
    pub artifact: Option<ArtifactRef>,
    /// Problems with the selected rule (invalid regexes, each disabled), for one warning each.
    pub problems: Vec<String>,
    /// Bytes of the output that were not UTF-8 and were replaced in the text
    /// ([`binary::compact`]): the text is then not the original, however whole it looks.
    pub replaced_bytes: usize,
}

impl Reduction {
    /// Returns true if and only if a reduction (not the original) was adopted.
    pub fn is_reduced(&self) -> bool {
        self.passthrough.is_none()
    }
}

/// Reduces `input`, never panicking: a panic inside the engine is caught and the original
/// goes out (DESIGN.md "Failure policy"). The caller warns once when
/// `passthrough == Some(Passthrough::Panicked)`.
///
/// Binary output becomes a one-line description, and the bytes of text output that are not
/// UTF-8 are compacted first, so that the text is never larger than the output
/// ([`binary`]).
pub fn run(input: &Input<'_>, rules: &RuleSet, opts: &Options<'_>) -> Reduction {
    if !opts.raw
        && let Some(found) = binary::detect(input.raw)
        && let Some(described) = binary::rendition(input, rules, opts, &found)
    {
        return described;
    }
    let (raw, replaced) = binary::compact(input.raw);
    let compacted = Input { raw: &raw, ..*input };
    let mut out = match panic::catch_unwind(AssertUnwindSafe(|| reduce(&compacted, rules, opts))) {
        Ok(reduction) => reduction,
        Err(_) => emergency_original(&compacted, opts),
    };
    out.raw_bytes = input.raw.len();
    out.replaced_bytes = replaced;
    let note = (replaced > 0).then(|| binary::note(replaced, opts.artifact));
    // Never worse: the note goes out only when the rendition stays smaller than the output.
    if let Some(note) = note.filter(|n| out.text.len() + 1 + n.len() <= input.raw.len()) {
        out.text.push('\n');
        out.text.push_str(&note);
    }
    out
}

/// The fail-open result: the raw text, decoded lossily, with only ANSI escapes removed by
/// the simplest means available (no renderer: it may be what panicked).
fn emergency_original(input: &Input<'_>, opts: &Options<'_>) -> Reduction {
    let text = String::from_utf8_lossy(input.raw).into_owned();
    let chars = text.chars().count();
    let tokens = tokens::estimate(&text);
    Reduction {
        rule: String::new(),
        family: String::new(),
        layer: Layer::Builtin,
        fallback: true,
        command: input.command.map(str::to_owned).unwrap_or_else(|| input.argv.join(" ")),
        facts: Vec::new(),
        passthrough: Some(Passthrough::Panicked),
        lossless: true,
        shape: None,
        omitted: Omitted::default(),
        exit_code: input.exit_code,
        raw_bytes: input.raw.len(),
        raw_chars: chars,
        reduced_chars: chars,
        raw_tokens: tokens,
        reduced_tokens: tokens,
        lines: text.lines().count(),
        artifact: opts.artifact.cloned(),
        problems: Vec::new(),
        replaced_bytes: 0,
        text,
    }
}

/// The text the agent would read for `raw`: what the terminal showed ([`terminal::render`]),
/// unless cursor moves made the screen hold more text than the bytes decode to, in which case
/// escapes are only stripped ([`terminal::strip`]): a rendition is never larger than its
/// input. `tj expand` and the line numbers in omission markers use this same text.
pub fn screen(raw: &[u8]) -> Cow<'_, str> {
    screen_width(raw, None)
}

/// [`screen`] for output written to a terminal `cols` wide: lines wrap at the width as they
/// did on screen (`None`: no wrapping).
pub fn screen_width(raw: &[u8], cols: Option<u16>) -> Cow<'_, str> {
    let rendered = terminal::render_width(raw, cols);
    if let Cow::Owned(text) = &rendered
        && text.len() > raw.len()
        && text.len() > String::from_utf8_lossy(raw).len()
    {
        return Cow::Owned(terminal::strip(raw));
    }
    rendered
}

/// Splits rendered text into lines with trailing whitespace removed: the numbering every
/// marker and `tj expand --lines` use.
pub fn split_lines(rendered: &str) -> Vec<&str> {
    // No line, and no first use of memchr's counter, which probes the processor (`cpuid`:
    // a trap to the hypervisor on a virtual machine) for a command that printed nothing.
    if rendered.is_empty() {
        return Vec::new();
    }
    // What `lines_of` gives, in a vector sized once: this runs on every output.
    let newlines = memchr::memchr_iter(b'\n', rendered.as_bytes()).count();
    let mut lines = Vec::with_capacity(newlines + 1);
    lines.extend(lines_of(rendered));
    lines
}

/// The lines [`split_lines`] collects, as an iterator (no vector to hold). The line ends
/// come from `memchr`: `str::split` looks for each `\n` afresh, at a cost per line that
/// every output pays, and an original passed through whole pays several times.
fn lines_of(rendered: &str) -> impl Iterator<Item = &str> + Clone {
    let body = rendered.strip_suffix('\n').unwrap_or(rendered);
    // An empty body is no line at all, not one empty line.
    Lines { body, start: 0, done: body.is_empty() }
}

/// The iterator [`lines_of`] returns: the line from `start` to the next `\n` of `body`, or
/// to its end, trailing white space trimmed.
#[derive(Clone)]
struct Lines<'a> {
    body: &'a str,
    start: usize,
    done: bool,
}

impl<'a> Iterator for Lines<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.done {
            return None;
        }
        let rest = &self.body[self.start..];
        // A `\n` is one byte of its own, so both ends are character boundaries.
        let line = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(at) => {
                self.start += at + 1;
                &rest[..at]
            }
            None => {
                self.done = true;
                rest
            }
        };
        Some(line.trim_end())
    }
}

/// The lines between the first and the last non-blank one (blank edges are never shown).
fn nonblank<'a, I: Iterator<Item = &'a str> + Clone>(
    lines: I,
) -> impl Iterator<Item = &'a str> + Clone {
    let mut span: Option<(usize, usize)> = None;
    for (i, line) in lines.clone().enumerate() {
        if !line.is_empty() {
            span = Some((span.map_or(i, |(start, _)| start), i + 1));
        }
    }
    let (start, end) = span.unwrap_or((0, 0));
    lines.skip(start).take(end - start)
}

/// Reduces `input` with `rules`. Deterministic: the same input gives the same rendition,
/// byte for byte.
///
/// ```
/// use tj::reduce::{reduce, Input, Options, ArtifactRef};
/// use tj::rules::RuleSet;
///
/// let mut raw = String::new();
/// for i in 0..300 { raw.push_str(&format!("test m::case_{i:03} ... ok\n")); }
/// raw.push_str("test m::broken ... FAILED\n\ntest result: FAILED. 300 passed; 1 failed\n");
/// let argv = vec!["cargo".to_string(), "test".to_string()];
/// let artifact = ArtifactRef { id: "0123456789ab".into(), path: "/tmp/x.log".into() };
/// let opts = Options { artifact: Some(&artifact), ..Options::default() };
/// let out = reduce(&Input { raw: raw.as_bytes(), argv: &argv, exit_code: Some(101), ..Input::default() },
///                  &RuleSet::builtin(), &opts);
/// assert!(out.is_reduced());
/// assert!(out.text.contains("test m::broken ... FAILED"));
/// assert!(!out.text.contains("case_150"));
/// ```
pub fn reduce(input: &Input<'_>, rules: &RuleSet, opts: &Options<'_>) -> Reduction {
    reduce_within(input, rules, opts, &Budget::for_input(input.raw.len()))
}

/// [`reduce`] with user and project rules held to `budget` (see `rules::compiled`): when it
/// runs out, the reducer gives up and the original goes out
/// ([`Passthrough::OverBudget`]), with one problem naming the rule. Builtin rules are never
/// metered, so their reductions stay deterministic under any budget.
pub fn reduce_within(
    input: &Input<'_>,
    rules: &RuleSet,
    opts: &Options<'_>,
    budget: &Budget,
) -> Reduction {
    let rendered = screen_width(input.raw, input.cols);
    match pipeline(input, rules, opts, budget, &rendered) {
        Ending::Adopted(mut out) => {
            if let Some(previous) = opts.previous {
                lead_with_delta(&mut out, previous, &rendered, opts, input.exit_code);
            }
            out
        }
        // The pipeline's lines are freed by now: the original is built from the rendered
        // text (memory: DESIGN.md asks for a reduction in under 1.2× its input).
        Ending::Original(mut out) => {
            out.text = original_text(&rendered, opts.shown_exit(input.exit_code));
            out
        }
    }
}

/// Leads an adopted rendition with what changed since the previous run ([`delta`]), if
/// either run named a failure and the longer rendition still passes the gate. The header
/// only adds lines, so the evidence the rendition keeps is kept; the gate judges its size
/// against the original as it judged the rendition.
fn lead_with_delta(
    out: &mut Reduction,
    previous: &delta::Previous,
    rendered: &str,
    opts: &Options<'_>,
    exit_code: Option<i64>,
) {
    let now = delta::failures(&out.text);
    let found = delta::compare(&previous.failures, &now);
    if found.is_empty() {
        return;
    }
    let text = format!("{}{}", found.header(previous), out.text);
    let (original, _) = original_size(&split_lines(rendered), opts.shown_exit(exit_code));
    let candidate = gate::Candidate { text, lossless: out.lossless };
    if let Ok(adopted) = gate::judge(original, &HashSet::new(), candidate, &opts.limits) {
        let (omitted, shape) = (out.omitted, out.shape);
        adopt(out, adopted, omitted, shape);
    }
}

/// How the pipeline ended.
enum Ending {
    /// A rendition was adopted; the reduction is complete.
    Adopted(Reduction),
    /// The original goes out, for the reason in `passthrough`; its text is still to build.
    Original(Reduction),
}

/// What the steps after selection share.
struct Run<'a> {
    input: &'a Input<'a>,
    /// The rendered text the lines were cut from ([`split_lines`]): the line scans search
    /// it in place.
    text: &'a str,
    opts: &'a Options<'a>,
    budget: &'a Budget,
    /// The size of the original as it would go out.
    original_size: gate::Size,
    /// The exit code as the rendition shows it ([`Options::shown_exit`]).
    shown_exit: Option<i64>,
    /// Whether the output is a verdict or data ([`data::kind_of`]).
    kind: Kind,
}

impl Run<'_> {
    /// The data budget, for a data output; `None` for a diagnostic one.
    fn data_budget(&self) -> Option<usize> {
        (self.kind == Kind::Data).then_some(self.opts.limits.data_budget)
    }
}

/// The steps from rendered text to an ending: select, the lossless JSON shapes, settle the
/// rule, the early passthroughs, then the line pipeline ([`line_pipeline`]).
fn pipeline(
    input: &Input<'_>,
    rules: &RuleSet,
    opts: &Options<'_>,
    budget: &Budget,
    rendered: &str,
) -> Ending {
    let lines = split_lines(rendered);
    let query = Query {
        argv: input.argv,
        command: input.command,
        tool_name: input.tool_name,
        exit_code: input.exit_code,
    };
    let selection = select::select_within(rules, &query, Some(&lines), budget);
    let (mut out, original_size) = start(input, opts, &selection, &lines);
    if budget.exhausted().is_some() {
        return give_up(out, budget);
    }

    // Lossless shapes first: a JSON document or JSON Lines re-encoded as a table drops
    // nothing, so it applies under every rule, verbatim ones included, and needs no stored
    // original (DESIGN.md "Reduction", step 4). The gate still asks that it pays. The
    // document is joined once for both JSON shapes and freed before the line pipeline.
    let json = (!opts.raw && opens_json(&lines)).then(|| trimmed_join(&lines));
    if let Some(body) = &json
        && let Some((text, shape)) =
            lossless_json(body, opts.shown_exit(input.exit_code), opts.limits.data_budget)
        && let Ok(adopted) = gate::judge(
            original_size,
            &HashSet::new(),
            gate::Candidate { text, lossless: true },
            &opts.limits,
        )
    {
        adopt(&mut out, adopted, Omitted::default(), Some(shape));
        return Ending::Adopted(out);
    }

    let Some((loaded, compiled)) = settle(&selection, rules, opts, budget, &mut out) else {
        return give_up(out, budget);
    };
    let kind = data::kind_of(&loaded.rule, out.fallback, input.exit_code);
    let (why_not, dense) =
        passthrough_reason(&loaded.rule, opts, &out, &lines, json.is_some(), kind, original_size);
    if let Some(why) = why_not {
        out.passthrough = Some(why);
        return Ending::Original(out);
    }
    let run = Run {
        input,
        text: rendered,
        opts,
        budget,
        original_size,
        shown_exit: opts.shown_exit(input.exit_code),
        kind,
    };
    line_pipeline(&run, out, &lines, loaded, compiled, json, dense)
}

/// Classifies the lines, fixes the evidence set, lets a data output within the data budget
/// end whole or losslessly re-encoded ([`data`]), then tries the lossy candidates in turn:
/// irregular JSON elided by its shape, then the rule's filters, shapes and window.
fn line_pipeline(
    run: &Run<'_>,
    mut out: Reduction,
    lines: &[&str],
    loaded: &LoadedRule,
    compiled: Option<CompiledRule>,
    json: Option<String>,
    dense: Option<f64>,
) -> Ending {
    let (rule, budget, exit_code) = (&loaded.rule, run.budget, run.input.exit_code);
    let metered = loaded.layer != Layer::Builtin;
    let classified = classify(run, lines, rule, compiled, metered, &mut out);
    if budget.exhausted().is_some() {
        return give_up(out, budget);
    }
    let distinct = match gate::evidence_lines(lines, &classified.evidence) {
        Ok(set) => set,
        Err(rejection) => {
            out.passthrough = Some(Passthrough::Rejected(rejection));
            return Ending::Original(out);
        }
    };

    if run.kind == Kind::Data
        && let Some(within) = data::within_budget(run, lines, &classified, &distinct)
    {
        return within_budget(out, within);
    }

    let artifact = run.opts.artifact.map(|a| (a.id.as_str(), a.path.as_str()));
    let data_budget = run.data_budget();
    // JSON too irregular to tabulate: elided structurally, if that keeps every evidence line;
    // otherwise the line pipeline below has its turn.
    if let Some(body) = &json
        && let Some(text) = elided_json(body, &distinct, run.shown_exit, artifact, data_budget)
        && let Ok(adopted) = gate::judge(
            run.original_size,
            &distinct,
            gate::Candidate { text, lossless: false },
            &run.opts.limits,
        )
    {
        adopt(&mut out, adopted, Omitted::default(), Some("json-elided"));
        return Ending::Adopted(out);
    }
    drop(json);
    // Dense output no rule knows goes out whole, unless it is a log: a log's lines differ
    // in timestamps and ids, which is what the log fold is for, and its alarms are evidence.
    if let Some(rho) = dense
        && classified.shape.as_deref() != Some("log")
    {
        out.passthrough = Some(Passthrough::Dense(rho));
        return Ending::Original(out);
    }

    let (body, facts, omitted, shape) = {
        let _meter = metered.then(|| budget.meter());
        candidate_body(lines, rule, &classified, exit_code, budget, data_budget)
    };
    if budget.exhausted().is_some() {
        return give_up(out, budget);
    }
    out.facts = facts;
    let mut text = format_text(run.shown_exit, &out.facts, &body, &omitted, lines.len(), artifact);
    if data_budget.is_some() && omitted.window + omitted.similar > 0 {
        push_search_hint(&mut text, artifact);
    }
    let candidate =
        gate::Candidate { text, lossless: omitted.lines() == 0 && omitted.trimmed_lines == 0 };
    match gate::judge(run.original_size, &distinct, candidate, &run.opts.limits) {
        Ok(adopted) => {
            adopt(&mut out, adopted, omitted, shape);
            Ending::Adopted(out)
        }
        Err(rejection) => {
            out.passthrough = Some(Passthrough::Rejected(rejection));
            Ending::Original(out)
        }
    }
}

/// How a data output within the data budget ends ([`data::within_budget`]): re-encoded or
/// kept whole.
fn within_budget(mut out: Reduction, within: data::Within) -> Ending {
    match within {
        data::Within::Adopted { adopted, omitted, shape, facts } => {
            out.facts = facts;
            adopt(&mut out, adopted, omitted, shape);
            Ending::Adopted(out)
        }
        data::Within::Whole(why) => {
            out.passthrough = Some(why);
            Ending::Original(out)
        }
    }
}

/// The first step: the reduction's skeleton (the selected rule, the raw and original sizes;
/// the original's text is only built if it is what goes out) and the original's size.
fn start(
    input: &Input<'_>,
    opts: &Options<'_>,
    selection: &select::Selection<'_>,
    lines: &[&str],
) -> (Reduction, gate::Size) {
    let rule = &selection.rule.rule;
    // Savings are reported against what the agent would read with no tj at all: the raw
    // bytes as text, escapes and redraws included (tokenjuice strips ANSI first; we count
    // what an unwrapped tool call really returns).
    let (raw_chars, raw_tokens) = {
        let mut tally = tokens::Tally::default();
        // `from_utf8` first: valid input is the rule, and its check is several times
        // faster than the lossy decoder's chunk iterator.
        match std::str::from_utf8(input.raw) {
            Ok(text) => tally.add(text),
            Err(_) => tally.add(&String::from_utf8_lossy(input.raw)),
        }
        (tally.chars(), tally.tokens())
    };
    // The original rendition is only built if it is what goes out (memory: DESIGN.md asks
    // for a reduction in under 1.2× its input).
    let (original_size, original_chars) = original_size(lines, opts.shown_exit(input.exit_code));
    let out = Reduction {
        text: String::new(),
        rule: rule.id.clone(),
        family: rule.family.clone(),
        layer: selection.rule.layer,
        fallback: selection.is_fallback(),
        command: selection.identity.command.clone(),
        facts: Vec::new(),
        passthrough: None,
        lossless: false,
        shape: None,
        omitted: Omitted::default(),
        exit_code: input.exit_code,
        raw_bytes: input.raw.len(),
        raw_chars,
        reduced_chars: original_chars,
        raw_tokens,
        reduced_tokens: original_size.tokens,
        lines: lines.len(),
        artifact: opts.artifact.cloned(),
        problems: Vec::new(),
        replaced_bytes: 0,
    };
    (out, original_size)
}

/// Settles the rule to reduce with: the selected one, unless it is a user or project rule
/// whose patterns are over the compile limits, in which case it is dropped (one problem
/// each) and the next matching rule is tried, down to the fallback. Untrusted rules are
/// compiled here, under `budget`, when the line pipeline will need them; builtin ones
/// later, as before. `None` when the budget ran out, or every candidate was dropped.
fn settle<'r>(
    selection: &select::Selection<'r>,
    rules: &'r RuleSet,
    opts: &Options<'_>,
    budget: &Budget,
    out: &mut Reduction,
) -> Option<(&'r LoadedRule, Option<CompiledRule>)> {
    let fallback = rules.fallback();
    let runners_up = selection.runners_up.iter().map(|(r, _)| *r);
    let last = (!selection.is_fallback()).then_some(fallback);
    for loaded in std::iter::once(selection.rule).chain(runners_up).chain(last) {
        if !std::ptr::eq(loaded, selection.rule) {
            out.rule.clone_from(&loaded.rule.id);
            out.family.clone_from(&loaded.rule.family);
            out.layer = loaded.layer;
            out.fallback = std::ptr::eq(loaded, fallback);
        }
        if loaded.layer == Layer::Builtin
            || loaded.rule.verbatim
            || opts.raw
            || opts.artifact.is_none()
        {
            return Some((loaded, None));
        }
        let compiled = {
            let _meter = budget.meter();
            CompiledRule::compile_with(&loaded.rule, &Compiler::untrusted(budget))
        };
        if !compiled.over_limit {
            if budget.check() {
                return Some((loaded, Some(compiled)));
            }
            budget.blame(&loaded.rule.id);
            return None;
        }
        out.problems.push(format!(
            "{} rule `{}` ({}): its patterns are over tj's compile limit ({} MiB); the rule is skipped",
            loaded.layer,
            printable(&loaded.rule.id),
            printable_path(&loaded.path),
            RULE_SIZE_LIMIT >> 20
        ));
        if budget.exhausted().is_some() {
            budget.blame(&loaded.rule.id);
            return None;
        }
    }
    None
}

/// Why the original goes out before any line is looked at, if it does; and, for dense JSON
/// or data under the fallback, its density (JSON is still elided by its shape, data still
/// re-encoded within the data budget; only the lossy line candidate is denied to them).
fn passthrough_reason(
    rule: &crate::rules::Rule,
    opts: &Options<'_>,
    out: &Reduction,
    lines: &[&str],
    json: bool,
    kind: Kind,
    original: gate::Size,
) -> (Option<Passthrough>, Option<f64>) {
    if opts.raw {
        (Some(Passthrough::Raw), None)
    } else if rule.verbatim {
        (Some(Passthrough::Verbatim), None)
    } else if opts.artifact.is_none() {
        (Some(Passthrough::NotStored), None)
    } else if out.fallback {
        let rho = density::density(lines);
        if rho < opts.limits.density_threshold {
            (None, None)
        } else if json || (kind == Kind::Data && original.bytes > opts.limits.min_saving_bytes) {
            // Still elided by its shape, or re-encoded losslessly within the data budget.
            // Output no larger than the least a rendition must save can never be adopted:
            // it goes out at once, with nothing classified (an empty `true` costs nothing).
            (None, Some(rho))
        } else {
            (Some(Passthrough::Dense(rho)), None)
        }
    } else {
        (None, None)
    }
}

/// What the line patterns and the shapes found, before the evidence set is fixed.
struct Classified {
    compiled: CompiledRule,
    /// Per line: evidence (the built-in classifier, the rule's evidence patterns, the
    /// shapes' flagged rows).
    evidence: Vec<bool>,
    /// Per line: the [`SKIP`], [`KEEP`] and [`EVIDENCE`] bits of the rule's patterns (empty
    /// when it has none).
    kinds: Vec<u8>,
    table: Option<shape::table::Layout>,
    diagnostics: Option<shape::diagnostics::Sampled>,
    /// The shape the lossy candidate uses: the rule's, or for the fallback `log` when the
    /// output looks like a log (a uniform log folds whatever command wrote it).
    shape: Option<String>,
}

/// Compiles the rule (builtin rules only: untrusted ones come compiled from [`settle`]),
/// classifies every line, and lets the `table` and `diagnostics` shapes adjust the evidence.
/// A `metered` rule's line pass is timed against `budget` and stops when it runs out.
fn classify(
    run: &Run<'_>,
    lines: &[&str],
    rule: &crate::rules::Rule,
    compiled: Option<CompiledRule>,
    metered: bool,
    out: &mut Reduction,
) -> Classified {
    let (text, budget, kind) = (run.text, run.budget, run.kind);
    let compiled = compiled.unwrap_or_else(|| CompiledRule::compile(rule));
    out.problems.extend(compiled.problems.iter().map(ToString::to_string));
    let mut evidence = evidence::classify_in(text, lines);
    // On a failing run, any line naming a failure is kept, whatever its dialect.
    if out.exit_code.is_some_and(|code| code != 0) {
        evidence::mark_failure_words_in(text, lines, &mut evidence);
    }
    // In data, whatever the exit code, alarms are evidence: an HTTP status of 400 or more,
    // a WARN/ERROR/FATAL line, a failed state in a table.
    // A `table` rule's shape flags its table's rows below; the alarms' own table pass
    // would repeat that detection.
    if kind == Kind::Data {
        if rule.shape.as_deref() == Some("table") {
            evidence::mark_line_alarms_in(text, lines, &mut evidence);
        } else {
            evidence::mark_alarms_in(text, lines, &mut evidence);
        }
    }
    // One pass of the rule's line patterns: skip, keep and evidence bits per line.
    let kinds = if compiled.lines.has(SKIP | KEEP | EVIDENCE) {
        let _meter = metered.then(|| budget.meter());
        let mut scratch = compiled.lines.scratch();
        // Lines whose lists' prefilters found none of their literals skip those lists.
        let mut kinds = compiled.lines.candidates(text, lines);
        let mut classified = kinds.len();
        for (k, line) in lines.iter().enumerate() {
            kinds[k] = compiled.lines.kinds_among(line, kinds[k], &mut scratch, budget);
            if metered && !budget.check() {
                classified = k + 1;
                break;
            }
        }
        kinds.truncate(classified);
        kinds
    } else {
        Vec::new()
    };
    if compiled.lines.has(EVIDENCE) {
        for (flag, kind) in evidence.iter_mut().zip(&kinds) {
            *flag = *flag || kind & EVIDENCE != 0;
        }
    }
    // The `table` shape's flagged rows (a bad status, a restart count) are evidence: the
    // gate then holds the sampling to keeping them.
    let table = (rule.shape.as_deref() == Some("table")).then(|| shape::table::detect(lines));
    let table = table.flatten();
    if let Some(layout) = &table {
        for i in shape::table::flagged(lines, layout) {
            evidence[i] = true;
        }
    }
    // The `diagnostics` shape: past its budget, items beyond the first few of each kind stop
    // being evidence; their kind's summary line accounts for them.
    let diagnostics = (rule.shape.as_deref() == Some("diagnostics"))
        .then(|| shape::diagnostics::sample(&shape::diagnostics::kinds(lines, &evidence)))
        .flatten();
    if let Some(sampled) = &diagnostics {
        for &i in &sampled.dropped {
            evidence[i] = false;
        }
    }
    let shape = rule
        .shape
        .clone()
        .or_else(|| (out.fallback && shape::log::looks_like_log(lines)).then(|| "log".to_owned()));
    Classified { compiled, evidence, kinds, table, diagnostics, shape }
}

/// The budget ran out: the original goes out, and one problem names the rule that was
/// being worked on and what ran out.
fn give_up(mut out: Reduction, budget: &Budget) -> Ending {
    let rule = budget.culprit().unwrap_or_else(|| out.rule.clone());
    let what = budget.exhausted().unwrap_or(Exhausted::Size);
    out.problems.push(format!(
        "rule `{}` was given up: {what}; the rendition is the original",
        printable(&rule)
    ));
    out.passthrough = Some(Passthrough::OverBudget { rule, what });
    out.facts = Vec::new();
    Ending::Original(out)
}

/// Records an adopted candidate in `out`.
fn adopt(
    out: &mut Reduction,
    adopted: gate::Adopted,
    omitted: Omitted,
    shape: Option<&'static str>,
) {
    let candidate = adopted.into_candidate();
    out.lossless = candidate.lossless;
    out.omitted = omitted;
    out.shape = shape;
    out.reduced_chars = candidate.text.chars().count();
    out.reduced_tokens = tokens::estimate(&candidate.text);
    out.text = candidate.text;
}

/// The first non-blank line opens a JSON object or array.
fn opens_json(lines: &[&str]) -> bool {
    lines
        .iter()
        .find(|l| !l.trim_start().is_empty())
        .is_some_and(|l| shape::json_table::looks_like_json(l))
}

/// `body` (the output, blank edges trimmed) re-encoded losslessly, if it is a JSON document
/// or JSON Lines of one shape (a table) or a pretty-printed document (the compact form):
/// the rendition text and the shape's name.
fn lossless_json(
    body: &str,
    exit_code: Option<i64>,
    data_budget: usize,
) -> Option<(String, &'static str)> {
    // A table where one fits (JSON Lines only when no document does); the compact form of
    // the document when it is smaller still and within the data budget. Past the budget, a
    // document the compact form only shortens by a third or so is better elided.
    let table = match shape::json_table::encode(body) {
        Some(table) => Some((table.text, "json-table")),
        None => shape::ndjson::encode(body).map(|t| (t.text, "ndjson-table")),
    };
    // The compact form is at best about two fifths of the document: one further past the
    // budget cannot fit, and is not encoded at all.
    let reachable = tokens::estimate(body) <= data_budget.saturating_mul(5) / 2;
    let compact = reachable
        .then(|| shape::compact_json::encode(body))
        .flatten()
        .filter(|text| tokens::estimate(text) <= data_budget)
        .map(|text| (text, "compact-json"));
    let (table, shape) = match (table, compact) {
        (Some(t), Some(c)) if tokens::estimate(&c.0) < tokens::estimate(&t.0) => c,
        (Some(t), _) => t,
        (None, c) => c?,
    };
    let mut text = String::with_capacity(table.len() + 24);
    push_exit_line(&mut text, exit_code);
    text.push_str(&table);
    Some((text, shape))
}

/// `body` as structurally elided JSON, if it is one JSON document: the rendition text.
/// Values on evidence lines, and strings that read like an error, are never elided.
fn elided_json(
    body: &str,
    evidence: &HashSet<&str>,
    exit_code: Option<i64>,
    artifact: Option<(&str, &str)>,
    data_budget: Option<usize>,
) -> Option<String> {
    let keep = |text: &str| evidence.contains(text.trim_end()) || json_value_matters(text);
    let defaults = shape::json_elide::Limits::default();
    let mut elided = shape::json_elide::elide(body, &defaults, &keep)?;
    // Data past its budget keeps as much as fits in it: the arrays' heads and tails and the
    // objects' first members grow by doubling while the elision stays within the budget.
    if let Some(budget) = data_budget {
        for factor in [2, 4, 8, 16, 32, 64, 128] {
            let limits = shape::json_elide::Limits {
                array_head: defaults.array_head * factor,
                array_tail: defaults.array_tail * factor,
                max_keys: defaults.max_keys * factor,
                ..defaults
            };
            match shape::json_elide::elide(body, &limits, &keep) {
                Some(wider) if tokens::estimate(&wider.text) <= budget => elided = wider,
                _ => break,
            }
        }
    }
    let mut text = String::with_capacity(elided.text.len() + 256);
    push_exit_line(&mut text, exit_code);
    text.push_str(&elided.text);
    let parts = elided.notes.len();
    let _ = write!(
        text,
        "\n[tj] JSON elided: {parts} {} omitted, each marked in place",
        if parts == 1 { "part" } else { "parts" }
    );
    if let Some((id, path)) = artifact {
        let _ = write!(text, " · full output: tj expand {id} ({path})");
    }
    if data_budget.is_some() {
        push_search_hint(&mut text, artifact);
    }
    Some(text)
}

/// Ends a data rendition that left records out with how to search them.
fn push_search_hint(text: &mut String, artifact: Option<(&str, &str)>) {
    if let Some((id, _)) = artifact {
        let _ = write!(text, " · search it: tj expand {id} --grep REGEX");
    }
}

/// Whether JSON elision must keep `text`: a member line as laid out (`"exitCode": 1,`, an
/// opening `"errors": [`) or a string's contents. A member matters when its *value* reads
/// like a failure, or when its key names one (`error`, `exitCode`, `restartCount`, …) and
/// its value is set (not null, false, zero or empty). Key words alone do not count:
/// `"errorCount": 0` and `"failureThreshold": 3` are settings, not failures.
fn json_value_matters(text: &str) -> bool {
    const FAILURE_KEYS: [&str; 16] = [
        "error",
        "errors",
        "err",
        "errormessage",
        "error_message",
        "exception",
        "failure",
        "failures",
        "failed",
        "fatal",
        "exitcode",
        "exit_code",
        "errorcount",
        "fatalerrorcount",
        "warningcount",
        "restartcount",
    ];
    let trimmed = text.trim();
    let Some((key, value)) = json_member(trimmed) else {
        return mentions_failure(trimmed);
    };
    let value = value.trim_end_matches(',').trim();
    let unset = matches!(value, "" | "null" | "false" | "\"\"" | "[]" | "{}")
        || value.parse::<f64>().is_ok_and(|n| n == 0.0);
    let key = key.to_ascii_lowercase();
    (!unset && FAILURE_KEYS.contains(&key.as_str()))
        || (value.starts_with('"') && mentions_failure(value))
}

/// `"key": value` as (key, value), for a member line of pretty-printed JSON.
fn json_member(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix('"')?;
    let end = rest.find("\":")?;
    Some((&rest[..end], &rest[end + 2..]))
}

/// Text that reads like a failure: an error, a refusal, a crash, a timeout.
fn mentions_failure(text: &str) -> bool {
    const WORDS: [&str; 17] = [
        "error",
        "fail",
        "exception",
        "fatal",
        "panic",
        "denied",
        "refused",
        "timeout",
        "timed out",
        "crash",
        "backoff",
        "oomkilled",
        "unhealthy",
        "unreachable",
        "invalid",
        "not found",
        "traceback",
    ];
    let lower = text.to_ascii_lowercase();
    WORDS.iter().any(|w| lower.contains(w))
}

/// Writes `[tj] exit N` and a newline when the command failed: the first line of every
/// rendition of a failing command, reduced or not.
fn push_exit_line(text: &mut String, exit_code: Option<i64>) {
    if let Some(code) = exit_code.filter(|c| *c != 0) {
        let _ = writeln!(text, "[tj] exit {code}");
    }
}

/// The size of [`original_text`] and its character count, without building it.
fn original_size(lines: &[&str], exit_code: Option<i64>) -> (gate::Size, usize) {
    let mut tally = tokens::Tally::default();
    let mut exit_line = String::new();
    push_exit_line(&mut exit_line, exit_code);
    tally.add(&exit_line);
    let mut empty = true;
    for (i, line) in nonblank(lines.iter().copied()).enumerate() {
        if i > 0 {
            tally.add("\n");
        }
        tally.add(line);
        empty = false;
    }
    if empty {
        tally.add("(no output)");
    }
    (gate::Size { bytes: tally.bytes, tokens: tally.tokens() }, tally.chars())
}

/// The original as the agent would get it unreduced: rendered, ANSI stripped, trailing
/// whitespace and blank edges removed, with the exit code first when it is not zero.
///
/// Built from the rendered text, not a line vector, so the caller can free its lines first.
fn original_text(rendered: &str, exit_code: Option<i64>) -> String {
    let body = nonblank(lines_of(rendered));
    let mut text = String::with_capacity(body.clone().map(|l| l.len() + 1).sum::<usize>() + 24);
    push_exit_line(&mut text, exit_code);
    let mut empty = true;
    for (i, line) in body.enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text.push_str(line);
        empty = false;
    }
    if empty {
        text.push_str("(no output)");
    }
    text
}

type Facts = Vec<(String, usize)>;

/// Builds the lossy candidate's body: tokenjuice's order (matchOutput, skip, keep, trim,
/// dedupe, counters, onEmpty, window), with evidence lines immune to every filter. An
/// untrusted rule's `matchOutput` and counters charge `budget` (the caller checks it).
fn candidate_body<'a>(
    lines: &[&'a str],
    rule: &crate::rules::Rule,
    classified: &Classified,
    exit_code: Option<i64>,
    budget: &Budget,
    data_budget: Option<usize>,
) -> (Vec<Cow<'a, str>>, Facts, Omitted, Option<&'static str>) {
    let Classified { compiled, evidence, .. } = classified;
    if let Some(message) = matched_output(lines, compiled, budget) {
        let omitted = Omitted { noise: lines.len(), ..Omitted::default() };
        return (vec![Cow::Owned(format!("[tj] {message}"))], Vec::new(), omitted, None);
    }
    let (mut plan, pre_keep) = filtered(lines, rule, classified);
    let facts = facts_of(lines, rule, pre_keep.as_ref().unwrap_or(&plan), compiled, budget);
    if plan.state.iter().all(Option::is_some)
        && let Some(message) = &rule.on_empty
    {
        let (mut body, omitted) = plan.render(lines, evidence);
        body.retain(|l| !window::is_marker(l));
        body.push(Cow::Owned(format!("[tj] {message}")));
        return (body, facts, omitted, None);
    }
    let shape = shaped(&mut plan, lines, rule.window(exit_code), classified, data_budget);
    let (mut body, omitted) = plan.render(lines, evidence);
    if let (Some("diagnostics"), Some(sampled)) = (shape, classified.diagnostics.as_ref()) {
        body.extend(sampled.summaries.iter().map(|s| Cow::Owned(s.clone())));
    }
    (body, facts, omitted, shape)
}

/// The message of the first `matchOutput` entry whose pattern matches the whole output: it
/// replaces everything. The gate still checks evidence, so a message over a failing run is
/// rejected and the original goes out.
fn matched_output<'c>(
    lines: &[&str],
    compiled: &'c CompiledRule,
    budget: &Budget,
) -> Option<&'c String> {
    if compiled.outputs.is_empty() {
        return None;
    }
    let whole = trimmed_join(lines);
    compiled.outputs.iter().find(|(p, _)| p.is_match_within(&whole, budget)).map(|(_, m)| m)
}

/// The plan after the line filters (skip, keep, blank edges and runs, dedupe), and the
/// plan before the keep filter when the rule counts from there (`counterSource`).
fn filtered(
    lines: &[&str],
    rule: &crate::rules::Rule,
    classified: &Classified,
) -> (Plan, Option<Plan>) {
    let Classified { compiled, evidence, kinds, .. } = classified;
    let mut plan = Plan::keep_all(lines.len());
    plan.cut_long_lines = !opens_json(lines);
    drop_noise(&mut plan, classified);
    let pre_keep = (rule.counter_source == CounterSource::PreKeep).then(|| plan.clone());
    if compiled.lines.has(KEEP) {
        let kept = plan.kept();
        if kept.iter().any(|&i| kinds[i] & KEEP != 0) {
            for i in kept {
                if !evidence[i] && kinds[i] & KEEP == 0 {
                    plan.state[i] = Some(Drop::Filtered);
                }
            }
        }
    }
    // Blank edges always go: they carry nothing and tokenjuice trims them on output anyway.
    plan.trim_blank_edges(lines);
    plan.collapse_blank_runs(lines);
    if rule.transforms.dedupe_adjacent {
        plan.dedupe_adjacent(lines);
    }
    (plan, pre_keep)
}

/// The counts the rendition states: a test run's from the runner's own summaries when it
/// printed them (a failure listed twice is one failure), else the rule's counters over the
/// lines `plan` keeps.
fn facts_of(
    lines: &[&str],
    rule: &crate::rules::Rule,
    plan: &Plan,
    compiled: &CompiledRule,
    budget: &Budget,
) -> Facts {
    let tally = (rule.shape.as_deref() == Some("test-run")).then(|| shape::testrun::tally(lines));
    match tally.flatten() {
        Some(tally) => tally
            .facts()
            .into_iter()
            .map(|(name, n)| (name, usize::try_from(n).unwrap_or(usize::MAX)))
            .collect(),
        None => count(lines, plan, compiled, budget),
    }
}

/// Applies the shape's own cut to `plan` (search hits grouped by file, a table sampled,
/// diagnostics sampled, a log folded), else the rule's head and tail window; returns the
/// shape that shaped the candidate, if any.
fn shaped(
    plan: &mut Plan,
    lines: &[&str],
    (head, tail): (usize, usize),
    classified: &Classified,
    data_budget: Option<usize>,
) -> Option<&'static str> {
    let Classified { evidence, table, diagnostics, shape, .. } = classified;
    match (shape.as_deref(), table.as_ref()) {
        (Some("search-hits"), _)
            if widest(plan, lines, data_budget, |plan, k| {
                plan.group_search_hits(
                    lines,
                    evidence,
                    crate::rules::schema::HITS_PER_FILE * k / QUARTER,
                    head * k / QUARTER,
                    tail * k / QUARTER,
                )
            }) =>
        {
            Some("search-hits")
        }
        (Some("table"), Some(layout)) => {
            widest(plan, lines, data_budget, |plan, k| {
                let (head, tail) = (head * k / QUARTER, tail * k / QUARTER);
                let keep = shape::table::sample(lines, layout, evidence, head, tail);
                plan.keep_only(&keep, evidence);
                true
            });
            Some("table")
        }
        (Some("diagnostics"), _) if let Some(sampled) = diagnostics.as_ref() => {
            let mut keep = vec![true; lines.len()];
            for &i in &sampled.dropped {
                keep[i] = false;
            }
            plan.keep_only(&keep, evidence);
            plan.window(evidence, head, tail);
            Some("diagnostics")
        }
        (Some("log"), _) => {
            let folds = shape::log::fold(lines, evidence);
            plan.fold_similar(&folds, evidence);
            last_cut(plan, lines, evidence, (head, tail), data_budget);
            (!folds.is_empty()).then_some("log")
        }
        _ => {
            last_cut(plan, lines, evidence, (head, tail), data_budget);
            None
        }
    }
}

/// Applies a shape's own window (`apply(plan, k)` with its counts scaled by `k /`
/// [`QUARTER`]; false when the shape does not apply) to `plan`. For a data output past its
/// budget, the counts grow as far as what the plan keeps stays within the budget, so the
/// window spends the budget rather than the rule's fixed counts. Returns whether the shape
/// applied.
fn widest(
    plan: &mut Plan,
    lines: &[&str],
    data_budget: Option<usize>,
    apply: impl Fn(&mut Plan, usize) -> bool,
) -> bool {
    let base = plan.clone();
    if !apply(plan, QUARTER) {
        return false;
    }
    let Some(budget) = data_budget else { return true };
    let cost: Vec<usize> = lines.iter().map(|l| tokens::estimate(l) + 1).collect();
    let kept_tokens = |plan: &Plan| -> usize {
        plan.state.iter().zip(&cost).filter(|(s, _)| s.is_none()).map(|(_, c)| c).sum()
    };
    // Binary search for the widest scale (in quarters of the rule's counts, up to 64×)
    // whose plan stays within the budget; what is kept grows with the scale, about in
    // proportion, so the search starts no higher than four times that proportion.
    let at_rule = kept_tokens(plan).max(1);
    let reach = (4 * QUARTER * budget / at_rule).clamp(QUARTER, 64 * QUARTER);
    let (mut fits, mut over) = (QUARTER, reach + 1);
    while over - fits > 1 {
        let mid = fits + (over - fits) / 2;
        let mut wider = base.clone();
        apply(&mut wider, mid);
        if kept_tokens(&wider) <= budget {
            fits = mid;
            *plan = wider;
        } else {
            over = mid;
        }
    }
    true
}

/// The scale [`widest`] passes for the rule's own counts: `count * k / QUARTER`.
const QUARTER: usize = 4;

/// The last cut of the lossy candidate: the rule's head/tail window, or for a data output
/// (past its budget) the sampled window.
fn last_cut(
    plan: &mut Plan,
    lines: &[&str],
    evidence: &[bool],
    (head, tail): (usize, usize),
    data_budget: Option<usize>,
) {
    match data_budget {
        Some(budget) => plan.sample(lines, evidence, budget),
        None => plan.window(evidence, head, tail),
    }
}

/// Drops, as [`Drop::Noise`], the lines the rule's skip patterns name, evidence aside.
fn drop_noise(plan: &mut Plan, classified: &Classified) {
    let Classified { compiled, evidence, kinds, .. } = classified;
    if compiled.lines.has(SKIP) {
        for (i, state) in plan.state.iter_mut().enumerate() {
            if !evidence[i] && kinds[i] & SKIP != 0 {
                *state = Some(Drop::Noise);
            }
        }
    }
}

fn trimmed_join(lines: &[&str]) -> String {
    nonblank(lines.iter().copied()).collect::<Vec<_>>().join("\n")
}

/// Counter results over the kept lines. Stops counting when `budget` runs out (the caller
/// then gives up on the candidate); the check reads the clock only while metering.
fn count(lines: &[&str], plan: &Plan, compiled: &CompiledRule, budget: &Budget) -> Facts {
    let kept = plan.kept();
    compiled
        .counters
        .iter()
        .map(|(name, pattern)| {
            let hits = kept
                .iter()
                .take_while(|_| budget.check())
                .filter(|&&i| pattern.is_match_within(lines[i], budget))
                .count();
            (name.clone(), hits)
        })
        .collect()
}

/// Formats a reduced rendition: a header with the exit code and facts, the body, and one
/// closing notice saying what went and how to get it back.
fn format_text(
    exit_code: Option<i64>,
    facts: &[(String, usize)],
    body: &[Cow<'_, str>],
    omitted: &Omitted,
    total_lines: usize,
    artifact: Option<(&str, &str)>,
) -> String {
    let mut text = String::with_capacity(body.iter().map(|l| l.len() + 1).sum::<usize>() + 256);
    let facts: Vec<String> =
        facts.iter().filter(|(_, n)| *n > 0).map(|(name, n)| pluralize(*n, name)).collect();
    let code = exit_code.filter(|c| *c != 0);
    if code.is_some() || !facts.is_empty() {
        text.push_str("[tj]");
        if let Some(code) = code {
            let _ = write!(text, " exit {code}");
        }
        if !facts.is_empty() {
            text.push_str(if code.is_some() { " · " } else { " " });
            text.push_str(&facts.join(", "));
        }
        text.push('\n');
    }
    for line in body {
        text.push_str(line);
        text.push('\n');
    }
    let dropped = omitted.lines();
    if dropped > 0 || omitted.trimmed_lines > 0 {
        let _ = write!(text, "[tj] {} of {} lines omitted", group(dropped), group(total_lines));
        let parts: Vec<String> = [
            (omitted.noise, "noise"),
            (omitted.filtered, "filtered"),
            (omitted.repeats, "repeats"),
            (omitted.similar, "similar"),
            (omitted.window, "outside the window"),
            (omitted.blank, "blank"),
            (omitted.trimmed_lines, "long lines cut"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{} {what}", group(*n)))
        .collect();
        if !parts.is_empty() {
            let _ = write!(text, " ({})", parts.join(", "));
        }
        if let Some((id, path)) = artifact {
            let _ = write!(text, " · full output: tj expand {id} ({path})");
        }
    }
    while text.ends_with('\n') {
        text.pop();
    }
    text
}

/// `1234567` → `1,234,567`.
pub(crate) fn group(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// tokenjuice's fact wording: `1 failed test`, `3 failed tests`; names ending in a
/// participle (passed, failed, skipped, removed, …) are not pluralised.
fn pluralize(count: usize, noun: &str) -> String {
    // A name ending in a participle (`passed`, `removed`, `pending`) counts as it is.
    if count == 1 || noun.ends_with("ed") || noun.ends_with("pending") {
        return format!("{count} {noun}");
    }
    let plural = if noun.ends_with(['s', 'x', 'z']) || noun.ends_with("sh") || noun.ends_with("ch")
    {
        format!("{noun}es")
    } else if noun.ends_with('y') && !noun.ends_with(['a', 'e', 'i', 'o', 'u']) && noun.len() > 1 {
        let stem = &noun[..noun.len() - 1];
        if stem.ends_with(['a', 'e', 'i', 'o', 'u']) {
            format!("{noun}s")
        } else {
            format!("{stem}ies")
        }
    } else {
        format!("{noun}s")
    };
    format!("{count} {plural}")
}

/// The JSON form of a rendition: a superset of tokenjuice's `CompactResult`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonRendition<'a> {
    /// The rendition text.
    pub inline_text: &'a str,
    /// Counter results.
    pub facts: serde_json::Map<String, serde_json::Value>,
    /// Sizes in characters.
    pub stats: JsonStats,
    /// Which rule reduced it.
    pub classification: JsonClassification<'a>,
    /// The stored original.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_ref: Option<&'a ArtifactRef>,
    /// The exit code.
    pub exit_code: Option<i64>,
    /// The signal that ended the command, if any.
    pub signal: Option<i32>,
    /// How long the command ran, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Estimated tokens.
    pub tokens: JsonTokens,
    /// True when nothing was dropped.
    pub lossless: bool,
    /// True when a reduction (not the original) was adopted.
    pub reduced: bool,
    /// Why the original went out, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passthrough: Option<String>,
    /// Omitted line counts.
    pub omitted: Omitted,
}

/// `stats` of [`JsonRendition`].
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonStats {
    /// Characters of the rendered original.
    pub raw_chars: usize,
    /// Characters of the rendition.
    pub reduced_chars: usize,
    /// reduced / raw.
    pub ratio: f64,
}

/// `classification` of [`JsonRendition`].
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonClassification<'a> {
    /// The rule's family.
    pub family: &'a str,
    /// The rule's id.
    pub matched_reducer: &'a str,
    /// 0.9 for a specific rule, 0.2 for the fallback (tokenjuice's values).
    pub confidence: f64,
    /// The rule's layer.
    pub layer: &'static str,
    /// The shape reducer that made the rendition, if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<&'static str>,
}

/// `tokens` of [`JsonRendition`].
#[derive(Debug, Serialize)]
pub struct JsonTokens {
    /// Estimated tokens of the original.
    pub raw: usize,
    /// Estimated tokens of the rendition.
    pub reduced: usize,
}

impl Reduction {
    /// The JSON form.
    pub fn to_json(&self, duration_ms: Option<u64>, signal: Option<i32>) -> JsonRendition<'_> {
        let facts =
            self.facts.iter().map(|(k, v)| (k.clone(), serde_json::Value::from(*v))).collect();
        let ratio = if self.raw_chars == 0 {
            1.0
        } else {
            ((self.reduced_chars as f64 / self.raw_chars as f64) * 10_000.0).round() / 10_000.0
        };
        JsonRendition {
            inline_text: &self.text,
            facts,
            stats: JsonStats {
                raw_chars: self.raw_chars,
                reduced_chars: self.reduced_chars,
                ratio,
            },
            classification: JsonClassification {
                family: &self.family,
                matched_reducer: &self.rule,
                confidence: if self.fallback { 0.2 } else { 0.9 },
                layer: self.layer.as_str(),
                shape: self.shape,
            },
            raw_ref: self.artifact.as_ref(),
            exit_code: self.exit_code,
            signal,
            duration_ms,
            tokens: JsonTokens { raw: self.raw_tokens, reduced: self.reduced_tokens },
            lossless: (self.passthrough.is_some() || self.lossless) && self.replaced_bytes == 0,
            reduced: self.is_reduced(),
            passthrough: self.passthrough.as_ref().map(describe_passthrough),
            omitted: self.omitted,
        }
    }
}

/// A short description of why the original went out.
pub fn describe_passthrough(p: &Passthrough) -> String {
    match p {
        Passthrough::Raw => "raw output requested".to_owned(),
        Passthrough::Verbatim => "the rule passes this output through verbatim".to_owned(),
        Passthrough::Dense(rho) => {
            format!("no rule matched and the output is dense (ρ = {rho:.2})")
        }
        Passthrough::NotStored => {
            "the original could not be stored, so nothing was dropped".to_owned()
        }
        Passthrough::Rejected(r) => r.to_string(),
        Passthrough::Panicked => "the reducer failed; this is the original".to_owned(),
        Passthrough::Data { tokens, budget } => format!(
            "data within the data budget ({} of {} tokens): every line is kept",
            group(*tokens),
            group(*budget)
        ),
        Passthrough::OverBudget { rule, what } => {
            format!("rule `{}` was given up ({what}); this is the original", printable(rule))
        }
    }
}

/// The distinct evidence lines of `raw` as the engine sees them (for tests and
/// `tj rules verify`): the built-in classifier only.
pub fn evidence_of(raw: &[u8], cols: Option<u16>) -> Vec<String> {
    // As the engine sees them: after [`run`] compacted the bytes that are not UTF-8.
    let (raw, _) = binary::compact(raw);
    let rendered = screen_width(&raw, cols);
    let lines = split_lines(&rendered);
    let flags = evidence::classify(&lines);
    let mut seen = HashSet::new();
    lines
        .iter()
        .zip(flags)
        .filter(|(l, f)| *f && seen.insert(**l))
        .map(|(l, _)| (*l).to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// `find`-like paths, `n` of them, one in the middle naming `needle`.
    fn listing(n: usize, needle: &str) -> String {
        (0..n)
            .map(|i| {
                if i == n / 2 {
                    format!("./src/deep/module_{needle}/file.rs\n")
                } else {
                    format!("./src/module_{:03}/part_{i}/file_{i}.rs\n", i % 97)
                }
            })
            .collect()
    }

    fn reduce_with(raw: &str, words: &[&str], exit: Option<i64>, opts: Options<'_>) -> Reduction {
        let a = argv(words);
        reduce(
            &Input { raw: raw.as_bytes(), argv: &a, exit_code: exit, ..Input::default() },
            &RuleSet::builtin(),
            &opts,
        )
    }

    #[test]
    fn a_data_output_within_the_budget_keeps_every_line() {
        let art = artifact();
        let raw = listing(400, "needle");
        let out = reduce_with(
            &raw,
            &["find", "."],
            Some(0),
            Options { artifact: Some(&art), ..Options::default() },
        );
        assert!(out.reduced_tokens <= gate::DATA_BUDGET, "{}", out.reduced_tokens);
        for line in raw.lines() {
            assert!(
                out.text.contains(line.rsplit('/').nth(1).unwrap()),
                "{line} is lost:\n{}",
                out.text
            );
        }
        assert!(out.text.contains("module_needle"));
        assert!(!out.text.contains("omitted"), "{}", out.text);
    }

    #[test]
    fn a_data_output_past_the_budget_is_sampled_and_says_how_to_search_the_rest() {
        let art = artifact();
        let raw = listing(4000, "needle");
        let out = reduce_with(
            &raw,
            &["find", "."],
            Some(0),
            Options { artifact: Some(&art), ..Options::default() },
        );
        assert!(out.is_reduced());
        // Near the budget, not the rule's short head/tail window.
        assert!(out.reduced_tokens > gate::DATA_BUDGET / 2, "{}", out.reduced_tokens);
        assert!(out.reduced_tokens <= gate::DATA_BUDGET * 6 / 5, "{}", out.reduced_tokens);
        assert!(out.text.contains("tj expand 0123456789ab --grep REGEX"), "{}", out.text);
        // The middle is sampled: a kept line between two markers, far from either end.
        let sampled = out.text.lines().filter(|l| l.starts_with("./src/")).filter(|l| {
            raw.lines().position(|r| r == *l).is_some_and(|at| (1500..2500).contains(&at))
        });
        assert!(sampled.count() >= 3, "{}", out.text);
    }

    #[test]
    fn a_listing_within_the_budget_is_folded_losslessly_when_it_pays() {
        let art = artifact();
        let raw: String = (0..300)
            .map(|i| {
                format!(
                    "./vendor/crates/regex-automata-0.4.9/src/util/part_{}/file_{i}.rs\n",
                    i / 40
                )
            })
            .collect();
        let out = reduce_with(
            &raw,
            &["find", "."],
            Some(0),
            Options { artifact: Some(&art), ..Options::default() },
        );
        assert_eq!(out.shape, Some("paths"), "{}", out.text);
        assert!(out.lossless);
        let decoded = data::decode("paths", &out.text, false).unwrap();
        assert_eq!(decoded, raw.lines().collect::<Vec<_>>());
    }

    #[test]
    fn an_error_line_in_a_listing_is_never_re_encoded() {
        let art = artifact();
        let mut raw: String = (0..300)
            .map(|i| {
                format!(
                    "./vendor/crates/regex-automata-0.4.9/src/util/part_{}/file_{i}.rs\n",
                    i / 40
                )
            })
            .collect();
        let error =
            "./vendor/crates/regex-automata-0.4.9/src/util/part_3/broken.rs: Permission denied";
        let middle = raw[..raw.len() / 2].rfind('\n').unwrap() + 1;
        raw.insert_str(middle, &format!("{error}\n"));
        let opts = Options { artifact: Some(&art), ..Options::default() };
        let out = reduce_with(&raw, &["find", "."], Some(1), opts);
        assert!(out.text.lines().any(|l| l == error), "{}", out.text);
    }

    #[test]
    fn an_http_error_in_the_middle_of_a_long_access_log_survives_the_sample() {
        let art = artifact();
        let line = |i: usize, status: u16| {
            format!(
                "10.0.0.{} - - [01/Dec/2026:10:{:02}:{:02} +0000] \"GET /api/items/{i} HTTP/1.1\" {status} 512 \"-\" \"curl/8.5.0\"\n",
                i % 250,
                i / 60 % 60,
                i % 60
            )
        };
        let raw: String = (0..3000).map(|i| line(i, if i == 1717 { 404 } else { 200 })).collect();
        let opts = Options { artifact: Some(&art), ..Options::default() };
        let out = reduce_with(&raw, &["docker", "logs", "web"], Some(0), opts);
        assert!(out.is_reduced());
        assert!(out.text.contains("/api/items/1717 HTTP/1.1\" 404"), "{}", out.text);
    }

    #[test]
    fn a_long_log_from_an_unknown_command_folds_and_keeps_its_errors() {
        let art = artifact();
        let raw: String = (0..3000)
            .map(|i| {
                let level = if i == 1717 { "ERROR" } else { "INFO" };
                format!(
                    "2026-12-01 10:{:02}:{:02},{:03} {level} app.worker: handled job {i} for tenant {} in {} ms\n",
                    i / 60 % 60,
                    i % 60,
                    i % 1000,
                    i * 7 % 13,
                    i % 300
                )
            })
            .collect();
        let opts = Options { artifact: Some(&art), ..Options::default() };
        let out = reduce_with(&raw, &["python3", "app.py"], Some(0), opts);
        assert!(out.is_reduced(), "{:?}", out.passthrough);
        assert_eq!(out.shape, Some("log"));
        assert!(out.text.contains("ERROR app.worker: handled job 1717"), "{}", out.text);
        assert!(out.reduced_tokens <= gate::DATA_BUDGET * 6 / 5, "{}", out.reduced_tokens);
    }

    #[test]
    fn output_too_small_to_reduce_goes_out_before_anything_is_classified() {
        // No rendition can save `min_saving_bytes` of a shorter output: a small unknown
        // output is passed through at once as it was before data outputs had routes.
        let art = artifact();
        let opts = Options { artifact: Some(&art), ..Options::default() };
        let out = reduce_with("v1.2.3 built 2026-12-01\n", &["./version.sh"], Some(0), opts);
        assert!(matches!(out.passthrough, Some(Passthrough::Dense(_))), "{:?}", out.passthrough);
        assert_eq!(out.text, "v1.2.3 built 2026-12-01");
    }

    #[test]
    fn the_data_budget_is_configurable() {
        let art = artifact();
        let raw = listing(400, "needle");
        let limits = Limits { data_budget: 1000, ..Limits::default() };
        let out = reduce_with(
            &raw,
            &["find", "."],
            Some(0),
            Options { artifact: Some(&art), limits, ..Options::default() },
        );
        assert!(out.is_reduced());
        assert!(out.reduced_tokens <= 1200, "{}", out.reduced_tokens);
    }

    #[test]
    fn a_successful_unknown_command_is_data_and_a_failing_one_is_judged_by_its_failure() {
        let art = artifact();
        // Sparse (the same 20 records over and over, ρ well under the threshold), with one
        // unique line in the middle.
        let raw: String = (0..300)
            .map(|i| {
                if i == 150 {
                    "record 150: value 1050\n".to_owned()
                } else {
                    format!("record {}: value\n", i % 20)
                }
            })
            .collect();
        let opts = Options { artifact: Some(&art), ..Options::default() };
        let ok = reduce_with(&raw, &["./report.sh"], Some(0), opts);
        let records = match ok.shape {
            Some(shape) if data::is_route(shape) => data::decode(shape, &ok.text, false).unwrap(),
            _ => ok.text.lines().map(str::to_owned).collect(),
        };
        assert_eq!(records, raw.lines().collect::<Vec<_>>(), "{}", ok.text);
        let failed = reduce_with(&raw, &["./report.sh"], Some(1), opts);
        assert!(failed.is_reduced(), "{:?}", failed.passthrough);
        assert!(!failed.text.contains("record 150: value 1050"));
    }

    #[test]
    fn hide_exit_leaves_the_exit_line_out_but_still_judges_by_the_exit_code() {
        let art = artifact();
        let raw = cargo_output(1);
        let shown = reduce_with(
            &raw,
            &["cargo", "test"],
            Some(101),
            Options { artifact: Some(&art), ..Options::default() },
        );
        let hidden = reduce_with(
            &raw,
            &["cargo", "test"],
            Some(101),
            Options { artifact: Some(&art), hide_exit: true, ..Options::default() },
        );
        assert!(shown.text.starts_with("[tj] exit 101"), "{}", shown.text);
        assert!(!hidden.text.contains("[tj] exit"), "{}", hidden.text);
        assert_eq!(hidden.exit_code, Some(101));
        assert!(hidden.text.contains("FAILED"), "{}", hidden.text);
        let original = reduce_with(
            "short\n",
            &["cargo", "test"],
            Some(3),
            Options { artifact: Some(&art), hide_exit: true, ..Options::default() },
        );
        assert_eq!(original.text, "short");
    }

    fn artifact() -> ArtifactRef {
        ArtifactRef { id: "0123456789ab".into(), path: "/tmp/tj/spill/0123456789ab.log".into() }
    }

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    fn cargo_output(failures: usize) -> String {
        let mut raw = String::from(
            "   Compiling demo v0.1.0 (/tmp/demo)\n    Finished test\n     Running unittests\n\nrunning 301 tests\n",
        );
        for i in 0..300 {
            let _ = writeln!(raw, "test module::tests::case_{i:03} ... ok");
        }
        for i in 0..failures {
            let _ = writeln!(raw, "test module::tests::broken_{i} ... FAILED");
        }
        raw.push_str("\nfailures:\n\n---- module::tests::broken_0 stdout ----\n\nthread 'module::tests::broken_0' panicked at src/lib.rs:10:5:\nassertion `left == right` failed\n  left: 1\n right: 2\n\nfailures:\n    module::tests::broken_0\n\ntest result: FAILED. 300 passed; 1 failed; 0 ignored\n");
        raw
    }

    #[test]
    fn keeps_every_failure_line_and_drops_passing_tests() {
        let raw = cargo_output(1);
        let a = argv(&["cargo", "test"]);
        let art = artifact();
        let opts = Options { artifact: Some(&art), ..Options::default() };
        let input =
            Input { raw: raw.as_bytes(), argv: &a, exit_code: Some(101), ..Input::default() };
        let out = reduce(&input, &RuleSet::builtin(), &opts);
        assert!(out.is_reduced(), "{:?}", out.passthrough);
        for line in evidence_of(raw.as_bytes(), None) {
            assert!(out.text.lines().any(|l| l == line), "lost {line:?}");
        }
        assert!(!out.text.contains("case_150 ... ok"));
        assert!(out.text.starts_with("[tj] exit 101"));
        assert!(out.text.ends_with("(/tmp/tj/spill/0123456789ab.log)"));
    }

    fn with_project_rule(json: &str) -> RuleSet {
        let builtins = crate::rules::builtin_files()
            .iter()
            .map(|b| (Layer::Builtin, std::path::PathBuf::from(b.path), b.json));
        let project =
            [(Layer::Project, std::path::PathBuf::from(".tokenjuice/rules/x.json"), json)];
        RuleSet::from_sources(builtins.chain(project), false)
    }

    #[test]
    fn an_untrusted_rule_over_its_time_budget_gives_the_original_and_one_problem() {
        let rules = with_project_rule(
            r#"{"id":"proj/slow","family":"p","priority":9,"match":{"argv0":["cargo"]},
                "filters":{"skipPatterns":["^(?!x)test .* ok$"]}}"#,
        );
        let raw = cargo_output(1);
        let a = argv(&["cargo", "test"]);
        let art = artifact();
        let opts = Options { artifact: Some(&art), ..Options::default() };
        let input =
            Input { raw: raw.as_bytes(), argv: &a, exit_code: Some(101), ..Input::default() };
        let reduced = reduce(&input, &rules, &opts);
        assert!(reduced.is_reduced() && reduced.rule == "proj/slow", "{:?}", reduced.passthrough);
        let out = reduce_within(&input, &rules, &opts, &Budget::with_time(Duration::ZERO));
        assert_eq!(
            out.passthrough,
            Some(Passthrough::OverBudget {
                rule: "proj/slow".to_owned(),
                what: Exhausted::Time(Duration::ZERO)
            })
        );
        assert_eq!(out.text, original_text(&raw, Some(101)));
        assert_eq!(out.problems.len(), 1, "{:?}", out.problems);
        assert!(out.problems[0].starts_with("rule `proj/slow` was given up: its patterns took"));
    }

    #[test]
    fn a_selected_rule_over_the_compile_limit_is_dropped_for_the_next_one() {
        let bomb = vec!["[a-z]{1,65535}N"; 300].join("\",\"");
        let rules = with_project_rule(&format!(
            r#"{{"id":"proj/bomb","family":"p","priority":9,"match":{{"argv0":["cargo"]}},
                "filters":{{"skipPatterns":["{bomb}"]}}}}"#
        ));
        let raw = cargo_output(1);
        let a = argv(&["cargo", "test"]);
        let art = artifact();
        let opts = Options { artifact: Some(&art), ..Options::default() };
        let input =
            Input { raw: raw.as_bytes(), argv: &a, exit_code: Some(101), ..Input::default() };
        let out = reduce(&input, &rules, &opts);
        let builtin = reduce(&input, &RuleSet::builtin(), &opts);
        assert_eq!((out.rule.as_str(), out.layer), ("tests/cargo-test", Layer::Builtin));
        assert_eq!(out.text, builtin.text);
        assert_eq!(out.problems.len(), 1, "{:?}", out.problems);
        assert!(out.problems[0].contains("rule `proj/bomb`"), "{}", out.problems[0]);
        assert!(out.problems[0].ends_with("the rule is skipped"), "{}", out.problems[0]);
    }

    #[test]
    fn an_untrusted_output_regex_is_held_to_the_budget_during_selection() {
        let rules = with_project_rule(
            r#"{"id":"proj/redos","family":"p","match":{"argv0":["cargo"],
                "outputRegex":"^((?=[a-z])[a-z]+)+!$"}}"#,
        );
        let mut raw = String::new();
        for _ in 0..200 {
            raw.push_str("aaaaaaaaaaaaaaaaaaaaaaaaaaaa\n");
        }
        let a = argv(&["cargo", "build"]);
        let art = artifact();
        let opts = Options { artifact: Some(&art), ..Options::default() };
        let input = Input { raw: raw.as_bytes(), argv: &a, ..Input::default() };
        let out = reduce_within(&input, &rules, &opts, &Budget::without_time());
        assert_eq!(
            out.passthrough,
            Some(Passthrough::OverBudget {
                rule: "proj/redos".to_owned(),
                what: Exhausted::Backtracking
            })
        );
        assert_eq!(out.problems.len(), 1);
    }

    #[test]
    fn builtin_reductions_are_never_metered() {
        let raw = cargo_output(3);
        let a = argv(&["cargo", "test"]);
        let art = artifact();
        let opts = Options { artifact: Some(&art), ..Options::default() };
        let input =
            Input { raw: raw.as_bytes(), argv: &a, exit_code: Some(101), ..Input::default() };
        let rules = RuleSet::builtin();
        let starved = reduce_within(&input, &rules, &opts, &Budget::with_time(Duration::ZERO));
        let out = reduce(&input, &rules, &opts);
        assert!(out.is_reduced());
        assert_eq!(starved.text, out.text);
        assert!(starved.problems.is_empty());
    }

    /// The bounded engines and limits untrusted rules get are the builtin engines'
    /// equals: every builtin rule, loaded as a project rule, reduces every fixture to the
    /// same rendition and never runs out of a budget without time (the time budget is
    /// measured in benches: `TIME_BUDGET`).
    #[test]
    fn builtin_rules_loaded_as_project_rules_reduce_every_fixture_the_same() {
        use crate::verify::fixture_artifact;
        let as_project = RuleSet::from_sources(
            crate::rules::builtin_files()
                .iter()
                .map(|b| (Layer::Project, std::path::PathBuf::from(b.path), b.json)),
            false,
        );
        let builtin = RuleSet::builtin();
        let art = fixture_artifact();
        let opts = Options { artifact: Some(&art), ..Options::default() };
        let mut checked = 0;
        for case in crate::testing::fixtures() {
            let input = case.input();
            let budget = Budget::without_time();
            let untrusted = reduce_within(&input, &as_project, &opts, &budget);
            let trusted = reduce(&input, &builtin, &opts);
            assert_eq!(budget.exhausted(), None, "{}", case.id);
            assert_eq!(untrusted.problems, Vec::<String>::new(), "{}", case.id);
            assert_eq!(untrusted.text, trusted.text, "{}", case.id);
            checked += 1;
        }
        assert!(checked > 500, "{checked}");
    }

    #[test]
    fn reduction_is_deterministic() {
        let raw = cargo_output(1);
        let a = argv(&["cargo", "test"]);
        let art = artifact();
        let opts = Options { artifact: Some(&art), ..Options::default() };
        let input =
            Input { raw: raw.as_bytes(), argv: &a, exit_code: Some(101), ..Input::default() };
        let rules = RuleSet::builtin();
        assert_eq!(reduce(&input, &rules, &opts).text, reduce(&input, &rules, &opts).text);
    }

    #[test]
    fn without_a_stored_original_nothing_is_dropped() {
        let raw = cargo_output(1);
        let a = argv(&["cargo", "test"]);
        let input =
            Input { raw: raw.as_bytes(), argv: &a, exit_code: Some(101), ..Input::default() };
        let out = reduce(&input, &RuleSet::builtin(), &Options::default());
        assert_eq!(out.passthrough, Some(Passthrough::NotStored));
        assert!(out.text.contains("case_150 ... ok"));
    }

    #[test]
    fn raw_option_passes_the_original_through_ansi_stripped() {
        let raw = b"\x1b[31merror\x1b[0m: boom\n";
        let art = artifact();
        let opts = Options { raw: true, artifact: Some(&art), ..Options::default() };
        let out = reduce(&Input { raw, ..Input::default() }, &RuleSet::builtin(), &opts);
        assert_eq!(out.text, "error: boom");
        assert_eq!(out.passthrough, Some(Passthrough::Raw));
    }

    #[test]
    fn small_output_goes_out_unchanged() {
        let raw = b"hello\nworld\n";
        let art = artifact();
        let opts = Options { artifact: Some(&art), ..Options::default() };
        let a = argv(&["cargo", "test"]);
        let out = reduce(
            &Input { raw, argv: &a, exit_code: Some(0), ..Input::default() },
            &RuleSet::builtin(),
            &opts,
        );
        assert_eq!(out.text, "hello\nworld");
        assert!(!out.is_reduced());
    }

    #[test]
    fn empty_output_says_so() {
        let art = artifact();
        let opts = Options { artifact: Some(&art), ..Options::default() };
        let out = reduce(
            &Input { raw: b"", exit_code: Some(3), ..Input::default() },
            &RuleSet::builtin(),
            &opts,
        );
        assert_eq!(out.text, "[tj] exit 3\n(no output)");
    }

    #[test]
    fn original_size_matches_the_text_it_stands_for() {
        for (lines, code) in [
            (vec!["", "a", "漢字", "", "b  c", ""], Some(2)),
            (vec![], None),
            (vec!["", ""], Some(1)),
            (vec!["only"], Some(0)),
        ] {
            let rendered = lines.join("\n");
            let text = original_text(&rendered, code);
            let (size, chars) = original_size(&split_lines(&rendered), code);
            assert_eq!(size, gate::Size::of(&text), "{lines:?}");
            assert_eq!(chars, text.chars().count());
        }
    }

    #[test]
    fn json_elision_keeps_failures_not_failure_shaped_keys() {
        for line in [
            r#"    "error": "connection refused","#,
            r#""exitCode": 1,"#,
            r#"  "restartCount": 17,"#,
            r#""reason": "CrashLoopBackOff","#,
            r#""errors": ["#,
            r#""message": "Error: boom""#,
            "connection timed out",
        ] {
            assert!(json_value_matters(line), "{line}");
        }
        for line in [
            r#""errorCount": 0,"#,
            r#""fatalErrorCount": 0,"#,
            r#""failureThreshold": 3,"#,
            r#""FailingStreak": 0,"#,
            r#""Error": "","#,
            r#""error": null"#,
            r#""errors": [],"#,
            r#""name": "api-7f9c","#,
            "hello world",
        ] {
            assert!(!json_value_matters(line), "{line}");
        }
    }

    #[test]
    fn pluralizes_like_tokenjuice() {
        assert_eq!(pluralize(3, "failed test"), "3 failed tests");
        assert_eq!(pluralize(1, "failed test"), "1 failed test");
        assert_eq!(pluralize(2, "passed"), "2 passed");
        assert_eq!(pluralize(2, "removed"), "2 removed");
        assert_eq!(pluralize(3, "ignored"), "3 ignored");
        assert_eq!(pluralize(2, "match"), "2 matches");
        assert_eq!(pluralize(2, "dependency"), "2 dependencies");
        assert_eq!(pluralize(2, "key"), "2 keys");
    }

    #[test]
    fn groups_thousands() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(1234567), "1,234,567");
    }

    #[test]
    fn split_lines_trims_trailing_space_and_final_newline() {
        assert_eq!(split_lines("a  \nb\t\n"), vec!["a", "b"]);
        assert_eq!(split_lines(""), Vec::<&str>::new());
        assert_eq!(split_lines("\n\n"), vec!["", ""]);
        for text in ["", "\n", "a", "a\n", "a\n\n", " \n\tb \nc\u{3000}\n", "\n\nx"] {
            assert_eq!(split_lines(text), lines_of(text).collect::<Vec<_>>(), "{text:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn split_lines_collects_lines_of(text in "[a \t\n\r\u{3000}é]{0,64}") {
            proptest::prop_assert_eq!(split_lines(&text), lines_of(&text).collect::<Vec<_>>());
        }
    }
}
