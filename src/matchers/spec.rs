//! What a prebuilt matcher is: a list of patterns, how they are read and what is asked of
//! them, and the one way it is compiled to a dense DFA.
//!
//! This file is compiled twice: by `build.rs`, which compiles every builtin matcher when tj
//! is built and serializes it, and by the crate, which looks a matcher up by the same
//! [`Spec::key`]. Both sides build their specs from the same pattern text, so a spec the
//! build did not prebuild (or built differently) is simply not found, and the caller
//! compiles it at run time as before (and counts it: `matchers::runtime_compiles`). It must
//! therefore depend on nothing but `std` and `regex_automata`.

use regex_automata::MatchKind;
use regex_automata::dfa::{StartKind, dense};
use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_automata::util::syntax;

/// Bumped whenever [`Spec::build`] compiles differently, so that no key of an older
/// build can name a matcher of a newer one.
const FORMAT: u8 = 2;

/// The largest dense DFA a spec may compile to (and its determinization may use). A spec
/// past it is not prebuilt; its caller compiles a lazy DFA at run time instead.
pub const DFA_LIMIT: usize = 8 << 20;

/// A matcher of several patterns whose dense DFA is larger than this is split: its halves
/// are compiled apart (recursively), and a search runs each. Patterns searched together
/// multiply each other's states (`^.*GET` beside `\| .*ERROR`), apart they add up, and
/// each half can stay dense ([`DENSE_LIMIT`]).
pub const SPLIT_LIMIT: usize = 64 << 10;

/// A DFA larger than this dense (one pattern that alone is past [`SPLIT_LIMIT`]) is
/// embedded in its sparse form: several times smaller, but a sparse DFA looks a byte's
/// transition up among its state's ranges, about 120 instructions a byte on cargo's
/// `^\s{0,12}(Compiling|…)` where a dense one takes a few. Every matcher dense, at this
/// limit, costs about 20 MB of binary (measured: `OUT_DIR/prebuilt-sizes.txt`).
pub const DENSE_LIMIT: usize = 64 << 10;

/// JavaScript-style regex flags (`i`, `m`, `s`); the others mean nothing here.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    /// `i`
    pub case_insensitive: bool,
    /// `m`
    pub multi_line: bool,
    /// `s`
    pub dot_all: bool,
}

impl Flags {
    /// Reads the flags of a rule's `"flags": "im"`.
    pub fn parse(flags: Option<&str>) -> Flags {
        let flags = flags.unwrap_or("");
        Flags {
            case_insensitive: flags.contains('i'),
            multi_line: flags.contains('m'),
            dot_all: flags.contains('s'),
        }
    }

    fn bits(self) -> u8 {
        u8::from(self.case_insensitive)
            | u8::from(self.multi_line) << 1
            | u8::from(self.dot_all) << 2
    }

    /// The syntax. `unicode`: Unicode classes and UTF-8 (a pattern with non-ASCII text, so
    /// that `━+` repeats the character); otherwise ASCII classes on bytes, as JavaScript's
    /// `\d`, `\w`, `\b` are.
    pub fn syntax(self, unicode: bool) -> syntax::Config {
        syntax::Config::new()
            .unicode(unicode)
            .utf8(unicode)
            .case_insensitive(self.case_insensitive)
            .multi_line(self.multi_line)
            .dot_matches_new_line(self.dot_all)
    }
}

/// One matcher: its patterns, how they are read, and what is asked of them.
#[derive(Clone, Copy, Debug)]
pub struct Spec<'a> {
    /// Unicode syntax (see [`Flags::syntax`]); ASCII patterns are read without it.
    pub unicode: bool,
    /// The flags, for all patterns alike.
    pub flags: Flags,
    /// The patterns, in order; a matcher answers whether any of them matches.
    pub patterns: &'a [&'a str],
}

impl Spec<'_> {
    /// The spec's identity: a 64-bit FNV-1a hash of everything that decides what the
    /// compiled matcher matches.
    pub fn key(&self) -> u64 {
        let mut hash = Fnv::new();
        hash.bytes(&[FORMAT, u8::from(self.unicode), self.flags.bits()]);
        hash.bytes(&(self.patterns.len() as u64).to_le_bytes());
        for pattern in self.patterns {
            hash.bytes(&(pattern.len() as u64).to_le_bytes());
            hash.bytes(pattern.as_bytes());
        }
        hash.0
    }

    /// Compiles the spec to a dense DFA for unanchored searches: no capture groups, and for
    /// Unicode patterns ASCII word boundaries (see [`ascii_word_boundaries`]).
    pub fn build(&self) -> Result<dense::DFA<Vec<u32>>, String> {
        self.build_with(StartKind::Unanchored)
    }

    /// [`Spec::build`] for searches anchored at the start of the haystack, for a spec whose
    /// every pattern can only match there ([`Spec::is_anchored`]): such a search stops as
    /// soon as no pattern can match any more, where an unanchored one walks to the end.
    pub fn build_anchored(&self) -> Result<dense::DFA<Vec<u32>>, String> {
        self.build_with(StartKind::Anchored)
    }

    /// Returns true if and only if every pattern of the spec can match only at the start of
    /// the haystack (each begins with `^`, in every alternative, outside multi-line mode).
    pub fn is_anchored(&self) -> bool {
        thompson::Compiler::new()
            .syntax(self.flags.syntax(self.unicode))
            .configure(thompson::Config::new().which_captures(WhichCaptures::None).utf8(false))
            .build_many(&self.rewritten())
            .is_ok_and(|nfa| nfa.is_always_start_anchored())
    }

    /// The patterns as compiled: with ASCII word boundaries if Unicode.
    fn rewritten(&self) -> Vec<String> {
        if self.unicode {
            self.patterns.iter().map(|p| ascii_word_boundaries(p)).collect()
        } else {
            self.patterns.iter().map(|p| (*p).to_owned()).collect()
        }
    }

    fn build_with(&self, start: StartKind) -> Result<dense::DFA<Vec<u32>>, String> {
        dense::Builder::new()
            .configure(
                dense::Config::new()
                    .match_kind(MatchKind::LeftmostFirst)
                    .start_kind(start)
                    .dfa_size_limit(Some(DFA_LIMIT))
                    .determinize_size_limit(Some(DFA_LIMIT)),
            )
            .syntax(self.flags.syntax(self.unicode))
            .thompson(thompson::Config::new().which_captures(WhichCaptures::None).utf8(false))
            .build_many(&self.rewritten())
            .map_err(|err| err.to_string())
    }
}

/// 64-bit FNV-1a.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// `pattern` with `\b` and `\B` outside classes made ASCII word boundaries (`(?-u:\b)`).
///
/// A Unicode word boundary is something no DFA can do (it gives up on the first non-ASCII
/// byte), and JavaScript's `\b`, the rule files' dialect, is ASCII anyway: `[kMG]?B\b`
/// after `×` is a boundary in both.
pub fn ascii_word_boundaries(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars().peekable();
    // Depth of `[…]` classes (regex-syntax nests them); a `]` first in a class is literal.
    let mut depth = 0_usize;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(b @ ('b' | 'B')) if depth == 0 => {
                    out.push_str("(?-u:\\");
                    out.push(b);
                    out.push(')');
                }
                Some(next) => {
                    out.push(c);
                    out.push(next);
                }
                None => out.push(c),
            },
            '[' => {
                depth += 1;
                out.push(c);
                if chars.peek() == Some(&'^') {
                    out.extend(chars.next());
                }
                if chars.peek() == Some(&']') {
                    out.extend(chars.next());
                }
            }
            ']' if depth > 0 => {
                depth -= 1;
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// `literals` as one regex alternation (regex-syntax's meta characters escaped), for a literal set that is searched
/// as a DFA; `case_insensitive` is then the spec's flag.
pub fn literal_alternation(literals: &[&str]) -> String {
    let mut out = String::new();
    for (i, literal) in literals.iter().enumerate() {
        if i > 0 {
            out.push('|');
        }
        for c in literal.chars() {
            if "\\.+*?()|[]{}^$#&-~".contains(c) {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out
}
