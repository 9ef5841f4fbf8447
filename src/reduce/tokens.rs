//! The token estimate the gate compares (DESIGN.md "Gate"): about 3.8 characters per token
//! for Latin text and 0.75 tokens per CJK character. An estimate, not a tokenizer: it only
//! has to rank a candidate against its original consistently, and it must be cheap.

/// Estimated tokens in `text`.
///
/// ```
/// assert_eq!(tj::reduce::tokens::estimate(""), 0);
/// assert_eq!(tj::reduce::tokens::estimate("abcd"), 2); // 4 / 3.8, rounded up
/// assert_eq!(tj::reduce::tokens::estimate("漢字"), 2); // 2 × 0.75, rounded up
/// ```
pub fn estimate(text: &str) -> usize {
    let mut tally = Tally::default();
    tally.add(text);
    tally.tokens()
}

/// A running count for text that arrives in pieces: the estimate of the pieces joined is
/// the estimate of the whole, without building it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Characters outside CJK scripts.
    pub other: usize,
    /// CJK characters.
    pub cjk: usize,
    /// Bytes.
    pub bytes: usize,
}

impl Tally {
    /// Adds `text`.
    pub fn add(&mut self, text: &str) {
        self.bytes += text.len();
        if text.is_ascii() {
            self.other += text.len();
            return;
        }
        // Outputs are mostly ASCII with a few symbols (`✓`, `─`, `é`): count characters
        // by their first bytes, a pass the compiler vectorises, and decode only those of
        // three bytes or more, where every CJK range lies.
        let chars = starts_of_chars(text.as_bytes());
        let cjk = cjk_among_long_chars(text);
        self.cjk += cjk;
        self.other += chars - cjk;
    }

    /// Adds what `other` counted: the tally of this text followed by that one.
    pub fn merge(&mut self, other: Tally) {
        self.other += other.other;
        self.cjk += other.cjk;
        self.bytes += other.bytes;
    }

    /// Characters counted.
    pub fn chars(&self) -> usize {
        self.other + self.cjk
    }

    /// Estimated tokens, as [`estimate`] gives for the whole text.
    pub fn tokens(&self) -> usize {
        latin(self.other) + (self.cjk * 3).div_ceil(4)
    }
}

/// Bytes of `bytes` that begin a character (all but UTF-8 continuation bytes).
fn starts_of_chars(bytes: &[u8]) -> usize {
    // Counted in blocks of at most 255 bytes into a `u8`, which the compiler turns into
    // byte-wide vector lanes. A continuation byte is `0b10xx_xxxx`: below -64 as an `i8`.
    bytes
        .chunks(255)
        .map(|block| usize::from(block.iter().fold(0u8, |n, &b| n + u8::from(b as i8 >= -64))))
        .sum()
}

/// CJK characters in `text`: each is three or four bytes long (all lie past U+2E80), so
/// only characters whose first byte is `0xE0` or more are decoded, and blocks of 32 bytes
/// without one are passed over whole.
fn cjk_among_long_chars(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut cjk = 0;
    for (b, block) in bytes.chunks(32).enumerate() {
        if block.iter().fold(0u8, |max, &x| max.max(x)) < 0xE0 {
            continue;
        }
        for (i, &x) in block.iter().enumerate() {
            // In a `str`, a byte of 0xE0 or more always begins a character (continuation
            // bytes are below 0xC0), so `b * 32 + i` is a character boundary.
            if x >= 0xE0 {
                let c = text[b * 32 + i..].chars().next().unwrap_or_default();
                cjk += usize::from(is_cjk(c));
            }
        }
    }
    cjk
}

fn latin(chars: usize) -> usize {
    (chars * 10).div_ceil(38)
}

/// Returns true if and only if `c` is a CJK ideograph, kana, hangul or full-width form:
/// scripts where one character is close to one token or more.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x2E80..=0x2FDF | 0x3000..=0x30FF | 0x3100..=0x31FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF
        | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF | 0x20000..=0x3FFFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin_is_about_3_8_chars_per_token() {
        assert_eq!(estimate(&"a".repeat(38)), 10);
        assert_eq!(estimate(&"a".repeat(39)), 11);
    }

    #[test]
    fn cjk_counts_three_quarters_each() {
        assert_eq!(estimate(&"字".repeat(8)), 6);
        assert_eq!(estimate("ab字"), 1 + 1);
    }

    #[test]
    fn tally_of_pieces_equals_estimate_of_the_whole() {
        let pieces = ["abc", "\n", "漢字かな", "\n", "résumé"];
        let mut tally = Tally::default();
        for p in pieces {
            tally.add(p);
        }
        let whole = pieces.concat();
        assert_eq!(tally.tokens(), estimate(&whole));
        assert_eq!(tally.chars(), whole.chars().count());
        assert_eq!(tally.bytes, whole.len());
    }

    /// The count as it was first written: a character at a time.
    fn by_chars(text: &str) -> (usize, usize) {
        let cjk = text.chars().filter(|&c| is_cjk(c)).count();
        (text.chars().count() - cjk, cjk)
    }

    proptest::proptest! {
        #[test]
        fn tally_counts_as_a_walk_over_the_characters(
            text in "(?s)[a-z \n]{0,40}([éÿ✓─漢字かな한𠀀😀\u{fffd}\u{7ff}]{0,3}[a-z ]{0,40}){0,12}",
        ) {
            let mut tally = Tally::default();
            tally.add(&text);
            proptest::prop_assert_eq!((tally.other, tally.cjk), by_chars(&text));
            proptest::prop_assert_eq!(tally.bytes, text.len());
        }
    }

    #[test]
    fn tally_counts_characters_across_blocks() {
        // A character of three or four bytes that straddles a 32-byte block, and one that
        // begins a block.
        for pad in 0..40 {
            for c in ["漢", "𠀀", "✓", "é", "ÿ", "\u{fffd}"] {
                let text = format!("{}{c}{}{c}", "a".repeat(pad), "b".repeat(31));
                let mut tally = Tally::default();
                tally.add(&text);
                assert_eq!((tally.other, tally.cjk), by_chars(&text), "{text:?}");
            }
        }
    }

    #[test]
    fn accented_latin_counts_as_latin() {
        assert_eq!(estimate("é"), 1);
        assert_eq!(estimate(&"é".repeat(38)), 10);
    }
}
