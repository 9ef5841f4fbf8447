//! The compacted log: each dropped result's value replaced by its placeholder, in place,
//! and its echoes (the harness's own copies) emptied; every other byte of the log as it was; a note at the end of the last placeholder of each
//! turn that lost results; and, once anything is dropped, a note at the head of the first
//! prompt asking the model to check the state with tools.

use anyhow::{Context, Result};

use super::plan::{Plan, placeholder};
use super::{Echo, Transcript, span, steps};

/// The note put at the head of the first prompt once anything is dropped.
pub const SESSION_NOTE: &str = "[tj compact: stale tool results in this session were replaced by placeholders; each names `tj expand ID`, which prints the original. Before reporting work as done, check the state of files, builds and tests with tools again.]\n\n";

/// One dropped result, ready to be stored.
#[derive(Clone, Debug)]
pub struct Dropped {
    /// The index of the result in [`Transcript::results`].
    pub result: usize,
    /// The store id its text will have (from its content, never a clock).
    pub id: String,
}

/// The compacted log, and the results it dropped with their store ids.
#[derive(Clone, Debug)]
pub struct Compacted {
    /// The new log.
    pub bytes: Vec<u8>,
    /// What was dropped.
    pub dropped: Vec<Dropped>,
}

/// Builds the compacted log of `t` (whose text is `bytes`) under `plan`.
pub fn rewrite(t: &Transcript, bytes: &[u8], plan: &Plan) -> Result<Compacted> {
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut dropped = Vec::new();
    let drops: Vec<usize> = plan.dropped().collect();
    for (k, &i) in drops.iter().enumerate() {
        let r = &t.results[i];
        let text = r.text.as_deref().unwrap_or_default();
        let id = crate::store::id_of(text.as_bytes()).0;
        let mut new = placeholder(t, r, &plan.verdicts[i].why, &id);
        let turn = t.lines[t.calls[r.call].line].turn;
        let last_of_turn =
            drops.get(k + 1).is_none_or(|&n| t.lines[t.calls[t.results[n].call].line].turn != turn);
        if last_of_turn {
            let lost = drops
                .iter()
                .filter(|&&n| t.lines[t.calls[t.results[n].call].line].turn == turn)
                .count();
            new.push_str(&format!(
                " [tj compact: this turn lost {lost} stale result{}; run the tool again rather than rely on what it said]",
                if lost == 1 { "" } else { "s" }
            ));
        }
        edits.push(replacement(t, bytes, r.line, &steps(&r.path), |_| json_string(&new))?);
        for echo in &r.echoes {
            let path = steps(&echo.path);
            edits.push(replacement(t, bytes, echo.line, &path, |_| echo_text(echo, &id))?);
        }
        dropped.push(Dropped { result: i, id });
    }
    if !dropped.is_empty()
        && let Some(line) = t.first_user
    {
        edits.push(replacement(t, bytes, line, &steps(&t.first_user_text), |old| {
            let old: String =
                serde_json::from_slice(old).context("the first prompt is not a string")?;
            json_string(&format!("{SESSION_NOTE}{old}"))
        })?);
    }
    edits.sort_by_key(|e| e.0);
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    for (start, end, text) in edits {
        out.extend_from_slice(&bytes[at..start]);
        out.extend_from_slice(text.as_bytes());
        at = end;
    }
    out.extend_from_slice(&bytes[at..]);
    Ok(Compacted { bytes: out, dropped })
}

/// The edit replacing the value at `path` in line `n` by the JSON text `make(old)` returns:
/// its absolute byte range and its new text.
fn replacement(
    t: &Transcript,
    bytes: &[u8],
    n: usize,
    path: &[span::Step<'_>],
    make: impl FnOnce(&[u8]) -> Result<String>,
) -> Result<(usize, usize, String)> {
    let line = t.line_bytes(bytes, n);
    let (start, end) = span::find(line, path).with_context(|| {
        format!("line {}: could not find the value to replace (a bug in tj)", n + 1)
    })?;
    let json = make(&line[start..end])?;
    let base = t.lines[n].start;
    Ok((base + start, base + end, json))
}

/// `text` as a JSON string.
fn json_string(text: &str) -> Result<String> {
    serde_json::to_string(text).context("could not encode a placeholder")
}

/// The JSON text an echo of a result dropped under store id `id` becomes: a string, a short
/// pointer to the placeholder; an array of strings, `[]` (its type kept, so the harness
/// still reads the entry).
fn echo_text(echo: &Echo, id: &str) -> Result<String> {
    if echo.array {
        Ok("[]".to_owned())
    } else {
        json_string(&format!("[tj compact: dropped with the tool result; tj expand {id}]"))
    }
}
