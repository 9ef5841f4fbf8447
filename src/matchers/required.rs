//! Required literals: for a list of line patterns, a set of literals of which every match of
//! every pattern contains at least one (issue 13, the line lists' prefilter).
//!
//! A line that holds none of them cannot match the list, so its DFA walk is skipped. The
//! analysis is conservative by construction: each step below only ever claims what
//! regex-syntax's prefix extraction or the structure of the pattern guarantees, and where
//! it cannot say, the whole list gets no prefilter.
//!
//! This file is compiled by `build.rs`, which embeds each list's literals, and by the
//! crate's tests, which check the embedded sets against it (`matchers::tests`). It must
//! therefore depend on nothing but `std`, `regex_syntax` and `regex_automata`.

use regex_automata::util::syntax;
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Hir, HirKind};

/// The most literals a list's prefilter may hold: a packed (Teddy) searcher takes at most
/// 64, and more would flag most lines anyway.
const MAX_LITERALS: usize = 32;

/// The literals of which every match of any of `patterns` (read with `config`) within one
/// line holds at least one, chosen to be rare; `None` if some pattern has no such set, or
/// the union is too large or not text. Sorted and deduplicated.
pub(crate) fn list_literals(patterns: &[&str], config: &syntax::Config) -> Option<Vec<String>> {
    let mut all: Vec<Vec<u8>> = Vec::new();
    for pattern in patterns {
        let hir = syntax::parse_with(pattern, config).ok()?;
        let mut set = best(candidates(&hir))?;
        all.append(&mut set);
    }
    all.sort();
    all.dedup();
    // A literal that holds another is implied by it: keep the shorter.
    let kept: Vec<Vec<u8>> = all
        .iter()
        .filter(|lit| !all.iter().any(|other| other != *lit && contains(lit, other)))
        .cloned()
        .collect();
    if kept.is_empty() || kept.len() > MAX_LITERALS {
        return None;
    }
    kept.into_iter().map(|lit| String::from_utf8(lit).ok()).collect()
}

/// Every literal set the pattern guarantees (each alone is a valid answer), from which
/// [`best`] picks one. Empty when nothing is guaranteed.
fn candidates(hir: &Hir) -> Vec<Vec<Vec<u8>>> {
    match hir.kind() {
        HirKind::Literal(lit) => vec![vec![lit.0.to_vec()]],
        HirKind::Capture(cap) => candidates(&cap.sub),
        // At least one repetition: every match holds a match of the repeated part.
        HirKind::Repetition(rep) if rep.min >= 1 => candidates(&rep.sub),
        // Every match is a match of one alternative: the union of one set of each.
        HirKind::Alternation(alts) => {
            let mut union = Vec::new();
            for alt in alts {
                let Some(mut set) = best(candidates(alt)) else { return Vec::new() };
                union.append(&mut set);
            }
            vec![union]
        }
        // Every match holds a match of each part, and of each run of parts from any point
        // on, which begins with one of that run's prefix literals.
        HirKind::Concat(subs) => {
            let mut out: Vec<Vec<Vec<u8>>> = subs.iter().flat_map(candidates).collect();
            for from in 0..subs.len() {
                out.extend(prefixes(&Hir::concat(subs[from..].to_vec())));
            }
            out
        }
        _ => prefixes(hir).into_iter().collect(),
    }
}

/// The prefix literals of `hir` (every match begins with one), if finite and none empty.
fn prefixes(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    let mut extractor = Extractor::new();
    extractor.kind(ExtractKind::Prefix);
    let seq = extractor.extract(hir);
    let literals = seq.literals()?;
    let set: Vec<Vec<u8>> = literals.iter().map(|lit| lit.as_bytes().to_vec()).collect();
    (!set.is_empty() && set.iter().all(|lit| !lit.is_empty())).then_some(set)
}

/// The cheapest of `sets` to search for ([`cost`]), each literal cut to its rarest tail
/// (a tail of a required literal is required too). A literal holding a line break cannot
/// occur in a line, and is dropped; a set left empty is no answer.
fn best(sets: Vec<Vec<Vec<u8>>>) -> Option<Vec<Vec<u8>>> {
    sets.into_iter()
        .filter_map(|set| {
            let set: Vec<Vec<u8>> = set
                .into_iter()
                .filter(|lit| !lit.contains(&b'\n'))
                .map(|lit| rarest_tail(&lit))
                .collect();
            (!set.is_empty() && set.iter().all(|lit| !lit.is_empty())).then_some(set)
        })
        .min_by_key(|set| (cost(set), set.len()))
}

/// How many bytes of a literal a packed searcher's fingerprint reads.
const FINGERPRINT: usize = 3;

/// The tail of `lit` whose first bytes are least likely in text ([`per_mille`]), keeping at
/// least [`FINGERPRINT`] bytes where it has them.
fn rarest_tail(lit: &[u8]) -> Vec<u8> {
    let last = lit.len().saturating_sub(FINGERPRINT);
    let start = (0..=last).min_by_key(|&i| likelihood(&lit[i..])).unwrap_or(0);
    lit[start..].to_vec()
}

/// How likely a literal's fingerprint is to occur at a given position, in billionths.
fn likelihood(lit: &[u8]) -> u64 {
    let width = lit.len().min(FINGERPRINT);
    let pad = 1000_u64.pow(u32::try_from(FINGERPRINT - width).unwrap_or(0));
    lit.iter().take(FINGERPRINT).fold(pad, |acc, &b| acc * per_mille(b))
}

/// A rough frequency of `byte` in build and test output, per thousand bytes: the space
/// and lower-case letters common, capitals and most punctuation rare.
fn per_mille(byte: u8) -> u64 {
    match byte {
        b' ' => 150,
        b'e' => 80,
        b't' | b'a' | b'o' | b'i' | b'n' | b's' | b'r' => 50,
        b'a'..=b'z' => 20,
        b'0'..=b'9' => 20,
        b'.' | b':' | b'/' | b'_' | b'-' | b',' | b'(' | b')' | b'\t' => 10,
        b'A'..=b'Z' => 5,
        _ => 3,
    }
}

/// A set's expected search cost: the sum of its literals' likelihoods, a searcher's
/// fingerprint being as long as its shortest literal.
fn cost(set: &[Vec<u8>]) -> u64 {
    let width = set.iter().map(Vec::len).min().unwrap_or(0).min(FINGERPRINT);
    set.iter().map(|lit| likelihood(&lit[..width])).sum()
}

/// Returns true if and only if `needle` occurs in `haystack`.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
