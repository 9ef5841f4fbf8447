//! The line plan of a lossy candidate: which lines of the rendered original stay, which go
//! and why, and the omission markers that stand for what went.
//!
//! Every kept line is a verbatim line of the original (an over-long line is cut in the
//! middle, visibly). Every omitted run becomes one marker naming the original line range it
//! stands for, so `tj expand ID --lines A:B` brings back exactly those lines. A run whose
//! marker would cost more than its lines is kept instead: a marker must never make a
//! rendition worse.

use std::borrow::Cow;

use super::tokens;
use crate::text::{ceil_char_boundary, floor_char_boundary};

/// Why a line was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Drop {
    /// A blank line at an edge or inside a run of blank lines.
    Blank,
    /// It matched one of the rule's skip patterns.
    Noise,
    /// The rule's keep patterns matched other lines, not this one.
    Filtered,
    /// It repeated the line before it.
    Repeat,
    /// It differed from the lines around it only in timestamps, ids, durations or counts
    /// (the `log` shape folds such runs, keeping the first and last).
    Similar,
    /// It was outside the head/tail window and not evidence or next to evidence.
    Window,
}

/// Per-line decisions over the rendered original.
#[derive(Clone, Debug)]
pub struct Plan {
    /// `None` keeps the line.
    pub state: Vec<Option<Drop>>,
    /// For grouped shapes (search hits): per line, its group (0 = none) and the length of
    /// the `path:` prefix a line may shed when the line rendered just before it is of the
    /// same group. Lossless: the prefix is the one the line before it shows.
    pub groups: Option<Vec<(u32, u32)>>,
    /// Whether over-long lines that are not evidence are cut in the middle. Off for JSON:
    /// a cut through a compact document leaves a fragment no one can read.
    pub cut_long_lines: bool,
}

/// Counts of omitted lines, by why.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Omitted {
    /// Blank lines.
    pub blank: usize,
    /// Lines matching skip patterns.
    pub noise: usize,
    /// Lines left out by keep patterns.
    pub filtered: usize,
    /// Repeated lines.
    pub repeats: usize,
    /// Lines folded as similar to their neighbours (the `log` shape).
    pub similar: usize,
    /// Lines outside the window.
    pub window: usize,
    /// Over-long lines cut in the middle (not omitted, but shortened).
    pub trimmed_lines: usize,
}

impl Omitted {
    /// All omitted lines.
    pub fn lines(&self) -> usize {
        self.blank + self.noise + self.filtered + self.repeats + self.similar + self.window
    }
}

/// Lines longer than this (in bytes) that are not evidence are cut in the middle.
pub const MAX_LINE_BYTES: usize = 1024;
const TRIM_HEAD: usize = 512;
const TRIM_TAIL: usize = 256;

impl Plan {
    /// A plan that keeps every line.
    pub fn keep_all(len: usize) -> Plan {
        Plan { state: vec![None; len], groups: None, cut_long_lines: true }
    }

    /// Indices of the lines still kept.
    pub fn kept(&self) -> Vec<usize> {
        self.state.iter().enumerate().filter(|(_, s)| s.is_none()).map(|(i, _)| i).collect()
    }

    /// Drops blank lines at both edges of what is kept.
    pub fn trim_blank_edges(&mut self, lines: &[&str]) {
        let kept = self.kept();
        for &i in kept.iter().take_while(|&&i| lines[i].is_empty()) {
            self.state[i] = Some(Drop::Blank);
        }
        for &i in kept.iter().rev().take_while(|&&i| lines[i].is_empty()) {
            self.state[i] = Some(Drop::Blank);
        }
    }

    /// Keeps one blank line of every run of kept blank lines.
    pub fn collapse_blank_runs(&mut self, lines: &[&str]) {
        let mut prev_blank = false;
        for i in self.kept() {
            let blank = lines[i].is_empty();
            if blank && prev_blank {
                self.state[i] = Some(Drop::Blank);
            }
            prev_blank = blank;
        }
    }

    /// Drops kept lines equal to the kept line before them.
    pub fn dedupe_adjacent(&mut self, lines: &[&str]) {
        let mut prev: Option<&str> = None;
        for i in self.kept() {
            if prev == Some(lines[i]) && !lines[i].is_empty() {
                self.state[i] = Some(Drop::Repeat);
            } else {
                prev = Some(lines[i]);
            }
        }
    }

    /// Folds runs of similar lines (the `log` shape): of each run `start..end` of `period`-line
    /// blocks, the first and last blocks stay and the lines between go as [`Drop::Similar`].
    /// Evidence lines always stay (the folds never contain one; this re-checks).
    pub fn fold_similar(&mut self, folds: &[super::shape::log::Fold], evidence: &[bool]) {
        for fold in folds {
            for i in fold.omitted() {
                if self.state[i].is_none() && !evidence[i] {
                    self.state[i] = Some(Drop::Similar);
                }
            }
        }
    }

    /// Drops, as [`Drop::Window`], every kept line whose `keep` flag is false (a shape's own
    /// window, such as the `table` shape's sampling). Evidence lines always stay.
    pub fn keep_only(&mut self, keep: &[bool], evidence: &[bool]) {
        for (i, state) in self.state.iter_mut().enumerate() {
            if state.is_none() && !keep[i] && !evidence[i] {
                *state = Some(Drop::Window);
            }
        }
    }

    /// Keeps the first `head` and last `tail` kept lines, every evidence line and the kept
    /// line on each side of an evidence line; drops the rest as [`Drop::Window`].
    ///
    /// Never drops a line in `evidence`: `gate::judge` re-checks this, so a bug here costs
    /// savings, not correctness.
    pub fn window(&mut self, evidence: &[bool], head: usize, tail: usize) {
        let kept = self.kept();
        let n = kept.len();
        if head.saturating_add(tail) >= n {
            return;
        }
        let mut keep = vec![false; n];
        keep[..head].fill(true);
        keep[n - tail..].fill(true);
        self.cut_to(&kept, keep, evidence);
    }

    /// Keeps, of the `kept` lines, those `keep` marks and every evidence line with the kept
    /// line on each side; drops the rest as [`Drop::Window`].
    fn cut_to(&mut self, kept: &[usize], mut keep: Vec<bool>, evidence: &[bool]) {
        let n = kept.len();
        for (pos, &i) in kept.iter().enumerate() {
            if evidence[i] {
                keep[pos.saturating_sub(1)..(pos + 2).min(n)].fill(true);
            }
        }
        for (pos, &i) in kept.iter().enumerate() {
            if !keep[pos] {
                self.state[i] = Some(Drop::Window);
            }
        }
    }

    /// The data window, for a data output past the data budget (`reduce::data`): keeps the
    /// kept lines from the start up to 2/5 of `budget` estimated tokens, from the end up to
    /// 1/5, every evidence line with the kept line on each side, and runs of
    /// [`SAMPLE_RUN`] lines spread evenly over the middle for about the last 2/5; the rest
    /// goes as [`Drop::Window`]. Each gap becomes a marker naming its line range, so every
    /// sampled line's number in the original is the one after the marker above it.
    pub fn sample(&mut self, lines: &[&str], evidence: &[bool], budget: usize) {
        let kept = self.kept();
        let n = kept.len();
        // A kept line costs its tokens, and a marker when a dropped run (repeats, noise)
        // comes before it.
        let cost: Vec<usize> = kept
            .iter()
            .enumerate()
            .map(|(pos, &i)| {
                let gap = pos > 0 && kept[pos - 1] + 1 < i;
                tokens::estimate(lines[i]) + 1 + if gap { MARKER_TOKENS } else { 0 }
            })
            .collect();
        if cost.iter().sum::<usize>() <= budget {
            return;
        }
        let mut keep = vec![false; n];
        let head = take_while_within(cost.iter(), budget * 2 / 5);
        let tail = take_while_within(cost[head..].iter().rev(), budget / 5);
        keep[..head].fill(true);
        keep[n - tail..].fill(true);
        let middle = head..n - tail;
        let share = budget * 2 / 5;
        let average = cost[middle.clone()].iter().sum::<usize>() / middle.len().max(1);
        // A sampled run costs its lines and the marker before it.
        let runs = (share / (SAMPLE_RUN * average.max(1) + MARKER_TOKENS))
            .min(middle.len() / (2 * SAMPLE_RUN));
        if let Some(stride) = middle.len().checked_div(runs) {
            for r in 0..runs {
                let start = middle.start + r * stride + (stride - SAMPLE_RUN) / 2;
                keep[start..start + SAMPLE_RUN].fill(true);
            }
        }
        self.cut_to(&kept, keep, evidence);
    }

    /// Groups search hits by file (the `search-hits` shape): `path:N:text` lines of one
    /// path, or `N:text` lines under a heading line (rg's `--heading` form), form a group.
    /// Each group keeps its first `per_group` hits; the first `head` and last `tail` groups
    /// are kept and the rest dropped as [`Drop::Window`]. Evidence lines always stay.
    /// Within a group, a hit rendered right after another of the same file sheds its
    /// `path:` prefix (lossless: the line above names the path). Returns false, changing
    /// nothing, when there are no hits.
    pub fn group_search_hits(
        &mut self,
        lines: &[&str],
        evidence: &[bool],
        per_group: usize,
        head: usize,
        tail: usize,
    ) -> bool {
        let mut groups = vec![(0u32, 0u32); lines.len()];
        // Per group (index = group id): does it start with a heading line?
        let mut headed = vec![false];
        let mut current: Option<&str> = None;
        let kept = self.kept();
        for (pos, &i) in kept.iter().enumerate() {
            let line = lines[i];
            let in_heading = headed.last().copied().unwrap_or(false) && current.is_some();
            if let Some(path) = hit_path(line) {
                if current != Some(path) || in_heading {
                    headed.push(false);
                    current = Some(path);
                }
                groups[i] = ((headed.len() - 1) as u32, (path.len() + 1) as u32);
            } else if in_heading && is_bare_hit(line) {
                groups[i] = ((headed.len() - 1) as u32, 0);
            } else if !line.is_empty() && kept.get(pos + 1).is_some_and(|&j| is_bare_hit(lines[j]))
            {
                // A heading: the path line above rg's `--heading` hits.
                headed.push(true);
                current = Some(line);
                groups[i] = ((headed.len() - 1) as u32, 0);
            } else {
                current = None;
            }
        }
        let total = headed.len() - 1;
        if total == 0 {
            return false;
        }
        let mut seen = vec![0usize; total + 1];
        for &i in &kept {
            let g = groups[i].0 as usize;
            if g == 0 {
                continue;
            }
            seen[g] += 1;
            let outside = g > head && g <= total.saturating_sub(tail);
            // A heading line is its group's first member, on top of `per_group` hits.
            let cap = per_group + usize::from(headed[g]);
            if !evidence[i] && (outside || seen[g] > cap) {
                self.state[i] = Some(Drop::Window);
            }
        }
        self.groups = Some(groups);
        true
    }

    /// Renders the plan: kept lines verbatim (over-long non-evidence lines cut), each
    /// omitted run as one marker, blank-only runs silently. Returns the body lines and the
    /// counts of what went.
    pub fn render<'a>(&self, lines: &[&'a str], evidence: &[bool]) -> (Vec<Cow<'a, str>>, Omitted) {
        let mut out: Vec<Cow<'a, str>> = Vec::new();
        let mut omitted = Omitted::default();
        let mut i = 0;
        let n = lines.len();
        // The group of the line rendered last; a marker or an ungrouped line resets it.
        let mut last_group = 0u32;
        let show =
            |j: usize, out: &mut Vec<Cow<'a, str>>, omitted: &mut Omitted, last: &mut u32| {
                let (group, prefix) = self.groups.as_ref().map_or((0, 0), |g| g[j]);
                let line = if group != 0 && group == *last && !evidence[j] {
                    &lines[j][prefix as usize..]
                } else {
                    lines[j]
                };
                *last = group;
                out.push(trim_long(line, evidence[j] || !self.cut_long_lines, omitted));
            };
        while i < n {
            match self.state[i] {
                None => {
                    show(i, &mut out, &mut omitted, &mut last_group);
                    i += 1;
                }
                Some(_) => {
                    let start = i;
                    while i < n && self.state[i].is_some() {
                        i += 1;
                    }
                    let run = start..i;
                    let reasons = &self.state[run.clone()];
                    // Blank lines and lines the rule names as noise go silently: the
                    // closing notice counts them, and a marker per skipped line between
                    // kept ones (a log with DEBUG lines interleaved) would cost more than
                    // it tells. What the window cuts, content tj did not judge, is marked.
                    if reasons
                        .iter()
                        .all(|r| matches!(r, Some(Drop::Blank | Drop::Noise | Drop::Filtered)))
                    {
                        for reason in reasons.iter().flatten() {
                            match reason {
                                Drop::Noise => omitted.noise += 1,
                                Drop::Filtered => omitted.filtered += 1,
                                _ => omitted.blank += 1,
                            }
                        }
                        last_group = 0;
                        continue;
                    }
                    let marker = marker(reasons, start, i - 1);
                    let run_bytes: usize = lines[run.clone()].iter().map(|l| l.len() + 1).sum();
                    if run_bytes <= marker.len() + 1 {
                        // Lossless: cheaper to show the lines than to say they went.
                        for j in run {
                            show(j, &mut out, &mut omitted, &mut last_group);
                        }
                        continue;
                    }
                    for reason in reasons.iter().flatten() {
                        match reason {
                            Drop::Blank => omitted.blank += 1,
                            Drop::Noise => omitted.noise += 1,
                            Drop::Filtered => omitted.filtered += 1,
                            Drop::Repeat => omitted.repeats += 1,
                            Drop::Similar => omitted.similar += 1,
                            Drop::Window => omitted.window += 1,
                        }
                    }
                    out.push(Cow::Owned(marker));
                    last_group = 0;
                }
            }
        }
        (out, omitted)
    }
}

/// Lines in each sampled run of [`Plan::sample`].
pub const SAMPLE_RUN: usize = 3;

/// About what one omission marker costs, in estimated tokens.
const MARKER_TOKENS: usize = 12;

/// How many of `costs`, taken in order, fit in `limit`.
fn take_while_within<'a>(costs: impl Iterator<Item = &'a usize>, limit: usize) -> usize {
    let mut spent = 0;
    costs
        .take_while(|&&c| {
            spent += c;
            spent <= limit
        })
        .count()
}

/// The path of a `path:N:` or `path:N-` search hit (grep -n, rg -n, git grep -n).
pub fn hit_path(line: &str) -> Option<&str> {
    let bytes = line.as_bytes();
    let mut from = 0;
    while let Some(pos) = line[from..].find(':') {
        let colon = from + pos;
        let digits = bytes[colon + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
        let after = bytes.get(colon + 1 + digits);
        if colon > 0 && digits > 0 && matches!(after, Some(b':' | b'-')) {
            return Some(&line[..colon]);
        }
        from = colon + 1;
    }
    None
}

/// Returns true if and only if `line` is an `N:text` hit with no path (rg `--heading`).
fn is_bare_hit(line: &str) -> bool {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && matches!(line.as_bytes().get(digits), Some(b':' | b'-'))
}

/// The marker for the omitted run of original lines `first..=last` (0-based).
fn marker(reasons: &[Option<Drop>], first: usize, last: usize) -> String {
    let count = last - first + 1;
    let what = if reasons.iter().all(|r| matches!(r, Some(Drop::Repeat | Drop::Blank))) {
        if count == 1 { "repeated line" } else { "repeated lines" }
    } else if reasons.iter().all(|r| matches!(r, Some(Drop::Similar | Drop::Blank))) {
        if count == 1 { "similar line" } else { "similar lines" }
    } else if count == 1 {
        "line"
    } else {
        "lines"
    };
    if count == 1 {
        format!("… 1 {what} omitted (L{}) …", first + 1)
    } else {
        format!("… {count} {what} omitted (L{}–{}) …", first + 1, last + 1)
    }
}

/// Returns true if and only if `line` is one of tj's omission markers.
pub fn is_marker(line: &str) -> bool {
    line.starts_with("… ") && line.ends_with(" …") && line.contains(" omitted (L")
}

fn trim_long<'a>(line: &'a str, is_evidence: bool, omitted: &mut Omitted) -> Cow<'a, str> {
    if is_evidence || line.len() <= MAX_LINE_BYTES {
        return Cow::Borrowed(line);
    }
    Cow::Owned(cut_middle(line, TRIM_HEAD, TRIM_TAIL, omitted))
}

/// `line` with all but its first `head` and last `tail` bytes (moved to character
/// boundaries) replaced by a note of how many characters went, counted in `omitted`. The
/// caller has checked that the line is longer than `head + tail`.
pub(super) fn cut_middle(line: &str, head: usize, tail: usize, omitted: &mut Omitted) -> String {
    let head_end = floor_char_boundary(line, head);
    let tail_start = ceil_char_boundary(line, line.len() - tail);
    let cut = line[head_end..tail_start].chars().count();
    omitted.trimmed_lines += 1;
    format!("{} …[{cut} chars cut by tj]… {}", &line[..head_end], &line[tail_start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("line number {i} with some padding to make it long")).collect()
    }

    #[test]
    fn the_data_window_keeps_head_tail_evidence_and_an_even_sample_within_the_budget() {
        let owned = lines(2000);
        let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
        let mut evidence = vec![false; refs.len()];
        evidence[1234] = true;
        let mut plan = Plan::keep_all(refs.len());
        plan.sample(&refs, &evidence, 2000);
        let kept = plan.kept();
        assert!(kept.contains(&0) && kept.contains(&1999));
        assert!(kept.contains(&1233) && kept.contains(&1234) && kept.contains(&1235));
        let (body, omitted) = plan.render(&refs, &evidence);
        let text: String = body.iter().map(|l| format!("{l}\n")).collect();
        // Near the budget: 2/5 head, 1/5 tail, 2/5 sample and its markers.
        let tokens = tokens::estimate(&text);
        assert!((1500..=2300).contains(&tokens), "{tokens}");
        // The sample is spread: every fifth of the middle has sampled lines.
        for fifth in 0..5 {
            let from = 200 + fifth * 340;
            assert!(kept.iter().any(|&i| (from..from + 340).contains(&i)), "nothing in {from}..");
        }
        assert!(omitted.window > 1000);
        // Small enough already: nothing goes.
        let mut small = Plan::keep_all(refs.len());
        small.sample(&refs, &evidence, 1_000_000);
        assert_eq!(small.kept().len(), refs.len());
    }

    #[test]
    fn window_keeps_head_tail_and_evidence_with_context() {
        let owned = lines(100);
        let l: Vec<&str> = owned.iter().map(String::as_str).collect();
        let mut ev = vec![false; 100];
        ev[50] = true;
        let mut plan = Plan::keep_all(100);
        plan.window(&ev, 3, 2);
        let kept = plan.kept();
        assert_eq!(kept, vec![0, 1, 2, 49, 50, 51, 98, 99]);
        let (body, omitted) = plan.render(&l, &ev);
        assert_eq!(body[3], "… 46 lines omitted (L4–49) …");
        assert_eq!(body[7], "… 46 lines omitted (L53–98) …");
        assert_eq!(omitted.window, 92);
    }

    #[test]
    fn marker_is_not_used_when_the_lines_are_cheaper() {
        let l = vec!["a", "b", "c", "d", "e"];
        let ev = vec![false; 5];
        let mut plan = Plan::keep_all(5);
        plan.window(&ev, 1, 1);
        let (body, omitted) = plan.render(&l, &ev);
        assert_eq!(body, vec!["a", "b", "c", "d", "e"]);
        assert_eq!(omitted.lines(), 0);
    }

    #[test]
    fn repeats_are_named_as_such() {
        let line = "the same line again and again and again";
        let l = vec![line; 10];
        let ev = vec![false; 10];
        let mut plan = Plan::keep_all(10);
        plan.dedupe_adjacent(&l);
        let (body, omitted) = plan.render(&l, &ev);
        assert_eq!(body, vec![line, "… 9 repeated lines omitted (L2–10) …"]);
        assert_eq!(omitted.repeats, 9);
        assert!(is_marker(&body[1]));
    }

    #[test]
    fn blank_edges_and_runs_go_silently() {
        let l = vec!["", "", "a", "", "", "", "b", ""];
        let ev = vec![false; 8];
        let mut plan = Plan::keep_all(8);
        plan.trim_blank_edges(&l);
        plan.collapse_blank_runs(&l);
        let (body, omitted) = plan.render(&l, &ev);
        assert_eq!(body, vec!["a", "", "b"]);
        assert_eq!(omitted.blank, 5);
    }

    #[test]
    fn long_lines_are_cut_in_the_middle_unless_evidence() {
        let long = "x".repeat(5000);
        let l = vec![long.as_str(), long.as_str()];
        let ev = vec![false, true];
        let plan = Plan::keep_all(2);
        let (body, omitted) = plan.render(&l, &ev);
        assert!(body[0].len() < 1000);
        assert!(body[0].contains("…[4232 chars cut by tj]…"));
        assert_eq!(body[1], long);
        assert_eq!(omitted.trimmed_lines, 1);
    }

    #[test]
    fn cutting_respects_char_boundaries() {
        let long = "é".repeat(2000);
        let plan = Plan::keep_all(1);
        let (body, _) = plan.render(&[long.as_str()], &[false]);
        assert!(body[0].starts_with('é'));
    }
}
