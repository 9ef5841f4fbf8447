//! The never-worse gate and the evidence invariant (DESIGN.md "Evidence", "Gate").
//!
//! A lossy candidate is adopted only if every distinct evidence line of the original is a
//! line of it (not configurable), and it is smaller by ratio, by bytes and by estimated
//! tokens (thresholds configurable). Only [`judge`] builds an [`Adopted`], and only an
//! `Adopted` can become a reduced rendition, so no code path can skip the checks.

use std::collections::HashSet;
use std::fmt;

use super::tokens;

/// More distinct evidence lines than this and a lossy candidate cannot be verified; the
/// original goes out.
pub const MAX_DISTINCT_EVIDENCE: usize = 512;

/// The configurable thresholds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// The largest reduced/original byte ratio adopted.
    pub keep_ratio_max: f64,
    /// The fewest bytes a reduction must save.
    pub min_saving_bytes: usize,
    /// Below this density an unmatched command's output is reduced generically.
    pub density_threshold: f64,
    /// The estimated tokens a data output (a listing, search, query, log) may take after
    /// its lossless re-encodings before any record is dropped.
    pub data_budget: usize,
}

/// The default [`Limits::data_budget`], in estimated tokens.
pub const DATA_BUDGET: usize = 6000;

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            keep_ratio_max: 0.72,
            min_saving_bytes: 500,
            density_threshold: 0.3,
            data_budget: DATA_BUDGET,
        }
    }
}

/// A candidate rendition.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The whole rendition text as it would be emitted.
    pub text: String,
    /// True when nothing was dropped (a re-encoding).
    pub lossless: bool,
}

/// A candidate that passed the gate. Only [`judge`] constructs one.
#[derive(Clone, Debug)]
pub struct Adopted(Candidate);

impl Adopted {
    /// The adopted candidate.
    pub fn candidate(&self) -> &Candidate {
        &self.0
    }

    /// Takes the candidate out.
    pub fn into_candidate(self) -> Candidate {
        self.0
    }
}

/// Why the original went out instead of a reduction.
#[derive(Clone, Debug, PartialEq)]
pub enum Rejection {
    /// An evidence line of the original is not in the candidate.
    MissingEvidence {
        /// The first missing line.
        line: String,
    },
    /// Too many distinct evidence lines to verify a lossy candidate.
    Unverifiable {
        /// How many there were.
        distinct: usize,
    },
    /// Not smaller enough by ratio, bytes or tokens.
    NotSmaller {
        /// Bytes of the original rendition.
        original_bytes: usize,
        /// Bytes of the candidate.
        reduced_bytes: usize,
        /// Estimated tokens of the original.
        original_tokens: usize,
        /// Estimated tokens of the candidate.
        reduced_tokens: usize,
    },
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::MissingEvidence { line } => write!(f, "evidence line missing: {line:?}"),
            Rejection::Unverifiable { distinct } => write!(
                f,
                "{distinct} distinct evidence lines (more than {MAX_DISTINCT_EVIDENCE}): cannot verify a reduction"
            ),
            Rejection::NotSmaller {
                original_bytes,
                reduced_bytes,
                original_tokens,
                reduced_tokens,
            } => write!(
                f,
                "not worth it: {reduced_bytes} of {original_bytes} bytes, {reduced_tokens} of {original_tokens} tokens"
            ),
        }
    }
}

/// The distinct evidence lines of the original, or `Unverifiable`.
pub fn evidence_lines<'a>(
    lines: &[&'a str],
    evidence: &[bool],
) -> Result<HashSet<&'a str>, Rejection> {
    let mut set = HashSet::new();
    for (line, _) in lines.iter().zip(evidence).filter(|(_, e)| **e) {
        set.insert(*line);
        if set.len() > MAX_DISTINCT_EVIDENCE {
            let distinct = lines
                .iter()
                .zip(evidence)
                .filter(|(_, e)| **e)
                .map(|(l, _)| *l)
                .collect::<HashSet<_>>()
                .len();
            return Err(Rejection::Unverifiable { distinct });
        }
    }
    Ok(set)
}

/// Checks that every line in `evidence` is a whole line of `text`.
pub fn check(evidence: &HashSet<&str>, text: &str) -> Result<(), Rejection> {
    if evidence.is_empty() {
        return Ok(());
    }
    let present: HashSet<&str> = text.lines().collect();
    // Sorted so the reported line is the same on every run.
    let mut missing: Vec<&&str> = evidence.iter().filter(|l| !present.contains(**l)).collect();
    missing.sort();
    match missing.first() {
        Some(line) => Err(Rejection::MissingEvidence { line: (**line).to_owned() }),
        None => Ok(()),
    }
}

/// The size of the original rendition, measured without building it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    /// Bytes.
    pub bytes: usize,
    /// Estimated tokens.
    pub tokens: usize,
}

impl Size {
    /// The size of `text`.
    pub fn of(text: &str) -> Size {
        Size { bytes: text.len(), tokens: tokens::estimate(text) }
    }
}

/// Judges a candidate against the original rendition.
pub fn judge(
    original: Size,
    evidence: &HashSet<&str>,
    candidate: Candidate,
    limits: &Limits,
) -> Result<Adopted, Rejection> {
    if !candidate.lossless {
        check(evidence, &candidate.text)?;
    }
    let (ob, rb) = (original.bytes, candidate.text.len());
    let (ot, rt) = (original.tokens, tokens::estimate(&candidate.text));
    let ratio_ok = ob > 0 && (rb as f64) <= (ob as f64) * limits.keep_ratio_max;
    let saving_ok = ob.saturating_sub(rb) >= limits.min_saving_bytes && rb < ob;
    if !(ratio_ok && saving_ok && rt < ot) {
        return Err(Rejection::NotSmaller {
            original_bytes: ob,
            reduced_bytes: rb,
            original_tokens: ot,
            reduced_tokens: rt,
        });
    }
    Ok(Adopted(candidate))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(text: &str) -> Candidate {
        Candidate { text: text.to_owned(), lossless: false }
    }

    #[test]
    fn adopts_a_smaller_candidate_that_keeps_evidence() {
        let original = format!("{}error: boom\n", "noise line\n".repeat(200));
        let ev: HashSet<&str> = ["error: boom"].into();
        assert!(
            judge(
                Size::of(&original),
                &ev,
                cand("… 200 lines omitted (L1–200) …\nerror: boom"),
                &Limits::default()
            )
            .is_ok()
        );
    }

    #[test]
    fn rejects_a_candidate_missing_evidence() {
        let original = format!("{}error: boom\n", "noise line\n".repeat(200));
        let ev: HashSet<&str> = ["error: boom"].into();
        let err =
            judge(Size::of(&original), &ev, cand("… omitted …"), &Limits::default()).unwrap_err();
        assert_eq!(err, Rejection::MissingEvidence { line: "error: boom".into() });
    }

    #[test]
    fn evidence_must_be_a_whole_line_not_a_substring() {
        let ev: HashSet<&str> = ["error: boom"].into();
        assert!(check(&ev, "xx error: boom yy").is_err());
        assert!(check(&ev, "a\nerror: boom\nb").is_ok());
    }

    #[test]
    fn rejects_when_savings_are_too_small() {
        let original = "x".repeat(600);
        let ev = HashSet::new();
        // 400 of 600 bytes: ratio 0.67 passes, but only 200 bytes saved.
        assert!(matches!(
            judge(Size::of(&original), &ev, cand(&"y".repeat(400)), &Limits::default()),
            Err(Rejection::NotSmaller { .. })
        ));
        // 0.8 ratio fails even with a large saving.
        let original = "x".repeat(10_000);
        assert!(
            judge(Size::of(&original), &ev, cand(&"y".repeat(8_000)), &Limits::default()).is_err()
        );
        assert!(
            judge(Size::of(&original), &ev, cand(&"y".repeat(7_000)), &Limits::default()).is_ok()
        );
    }

    #[test]
    fn never_adopts_something_larger_whatever_the_limits() {
        let limits = Limits { keep_ratio_max: 5.0, min_saving_bytes: 0, ..Limits::default() };
        assert!(
            judge(Size::of("short"), &HashSet::new(), cand("much longer text"), &limits).is_err()
        );
        assert!(judge(Size::of("same"), &HashSet::new(), cand("same"), &limits).is_err());
    }

    #[test]
    fn too_much_evidence_is_unverifiable() {
        let owned: Vec<String> = (0..600).map(|i| format!("error: {i}")).collect();
        let lines: Vec<&str> = owned.iter().map(String::as_str).collect();
        let ev = vec![true; 600];
        assert_eq!(evidence_lines(&lines, &ev), Err(Rejection::Unverifiable { distinct: 600 }));
        // Repeats of one line are one distinct line.
        let same = vec!["error: same"; 600];
        assert_eq!(evidence_lines(&same, &ev).unwrap().len(), 1);
    }
}
