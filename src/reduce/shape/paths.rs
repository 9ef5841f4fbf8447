//! Path folding (issue 12), a lossless route: listings (`find`, `fd`, `git ls-files`,
//! `tar tf`, `rg --files`) and search hits (`grep -rn`, `rg -n`, `git grep -n`, `grep -r`)
//! with the directory and file prefix they repeat stated once, every path and hit kept, in
//! order. This module owns the encoding and its decoder; the pipeline decides when to try
//! it and the gate whether to adopt it.
//!
//! # Format
//!
//! ```text
//! [tj] paths folded: a line ending in / names a directory, the indented lines under it are in it; N:text lines are hits in the file named above them
//! src/reduce/
//!   shape/
//!     log.rs
//!     48:    let x = y.unwrap();
//!     52-    // a context line
//!     ndjson.rs:224:pub fn decode(table: &str)
//!   tokens.rs:12:pub fn estimate(text: &str) -> usize {
//! grep: src/secret: Permission denied
//! ```
//!
//! - **Line 1** is the legend: one of three fixed sentences starting [`LEGEND_PREFIX`].
//! - **Directories.** A line followed by lines indented two spaces deeper is a heading
//!   naming a directory (it ends in `/`), not an original line: each line indented under it
//!   is that directory followed by the line's text.
//! - **Files.** A line followed by hit lines at its own indentation names a file, as `rg
//!   --heading` does: `N:text` stands for `file:N:text`, `N-text` for the context line
//!   `file-N-text` and `:text` for `file:text` (`grep -r` without `-n`). grep's `--`
//!   separator may sit between two hits of one file.
//! - **Other lines** stay verbatim. A line that could read as a hit (it starts with `:` or
//!   with digits and `:` or `-`), or that starts with a space or `\`, gets a `\` in front.
//! - **Listed directories.** When the output lists its directories itself (`tar tf`:
//!   `proj/` before `proj/a.txt`), the legend says so and each heading is also a line of
//!   the original; headings are then only the listed directories.
//!
//! Headings cover consecutive lines only: the original order is the order of the lines.
//! Where a folded shape would not pay (a file with one hit, a directory with one entry)
//! the line keeps its full text relative to the heading above it.
//!
//! # Lossless
//!
//! [`decode`] gives back the input lines exactly, and [`encode`] proves it on its own
//! result before returning it. Lines are split on `\n` and must hold no `\n`.

use std::ops::Range;

use crate::reduce::tokens::{self, Tally};

/// The start of every legend this route writes: the pipeline's test for its output.
pub const LEGEND_PREFIX: &str = "[tj] paths folded: ";

/// The legend when headings are directories only, none of them a line of the original.
const LEGEND_DIRS: &str = "[tj] paths folded: a line ending in / names a directory; \
                           the indented lines under it are in it";
/// The legend when some headings are files with their hits under them.
const LEGEND_HITS: &str = "[tj] paths folded: a line ending in / names a directory, the \
                           indented lines under it are in it; N:text lines are hits in the \
                           file named above them";
/// The legend when every heading is a directory the output listed itself (`tar tf`).
const LEGEND_LISTED: &str = "[tj] paths folded: a line ending in / is a listed directory; \
                             the indented lines under it are in it";

/// The encoding must come to at most this share of the original's bytes, in percent, to
/// be returned at all: the gate asks for 72 %, and a fold that saves less than 15 % is
/// not worth a legend the agent has to read.
const PAYS_PERCENT: usize = 85;

/// One indentation level.
const INDENT: &str = "  ";

/// Deepest nesting of folded directories. Each level rescans the lines under it, so a
/// listing whose every line nests in the one before (`a/x`, `a/a/x`, …) costs the cube of
/// its length without a bound (4 MB took 2 s); past this depth lines are written whole
/// under the deepest heading. Real trees fold well within it.
const MAX_NESTING: usize = 32;

pub use super::DecodeError;

/// The name this route's decode errors give.
const ROUTE: &str = "paths";

/// `lines` folded under their shared directory and file prefixes, or None when the route
/// does not apply or does not pay (see the module doc for the format).
pub fn encode(lines: &[&str]) -> Option<String> {
    // A blank last line would end the text in `\n`, which tj trims from renditions.
    if lines.len() < 2 || lines.last().is_some_and(|l| l.is_empty()) {
        return None;
    }
    if lines.iter().any(|l| l.contains('\n')) {
        return None;
    }
    let recs = classify(lines);
    if !recs.iter().any(|r| matches!(r.kind, Kind::Path | Kind::Hit { .. })) {
        return None;
    }
    let best = fold_best(&recs);
    let mut original = Tally::default();
    for line in lines {
        original.add(line);
        original.add("\n");
    }
    let pays = best.len() * 100 <= original.bytes * PAYS_PERCENT
        && tokens::estimate(&best) < original.tokens();
    if !pays {
        return None;
    }
    // Lossless: the result is only returned once it decodes back to the input.
    decode(&best).is_ok_and(|back| back == lines).then_some(best)
}

/// The smaller (in tokens) of the two foldings of `lines`, whether or not it pays and not
/// checked by decoding: what [`encode`] weighs and proves. Public so that round-trip tests
/// see a fault the check in [`encode`] would hide as a decline.
pub fn fold_unchecked(lines: &[&str]) -> String {
    fold_best(&classify(lines))
}

fn fold_best(recs: &[Rec<'_>]) -> String {
    let prefixes = fold_prefixes(recs);
    match fold_listed(recs) {
        Some(listed) if tokens::estimate(&listed) < tokens::estimate(&prefixes) => listed,
        _ => prefixes,
    }
}

/// The lines back from exactly what [`encode`] wrote, legend included.
pub fn decode(text: &str) -> Result<Vec<String>, DecodeError> {
    let mut rows = text.split('\n');
    let listed = match rows.next() {
        Some(LEGEND_LISTED) => true,
        Some(LEGEND_DIRS | LEGEND_HITS) => false,
        _ => return Err(DecodeError { route: ROUTE, line: 1, what: "not a paths-folded legend" }),
    };
    let rows: Vec<&str> = rows.collect();
    let mut out = Vec::with_capacity(rows.len());
    // The directory headings above the current line, as full decoded text.
    let mut dirs: Vec<String> = Vec::new();
    // The file whose hits the current line may continue.
    let mut file: Option<String> = None;
    for (n, &row) in rows.iter().enumerate() {
        let err = |what| DecodeError { route: ROUTE, line: n + 2, what };
        let spaces = indentation(row);
        if !spaces.is_multiple_of(INDENT.len()) {
            return Err(err("indentation is not a multiple of two spaces"));
        }
        let depth = spaces / INDENT.len();
        if depth > dirs.len() {
            return Err(err("indented deeper than the heading above it"));
        }
        if depth < dirs.len() {
            dirs.truncate(depth);
            file = None;
        }
        let content = &row[spaces..];
        if content == "--" {
            out.push("--".to_owned());
            continue;
        }
        if is_hit_child(content) {
            let Some(file) = &file else { return Err(err("a hit with no file above it")) };
            out.push(join_hit(file, content));
            continue;
        }
        let content = content.strip_prefix('\\').unwrap_or(content);
        let full = concat(&[dirs.last().map_or("", String::as_str), content]);
        file = None;
        match rows.get(n + 1) {
            Some(next) if indentation(next) > spaces => {
                if !full.ends_with('/') {
                    return Err(err("a heading with lines under it that is not a directory"));
                }
                if listed {
                    out.push(full.clone());
                }
                dirs.push(full);
            }
            Some(next) if indentation(next) == spaces && is_hit_child(&next[spaces..]) => {
                file = Some(full);
            }
            _ => out.push(full),
        }
    }
    Ok(out)
}

/// Returns true if and only if `content` is a hit under a file heading: `N:`, `N-` or `:`.
fn is_hit_child(content: &str) -> bool {
    let digits = content.bytes().take_while(u8::is_ascii_digit).count();
    match content.as_bytes().get(digits) {
        Some(b':') => true,
        Some(b'-') => digits > 0,
        _ => false,
    }
}

/// The original line of the hit `child` under the heading `file`: `N:text` and `N-text`
/// take back the separator their number dropped; `:text` follows as is.
fn join_hit(file: &str, child: &str) -> String {
    let digits = child.bytes().take_while(u8::is_ascii_digit).count();
    match child.as_bytes().get(digits) {
        Some(b':') if digits > 0 => concat(&[file, ":", child]),
        Some(b'-') if digits > 0 => concat(&[file, "-", child]),
        _ => concat(&[file, child]),
    }
}

/// `parts` joined, in one allocation: the decoder builds a string per line.
fn concat(parts: &[&str]) -> String {
    let mut out = String::with_capacity(parts.iter().map(|p| p.len()).sum());
    for part in parts {
        out.push_str(part);
    }
    out
}

fn indentation(row: &str) -> usize {
    row.bytes().take_while(|&b| b == b' ').count()
}

/// What a line of the original is, for folding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Not foldable: kept verbatim at the left margin.
    Other,
    /// grep's `--` between context groups.
    Separator,
    /// The whole line is a path.
    Path,
    /// `path:N:text`, `path-N-text` (`numbered`, the separator after the path dropped when
    /// the hit is under its file) or `path:text`.
    Hit { numbered: bool },
}

/// A line of the original with what the folder needs to know about it.
#[derive(Clone, Copy, Debug)]
struct Rec<'a> {
    text: &'a str,
    kind: Kind,
    /// Length of the path the line starts with (the whole line for [`Kind::Path`]).
    key: usize,
}

impl<'a> Rec<'a> {
    fn is_foldable(&self) -> bool {
        matches!(self.kind, Kind::Path | Kind::Hit { .. })
    }

    /// The text whose `/`-separated prefixes may become directory headings: the path, less
    /// a trailing `/` (so a directory line keeps a non-empty text under its parent).
    fn dir_key(&self) -> &'a str {
        match self.kind {
            Kind::Path => self.text.strip_suffix('/').unwrap_or(self.text),
            Kind::Hit { .. } => &self.text[..self.key],
            Kind::Other | Kind::Separator => "",
        }
    }

    /// The file a hit is in.
    fn file(&self) -> Option<&'a str> {
        matches!(self.kind, Kind::Hit { .. }).then(|| &self.text[..self.key])
    }
}

fn classify<'a>(lines: &[&'a str]) -> Vec<Rec<'a>> {
    let mut recs: Vec<Rec<'a>> = lines.iter().map(|&text| classify_line(text)).collect();
    attach_context(&mut recs);
    recs
}

fn classify_line(text: &str) -> Rec<'_> {
    let other = Rec { text, kind: Kind::Other, key: 0 };
    if text == "--" {
        return Rec { kind: Kind::Separator, ..other };
    }
    if let Some(key) = numbered_hit(text) {
        return Rec { kind: Kind::Hit { numbered: true }, key, ..other };
    }
    if is_path(text) {
        return Rec { kind: Kind::Path, key: text.len(), ..other };
    }
    if let Some(key) = plain_hit(text) {
        return Rec { kind: Kind::Hit { numbered: false }, key, ..other };
    }
    other
}

/// Returns true if and only if `path` can be a folded path: under a heading its rest must
/// not start with a space (it would read as indentation) nor be `--` (the separator). Runs
/// of spaces and tabs are columns (`df`, `go test`), not a path.
fn is_clean_path(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with(' ')
        && !path.contains('\t')
        && !path.contains("  ")
        && !path.contains("/ ")
        && !path.ends_with("/--")
}

/// Returns true if and only if the whole of `text` reads as a path: no `:` (that is a hit,
/// or a message such as `find: 'x': No such file or directory`).
fn is_path(text: &str) -> bool {
    is_clean_path(text) && !text.contains(':')
}

/// The length of the path of a `path:N:text` hit: the first `:` followed by digits and
/// another `:`.
fn numbered_hit(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(pos) = text[from..].find(':') {
        let colon = from + pos;
        let digits = bytes[colon + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
        if colon > 0 && digits > 0 && bytes.get(colon + 1 + digits) == Some(&b':') {
            let path = &text[..colon];
            // A space is not in a path a search prints, a `git blame` date has one, and a
            // timestamp (`2024-11-29T08:00:01`) has neither `/` nor `.`.
            return (is_file_like(path) && !path.contains(' ')).then_some(colon);
        }
        from = colon + 1;
    }
    None
}

/// The length of the path of a `path:text` hit (`grep -r` without `-n`): a first field
/// with no whitespace that looks like a file (`/` or `.` in it), so `grep: x: Permission
/// denied` is not one.
fn plain_hit(text: &str) -> Option<usize> {
    let colon = text.find(':')?;
    let path = &text[..colon];
    (is_file_like(path) && !path.contains(char::is_whitespace)).then_some(colon)
}

/// Returns true if and only if `path` can be the file a hit is in: a clean path with a `/`
/// or a `.` in it, not ending in `/`.
fn is_file_like(path: &str) -> bool {
    is_clean_path(path) && path.contains(['/', '.']) && !path.ends_with('/')
}

/// Marks the context lines (`path-N-text`) around each `path:N:` hit as hits of its file.
/// Only the hit's own path is tried: `a-1-b-2-c` has no other reading to guess.
fn attach_context(recs: &mut [Rec<'_>]) {
    for i in 0..recs.len() {
        if recs[i].kind != (Kind::Hit { numbered: true })
            || recs[i].text.as_bytes()[recs[i].key] != b':'
        {
            continue;
        }
        let path = &recs[i].text[..recs[i].key];
        let is_context = |rec: &Rec<'_>| {
            rec.kind != (Kind::Hit { numbered: true })
                && rec.text.strip_prefix(path).and_then(|r| r.strip_prefix('-')).is_some_and(|r| {
                    let digits = r.bytes().take_while(u8::is_ascii_digit).count();
                    digits > 0 && r.as_bytes().get(digits) == Some(&b'-')
                })
        };
        let mut j = i;
        while j > 0 && is_context(&recs[j - 1]) {
            j -= 1;
            recs[j] = Rec { kind: Kind::Hit { numbered: true }, key: path.len(), ..recs[j] };
        }
        let mut j = i + 1;
        while j < recs.len() && is_context(&recs[j]) {
            recs[j] = Rec { kind: Kind::Hit { numbered: true }, key: path.len(), ..recs[j] };
            j += 1;
        }
    }
}

/// The encoded body as it is written: one `\n` before each line.
#[derive(Default)]
struct Body {
    text: String,
    /// Whether a file heading was written (the legend then explains hits).
    file_headings: bool,
    /// How many directory folds enclose the line being written ([`MAX_NESTING`]).
    nesting: usize,
}

impl Body {
    /// A line that is not a hit: escaped where it could read as one, or as indented.
    fn line(&mut self, depth: usize, content: &str) {
        let escape = content.starts_with([' ', '\\']) || is_hit_child(content);
        self.write(depth, if escape { "\\" } else { "" }, content);
    }

    /// A hit under the file heading above it.
    fn hit(&mut self, depth: usize, content: &str) {
        self.write(depth, "", content);
    }

    fn write(&mut self, depth: usize, escape: &str, content: &str) {
        self.text.push('\n');
        for _ in 0..depth {
            self.text.push_str(INDENT);
        }
        self.text.push_str(escape);
        self.text.push_str(content);
    }

    /// `rec` as a line under the heading whose text ends at `base`.
    fn leaf(&mut self, rec: &Rec<'_>, base: usize, depth: usize) {
        let content = if rec.kind == Kind::Separator { "--" } else { &rec.text[base..] };
        self.line(depth, content);
    }
}

/// The end of the run of lines from `i` that `same` accepts, grep's `--` separators
/// between two of them included.
fn run_end(recs: &[Rec<'_>], i: usize, end: usize, same: impl Fn(&Rec<'_>) -> bool) -> usize {
    let (mut j, mut last) = (i + 1, i + 1);
    while j < end {
        let rec = &recs[j];
        if rec.kind == Kind::Separator {
            j += 1;
        } else if rec.is_foldable() && same(rec) {
            j += 1;
            last = j;
        } else {
            break;
        }
    }
    last
}

/// The folding with directory and file headings none of which is an original line.
fn fold_prefixes(recs: &[Rec<'_>]) -> String {
    let mut body = Body::default();
    fold_range(recs, &mut body, 0..recs.len(), 0, 0, 0);
    let legend = if body.file_headings { LEGEND_HITS } else { LEGEND_DIRS };
    format!("{legend}{}", body.text)
}

/// Writes `range`, whose lines all share the prefix `..split` and sit under a heading
/// ending at `base` (`base <= split`), at `depth`.
fn fold_range(
    recs: &[Rec<'_>],
    body: &mut Body,
    range: Range<usize>,
    base: usize,
    split: usize,
    depth: usize,
) {
    let mut i = range.start;
    while i < range.end {
        let rec = &recs[i];
        if !rec.is_foldable() {
            body.leaf(rec, base, depth);
            i += 1;
            continue;
        }
        let key = rec.dir_key();
        // The lines that share the next directory after `split` with this one.
        if body.nesting < MAX_NESTING
            && let Some(slash) = key[split..].find('/')
        {
            let component = &key[..split + slash + 1];
            let j = run_end(recs, i, range.end, |r| r.dir_key().starts_with(component));
            if j - i >= 2 {
                fold_directory(recs, body, i..j, base, depth);
                i = j;
                continue;
            }
        }
        if let Some(file) = rec.file() {
            let j = run_end(recs, i, range.end, |r| r.file() == Some(file));
            if file_pays(&recs[i..j], file.len() - base, depth) {
                body.file_headings = true;
                body.line(depth, &file[base..]);
                for hit in &recs[i..j] {
                    match hit.kind {
                        Kind::Hit { numbered: true } => body.hit(depth, &hit.text[hit.key + 1..]),
                        Kind::Hit { numbered: false } => body.hit(depth, &hit.text[hit.key..]),
                        _ => body.line(depth, "--"),
                    }
                }
                i = j;
                continue;
            }
        }
        body.leaf(rec, base, depth);
        i += 1;
    }
}

/// Writes a run of two or more lines that share a directory: under a heading for their
/// longest shared directory when it pays, else at `depth` with their deeper runs folded.
fn fold_directory(recs: &[Rec<'_>], body: &mut Body, run: Range<usize>, base: usize, depth: usize) {
    let shared = shared_directory(&recs[run.clone()]);
    body.nesting += 1;
    if directory_pays(&recs[run.clone()], shared - base, depth) {
        body.line(depth, &recs[run.start].text[base..shared]);
        fold_range(recs, body, run, shared, shared, depth + 1);
    } else {
        fold_range(recs, body, run, base, shared, depth);
    }
    body.nesting -= 1;
}

/// The length of the longest `/`-ended prefix the directory keys of `run` share.
fn shared_directory(run: &[Rec<'_>]) -> usize {
    let mut keys = run.iter().filter(|r| r.is_foldable()).map(Rec::dir_key);
    let first = keys.next().unwrap_or("").as_bytes();
    let mut len = first.len();
    for key in keys {
        len = first[..len].iter().zip(key.as_bytes()).take_while(|(a, b)| a == b).count();
    }
    first[..len].iter().rposition(|&b| b == b'/').map_or(0, |p| p + 1)
}

/// Returns true if and only if a heading of `rel` bytes at `depth` costs less than it
/// saves over `run`: it removes `rel` bytes from each path written (a path line, a file
/// heading, a lone hit) and indents every line under it by two more spaces.
fn directory_pays(run: &[Rec<'_>], rel: usize, depth: usize) -> bool {
    let (mut paths, mut lines, mut files) = (0usize, 0usize, 0usize);
    let mut previous: Option<&str> = None;
    let mut run_len = 0;
    for rec in run {
        lines += 1;
        if rec.kind == Kind::Separator {
            continue;
        }
        if rec.file().is_some() && rec.file() == previous {
            run_len += 1;
            if run_len == 2 {
                files += 1;
            }
        } else {
            paths += 1;
            run_len = 1;
        }
        previous = rec.file();
    }
    let heading = rel + INDENT.len() * depth + 1;
    paths * rel > heading + INDENT.len() * (lines + files)
}

/// Returns true if and only if the hits of `run`, all in one file whose path is `rel`
/// bytes past the heading above, are smaller under a line naming the file at `depth`.
fn file_pays(run: &[Rec<'_>], rel: usize, depth: usize) -> bool {
    let hits = run.iter().filter(|r| r.kind != Kind::Separator);
    let saved: usize =
        hits.map(|r| rel + usize::from(r.kind == Kind::Hit { numbered: true })).sum();
    saved > rel + INDENT.len() * depth + 1
}

/// The folding where the headings are the directories the output lists itself (`tar tf`
/// writes `proj/` before `proj/a.txt`), or None when it lists none with entries after it.
fn fold_listed(recs: &[Rec<'_>]) -> Option<String> {
    let listed = |r: &Rec<'_>| r.kind == Kind::Path && r.text.ends_with('/');
    if !recs.windows(2).any(|w| listed(&w[0]) && w[1].text.starts_with(w[0].text)) {
        return None;
    }
    let mut body = Body::default();
    fold_listed_range(recs, &mut body, 0..recs.len(), 0, 0);
    Some(format!("{LEGEND_LISTED}{}", body.text))
}

fn fold_listed_range(
    recs: &[Rec<'_>],
    body: &mut Body,
    range: Range<usize>,
    base: usize,
    depth: usize,
) {
    let mut i = range.start;
    while i < range.end {
        let rec = &recs[i];
        // The heading is the directory's own line; it pays once its entries drop more than
        // the two spaces each gains (checked first: the scan for its entries is not free).
        if rec.kind == Kind::Path
            && rec.text.ends_with('/')
            && rec.text.len() - base > INDENT.len()
            && depth < MAX_NESTING
        {
            let dir = rec.text;
            let inside = |r: &Rec<'_>| {
                r.kind == Kind::Path && r.text.len() > dir.len() && r.text.starts_with(dir)
            };
            let j = (i + 1..range.end).find(|&j| !inside(&recs[j])).unwrap_or(range.end);
            if j > i + 1 {
                body.line(depth, &dir[base..]);
                fold_listed_range(recs, body, i + 1..j, dir.len(), depth + 1);
                i = j;
                continue;
            }
        }
        body.leaf(rec, base, depth);
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(lines: &[&str]) -> Option<String> {
        let text = encode(lines)?;
        assert_eq!(decode(&text).unwrap(), lines, "encoded:\n{text}");
        Some(text)
    }

    fn owned(lines: &[String]) -> Vec<&str> {
        lines.iter().map(String::as_str).collect()
    }

    /// `find` over a tree: five files in each of four directories.
    fn find_listing() -> Vec<String> {
        let mut lines = Vec::new();
        for dir in ["src/reduce/shape", "src/reduce", "src/cli", "tests/fixtures/search"] {
            for file in ["alpha.rs", "beta.rs", "gamma.rs", "delta.rs", "epsilon.rs"] {
                lines.push(format!("/work/main/{dir}/{file}"));
            }
        }
        lines
    }

    /// `a/x`, `a/a/x`, `a/a/a/x`, …: every line nests in the one before. Unbounded, each
    /// level rescanned the rest (cubic: 2,000 lines of 4 MB took 2 s) and recursed once more.
    fn chain(n: usize, listed: bool) -> Vec<String> {
        let mut dir = String::new();
        let mut lines = Vec::new();
        for _ in 0..n {
            dir.push_str("a/");
            lines.push(if listed { dir.clone() } else { format!("{dir}x") });
        }
        lines
    }

    #[test]
    fn nesting_is_bounded_on_a_listing_where_every_line_nests_in_the_one_before() {
        for listed in [false, true] {
            let lines = chain(300, listed);
            let lines = owned(&lines);
            for text in std::iter::once(fold_unchecked(&lines)).chain(encode(&lines)) {
                assert_eq!(decode(&text).unwrap(), lines);
                let deepest = text.lines().map(indentation).max().unwrap();
                // 32 levels, not `MAX_NESTING`: the test must fail if the bound goes.
                assert!(deepest <= INDENT.len() * 32, "indented {deepest}, listed {listed}");
            }
        }
    }

    #[test]
    fn folds_a_find_listing_under_shared_directories() {
        let lines = find_listing();
        let text = round_trip(&owned(&lines)).unwrap();
        assert!(text.starts_with(LEGEND_DIRS), "{text}");
        assert!(text.contains("\n/work/main/\n  src/\n"), "{text}");
        assert!(text.contains("\n    reduce/\n      shape/\n        alpha.rs\n"), "{text}");
        assert!(tokens::estimate(&text) * 10 < tokens::estimate(&lines.join("\n")) * 7);
    }

    #[test]
    fn keeps_the_original_order_when_directories_interleave() {
        let mut lines = Vec::new();
        for i in 0..40 {
            let dir = if i % 3 == 0 { "crates/alpha/src" } else { "crates/beta/src/nested" };
            lines.push(format!("/home/user/project/{dir}/file_{i}.rs"));
        }
        let text = round_trip(&owned(&lines)).unwrap();
        // A directory heading covers consecutive lines only, so beta's heading repeats.
        assert!(text.matches("beta/src/nested/").count() > 1, "{text}");
    }

    fn grep_hits() -> Vec<String> {
        let mut lines = vec!["grep: src/secret: Permission denied".to_owned()];
        for (file, hits) in [("src/reduce/window.rs", 6), ("src/reduce/shape/log.rs", 4)] {
            for n in 0..hits {
                lines.push(format!(
                    "/work/main/{file}:{}:    let x = y.unwrap(); // {n}",
                    10 * n + 1
                ));
            }
        }
        lines.push("/work/main/src/lib.rs:3:pub mod reduce;".to_owned());
        lines
    }

    #[test]
    fn folds_search_hits_under_their_file_as_rg_heading_does() {
        let lines = grep_hits();
        let text = round_trip(&owned(&lines)).unwrap();
        assert!(text.starts_with(LEGEND_HITS), "{text}");
        assert!(text.contains("\n/work/main/src/\n  reduce/window.rs\n  1:    let x"), "{text}");
        assert!(
            text.contains("\n  51:    let x = y.unwrap(); // 5\n  reduce/shape/log.rs\n"),
            "{text}"
        );
        // A file with one hit keeps its line whole, relative to the directory above.
        assert!(text.contains("\n  lib.rs:3:pub mod reduce;"), "{text}");
    }

    #[test]
    fn error_lines_stay_verbatim_in_place() {
        let lines = grep_hits();
        let text = round_trip(&owned(&lines)).unwrap();
        assert_eq!(text.lines().nth(1), Some("grep: src/secret: Permission denied"), "{text}");
    }

    #[test]
    fn context_lines_and_separators_fold_with_their_file() {
        let mut lines = Vec::new();
        for block in 0..12 {
            let n = 100 * block + 10;
            lines.push(format!("src/reduce/tokens.rs-{}-/// context before", n - 1));
            lines.push(format!("src/reduce/tokens.rs:{n}:pub fn estimate(text: &str) -> usize {{"));
            lines.push(format!("src/reduce/tokens.rs-{}-    if text.is_ascii() {{", n + 1));
            lines.push("--".to_owned());
        }
        lines.push("src/reduce/other-1-2.rs:7:x".to_owned());
        let text = round_trip(&owned(&lines)).unwrap();
        assert!(text.contains("\nsrc/reduce/tokens.rs\n9-/// context before\n10:pub fn"), "{text}");
        assert!(text.contains("\n11-    if text.is_ascii() {\n--\n109-"), "{text}");
    }

    #[test]
    fn grep_without_line_numbers_keeps_the_colon() {
        let lines: Vec<String> = (0..12)
            .map(|i| format!("src/deeply/nested/module/file.rs:    let v{i} = 12:{i};"))
            .chain(["src/deeply/nested/module/file.rs:12-not-a-number".to_owned()])
            .collect();
        let text = round_trip(&owned(&lines)).unwrap();
        assert!(
            text.contains("\nsrc/deeply/nested/module/file.rs\n:    let v0 = 12:0;\n"),
            "{text}"
        );
        assert!(text.ends_with("\n:12-not-a-number"), "{text}");
    }

    #[test]
    fn a_tar_listing_heads_with_its_own_directory_lines() {
        let mut lines = vec!["proj/".to_owned(), "proj/java/".to_owned()];
        for i in 0..60 {
            lines.push(format!("proj/java/Service{i}.java"));
        }
        lines.push("proj/README.md".to_owned());
        let text = round_trip(&owned(&lines)).unwrap();
        assert!(text.starts_with(LEGEND_LISTED), "{text}");
        assert!(text.contains("\nproj/\n  java/\n    Service0.java\n"), "{text}");
        assert!(text.ends_with("\n    Service59.java\n  README.md"), "{text}");
    }

    #[test]
    fn lines_that_look_like_the_encoding_round_trip() {
        let mut lines: Vec<String> = find_listing().into_iter().cycle().take(80).collect();
        let hostile = [
            "",
            "  indented",
            " one space",
            "\\backslash",
            "12:looks like a hit",
            "7-looks like context",
            ":colon first",
            "--",
            "[tj] paths folded: a line ending in / names a directory",
            "ends in a slash/",
            "/work/main/src/reduce/2024-report.txt",
            "/work/main/src/reduce/:odd",
            "/work/main/src/reduce/--",
            "/work/main/src/reduce/ space first",
            "/work/main/src/reduce/tab\there",
            "/work/main/src/reduce/unicodé × 漢字.rs",
            "\t/work/main/src/reduce/tabbed.rs",
        ];
        for (i, h) in hostile.iter().enumerate() {
            lines.insert(i * 2 + 1, (*h).to_owned());
        }
        round_trip(&owned(&lines)).unwrap();
        for candidate in
            [Some(fold_prefixes(&classify(&owned(&lines)))), fold_listed(&classify(&owned(&lines)))]
                .into_iter()
                .flatten()
        {
            assert_eq!(decode(&candidate).unwrap(), owned(&lines), "{candidate}");
        }
    }

    #[test]
    fn declines_what_does_not_fold_or_pay() {
        assert_eq!(encode(&[]), None);
        assert_eq!(encode(&["/a/very/long/path/to/one/file.rs"]), None);
        assert_eq!(encode(&["running 3 tests", "test a ... ok", "test b ... ok"]), None);
        let lines = find_listing();
        let mut with_blank_last = owned(&lines);
        with_blank_last.push("");
        assert_eq!(encode(&with_blank_last), None);
        // Short paths: a heading saves less than it costs.
        assert_eq!(encode(&["a/b", "a/c", "a/d", "b/e"]), None);
    }

    #[test]
    fn encoding_is_deterministic() {
        let lines = grep_hits();
        assert_eq!(encode(&owned(&lines)), encode(&owned(&lines)));
    }

    #[test]
    fn decode_names_the_bad_line() {
        let bad = |body: &str| decode(&format!("{LEGEND_DIRS}\n{body}")).unwrap_err();
        assert_eq!(decode("src/\n  a.rs").unwrap_err().line, 1);
        assert_eq!(
            bad("src/\n   a.rs"),
            DecodeError {
                route: ROUTE,
                line: 3,
                what: "indentation is not a multiple of two spaces"
            }
        );
        assert_eq!(bad("src/\n    b.rs").line, 3);
        assert_eq!(
            bad("file.rs\n  x").what,
            "a heading with lines under it that is not a directory"
        );
        assert_eq!(bad("12:x").to_string(), "paths line 2: a hit with no file above it");
    }

    /// Every fixture of the corpus, through both foldings whether they pay or not: the
    /// decoder gives the lines back.
    #[test]
    fn every_fixture_folds_back_exactly() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut checked = 0;
        for family in std::fs::read_dir(root).unwrap() {
            for case in std::fs::read_dir(family.unwrap().path()).unwrap() {
                let path = case.unwrap().path();
                let Ok(raw) = std::fs::read_to_string(&path) else { continue };
                let Ok(json) = serde_json::from_str::<serde_json::Value>(&raw) else { continue };
                let Some(text) = json["text"].as_str() else { continue };
                let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
                let recs = classify(&lines);
                for candidate in
                    [Some(fold_prefixes(&recs)), fold_listed(&recs)].into_iter().flatten()
                {
                    assert_eq!(decode(&candidate).unwrap(), lines, "{}", path.display());
                }
                checked += 1;
            }
        }
        assert!(checked > 100, "only {checked} fixtures read");
    }
}
