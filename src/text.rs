//! Cutting UTF-8 text by bytes without splitting a character: the bounds on ledger fields,
//! recorded commands, delta keys and over-long lines all cut at a byte count.

/// The largest character boundary of `s` at or before byte `i` (`s.len()` past the end).
pub fn floor_char_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest character boundary of `s` at or after byte `i` (`s.len()` past the end).
pub fn ceil_char_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::{ceil_char_boundary, floor_char_boundary};

    #[test]
    fn boundaries_never_split_a_character() {
        let s = "aé…b"; // 1 + 2 + 3 + 1 bytes
        assert_eq!(
            (0..=8).map(|i| floor_char_boundary(s, i)).collect::<Vec<_>>(),
            [0, 1, 1, 3, 3, 3, 6, 7, 7]
        );
        assert_eq!(
            (0..=8).map(|i| ceil_char_boundary(s, i)).collect::<Vec<_>>(),
            [0, 1, 3, 3, 6, 6, 6, 7, 7]
        );
    }
}
