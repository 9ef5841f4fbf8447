//! Placeholder until the real module lands (issue 5).
#![allow(missing_docs, unreachable_pub, dead_code)]
pub struct Limits {
    pub max_parse_bytes: usize,
    pub array_head: usize,
    pub array_tail: usize,
    pub max_keys: usize,
    pub max_string: usize,
}
impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_parse_bytes: 512 * 1024,
            array_head: 3,
            array_tail: 2,
            max_keys: 20,
            max_string: 200,
        }
    }
}
pub struct Elided {
    pub text: String,
    pub notes: Vec<String>,
}
pub fn elide(_text: &str, _limits: &Limits, _keep_value: &dyn Fn(&str) -> bool) -> Option<Elided> {
    None
}
