//! Where one value sits in the text of a JSON line, so that `tj compact` can replace it
//! and leave every other byte of the line as it was (serde_json's `Value` sorts object keys:
//! re-serializing a whole line would reorder them).
//!
//! The line has already been parsed by serde_json, so this scanner only has to walk valid
//! JSON; on anything else it answers `None`.

/// One step of a path into a JSON document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step<'a> {
    /// The member of an object with this key (the last one, as serde_json takes it, if the
    /// key is repeated).
    Key(&'a str),
    /// The element of an array at this index.
    Index(usize),
}

/// The byte range of the value at `path` in `text`, or `None` if there is none.
///
/// ```
/// use tj::session::span::{find, Step};
/// let line = br#"{"b":1,"a":{"x":[10,"hi"]}}"#;
/// let (start, end) = find(line, &[Step::Key("a"), Step::Key("x"), Step::Index(1)]).unwrap();
/// assert_eq!(&line[start..end], br#""hi""#);
/// ```
pub fn find(text: &[u8], path: &[Step<'_>]) -> Option<(usize, usize)> {
    let mut start = skip_ws(text, 0);
    for step in path {
        start = match *step {
            Step::Key(key) => member(text, start, key)?,
            Step::Index(index) => element(text, start, index)?,
        };
    }
    Some((start, value_end(text, start)?))
}

/// The start of the value of the last member `key` of the object at `pos`.
fn member(text: &[u8], pos: usize, key: &str) -> Option<usize> {
    if text.get(pos) != Some(&b'{') {
        return None;
    }
    let mut pos = skip_ws(text, pos + 1);
    let mut found = None;
    if text.get(pos) == Some(&b'}') {
        return None;
    }
    loop {
        let key_end = string_end(text, pos)?;
        let matches = key_is(&text[pos..key_end], key);
        pos = skip_ws(text, key_end);
        if text.get(pos) != Some(&b':') {
            return None;
        }
        let value = skip_ws(text, pos + 1);
        if matches {
            found = Some(value);
        }
        pos = skip_ws(text, value_end(text, value)?);
        match text.get(pos)? {
            b',' => pos = skip_ws(text, pos + 1),
            b'}' => return found,
            _ => return None,
        }
    }
}

/// The start of element `index` of the array at `pos`.
fn element(text: &[u8], pos: usize, index: usize) -> Option<usize> {
    if text.get(pos) != Some(&b'[') {
        return None;
    }
    let mut pos = skip_ws(text, pos + 1);
    if text.get(pos) == Some(&b']') {
        return None;
    }
    let mut i = 0;
    loop {
        if i == index {
            return Some(pos);
        }
        pos = skip_ws(text, value_end(text, pos)?);
        match text.get(pos)? {
            b',' => pos = skip_ws(text, pos + 1),
            _ => return None,
        }
        i += 1;
    }
}

/// Returns true if and only if the JSON string `quoted` (quotes included) is `key`.
fn key_is(quoted: &[u8], key: &str) -> bool {
    let inner = &quoted[1..quoted.len() - 1];
    if !inner.contains(&b'\\') {
        return inner == key.as_bytes();
    }
    serde_json::from_slice::<String>(quoted).is_ok_and(|k| k == key)
}

/// The end of the value starting at `pos`.
fn value_end(text: &[u8], pos: usize) -> Option<usize> {
    match text.get(pos)? {
        b'"' => string_end(text, pos),
        b'{' | b'[' => container_end(text, pos),
        _ => {
            let len = text[pos..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n'))
                .unwrap_or(text.len() - pos);
            (len > 0).then_some(pos + len)
        }
    }
}

/// The end of the string starting at `pos` (one past its closing quote).
fn string_end(text: &[u8], pos: usize) -> Option<usize> {
    if text.get(pos) != Some(&b'"') {
        return None;
    }
    let mut i = pos + 1;
    while i < text.len() {
        match text[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The end of the object or array starting at `pos`: brackets counted outside strings.
fn container_end(text: &[u8], pos: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = pos;
    while i < text.len() {
        match text[i] {
            b'"' => {
                i = string_end(text, i)?;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The first position at or after `pos` that is not JSON whitespace.
fn skip_ws(text: &[u8], mut pos: usize) -> usize {
    while pos < text.len() && matches!(text[pos], b' ' | b'\t' | b'\r' | b'\n') {
        pos += 1;
    }
    pos
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nested_values_and_the_last_of_a_repeated_key() {
        let line = br#" { "k" : [ {"a":"x\"}"} , {"c":{"d":[1,2]},"c":"last"} ] , "z":true } "#;
        let at = |path: &[Step<'_>]| find(line, path).map(|(s, e)| &line[s..e]);
        assert_eq!(at(&[Step::Key("k"), Step::Index(0), Step::Key("a")]), Some(&br#""x\"}""#[..]));
        assert_eq!(at(&[Step::Key("k"), Step::Index(1), Step::Key("c")]), Some(&br#""last""#[..]));
        assert_eq!(at(&[Step::Key("z")]), Some(&b"true"[..]));
        assert_eq!(at(&[Step::Key("k"), Step::Index(2)]), None);
        assert_eq!(at(&[Step::Key("nope")]), None);
    }

    #[test]
    fn an_escaped_key_is_compared_decoded() {
        let line = br#"{"\u0061":"yes"}"#;
        assert_eq!(find(line, &[Step::Key("a")]), Some((10, 15)));
    }
}
