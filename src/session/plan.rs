//! Which results `tj compact` drops, and why: a pure function of the transcript, the options
//! and what the store holds.
//!
//! Kept, whatever else holds: the newest `keep_last` messages (and the first prompt, which
//! is never a result), a failed call, an edit, a call that cannot be re-run, a result that
//! is not text alone. Dropped as stale: a read superseded by a later read of the same part
//! of the file (or of all of it) or by a later edit of it; a test/build/lint run superseded
//! by a later run of the same command in the same directory; a listing or search none of
//! whose paths a later message names; a tj rendition whose original the store holds. A
//! result is only dropped if its placeholder is smaller.
//!
//! A read dropped because of an edit never leaves the pre-edit text as the only copy:
//! edits are always kept (their input, in the call, is never touched), so the file's newer
//! state is in context wherever the read was dropped for it.

use std::collections::{HashMap, HashSet};

use aho_corasick::AhoCorasick;

use super::classify::Kind;
use super::{ToolResult, Transcript};
use crate::reduce::tokens::estimate;

/// What the plan is made with.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Messages at the end never touched.
    pub keep_last: usize,
}

/// The decision on one result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Dropped (its content replaced by a placeholder).
    pub drop: bool,
    /// Why, in a few words.
    pub why: String,
}

/// The decisions on every result, in the order of [`Transcript::results`].
#[derive(Clone, Debug)]
pub struct Plan {
    /// One per result.
    pub verdicts: Vec<Verdict>,
    /// The first line of the pinned tail.
    pub pinned_from: usize,
}

impl Plan {
    /// The results dropped.
    pub fn dropped(&self) -> impl Iterator<Item = usize> + '_ {
        self.verdicts.iter().enumerate().filter(|(_, v)| v.drop).map(|(i, _)| i)
    }
}

/// Decides on every result of `t` (`bytes` is its log); `stored` says whether the store
/// holds an artifact id.
pub fn plan(t: &Transcript, bytes: &[u8], options: Options, stored: &dyn Fn(&str) -> bool) -> Plan {
    let messages: Vec<usize> = t.messages().collect();
    let pinned_from = match messages.len().checked_sub(options.keep_last) {
        _ if options.keep_last == 0 => t.lines.len(),
        Some(first) if first > 0 => messages[first],
        _ => 0,
    };
    let superseded = superseded(t);
    let referenced = referenced_listings(t, bytes);
    let verdicts = t
        .results
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let verdict = decide(t, r, pinned_from, superseded[i], referenced.contains(&i), stored);
            match verdict {
                Verdict { drop: true, why } if placeholder_tokens(t, r, &why) >= r.tokens => {
                    Verdict { drop: false, why: format!("smaller than a placeholder ({why})") }
                }
                other => other,
            }
        })
        .collect();
    Plan { verdicts, pinned_from }
}

/// The rules, in order, for one result.
fn decide(
    t: &Transcript,
    r: &ToolResult,
    pinned_from: usize,
    superseded: Option<&'static str>,
    referenced: bool,
    stored: &dyn Fn(&str) -> bool,
) -> Verdict {
    let keep = |why: &str| Verdict { drop: false, why: why.to_owned() };
    let drop = |why: String| Verdict { drop: true, why };
    let call = &t.calls[r.call];
    let Some(text) = &r.text else { return keep("not text alone") };
    if r.line >= pinned_from {
        return keep("in the newest messages");
    }
    if r.failed {
        return keep("the call failed");
    }
    match &call.kind {
        Kind::Edit(_) => return keep("an edit"),
        Kind::Unrepeatable => return keep("cannot be run again"),
        _ => {}
    }
    if let Some(id) = rendition_of_stored(text, stored) {
        return drop(format!("a tj rendition whose original is stored as {id}"));
    }
    match (&call.kind, superseded) {
        (Kind::Read { path, .. }, Some(by)) => {
            drop(format!("superseded by a later {by} of {path}"))
        }
        (Kind::Read { .. }, None) => keep("the newest read of this file"),
        (Kind::Check { .. }, Some(_)) => drop("the same command ran again later".to_owned()),
        (Kind::Check { .. }, None) => keep("the latest run of this command"),
        (Kind::Listing, _) if referenced => keep("a later message names a path it returned"),
        (Kind::Listing, _) => drop("a listing no later message refers to".to_owned()),
        _ => keep("no rule drops it"),
    }
}

/// The id of a tj rendition in `text` (`tj expand ID`) whose original the store holds.
fn rendition_of_stored(text: &str, stored: &dyn Fn(&str) -> bool) -> Option<String> {
    let mut rest = text;
    while let Some(at) = rest.find("tj expand ") {
        rest = &rest[at + "tj expand ".len()..];
        let id: String = rest.chars().take_while(char::is_ascii_hexdigit).collect();
        if id.len() >= 6 && stored(&id) {
            return Some(id);
        }
    }
    None
}

/// For each result, what superseded its call, if anything did: for a read, a later
/// successful edit of the file or read of the same part (or of all of it); for a check, a
/// later successful-or-not run of the same command in the same directory. Only calls that
/// got a result count.
fn superseded(t: &Transcript) -> Vec<Option<&'static str>> {
    #[derive(Default)]
    struct Later {
        edited: bool,
        whole: bool,
        parts: HashSet<String>,
    }
    let mut files: HashMap<&str, Later> = HashMap::new();
    let mut runs: HashSet<(&str, &str)> = HashSet::new();
    let mut out = vec![None; t.results.len()];
    for (i, r) in t.results.iter().enumerate().rev() {
        match &t.calls[r.call].kind {
            Kind::Read { path, whole, part } => {
                let later = files.entry(path).or_default();
                out[i] = if later.edited {
                    Some("edit")
                } else if later.whole || later.parts.contains(part) {
                    Some("read")
                } else {
                    None
                };
                if !r.failed && !is_unchanged_stub(r) {
                    if *whole {
                        later.whole = true;
                    }
                    later.parts.insert(part.clone());
                }
            }
            Kind::Edit(paths) if !r.failed => {
                for path in paths {
                    files.entry(path).or_default().edited = true;
                }
            }
            Kind::Check { command, dir } if !runs.insert((command, dir)) => out[i] = Some("run"),
            _ => {}
        }
    }
    out
}

/// The starts of the text Claude Code returns for a Read of a file it has not seen change
/// since an earlier Read in the conversation, in place of the file's content.
const UNCHANGED_STUBS: [&str; 2] =
    ["File unchanged since last read", "Wasted call \u{2014} file unchanged since your last Read"];

/// Returns true if and only if `r` is a stub that points back at an earlier read instead of
/// holding the file: it supersedes nothing, as the earlier read is the only copy.
fn is_unchanged_stub(r: &ToolResult) -> bool {
    r.text.as_deref().is_some_and(|t| UNCHANGED_STUBS.iter().any(|s| t.trim_start().starts_with(s)))
}

/// Most paths taken from one listing.
const PATHS_PER_LISTING: usize = 2000;

/// The results of listings of which a later message names a returned path: any entry's
/// file name (three characters or more) in a message line after the result's. A file name
/// is a loose test (it also matches elsewhere): it errs toward keeping.
fn referenced_listings(t: &Transcript, bytes: &[u8]) -> HashSet<usize> {
    let mut patterns: Vec<String> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut owners: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, r) in t.results.iter().enumerate() {
        if t.calls[r.call].kind != Kind::Listing {
            continue;
        }
        let mut mine = Vec::new();
        let body = super::codex::output_body(r.text.as_deref().unwrap_or_default());
        for name in body.lines().take(PATHS_PER_LISTING).filter_map(entry_name) {
            let next = patterns.len();
            let p = *index.entry(name.to_owned()).or_insert(next);
            if p == next {
                patterns.push(name.to_owned());
            }
            mine.push(p);
        }
        owners.push((i, mine));
    }
    let mut referenced = HashSet::new();
    if patterns.is_empty() {
        return referenced;
    }
    let Ok(ac) = AhoCorasick::new(&patterns) else {
        // Unreachable for plain strings; keeping every listing is the safe answer.
        return owners.into_iter().map(|(i, _)| i).collect();
    };
    let starts: Vec<usize> = t.lines.iter().map(|l| l.start).collect();
    let mut last = vec![None::<usize>; patterns.len()];
    for m in ac.find_overlapping_iter(bytes) {
        let line = starts.partition_point(|&s| s <= m.start()).saturating_sub(1);
        if t.lines[line].role.is_some() {
            let slot = &mut last[m.pattern().as_usize()];
            *slot = Some(slot.map_or(line, |l: usize| l.max(line)));
        }
    }
    for (i, mine) in owners {
        let line = t.results[i].line;
        if mine.iter().any(|&p| last[p].is_some_and(|l| l > line)) {
            referenced.insert(i);
        }
    }
    referenced
}

/// The file name of a listing's entry: a grep-style `path:line:text` gives its path; an
/// `ls -l` line its last word; anything shorter than three characters nothing.
fn entry_name(line: &str) -> Option<&str> {
    let line = line.trim();
    let path = match line.split_once(':') {
        Some((path, _)) if !path.contains(' ') => path,
        _ => line.rsplit(' ').next().unwrap_or(line),
    };
    let name = path.trim_end_matches('/').rsplit('/').next().unwrap_or(path);
    (name.len() >= 3).then_some(name)
}

/// The placeholder that replaces result `r` when dropped for `why`, stored as `id`.
pub fn placeholder(t: &Transcript, r: &ToolResult, why: &str, id: &str) -> String {
    let call = &t.calls[r.call];
    let mut label: String =
        call.label.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    if label.chars().count() > 120 {
        label = label.chars().take(119).chain(['…']).collect();
    }
    let subject =
        if label.is_empty() { call.tool.clone() } else { format!("{} `{label}`", call.tool) };
    let bytes = r.text.as_deref().map_or(0, str::len);
    format!(
        "[tj compact: the result of {subject} ({bytes} bytes, ~{} tokens) was dropped: {why}. The original: `tj expand {id}`]",
        r.tokens
    )
}

/// Estimated tokens of the placeholder for `r`.
fn placeholder_tokens(t: &Transcript, r: &ToolResult, why: &str) -> usize {
    estimate(&placeholder(t, r, why, "000000000000"))
}

#[cfg(test)]
mod tests {
    use super::entry_name;

    #[test]
    fn entries_give_their_file_names() {
        assert_eq!(entry_name("src/parse.rs:12:fn parse() {"), Some("parse.rs"));
        assert_eq!(
            entry_name("-rw-r--r-- 1 u u 100 Oct 1 09:00 lexer_mod.rs"),
            Some("lexer_mod.rs")
        );
        assert_eq!(entry_name("/w/proj/src/gen/"), Some("gen"));
        assert_eq!(entry_name("a"), None);
    }
}
