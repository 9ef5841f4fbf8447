//! Placeholder until the real module lands (issue 5).
#![allow(missing_docs, unreachable_pub, dead_code)]
pub struct Table {
    pub text: String,
    pub rows: usize,
    pub columns: usize,
    pub verbatim: Vec<usize>,
}
pub fn encode(_text: &str) -> Option<Table> {
    None
}
