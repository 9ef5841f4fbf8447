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
// offset a multiple of 8.
include!(concat!(env!("OUT_DIR"), "/prebuilt.rs"));

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
        let mut config = aho_corasick::packed::Config::new();
        config.match_kind(aho_corasick::packed::MatchKind::LeftmostFirst);
        // More than Teddy's heuristic limit still checks fewer candidates per byte than a
        // DFA takes steps: the limit only trades Teddy for the DFA.
        config.heuristic_pattern_limits(false);
        match config.builder().extend(literals).build() {
            Some(searcher) if !literals.is_empty() => Ok(Literals::Simd(searcher)),
            _ => ascii_literals(literals, false).map(Literals::Dfa),
        }
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
