//! Matchers compiled when tj is built (issue 13: "no compiling on the hot path").
//!
//! `build.rs` compiles every builtin rule's patterns and the evidence classifier's patterns
//! and literal sets to dense DFAs ([`spec`]), serializes them into one blob and embeds it
//! with an index sorted by [`Spec::key`]. A run looks a matcher up by the spec it would
//! have compiled and deserializes it in place (zero-copy; the check `from_bytes` makes is
//! linear in the DFA's size). Nothing is compiled for a builtin rule or the classifier.
//!
//! A spec that is not in the index (a user or project rule, a pattern over the build's
//! size limit, a target whose byte order the blob was not written for) is the caller's to
//! compile at run time, and every such compilation of a builtin matcher is counted
//! ([`count_runtime_compile`]): a test reduces every fixture and asserts the count stays
//! zero.

pub mod spec;

#[cfg(test)]
#[path = "required.rs"]
mod required;

#[cfg(test)]
#[path = "sure.rs"]
mod sure;

use std::sync::atomic::{AtomicUsize, Ordering};

use regex_automata::dfa::{Automaton, dense, sparse};
use regex_automata::{Anchored, HalfMatch, Input, MatchError};

pub use spec::{Flags, Spec};

/// 4-byte alignment for the embedded blob: a dense DFA deserializes from `&[u32]`.
#[repr(C)]
struct Aligned<B: ?Sized> {
    _align: [u32; 0],
    bytes: B,
}

/// One serialized DFA of an embedded matcher, answering for some of its patterns. A matcher
/// whose patterns multiply each other's states is embedded as several DFAs (see
/// `build.rs`, `build_parts`).
struct Part {
    /// Built for searches anchored at the start (every pattern begins with `^`).
    anchored: bool,
    /// Sparse form (`spec::DENSE_LIMIT`), else dense.
    sparse: bool,
    offset: u32,
    len: u32,
}

// Defines `BLOB: &Aligned<[u8]>` and `INDEX: &[(u64, &[Part])]`, sorted by key, every
// offset a multiple of 8; `PREFILTERS: &[(u64, &[&str])]`, sorted by key: each line list's
// required literals (`required.rs`); and `SURE: &[(u64, &[Sure])]`, sorted by key: each
// line list's sure shapes (`sure.rs`).
include!(concat!(env!("OUT_DIR"), "/prebuilt.rs"));

/// A line shape one of a list's patterns is sure to match (`sure.rs`): the line begins
/// with `prefix`, ends with `suffix`, and holds between the two (not overlapping) at least
/// `min` bytes when `open`, none when not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sure {
    prefix: &'static str,
    suffix: &'static str,
    min: usize,
    open: bool,
}

impl Sure {
    /// Returns true if and only if `line` has this shape (then the list matches it).
    #[inline]
    pub fn matches(&self, line: &[u8]) -> bool {
        let ends = self.prefix.len() + self.suffix.len();
        let long_enough = if self.open {
            line.len() >= ends.saturating_add(self.min)
        } else {
            line.len() == ends
        };
        long_enough
            && line.starts_with(self.prefix.as_bytes())
            && line.ends_with(self.suffix.as_bytes())
    }
}

/// The shapes the build found for the line list `spec`, some pattern of which is sure to
/// match a line of any of them (empty if none).
pub fn sure_shapes(spec: &Spec<'_>) -> &'static [Sure] {
    let key = spec.key();
    SURE.binary_search_by_key(&key, |&(k, _)| k).map_or(&[], |at| SURE[at].1)
}

/// How many builtin matchers were compiled at run time by this process (see the module
/// documentation). A relaxed counter: it costs one atomic add per compilation.
static RUNTIME_COMPILES: AtomicUsize = AtomicUsize::new(0);

/// Counts one builtin matcher compiled at run time (a spec the build did not prebuild).
pub fn count_runtime_compile() {
    RUNTIME_COMPILES.fetch_add(1, Ordering::Relaxed);
}

/// How many builtin matchers this process compiled at run time so far.
pub fn runtime_compiles() -> usize {
    RUNTIME_COMPILES.load(Ordering::Relaxed)
}

/// How many matchers the build embedded, and their serialized bytes in all.
pub fn embedded() -> (usize, usize) {
    (INDEX.len(), BLOB.bytes.len())
}

/// A compiled matcher: one DFA, or several each answering for some of its patterns.
#[derive(Clone, Debug)]
pub struct Dfa {
    parts: Vec<Piece>,
}

/// One DFA of a [`Dfa`].
#[derive(Clone, Debug)]
struct Piece {
    /// Searched anchored at the start of the haystack.
    anchored: bool,
    engine: Engine,
}

impl Piece {
    fn input<'h>(&self, input: &Input<'h>) -> Input<'h> {
        let input = input.clone();
        if self.anchored { input.anchored(Anchored::Yes) } else { input }
    }
}

#[derive(Clone, Debug)]
enum Engine {
    Dense(dense::DFA<&'static [u32]>),
    Sparse(sparse::DFA<&'static [u8]>),
    Owned(Box<dense::DFA<Vec<u32>>>),
}

/// The embedded matcher for `spec`, if the build made one.
pub fn prebuilt(spec: &Spec<'_>) -> Option<Dfa> {
    let key = spec.key();
    let at = INDEX.binary_search_by_key(&key, |&(k, _)| k).ok()?;
    let mut parts = Vec::with_capacity(INDEX[at].1.len());
    for part in INDEX[at].1 {
        parts.push(Piece { anchored: part.anchored, engine: embedded_part(part)? });
    }
    Some(Dfa { parts })
}

/// The DFA of one embedded part, taken from the blob without the validity check
/// `from_bytes` makes (linear in the DFA's size: 0.6 M instructions for the classifier's
/// largest). `None` if the header does not read (a blob for another byte order).
#[allow(unsafe_code)]
fn embedded_part(part: &Part) -> Option<Engine> {
    let bytes = BLOB.bytes.get(part.offset as usize..(part.offset + part.len) as usize)?;
    // SAFETY: `bytes` are exactly what `to_bytes_{little,big}_endian` of a DFA built by this
    // same version of regex-automata (one lock file pins the build dependency and the
    // dependency alike) wrote in build.rs for this target's byte order, embedded verbatim
    // at an offset aligned for it. Every embedded part is deserialized with the full
    // check by a test (`every_embedded_part_passes_the_full_check`).
    let engine = unsafe {
        if part.sparse {
            Engine::Sparse(sparse::DFA::from_bytes_unchecked(bytes).ok()?.0)
        } else {
            Engine::Dense(dense::DFA::from_bytes_unchecked(bytes).ok()?.0)
        }
    };
    Some(engine)
}

/// The literals the build found for the line list `spec` (see [`prefilter`]).
pub fn prefilter_literals(spec: &Spec<'_>) -> Option<&'static [&'static str]> {
    let key = spec.key();
    let at = PREFILTERS.binary_search_by_key(&key, |&(k, _)| k).ok()?;
    Some(PREFILTERS[at].1)
}

/// The prefilter of the embedded line list `spec`: a finder of literals of which every
/// match of any of its patterns in a line holds one, so that a line holding none cannot
/// match (`required.rs`, issue 13). `None` if the build found no such set, or the CPU has
/// no packed searcher (a DFA of the literals would walk the lines as slowly as the list's).
pub fn prefilter(spec: &Spec<'_>) -> Option<Literals> {
    Literals::simd(prefilter_literals(spec)?)
}

/// The matcher for `spec`: the embedded one, else compiled now (and counted). `Err` only
/// when the spec does not compile at all.
pub fn dfa(spec: &Spec<'_>) -> Result<Dfa, String> {
    if let Some(dfa) = prebuilt(spec) {
        return Ok(dfa);
    }
    count_runtime_compile();
    let dfa = spec.build()?;
    let piece = Piece { anchored: false, engine: Engine::Owned(Box::new(dfa)) };
    Ok(Dfa { parts: vec![piece] })
}

/// [`dfa`] for one builtin regex read with ASCII classes on bytes (the classifier's
/// dialect).
pub fn ascii(regex: &str, case_insensitive: bool) -> Result<Dfa, String> {
    let flags = Flags { case_insensitive, ..Flags::default() };
    dfa(&Spec { unicode: false, flags, patterns: &[regex] })
}

/// [`ascii`] for a finder of any of `literals` (none empty, none holding a line break).
///
pub fn ascii_literals(literals: &[&str], case_insensitive: bool) -> Result<Dfa, String> {
    ascii(&spec::literal_alternation(literals), case_insensitive)
}

/// A finder for any of a fixed set of literals, case-sensitive (the classifier's keys, the
/// failure words' and the alarms'): a SIMD searcher (aho-corasick's Teddy) where the CPU
/// has one, else the embedded DFA of their alternation ([`ascii_literals`]).
///
/// Teddy reads 16 or 32 bytes per step where a DFA reads one: over 100 KB of output, a key
/// finder took 0.2 ms as a DFA. Building it is not a regex compilation: it lays out a few
/// masks for at most 64 literals, in microseconds, once per process. It is no
/// [`count_runtime_compile`].
#[derive(Clone, Debug)]
pub enum Literals {
    /// Teddy, for the literals as given.
    Simd(aho_corasick::packed::Searcher),
    /// The embedded DFA of the literals' alternation.
    Dfa(Dfa),
}

impl Literals {
    /// A finder for any of `literals` (none empty, none holding a line break).
    pub fn new(literals: &[&str]) -> Result<Literals, String> {
        match Literals::simd(literals) {
            Some(simd) => Ok(simd),
            None => ascii_literals(literals, false).map(Literals::Dfa),
        }
    }

    /// The packed searcher for `literals` (none empty, none holding a line break), if this
    /// CPU has one and there are some.
    pub fn simd(literals: &[&str]) -> Option<Literals> {
        let mut config = aho_corasick::packed::Config::new();
        config.match_kind(aho_corasick::packed::MatchKind::LeftmostFirst);
        // More than Teddy's heuristic limit still checks fewer candidates per byte than a
        // DFA takes steps: the limit only trades Teddy for the DFA.
        config.heuristic_pattern_limits(false);
        let searcher = config.builder().extend(literals).build()?;
        (!literals.is_empty()).then_some(Literals::Simd(searcher))
    }

    /// Returns true if and only if one of the literals occurs in `haystack`.
    pub fn is_match(&self, haystack: &[u8]) -> bool {
        match self {
            Literals::Simd(searcher) => searcher.find(haystack).is_some(),
            Literals::Dfa(dfa) => dfa.is_match(haystack),
        }
    }

    /// The end of a literal found in `input`'s span, the leftmost one (`Some(None)`: none;
    /// `None`: the search failed, which a DFA of literals cannot).
    pub fn find_end(&self, input: &Input<'_>) -> Option<Option<usize>> {
        match self {
            Literals::Simd(searcher) => {
                let span = input.get_span();
                let span = aho_corasick::Span { start: span.start, end: span.end };
                Some(searcher.find_in(input.haystack(), span).map(|m| m.end()))
            }
            Literals::Dfa(dfa) => dfa.find_end(input),
        }
    }
}

/// Calls `hit` with the index of every line of `lines` in which `finder` finds one of its
/// literals, in order, searching `text` in place (no copy, one search per hit).
///
/// `lines` must be slices of `text` in order, each after the first preceded by a line
/// break, as `reduce::split_lines` cuts them (a line may have lost trailing white space);
/// if they are not, nothing is called and the result is false. `finder`'s literals hold
/// no line break, so a hit that ends in a line began in it, or in the white space trimmed
/// from its end: that second case is checked on the line itself.
pub fn scan_in_place(
    finder: &Literals,
    text: &str,
    lines: &[&str],
    mut hit: impl FnMut(usize),
) -> bool {
    let base = text.as_ptr() as usize;
    let offset = |line: &str| (line.as_ptr() as usize).wrapping_sub(base);
    let bytes = text.as_bytes();
    let mut prev_end = 0;
    for (k, line) in lines.iter().enumerate() {
        let start = offset(line);
        if start > bytes.len() || line.len() > bytes.len() - start {
            return false;
        }
        if k > 0 && (start <= prev_end || bytes[start - 1] != b'\n') {
            return false;
        }
        prev_end = start + line.len();
    }
    let (Some(first), Some(last)) = (lines.first(), lines.last()) else { return true };
    let end = offset(last) + last.len();
    let (mut k, mut at) = (0, offset(first));
    while at < end {
        let Some(found) = finder.find_end(&Input::new(bytes).span(at..end)) else {
            // A failed search (a DFA of literals cannot fail): every line left is a hit.
            (k..lines.len()).for_each(&mut hit);
            break;
        };
        let Some(found) = found else { break };
        // The line of the hit's last byte.
        while k + 1 < lines.len() && offset(lines[k + 1]) < found {
            k += 1;
        }
        if found <= offset(lines[k]) + lines[k].len() || finder.is_match(lines[k].as_bytes()) {
            hit(k);
        }
        k += 1;
        match lines.get(k) {
            Some(line) => at = offset(line),
            None => break,
        }
    }
    true
}

impl Engine {
    fn search(&self, input: &Input<'_>) -> Result<Option<HalfMatch>, MatchError> {
        match self {
            Engine::Dense(dfa) => dfa.try_search_fwd(input),
            Engine::Sparse(dfa) => dfa.try_search_fwd(input),
            Engine::Owned(dfa) => dfa.try_search_fwd(input),
        }
    }
}

impl Dfa {
    /// Returns true if and only if some pattern matches somewhere in `haystack`.
    ///
    /// A search cannot fail on these DFAs (no quit bytes, no Unicode word boundary); if one
    /// did, it counts as a match, so that a line that could not be judged is kept.
    pub fn is_match(&self, haystack: &[u8]) -> bool {
        let input = Input::new(haystack).earliest(true);
        self.parts.iter().any(|piece| {
            piece.engine.search(&piece.input(&input)).map_or(true, |found| found.is_some())
        })
    }

    /// The end of the earliest match within `input`'s span (`Some(None)`: none; `None`:
    /// the search failed). Of a matcher in several parts, the earliest end of any.
    pub fn find_end(&self, input: &Input<'_>) -> Option<Option<usize>> {
        let input = input.clone().earliest(true);
        let mut earliest: Option<usize> = None;
        for piece in &self.parts {
            let found = piece.engine.search(&piece.input(&input)).ok()?.map(|m| m.offset());
            earliest = match (earliest, found) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        Some(earliest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_part_passes_the_full_check() {
        let mut parts = 0;
        for (_, entry) in INDEX {
            for part in *entry {
                let bytes = &BLOB.bytes[part.offset as usize..(part.offset + part.len) as usize];
                if part.sparse {
                    assert!(sparse::DFA::from_bytes(bytes).is_ok());
                } else {
                    assert!(dense::DFA::from_bytes(bytes).is_ok());
                }
                parts += 1;
            }
        }
        assert!(parts >= INDEX.len() && INDEX.len() > 400, "{parts} parts");
        assert!(INDEX.windows(2).all(|w| w[0].0 < w[1].0), "the index is sorted, keys unique");
    }

    /// The round trip of the prefilters: each builtin line list's embedded literals are
    /// what `required.rs` derives from its patterns now, found by the list's key.
    #[test]
    fn every_line_list_prefilter_is_embedded_as_derived() {
        let (mut lists, mut found) = (0, std::collections::BTreeSet::new());
        crate::testing::each_builtin_line_list(|id, spec| {
            let derived = required::list_literals(spec.patterns, &Flags::default().syntax(false));
            let embedded = prefilter_literals(spec).map(|l| l.iter().map(|s| (*s).to_owned()));
            assert_eq!(embedded.map(Iterator::collect::<Vec<_>>), derived, "{id}");
            lists += 1;
            if derived.is_some() {
                found.insert(spec.key());
            }
        });
        assert_eq!(found.len(), PREFILTERS.len(), "no prefilter without a builtin list");
        assert!(found.len() * 4 > lists * 3, "{} of {lists} lists have a prefilter", found.len());
    }

    /// The round trip of the sure shapes: each builtin line list's embedded shapes are what
    /// `sure.rs` derives from its patterns now.
    #[test]
    fn every_line_list_sure_shape_is_embedded_as_derived() {
        let mut found = std::collections::BTreeSet::new();
        crate::testing::each_builtin_line_list(|id, spec| {
            let derived = sure::list_shapes(spec.patterns, &Flags::default().syntax(false));
            let embedded: Vec<sure::Shape> = sure_shapes(spec)
                .iter()
                .map(|s| sure::Shape {
                    prefix: s.prefix.to_owned(),
                    suffix: s.suffix.to_owned(),
                    min: s.min,
                    open: s.open,
                })
                .collect();
            assert_eq!(embedded, derived, "{id}");
            if !derived.is_empty() {
                found.insert(spec.key());
            }
        });
        assert_eq!(found.len(), SURE.len(), "no shapes without a builtin list");
        assert!(SURE.len() > 100, "only {} lists have a sure shape", SURE.len());
    }

    #[test]
    fn a_sure_shape_is_a_literal_start_any_text_and_a_literal_end() {
        let shapes =
            |patterns: &[&str]| sure::list_shapes(patterns, &Flags::default().syntax(false));
        let shape = |prefix: &str, suffix: &str, min, open| sure::Shape {
            prefix: prefix.to_owned(),
            suffix: suffix.to_owned(),
            min,
            open,
        };
        assert_eq!(shapes(&[r"^test .+ \.\.\. ok$"]), [shape("test ", " ... ok", 1, true)]);
        assert_eq!(shapes(&["^(test) (.*)ok$"]), [], "a capture between two literals");
        assert_eq!(shapes(&["^test (.*) ok$"]), [shape("test ", " ok", 0, true)]);
        assert_eq!(shapes(&["^error: "]), [shape("error: ", "", 0, true)]);
        assert_eq!(shapes(&["^failures:$"]), [shape("failures:", "", 0, false)]);
        assert_eq!(shapes(&["^x.{3,}"]), [shape("x", "", 3, true)]);
        assert_eq!(shapes(&["^.+$"]), [shape("", "", 1, true)]);
        assert_eq!(shapes(&["(?s)^a.*b$"]), [shape("a", "b", 0, true)]);
        // Only patterns of that shape, in order; the others have none.
        assert_eq!(
            shapes(&["^a$", r"^\s*Running \S", "^b"]),
            [shape("a", "", 0, false), shape("b", "", 0, true)]
        );
        for none in [
            "test .+ ok$",      // not anchored at the start
            "^test .+ ok",      // a literal after the run could be anywhere
            r"^test \S+ ok$",   // a class that is not "anything"
            "^test .{1,9} ok$", // a bounded run
            "(?i)^test .+ ok$", // case folding makes classes
            "(?m)^test .+ ok$", // a multi-line anchor
            "^(a|b) .+$",       // an alternation
            "^test .+ .+ ok$",  // two runs
            "^a$|^b$",          // an alternation of whole patterns
        ] {
            assert_eq!(shapes(&[none]), [], "{none}");
        }
        // Unicode: a character is one to four bytes, so only a run of at most one is counted.
        let unicode = |p: &str| sure::list_shapes(&[p], &Flags::default().syntax(true));
        assert_eq!(unicode("^é.+$"), [shape("é", "", 1, true)]);
        assert_eq!(unicode("^é.{2,}$"), []);
    }

    #[test]
    fn a_sure_shape_matches_its_lines_only() {
        let sure = |prefix, suffix, min, open| Sure { prefix, suffix, min, open };
        let ok = sure("test ", " ... ok", 1, true);
        assert!(ok.matches(b"test a ... ok"));
        assert!(!ok.matches(b"test  ... ok"), "the run needs a byte");
        assert!(!ok.matches(b"test ... ok"), "the ends may not overlap");
        assert!(!ok.matches(b"test a ... ok "));
        assert!(!ok.matches(b"tests a ... ok"));
        let exact = sure("failures:", "", 0, false);
        assert!(exact.matches(b"failures:"));
        assert!(!exact.matches(b"failures: x"));
        let start = sure("error: ", "", 0, true);
        assert!(start.matches(b"error: ") && start.matches(b"error: boom"));
        assert!(!start.matches(b"error:"));
    }

    #[test]
    fn a_required_literal_set_holds_what_every_match_must() {
        let lits =
            |patterns: &[&str]| required::list_literals(patterns, &Flags::default().syntax(false));
        assert_eq!(lits(&["^test .+ FAILED$"]), Some(vec!["FAILED".to_owned()]));
        // Each alternative gives one (a part of "Warning: "); "Error: " holds "Error", which
        // the second pattern requires, so only "Error" is kept.
        let set = lits(&["(Error|Warning): ", "Error"]).unwrap();
        assert_eq!(set.len(), 2, "{set:?}");
        assert!(set.contains(&"Error".to_owned()), "{set:?}");
        assert!(set.iter().any(|l| l != "Error" && "Warning: ".contains(l.as_str())), "{set:?}");
        // Something that may match without a literal: no prefilter for the list.
        assert_eq!(lits(&["^\\s*$", "Error"]), None);
        assert_eq!(lits(&["^(a|[^b])"]), None);
        // A class of a few bytes is a few literals.
        assert_eq!(lits(&["^\\d+$"]).map(|set| set.len()), Some(10));
        assert_eq!(lits(&["x?"]), None);
        // Case-insensitive: the case variants, all of them.
        let folded = lits(&["(?i)ok!"]).unwrap();
        assert!(
            ["OK!", "Ok!", "oK!", "ok!"]
                .iter()
                .all(|v| folded.iter().any(|l| v.contains(l.as_str())))
        );
    }

    #[test]
    fn an_in_place_scan_flags_exactly_the_lines_holding_a_literal() {
        let finder = Literals::simd(&["FAIL", "ab "])
            .or_else(|| Literals::new(&["FAIL", "ab "]).ok())
            .unwrap();
        // Trailing white space trimmed from a line can complete a literal in the text but
        // not in the line ("ab" + " "); empty lines; a hit at the very end.
        let text = "x FAIL\nab \t\n\nab\nok ab FAIL\n  \nzzFAIL";
        let lines: Vec<&str> = text.split('\n').map(str::trim_end).collect();
        let mut flagged = Vec::new();
        assert!(scan_in_place(&finder, text, &lines, |k| flagged.push(k)));
        let expected: Vec<usize> =
            (0..lines.len()).filter(|&k| finder.is_match(lines[k].as_bytes())).collect();
        assert_eq!(flagged, expected);
        assert_eq!(flagged, [0, 4, 6]);
        // Lines that are not the text's own are refused, not misread.
        let other = ["x FAIL".to_owned()];
        let foreign: Vec<&str> = other.iter().map(String::as_str).collect();
        assert!(!scan_in_place(&finder, text, &foreign, |_| panic!("no hit reported")));
        let out_of_order = [lines[1], lines[0]];
        assert!(!scan_in_place(&finder, text, &out_of_order, |_| panic!("no hit reported")));
        assert!(scan_in_place(&finder, text, &[], |_| panic!("no lines, no hits")));
    }

    #[test]
    fn a_spec_the_build_did_not_embed_is_compiled_and_counted() {
        let spec = Spec {
            unicode: false,
            flags: Flags::default(),
            patterns: &["^not a builtin pattern [0-9]+$"],
        };
        assert!(prebuilt(&spec).is_none());
        let before = runtime_compiles();
        let dfa = dfa(&spec).unwrap();
        assert!(dfa.is_match(b"not a builtin pattern 42"));
        assert!(!dfa.is_match(b"not a builtin pattern"));
        assert!(runtime_compiles() > before);
    }

    #[test]
    fn an_embedded_matcher_is_found_by_its_spec_and_matches_as_compiled() {
        let spec = Spec {
            unicode: false,
            flags: Flags { case_insensitive: true, ..Flags::default() },
            patterns: &[&spec::literal_alternation(crate::reduce::patterns::ALARM_WORDS)],
        };
        let embedded = prebuilt(&spec).expect("the log shape's alarm words are embedded");
        let fresh = Dfa {
            parts: vec![Piece {
                anchored: false,
                engine: Engine::Owned(Box::new(spec.build().unwrap())),
            }],
        };
        for line in ["all good", "an ERROR here", "Traceback (most", "warnings: 0", "ok"] {
            assert_eq!(
                embedded.is_match(line.as_bytes()),
                fresh.is_match(line.as_bytes()),
                "{line}"
            );
        }
        assert!(embedded.is_match(b"FaTaL"));
    }

    #[test]
    fn a_matcher_in_parts_finds_the_earliest_end_of_any_part() {
        let part = |pattern: &'static str| Piece {
            anchored: false,
            engine: Engine::Owned(Box::new(
                Spec { unicode: false, flags: Flags::default(), patterns: &[pattern] }
                    .build()
                    .unwrap(),
            )),
        };
        let dfa = Dfa { parts: vec![part("a+"), part("b+")] };
        assert!(dfa.is_match(b"xxbxx"));
        assert!(dfa.is_match(b"xxaxx"));
        assert!(!dfa.is_match(b"xxcxx"));
        assert_eq!(dfa.find_end(&Input::new(b"xxbba")), Some(Some(3)));
        assert_eq!(dfa.find_end(&Input::new(b"xxabb")), Some(Some(3)));
        assert_eq!(dfa.find_end(&Input::new(b"xxcc")), Some(None));
    }

    #[test]
    fn only_a_spec_whose_every_alternative_begins_at_the_start_is_anchored() {
        let spec = |patterns: &'static [&'static str]| Spec {
            unicode: false,
            flags: Flags::default(),
            patterns,
        };
        assert!(spec(&["^test .+ ok$", "^(a|b)c"]).is_anchored());
        assert!(!spec(&["^a|b"]).is_anchored(), "the second alternative may start anywhere");
        assert!(!spec(&["^a", "b"]).is_anchored());
        let multi = Spec { flags: Flags { multi_line: true, ..Flags::default() }, ..spec(&["^a"]) };
        assert!(!multi.is_anchored(), "(?m)^ matches after any line break");
        // Built anchored, it finds what the unanchored build finds at the start, and only there.
        let anchored = spec(&["^ab"]).build_anchored().unwrap();
        let piece = Piece { anchored: true, engine: Engine::Owned(Box::new(anchored)) };
        let dfa = Dfa { parts: vec![piece] };
        assert!(dfa.is_match(b"abc"));
        assert!(!dfa.is_match(b"cab"));
    }
}
