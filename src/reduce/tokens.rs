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
    if text.is_ascii() {
        return latin(text.len());
    }
    let (mut other, mut cjk) = (0usize, 0usize);
    for c in text.chars() {
        if is_cjk(c) {
            cjk += 1;
        } else {
            other += 1;
        }
    }
    latin(other) + (cjk * 3).div_ceil(4)
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
        for c in text.chars() {
            if is_cjk(c) {
                self.cjk += 1;
            } else {
                self.other += 1;
            }
        }
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

    #[test]
    fn accented_latin_counts_as_latin() {
        assert_eq!(estimate("é"), 1);
        assert_eq!(estimate(&"é".repeat(38)), 10);
    }
}
