//! Placeholder until the real module lands (issue 5).
#![allow(missing_docs, unreachable_pub, dead_code)]
pub struct Layout {
    pub header: usize,
    pub rows: std::ops::Range<usize>,
}
pub fn detect(_lines: &[&str]) -> Option<Layout> {
    None
}
pub fn flagged(_lines: &[&str], _layout: &Layout) -> Vec<usize> {
    Vec::new()
}
pub fn sample(
    lines: &[&str],
    _layout: &Layout,
    _evidence: &[bool],
    _head: usize,
    _tail: usize,
) -> Vec<bool> {
    vec![true; lines.len()]
}
