//! Sure matches: for a list of line patterns, line shapes that some pattern is sure to
//! match, told by comparing a line's ends instead of walking the list's DFA (issue 13).
//!
//! Most lines of a test run are one pattern's: `^test .+ \.\.\. ok$` holds 2,500 lines of a
//! `cargo test`, each walked to its end by the skip list's DFA (a third of the reduction).
//! Such a pattern is a literal start, any text, a literal end: a line that begins with
//! `test `, ends with ` ... ok` and has a byte between them is matched, and two comparisons
//! say so. A shape is only ever a sufficient condition: a line that fits none is still
//! walked, so the list's answer is the DFA's either way.
//!
//! Only a pattern that is, after its captures are unwrapped, exactly `^`, then an optional
//! literal, an optional repetition of "any character but a line break" with no upper bound,
//! an optional literal, then `$` (or no `$`, when the pattern ends in the first literal or
//! the repetition) has a shape. Anything else (a class, an alternation, case folding, a
//! multi-line anchor) has none. A line never holds a line break, so "any character but a
//! line break" is anything.
//!
//! This file is compiled by `build.rs`, which embeds each list's shapes, and by the crate's
//! tests, which check the embedded shapes against it. It must therefore depend on nothing but
//! `std`, `regex_syntax` and `regex_automata`.

use regex_automata::util::syntax;
use regex_syntax::hir::{Class, Hir, HirKind, Look};

/// The most shapes a list keeps: each costs every line two comparisons.
const MAX_SHAPES: usize = 16;

/// Lines that begin with `prefix`, end with `suffix`, and hold between the two (not
/// overlapping) at least `min` bytes of anything when `open`, nothing when not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub(crate) prefix: String,
    pub(crate) suffix: String,
    pub(crate) min: usize,
    pub(crate) open: bool,
}

/// The shapes of those of `patterns` (read with `config`) that have one, in order, at most
/// [`MAX_SHAPES`]. A pattern that does not parse has none.
pub(crate) fn list_shapes(patterns: &[&str], config: &syntax::Config) -> Vec<Shape> {
    patterns
        .iter()
        .filter_map(|pattern| shape(&syntax::parse_with(pattern, config).ok()?))
        .take(MAX_SHAPES)
        .collect()
}

/// The shape of `hir`, if it has one (see the [module docs](self)).
fn shape(hir: &Hir) -> Option<Shape> {
    let items: Vec<&Hir> = match hir.kind() {
        HirKind::Concat(subs) => subs.iter().map(uncaptured).collect(),
        _ => vec![uncaptured(hir)],
    };
    let mut items = items.into_iter().peekable();
    if !matches!(items.next()?.kind(), HirKind::Look(Look::Start)) {
        return None;
    }
    let prefix = items.next_if(|h| matches!(h.kind(), HirKind::Literal(_))).map(literal);
    let middle = items.next_if(|h| any_run(h).is_some()).and_then(any_run);
    let suffix = items.next_if(|h| matches!(h.kind(), HirKind::Literal(_))).map(literal);
    let end = items.next_if(|h| matches!(h.kind(), HirKind::Look(Look::End))).is_some();
    if items.next().is_some() {
        return None;
    }
    let prefix = String::from_utf8(prefix.unwrap_or_default()).ok()?;
    let suffix = String::from_utf8(suffix.unwrap_or_default()).ok()?;
    match (middle, end) {
        // `^A.*B$`, `^A.+$`: the run is the middle.
        (Some(min), true) => Some(Shape { prefix, suffix, min, open: true }),
        // `^A.+`: the run and whatever follows it; a literal after the run could be anywhere.
        (Some(min), false) if suffix.is_empty() => Some(Shape { prefix, suffix, min, open: true }),
        // Two literals in a row are one, unless a capture split them.
        (None, _) if !suffix.is_empty() => None,
        // `^A$`: the whole line.
        (None, true) => Some(Shape { prefix, suffix, min: 0, open: false }),
        // `^A`: the line's start.
        (None, false) => Some(Shape { prefix, suffix, min: 0, open: true }),
        (Some(_), false) => None,
    }
}

/// `hir` without the capture groups around it.
fn uncaptured(mut hir: &Hir) -> &Hir {
    while let HirKind::Capture(cap) = hir.kind() {
        hir = &cap.sub;
    }
    hir
}

/// A literal's bytes.
fn literal(hir: &Hir) -> Vec<u8> {
    match hir.kind() {
        HirKind::Literal(lit) => lit.0.to_vec(),
        _ => Vec::new(),
    }
}

/// The fewest bytes `hir` matches, if it is an unbounded repetition of any character but a
/// line break: `.*`, `.+`, `.{n,}`, bytes or characters. A character is at least one byte,
/// so the least is in bytes only up to one character.
fn any_run(hir: &Hir) -> Option<usize> {
    let HirKind::Repetition(rep) = hir.kind() else { return None };
    if rep.max.is_some() {
        return None;
    }
    let HirKind::Class(class) = uncaptured(&rep.sub).kind() else { return None };
    let unicode = match class {
        Class::Bytes(bytes) => {
            // Every byte but the line break, which may or may not be there.
            let covers = |b: u8| bytes.ranges().iter().any(|r| r.start() <= b && b <= r.end());
            if !(0..=255u8).filter(|&b| b != b'\n').all(covers) {
                return None;
            }
            false
        }
        Class::Unicode(chars) => {
            // Every scalar value but the line break: a gap other than `\n` is too many.
            let mut next = 0u32;
            for r in chars.ranges() {
                let (start, end) = (u32::from(r.start()), u32::from(r.end()));
                if start > next && !(start == 11 && next == 10) {
                    return None;
                }
                next = next.max(end + 1);
            }
            if next <= 0x10_FFFF {
                return None;
            }
            true
        }
    };
    let min = usize::try_from(rep.min).ok()?;
    if unicode && min > 1 {
        return None;
    }
    Some(min)
}
