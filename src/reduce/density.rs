//! Semantic density (DESIGN.md "Semantic density fallback"): for output no rule claims,
//! ρ = (unique lines / lines) × (non-space chars / chars). Repetitive or whitespace-heavy
//! output scores low and is worth reducing generically; dense, varied output (a file, a
//! report) scores high and is passed through.

use std::collections::HashSet;

/// ρ of `lines`, in `0.0..=1.0`; empty input is 1.0 (nothing to gain).
pub fn density(lines: &[&str]) -> f64 {
    if lines.is_empty() {
        return 1.0;
    }
    let unique: HashSet<&str> = lines.iter().copied().collect();
    let (mut chars, mut dense) = (0usize, 0usize);
    for line in lines {
        // The newline counts as a character: blank lines make text sparse.
        chars += 1;
        for c in line.chars() {
            chars += 1;
            if !c.is_whitespace() {
                dense += 1;
            }
        }
    }
    (unique.len() as f64 / lines.len() as f64) * (dense as f64 / chars as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repetitive_output_is_sparse() {
        let lines = vec!["GET /health 200"; 100];
        assert!(density(&lines) < 0.3);
    }

    #[test]
    fn varied_output_is_dense() {
        let lines: Vec<String> = (0..100).map(|i| format!("line-{i}-has-content")).collect();
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        assert!(density(&refs) > 0.9);
    }

    #[test]
    fn blank_heavy_output_is_sparse() {
        let mut lines = vec![""; 90];
        lines.extend(["a", "b", "c"]);
        assert!(density(&lines) < 0.3);
    }
}
