//! Skill catalogs and `tj skills rank` (issue 15): which of an agent's skills a task needs.
//!
//! A skill is a `SKILL.md` file whose front matter (between `---` lines at its top) gives
//! its `name` and `description`, as Claude Code (`~/.claude/skills/<name>/SKILL.md`,
//! `.claude/skills/…`) and pi lay them out. Every skill's description costs context in every
//! request; a host that loads only the skills a task needs pays for those alone.
//!
//! [`rank`] scores each skill against the task by the words they share, with no model:
//! each distinct word of the task found in the skill's name or description adds its
//! weight, rarer words across the catalog weighing more (an inverse document frequency),
//! and a word in the name counting twice. The kept skills come back in the catalog's own
//! order, so a host that lists them lists them as before, minus the others. The same
//! catalog and task always give the same answer: scores are integers, ties go to the
//! skill listed first.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// One skill of a catalog.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Skill {
    /// The `name` of its front matter, or its directory's name.
    pub name: String,
    /// The `description` of its front matter (empty when it has none).
    pub description: String,
    /// Where its `SKILL.md` is.
    pub path: PathBuf,
}

/// A skill with its score against a task.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Ranked {
    /// The skill.
    #[serde(flatten)]
    pub skill: Skill,
    /// Its score: the weights of the task's words it holds (0 for none).
    pub score: u64,
    /// Its place in the catalog, from 0.
    pub index: usize,
}

/// How many skills to keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keep {
    /// At most this many.
    pub max: usize,
    /// At least this many, when the catalog has them, even with a score of 0: a task
    /// described in other words than the skills' still gets a choice.
    pub min: usize,
}

impl Default for Keep {
    fn default() -> Keep {
        Keep { max: 12, min: 5 }
    }
}

/// The skills of `catalog` to keep for `task`, in the catalog's order: the best scored,
/// at most `keep.max`, and at least `keep.min` where the catalog has that many (the best of
/// the rest by score, then by order).
pub fn rank(catalog: &[Skill], task: &str, keep: Keep) -> Vec<Ranked> {
    let documents: Vec<(BTreeSet<String>, BTreeSet<String>)> =
        catalog.iter().map(|s| (words(&s.name), words(&s.description))).collect();
    let mut frequency: HashMap<&str, u64> = HashMap::new();
    for (name, description) in &documents {
        for word in name.union(description) {
            *frequency.entry(word.as_str()).or_default() += 1;
        }
    }
    let total = catalog.len() as u64;
    let task_words = words(task);
    let mut ranked: Vec<Ranked> = catalog
        .iter()
        .zip(&documents)
        .enumerate()
        .map(|(index, (skill, (name, description)))| {
            let score = task_words
                .iter()
                .map(|word| {
                    let weight = weight(total, frequency.get(word.as_str()).copied().unwrap_or(0));
                    if name.contains(word) {
                        2 * weight
                    } else if description.contains(word) {
                        weight
                    } else {
                        0
                    }
                })
                .sum();
            Ranked { skill: skill.clone(), score, index }
        })
        .collect();
    ranked.sort_by(|a, b| b.score.cmp(&a.score).then(a.index.cmp(&b.index)));
    let scored = ranked.iter().take_while(|r| r.score > 0).count();
    let kept = scored.max(keep.min).min(keep.max);
    ranked.truncate(kept);
    ranked.sort_by_key(|r| r.index);
    ranked
}

/// The weight of a word found in `df` of `total` documents: `1000 × (1 + ln((total + 1) /
/// (df + 1)))`, rounded, so that scores are integers and compare exactly.
fn weight(total: u64, df: u64) -> u64 {
    let idf = 1.0 + ((total as f64 + 1.0) / (df as f64 + 1.0)).ln();
    (idf * 1000.0).round() as u64
}

/// Words too common in tasks and descriptions to tell skills apart.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "how", "i", "if",
    "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "please", "so", "that",
    "the", "their", "them", "then", "there", "these", "this", "to", "up", "us", "use", "used",
    "uses", "using", "we", "what", "when", "where", "which", "while", "who", "why", "will", "with",
    "you", "your", "skill", "skills",
];

/// The distinct words of `text`: lower-cased runs of letters and digits, stop words and
/// single characters left out, each reduced to a rough stem (`tests`, `testing`, `tested`
/// → `test`).
pub fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() > 1)
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .map(|w| stem(&w).to_owned())
        .collect()
}

/// `w` without one common English ending, when enough of it is left to mean something.
fn stem(w: &str) -> &str {
    for ending in ["ing", "ies", "es", "ed", "s"] {
        if let Some(stem) = w.strip_suffix(ending)
            && stem.chars().count() >= 3
            && !stem.ends_with('s')
        {
            return stem;
        }
    }
    w
}

/// The largest `SKILL.md` read; a larger file is skipped as not a skill.
const SKILL_LIMIT: u64 = 1 << 20;

/// The skills under `dirs`, in order: each directory's `SKILL.md` files (the directory's
/// own, then those of its subdirectories, two levels down), sorted by path. Symbolic
/// links to directories are not followed. What could not be read is returned as a
/// problem, one each, and left out.
pub fn catalog(dirs: &[PathBuf]) -> (Vec<Skill>, Vec<String>) {
    let mut skills = Vec::new();
    let mut problems = Vec::new();
    for dir in dirs {
        let mut paths = Vec::new();
        collect(dir, 0, &mut paths);
        paths.sort();
        for path in paths {
            match crate::fsx::read_limited(&path, SKILL_LIMIT) {
                Ok(bytes) => {
                    let text = String::from_utf8_lossy(&bytes);
                    let fallback = path
                        .parent()
                        .and_then(Path::file_name)
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    let (name, description) = front_matter(&text);
                    skills.push(Skill {
                        name: name.unwrap_or(fallback),
                        description: description.unwrap_or_default(),
                        path,
                    });
                }
                Err(err) => problems.push(format!("could not read `{}`: {err}", path.display())),
            }
        }
    }
    (skills, problems)
}

/// Pushes the `SKILL.md` of `dir` and of its subdirectories, `depth` levels in (at most 2).
fn collect(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let file = dir.join("SKILL.md");
    if std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_file()) {
        out.push(file);
    }
    if depth >= 2 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        // `DirEntry::file_type` does not follow a symbolic link.
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            collect(&entry.path(), depth + 1, out);
        }
    }
}

/// The `name` and `description` of a `SKILL.md`'s front matter: plain, quoted (`'…'`,
/// `"…"`) or block (`>`, `|`, with indented lines after) YAML scalars. Other keys are
/// ignored; a file without front matter has neither.
pub fn front_matter(text: &str) -> (Option<String>, Option<String>) {
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return (None, None);
    }
    let body: Vec<&str> = lines.take_while(|l| l.trim_end() != "---").collect();
    (scalar(&body, "name"), scalar(&body, "description"))
}

/// The value of the top-level `key` among the front matter's `lines`.
fn scalar(lines: &[&str], key: &str) -> Option<String> {
    let (at, rest) = lines.iter().enumerate().find_map(|(i, line)| {
        let rest = line.strip_prefix(key)?.trim_start().strip_prefix(':')?;
        Some((i, rest.trim()))
    })?;
    if rest.starts_with('>') || rest.starts_with('|') {
        let folded = rest.starts_with('>');
        let block: Vec<&str> = lines[at + 1..]
            .iter()
            .take_while(|l| l.is_empty() || l.starts_with(' ') || l.starts_with('\t'))
            .map(|l| l.trim())
            .collect();
        let joined = block.join(if folded { " " } else { "\n" });
        return Some(joined.trim().to_owned());
    }
    let value = if let Some(inner) = rest.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        inner.replace("\\\"", "\"")
    } else if let Some(inner) = rest.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        inner.replace("''", "'")
    } else {
        // A plain scalar ends at a comment.
        rest.split(" #").next().unwrap_or(rest).trim().to_owned()
    };
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(name: &str, description: &str) -> Skill {
        Skill { name: name.into(), description: description.into(), path: PathBuf::new() }
    }

    fn catalog_of(pairs: &[(&str, &str)]) -> Vec<Skill> {
        pairs.iter().map(|(n, d)| skill(n, d)).collect()
    }

    fn names(ranked: &[Ranked]) -> Vec<&str> {
        ranked.iter().map(|r| r.skill.name.as_str()).collect()
    }

    const CATALOG: &[(&str, &str)] = &[
        ("pdf", "Extract text and tables from PDF files, fill forms, merge documents"),
        ("xlsx", "Create and edit spreadsheets with formulas and charts"),
        ("rust-testing", "Write and run Rust tests with cargo test and nextest"),
        ("git-commit", "Write commit messages and split changes into commits"),
        ("docker", "Build and debug Docker images and compose files"),
        ("python-testing", "Write pytest tests, fixtures and mocks for Python code"),
        ("frontend", "Build React components and style them with CSS"),
    ];

    #[test]
    fn the_best_matching_skills_are_kept_in_catalog_order() {
        let catalog = catalog_of(CATALOG);
        let keep = Keep { max: 2, min: 0 };
        let ranked = rank(&catalog, "Fix the failing cargo tests in the Rust crate", keep);
        assert_eq!(names(&ranked), ["rust-testing", "python-testing"]);
        assert!(ranked[0].score > ranked[1].score, "{ranked:?}");

        let ranked = rank(&catalog, "merge two PDF documents", keep);
        assert_eq!(names(&ranked), ["pdf"]);
    }

    #[test]
    fn min_fills_with_the_catalog_order_and_max_caps() {
        let catalog = catalog_of(CATALOG);
        // Nothing matches: the first `min` skills of the catalog.
        let ranked = rank(&catalog, "zzz qqq", Keep { max: 12, min: 3 });
        assert_eq!(names(&ranked), ["pdf", "xlsx", "rust-testing"]);
        assert!(ranked.iter().all(|r| r.score == 0));
        // One match, min 3: the match, then the first two others, in catalog order.
        let ranked = rank(&catalog, "docker image", Keep { max: 12, min: 3 });
        assert_eq!(names(&ranked), ["pdf", "xlsx", "docker"]);
        // max below min wins.
        let ranked = rank(&catalog, "zzz", Keep { max: 1, min: 5 });
        assert_eq!(names(&ranked), ["pdf"]);
        assert_eq!(rank(&[], "anything", Keep::default()), []);
    }

    #[test]
    fn ties_go_to_the_skill_listed_first() {
        let catalog =
            catalog_of(&[("b", "deploy the service"), ("a", "deploy the service"), ("c", "x")]);
        let ranked = rank(&catalog, "deploy", Keep { max: 1, min: 0 });
        assert_eq!(names(&ranked), ["b"]);
        let ranked = rank(&catalog, "deploy", Keep { max: 2, min: 0 });
        assert_eq!(names(&ranked), ["b", "a"]);
        assert_eq!(ranked[0].score, ranked[1].score);
    }

    #[test]
    fn a_word_in_the_name_counts_twice_and_rare_words_weigh_more() {
        let catalog = catalog_of(&[
            ("lint", "check style"),
            ("style", "format code with the lint tools"),
            ("other", "code code"),
        ]);
        let ranked = rank(&catalog, "lint", Keep { max: 3, min: 0 });
        let score = |n: &str| ranked.iter().find(|r| r.skill.name == n).unwrap().score;
        assert_eq!(score("lint"), 2 * score("style"));
        let ranked = rank(&catalog, "code lint", Keep { max: 3, min: 0 });
        let score = |n: &str| ranked.iter().find(|r| r.skill.name == n).map_or(0, |r| r.score);
        // `style` holds both words, `other` only `code`.
        assert!(score("style") > score("other"), "{ranked:?}");
    }

    #[test]
    fn the_same_input_gives_the_same_ranking() {
        let catalog = catalog_of(CATALOG);
        let a = rank(&catalog, "write tests for python and rust", Keep::default());
        let b = rank(&catalog, "write tests for python and rust", Keep::default());
        assert_eq!(a, b);
    }

    #[test]
    fn words_are_stemmed_and_stop_words_dropped() {
        let w = words("Testing the tests: tested, TEST! a PDFs file's I/O");
        assert_eq!(w.into_iter().collect::<Vec<_>>(), ["file", "pdf", "test"]);
        assert_eq!(stem("class"), "class");
        assert_eq!(stem("boxes"), "box");
        assert_eq!(stem("bus"), "bus");
    }

    #[test]
    fn front_matter_reads_plain_quoted_and_block_scalars() {
        type Expected<'a> = (Option<&'a str>, Option<&'a str>);
        let cases: &[(&str, Expected)] = &[
            (
                "---\nname: pdf\ndescription: Extract text\n---\nbody",
                (Some("pdf"), Some("Extract text")),
            ),
            (
                "---\nname: \"a \\\"b\\\"\"\ndescription: 'it''s'\n---\n",
                (Some("a \"b\""), Some("it's")),
            ),
            (
                "---\nname: x # comment\ndescription: >\n  folded\n  lines\nlicense: MIT\n---\n",
                (Some("x"), Some("folded lines")),
            ),
            ("---\nname: y\ndescription: |\n  one\n  two\n---\n", (Some("y"), Some("one\ntwo"))),
            ("---\r\nname: crlf\r\ndescription: d\r\n---\r\n", (Some("crlf"), Some("d"))),
            ("no front matter\nname: z\n", (None, None)),
            ("---\nallowed-tools: Bash\n---\n", (None, None)),
            ("---\nnamespace: n\nname: real\n---\n", (Some("real"), None)),
        ];
        for (text, (name, description)) in cases {
            let (n, d) = front_matter(text);
            assert_eq!((n.as_deref(), d.as_deref()), (*name, *description), "{text:?}");
        }
    }
}
