//! A unified-style diff of two texts for `--dry-run`: one hunk around the lines that
//! differ (tj's edits touch one place of a file), with three lines of context.

use std::fmt::Write as _;

/// Lines of unchanged context around the change.
const CONTEXT: usize = 3;

/// The diff from `old` (`None`: no file) to `new` (`None`: the file removed), labelled
/// with `path`; empty when they are equal.
pub(crate) fn unified(path: &str, old: Option<&str>, new: Option<&str>) -> String {
    if old == new {
        return String::new();
    }
    let a: Vec<&str> = old.map(|t| t.split_inclusive('\n').collect()).unwrap_or_default();
    let b: Vec<&str> = new.map(|t| t.split_inclusive('\n').collect()).unwrap_or_default();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix =
        a[prefix..].iter().rev().zip(b[prefix..].iter().rev()).take_while(|(x, y)| x == y).count();
    let start = prefix.saturating_sub(CONTEXT);
    let (a_end, b_end) = (a.len() - suffix, b.len() - suffix);
    let tail = suffix.min(CONTEXT);
    let mut out = String::new();
    let label =
        |t: Option<&str>| if t.is_some() { path.to_owned() } else { "/dev/null".to_owned() };
    let _ = writeln!(out, "--- {}\n+++ {}", label(old), label(new));
    let span =
        |len: usize| if len == 0 { format!("{start},0") } else { format!("{},{len}", start + 1) };
    let _ = writeln!(out, "@@ -{} +{} @@", span(a_end + tail - start), span(b_end + tail - start));
    let mut line = |mark: char, text: &str| {
        out.push(mark);
        out.push_str(text.trim_end_matches(['\n', '\r']));
        out.push('\n');
        if !text.ends_with('\n') {
            out.push_str("\\ No newline at end of file\n");
        }
    };
    a[start..prefix].iter().for_each(|l| line(' ', l));
    a[prefix..a_end].iter().for_each(|l| line('-', l));
    b[prefix..b_end].iter().for_each(|l| line('+', l));
    a[a_end..a_end + tail].iter().for_each(|l| line(' ', l));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_hunk_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nX\ne\nf\ng\nh\n";
        assert_eq!(
            unified("f.json", Some(old), Some(new)),
            "--- f.json\n+++ f.json\n@@ -2,6 +2,7 @@\n b\n c\n d\n+X\n e\n f\n g\n"
        );
        assert_eq!(unified("f", Some("x"), Some("x")), "");
        assert!(
            unified("f", None, Some("{}\n"))
                .starts_with("--- /dev/null\n+++ f\n@@ -0,0 +1,1 @@\n+{}\n")
        );
    }
}
