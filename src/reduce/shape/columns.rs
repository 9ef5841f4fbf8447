//! Column factoring (issue 12): in a table, text that every row holds at the same field
//! (a constant column, with its padding) is stated once in the legend, and so is a prefix
//! or suffix that every value of a column shares. Lossless: [`decode`] puts every byte back,
//! alignment padding included.
//!
//! This module owns the encoding and its decoder. It does not decide when the route is tried
//! or whether its result is adopted: the pipeline in `reduce` and the gate do.
//!
//! # Format
//!
//! ```text
//! [tj] columns factored: each line below lacks what every row shares (fields split at spaces): fields 2-4 " 1 root root"; a line starting "» " is verbatim
//! » total 273816
//! lrwxrwxrwx         28 Feb 17  2023 FileCheck-14 -> ../lib/llvm-14/bin/FileCheck
//! -rwxr-xr-x      68496 Sep 20  2022 [
//! ```
//!
//! - **Line 1** is the legend; it starts with [`LEGEND`]. It names how a row splits into
//!   fields: at runs of spaces and tabs (`spaces`: `ls -l`, `ps`, `kubectl get`, `git
//!   ls-tree`), or at `|` with the spaces around it (`"|"`: `sqlite3` list mode, `psql`,
//!   markdown-ish tables; there a field may hold spaces). Then one entry per factored part,
//!   in the order of the fields, each text a JSON string:
//!   - `field N "T"` / `fields N-M "T"`: every row holds `T` at fields `N` to `M` (1-based,
//!     in the original row). `T` is the fields with the separators between them, and either
//!     the separator before field `N` (when `T` ends in a field) or the one after field `M`
//!     (when `T` ends in a separator), so padding comes back byte for byte.
//!   - `field N starts "P"`, `field N ends "S"`, or both: every value of field `N` starts
//!     with `P` and ends with `S`; the row shows the rest of it.
//! - **A line starting `» `** is an original line as it was: the first line (a header, or a
//!   `total` line), and every line that is not a row of the table or lacks one of the parts.
//! - **An empty line** is an empty line.
//! - **Any other line** is a row with the parts taken out.
//!
//! # How a row splits
//!
//! A row is a list of tokens that alternate: a separator (possibly empty at the start),
//! a field, a separator, …. Taking out a range of tokens that starts and ends with tokens of
//! different kinds keeps that alternation, so the rest splits into the same tokens up to the
//! cut and the decoder finds where each part goes by counting tokens. A cut inside a field
//! (a prefix or suffix) leaves a field that still starts and ends with a field character.
//! A row is written verbatim when its rest would be empty, would start with `» `, or would
//! end in whitespace the row did not end in. [`encode`] decodes its own output before
//! returning it, so no rule here can lose a line: a mistake costs only the saving.
//!
//! # Choosing the parts
//!
//! A token is constant when one text (found by a majority vote) holds it on most rows; runs
//! of constant tokens become parts. Several thresholds (every row, 97 %, 90 %, 80 %) are
//! tried and the smallest encoding wins: a row that misses a part is written verbatim, so a
//! lower threshold trades verbatim rows for more parts. Prefixes and suffixes are the
//! longest every row shares that do not cut a run of letters or of digits (`web-` of
//! `web-07`, not `web-0`).

use std::fmt::Write as _;

/// How every encoding starts: the pipeline recognises this route's output by it.
pub const LEGEND: &str = "[tj] columns factored";

const LEGEND_HEAD: &str =
    "[tj] columns factored: each line below lacks what every row shares (fields split at ";
const LEGEND_TAIL: &str = "a line starting \"» \" is verbatim";
/// What starts a line kept as it was.
const VERBATIM: &str = "» ";

/// The fields looked at per row: columns past it stay in the row.
const MAX_FIELDS: usize = 24;
/// Tokens looked at per row: a separator before each field and one after the last.
const MAX_TOKENS: usize = 2 * MAX_FIELDS + 1;
/// The fewest rows worth a legend.
const MIN_ROWS: usize = 4;
/// The shortest constant text or affix factored: shorter ones cost readability for little.
const MIN_PART: usize = 3;
/// About what a prefix or suffix costs in the legend besides its text
/// (`field 12 starts "" ends ""; `).
const AFFIX_LEGEND: usize = 32;
/// Rows the parts are chosen on (see [`sample`]).
const SAMPLE_ROWS: usize = 2000;
/// Shares of the rows (in percent) a token must hold one text on to be constant.
const THRESHOLDS: [usize; 4] = [100, 97, 90, 80];
/// The largest encoded/original byte ratio, in percent, worth returning: the gate asks for
/// 72 % by default, so an encoding that keeps more than four fifths can never be adopted.
const MAX_KEEP_PERCENT: usize = 80;

pub use super::DecodeError;

/// The name this route's decode errors give.
const ROUTE: &str = "columns";

/// `lines` with the text every row shares factored out, or None when no table is found or
/// factoring it does not pay.
///
/// The result decodes back to `lines` exactly; `encode` checks this itself and returns
/// None on a mismatch.
///
/// ```
/// use tj::reduce::shape::columns;
/// let lines: Vec<String> = (0..50)
///     .map(|i| format!("{i}|active|eu-west-1|standard-tier|web-{i:02}.prod.example.com"))
///     .collect();
/// let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
/// let text = columns::encode(&lines).unwrap();
/// assert!(text.starts_with(columns::LEGEND));
/// assert_eq!(columns::decode(&text).unwrap(), lines);
/// ```
pub fn encode(lines: &[&str]) -> Option<String> {
    if lines.len() <= MIN_ROWS {
        return None;
    }
    let original: usize = lines.iter().map(|l| l.len() + 1).sum();
    let layout = choose(lines)?;
    let text = render(lines, &layout)?;
    if text.len() * 100 > original * MAX_KEEP_PERCENT {
        return None;
    }
    // Lossless: the encoding is returned only if it gives every line back.
    let back = decode(&text).ok()?;
    (back.len() == lines.len() && back.iter().zip(lines).all(|(a, b)| a == b)).then_some(text)
}

/// The lines back from exactly what [`encode`] wrote, its legend line included.
pub fn decode(text: &str) -> Result<Vec<String>, DecodeError> {
    let mut rows = text.split('\n');
    let legend = rows.next().unwrap_or_default();
    let layout =
        Layout::parse(legend).map_err(|what| DecodeError { route: ROUTE, line: 1, what })?;
    let mut out = Vec::new();
    let mut bounds = Vec::new();
    for (n, line) in rows.enumerate() {
        if line.is_empty() {
            out.push(String::new());
        } else if let Some(original) = line.strip_prefix(VERBATIM) {
            out.push(original.to_owned());
        } else {
            out.push(layout.restore(line, &mut bounds).map_err(|what| DecodeError {
                route: ROUTE,
                line: n + 2,
                what,
            })?);
        }
    }
    Ok(out)
}

/// How a row splits into fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Split {
    /// At runs of spaces and tabs.
    Spaces,
    /// At `|` and the spaces and tabs around it; a field may hold spaces.
    Pipes,
}

impl Split {
    /// How the legend names it.
    fn name(self) -> &'static str {
        match self {
            Split::Spaces => "spaces",
            Split::Pipes => "\"|\"",
        }
    }

    /// Returns true if and only if `b` can be part of a separator.
    fn is_sep(self, b: u8) -> bool {
        matches!(b, b' ' | b'\t') || (self == Split::Pipes && b == b'|')
    }

    /// Pushes the token boundaries of `line` onto `out`: `0`, then the end of each token, at
    /// most `max` tokens. Token 0 is the leading separator (possibly empty); tokens then
    /// alternate field, separator, field, ….
    fn bounds(self, line: &str, max: usize, out: &mut Vec<u32>) {
        let b = line.as_bytes();
        let mut at = 0;
        out.push(0);
        let mut tokens = 0;
        while tokens < max {
            let is_sep_token = tokens.is_multiple_of(2);
            let end = if is_sep_token { self.sep_end(b, at) } else { self.field_end(b, at) };
            if end == at && (tokens > 0 || at == b.len()) {
                if tokens == 0 {
                    // An empty line: one empty separator.
                    out.push(0);
                }
                break;
            }
            out.push(end as u32);
            at = end;
            tokens += 1;
            if at == b.len() {
                break;
            }
        }
    }

    /// Where the separator starting at `at` ends.
    fn sep_end(self, b: &[u8], at: usize) -> usize {
        at + b[at..].iter().take_while(|&&c| self.is_sep(c)).count()
    }

    /// Where the field starting at `at` ends: at the next separator, and with `|` at the
    /// spaces before the next `|` (or the end of the line).
    fn field_end(self, b: &[u8], at: usize) -> usize {
        match self {
            Split::Spaces => at + b[at..].iter().take_while(|&&c| !self.is_sep(c)).count(),
            Split::Pipes => {
                let stop = b[at..].iter().position(|&c| c == b'|').map_or(b.len(), |p| at + p);
                at + b[at..stop].iter().rposition(|&c| !self.is_sep(c)).map_or(0, |p| p + 1)
            }
        }
    }
}

/// One part every row holds.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    /// `text` is tokens `token..end` of every row; `end - token` is even and at least 2.
    Span { token: usize, end: usize, text: String },
    /// Field token `token` starts with `prefix` and ends with `suffix` (either may be empty).
    Affix { token: usize, prefix: String, suffix: String },
}

impl Part {
    /// The first token the part is in.
    fn token(&self) -> usize {
        match self {
            Part::Span { token, .. } | Part::Affix { token, .. } => *token,
        }
    }

    /// Tokens of the part the rest of a row keeps: a field stripped of its affixes.
    fn kept(&self) -> usize {
        usize::from(matches!(self, Part::Affix { .. }))
    }

    /// One past the last token the part is in.
    fn end(&self) -> usize {
        match self {
            Part::Span { end, .. } => *end,
            Part::Affix { token, .. } => token + 1,
        }
    }
}

/// What was factored out of every row, and how rows split.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Layout {
    split: Split,
    /// Sorted by token.
    parts: Vec<Part>,
}

impl Layout {
    /// The legend line.
    fn legend(&self) -> String {
        let mut out = format!("{LEGEND_HEAD}{}): ", self.split.name());
        for part in &self.parts {
            match part {
                Part::Span { token, end, text } => {
                    let (first, last) = (token / 2 + 1, end / 2);
                    if first == last {
                        let _ = write!(out, "field {first} ");
                    } else {
                        let _ = write!(out, "fields {first}-{last} ");
                    }
                    push_json(&mut out, text);
                }
                Part::Affix { token, prefix, suffix } => {
                    let _ = write!(out, "field {}", token / 2 + 1);
                    if !prefix.is_empty() {
                        out.push_str(" starts ");
                        push_json(&mut out, prefix);
                    }
                    if !suffix.is_empty() {
                        out.push_str(" ends ");
                        push_json(&mut out, suffix);
                    }
                }
            }
            out.push_str("; ");
        }
        out.push_str(LEGEND_TAIL);
        out
    }

    /// The legend line read back.
    fn parse(line: &str) -> Result<Layout, &'static str> {
        let rest = line.strip_prefix(LEGEND_HEAD).ok_or("the legend line is missing")?;
        let (split, mut rest) = [Split::Spaces, Split::Pipes]
            .into_iter()
            .find_map(|s| Some((s, rest.strip_prefix(s.name())?.strip_prefix("): ")?)))
            .ok_or("the legend names no field separator")?;
        let mut parts = Vec::new();
        while rest != LEGEND_TAIL {
            let (part, after) = parse_part(split, rest)?;
            if parts.last().is_some_and(|p: &Part| p.end() > part.token()) {
                return Err("the legend's parts are out of order");
            }
            parts.push(part);
            rest = after.strip_prefix("; ").ok_or("a legend part does not end in \"; \"")?;
        }
        Ok(Layout { split, parts })
    }

    /// Appends `line`'s rest after the parts are taken out to `out`; returns false (and
    /// appends nothing) when the row does not hold every part or its rest would not read
    /// back. `bounds` are the line's token boundaries, at least up to the last part's.
    fn factor(&self, line: &str, bounds: &[u32], out: &mut String) -> bool {
        let mark = out.len();
        let at = |k: usize| bounds.get(k).map(|&b| b as usize);
        let mut from = 0;
        for part in &self.parts {
            let (Some(start), Some(end)) = (at(part.token()), at(part.end())) else {
                out.truncate(mark);
                return false;
            };
            let kept = match part {
                Part::Span { text, .. } => (&line[start..end] == text).then_some(""),
                Part::Affix { prefix, suffix, .. } => {
                    self.strip_affix(&line[start..end], prefix, suffix)
                }
            };
            let Some(kept) = kept else {
                out.truncate(mark);
                return false;
            };
            out.push_str(&line[from..start]);
            out.push_str(kept);
            from = end;
        }
        out.push_str(&line[from..]);
        let rest = &out[mark..];
        let ends_blank = |s: &str| s.ends_with([' ', '\t']);
        let ok = !rest.is_empty()
            && !rest.starts_with(VERBATIM)
            && (ends_blank(line) || !ends_blank(rest));
        if !ok {
            out.truncate(mark);
        }
        ok
    }

    /// `field` without `prefix` and `suffix`, when what is left is still one field.
    fn strip_affix<'f>(&self, field: &'f str, prefix: &str, suffix: &str) -> Option<&'f str> {
        let middle = field.strip_prefix(prefix)?.strip_suffix(suffix)?;
        let b = middle.as_bytes();
        let whole = !b.is_empty() && !self.split.is_sep(b[0]) && !self.split.is_sep(b[b.len() - 1]);
        whole.then_some(middle)
    }

    /// The original row from its rest. `bounds` is scratch space.
    ///
    /// The rest splits into the row's tokens less the spans taken out, so a part at token
    /// `k` of the row is at token `k` less the tokens of the spans before it in the rest.
    fn restore(&self, rest: &str, bounds: &mut Vec<u32>) -> Result<String, &'static str> {
        const SHORT: &str = "the row has too few fields";
        let removed: usize = self.parts.iter().map(|p| p.end() - p.token() - p.kept()).sum();
        let last = self.parts.last().map_or(0, Part::end);
        bounds.clear();
        self.split.bounds(rest, (last + 1).saturating_sub(removed), bounds);
        let mut row = String::with_capacity(rest.len() + 64);
        let (mut from, mut removed) = (0, 0);
        for part in &self.parts {
            let k = part.token().checked_sub(removed).ok_or(SHORT)?;
            let at = |k: usize| bounds.get(k).map(|&b| b as usize).ok_or(SHORT);
            let start = at(k)?;
            row.push_str(&rest[from..start]);
            match part {
                Part::Span { text, .. } => {
                    row.push_str(text);
                    from = start;
                }
                Part::Affix { prefix, suffix, .. } => {
                    let end = at(k + 1)?;
                    if start == end {
                        return Err(SHORT);
                    }
                    row.push_str(prefix);
                    row.push_str(&rest[start..end]);
                    row.push_str(suffix);
                    from = end;
                }
            }
            removed += part.end() - part.token() - part.kept();
        }
        row.push_str(&rest[from..]);
        Ok(row)
    }
}

/// One legend part at the start of `text`, and what follows it.
fn parse_part(split: Split, text: &str) -> Result<(Part, &str), &'static str> {
    let bad = "a legend part is malformed";
    let rest = text.strip_prefix("field").ok_or(bad)?;
    let rest = rest.strip_prefix('s').unwrap_or(rest).strip_prefix(' ').ok_or(bad)?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let first: usize = rest[..digits].parse().map_err(|_| bad)?;
    if first == 0 || first > MAX_FIELDS {
        return Err(bad);
    }
    let mut rest = &rest[digits..];
    if let Some(r) = rest.strip_prefix('-') {
        rest = r.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    let rest = rest.strip_prefix(' ').ok_or(bad)?;
    let field_token = 2 * first - 1;
    if rest.starts_with('"') {
        let (text, after) = take_json(rest).ok_or(bad)?;
        let ends_in_sep = text.as_bytes().last().is_some_and(|&b| split.is_sep(b));
        let token = if ends_in_sep { field_token } else { field_token - 1 };
        let end = token + span_tokens(split, &text);
        return Ok((Part::Span { token, end, text }, after));
    }
    let (mut prefix, mut suffix, mut rest) = (String::new(), String::new(), rest);
    if let Some(r) = rest.strip_prefix("starts ") {
        (prefix, rest) = take_json(r).ok_or(bad)?;
        rest = rest.strip_prefix(' ').unwrap_or(rest);
    }
    if let Some(r) = rest.strip_prefix("ends ") {
        (suffix, rest) = take_json(r).ok_or(bad)?;
    }
    if prefix.is_empty() && suffix.is_empty() {
        return Err(bad);
    }
    Ok((Part::Affix { token: field_token, prefix, suffix }, rest))
}

/// Writes `text` as a JSON string.
fn push_json(out: &mut String, text: &str) {
    // A `String` always serialises; the fallback only keeps this free of an unwrap.
    out.push_str(&serde_json::to_string(text).unwrap_or_default());
}

/// The JSON string at the start of `text`, and what follows it.
fn take_json(text: &str) -> Option<(String, &str)> {
    let b = text.as_bytes();
    if b.first() != Some(&b'"') {
        return None;
    }
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => {
                let value = serde_json::from_str(&text[..=i]).ok()?;
                return Some((value, &text[i + 1..]));
            }
            _ => i += 1,
        }
    }
    None
}

/// The layout that writes `lines` smallest, judged on a sample of rows, or None when no
/// part is worth a legend.
///
/// With `|` in most lines, splitting at `|` wins unless it is more than a tenth larger: its
/// fields are the table's columns, so the legend's field numbers match the header.
fn choose(lines: &[&str]) -> Option<Layout> {
    let sample = sample(lines);
    let piped = lines.iter().filter(|l| l.contains('|')).count() * 2 >= lines.len();
    let mut best: Option<(usize, Layout)> = None;
    for split in [Split::Spaces, Split::Pipes] {
        if split == Split::Pipes && !piped {
            continue;
        }
        let grid = Grid::new(&sample, split);
        let majorities = grid.majorities();
        for percent in THRESHOLDS {
            let Some(layout) = grid.layout(&majorities, percent) else { continue };
            let Some(size) = grid.estimate(&layout, lines.len()) else { continue };
            let size = if split == Split::Pipes { size * 10 / 11 } else { size };
            if best.as_ref().is_none_or(|(b, _)| size < *b) {
                best = Some((size, layout));
            }
        }
    }
    best.map(|(_, layout)| layout)
}

/// The rows the parts are chosen on: every line but the first (a header, a `total` line, or
/// one row that is cheap to keep whole), or [`SAMPLE_ROWS`] of them evenly spaced, so the
/// choice costs the same on a long table. Every row is checked against the parts when
/// rendering, so a row the sample missed is only written verbatim.
fn sample<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    let rows = lines.len() - 1;
    if rows <= SAMPLE_ROWS {
        return lines[1..].to_vec();
    }
    (0..SAMPLE_ROWS).map(|j| lines[1 + j * rows / SAMPLE_ROWS]).collect()
}

/// The whole encoding of `lines` with `layout`, or None when too few rows hold its parts.
fn render(lines: &[&str], layout: &Layout) -> Option<String> {
    let original: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mut out = layout.legend();
    out.reserve(original);
    let mut bounds = Vec::new();
    let tokens = layout.parts.last().map_or(0, Part::end) + 1;
    let mut factored = 0;
    for (i, line) in lines.iter().enumerate() {
        out.push('\n');
        if line.is_empty() {
            continue;
        }
        bounds.clear();
        layout.split.bounds(line, tokens, &mut bounds);
        if i > 0 && layout.factor(line, &bounds, &mut out) {
            factored += 1;
        } else {
            out.push_str(VERBATIM);
            out.push_str(line);
        }
    }
    (factored >= MIN_ROWS).then_some(out)
}

/// Sampled rows split into tokens once.
struct Grid<'a> {
    lines: &'a [&'a str],
    split: Split,
    /// Where each line's boundaries start in `bounds`; one more entry than lines.
    starts: Vec<usize>,
    bounds: Vec<u32>,
}

/// The text most rows hold at one token, and on how many rows.
type Majority<'a> = Option<(&'a str, usize)>;

impl<'a> Grid<'a> {
    fn new(lines: &'a [&'a str], split: Split) -> Grid<'a> {
        let mut starts = Vec::with_capacity(lines.len() + 1);
        let mut bounds = Vec::with_capacity(lines.len() * 8);
        for line in lines {
            starts.push(bounds.len());
            split.bounds(line, MAX_TOKENS, &mut bounds);
        }
        starts.push(bounds.len());
        Grid { lines, split, starts, bounds }
    }

    /// The boundaries of row `i`.
    fn bounds_of(&self, i: usize) -> &[u32] {
        &self.bounds[self.starts[i]..self.starts[i + 1]]
    }

    /// Token `k` of row `i`, when the row has it.
    fn token(&self, i: usize, k: usize) -> Option<&'a str> {
        let b = self.bounds_of(i);
        let (start, end) = (*b.get(k)? as usize, *b.get(k + 1)? as usize);
        Some(&self.lines[i][start..end])
    }

    fn rows(&self) -> std::ops::Range<usize> {
        0..self.lines.len()
    }

    /// For each token index, the text most rows hold there (Boyer–Moore majority vote, then
    /// a count), so the cost is two passes whatever the number of distinct values.
    fn majorities(&self) -> Vec<Majority<'a>> {
        (0..MAX_TOKENS)
            .map(|k| {
                let mut vote: Option<(&str, usize)> = None;
                for i in self.rows() {
                    let Some(t) = self.token(i, k) else { continue };
                    vote = match vote {
                        Some((c, n)) if c == t => Some((c, n + 1)),
                        Some((c, n)) if n > 1 => Some((c, n - 1)),
                        _ => Some((t, 1)),
                    };
                }
                let (cand, _) = vote?;
                let count = self.rows().filter(|&i| self.token(i, k) == Some(cand)).count();
                Some((cand, count))
            })
            .collect()
    }

    /// The parts for tokens that hold one text on at least `percent` of the rows, or None
    /// when there are none worth a legend.
    fn layout(&self, majorities: &[Majority<'a>], percent: usize) -> Option<Layout> {
        let need = (self.rows().len() * percent).div_ceil(100).max(MIN_ROWS);
        let fixed: Vec<bool> =
            majorities.iter().map(|m| m.is_some_and(|(_, n)| n >= need)).collect();
        let mut parts = Vec::new();
        let mut k = 0;
        while k < fixed.len() {
            if !fixed[k] {
                k += 1;
                continue;
            }
            let end = k + fixed[k..].iter().take_while(|&&f| f).count();
            // A run that starts the rows and reaches their end would leave nothing of them:
            // keep the last field in the rest. The rows that go on past the run count only
            // when there are enough of them to be the table's shape; one stray row with a
            // trailing space must not turn every other row verbatim.
            let whole =
                k == 0 && self.rows().filter(|&i| self.token(i, end).is_some()).count() < need;
            if let Some(span) = span(majorities, k, if whole { end - 1 } else { end }) {
                parts.push(span);
            }
            k = end;
        }
        let spans = Layout { split: self.split, parts };
        let affixes = self.affixes(&spans, majorities, need);
        let mut layout = spans;
        layout.parts.extend(affixes);
        layout.parts.sort_by_key(Part::token);
        (!layout.parts.is_empty()).then_some(layout)
    }

    /// A prefix or suffix for each field outside the spans that the rows holding the spans
    /// share, when it is long enough to pay for its place in the legend.
    fn affixes(&self, spans: &Layout, majorities: &[Majority<'a>], need: usize) -> Vec<Part> {
        let fit: Vec<usize> = self.rows().filter(|&i| self.holds(i, &spans.parts)).collect();
        let covered = |k: usize| spans.parts.iter().any(|p| (p.token()..p.end()).contains(&k));
        (1..MAX_TOKENS)
            .step_by(2)
            .filter(|&k| majorities[k].is_some() && !covered(k))
            .filter_map(|k| {
                let values: Vec<&str> = fit.iter().filter_map(|&i| self.token(i, k)).collect();
                // What is left of a path once its shared start or end goes still reads as a
                // path, a different one: `src/reduce/mod.rs:4:` less `src/` and `:` is
                // `reduce/mod.rs:4`, and an agent opens the wrong file. Paths stay whole
                // (folding them under their directory is the paths route's job).
                if values.len() < need || values.iter().any(|v| v.contains(['/', '\\'])) {
                    return None;
                }
                let prefix = self.shared_prefix(&values);
                let rests: Vec<&str> = values.iter().map(|v| &v[prefix.len()..]).collect();
                let suffix = self.shared_suffix(&rests);
                let saving = (prefix.len() + suffix.len()) * values.len();
                let worth = prefix.len() >= MIN_PART || suffix.len() >= MIN_PART;
                (worth && saving > AFFIX_LEGEND + prefix.len() + suffix.len()).then(|| {
                    Part::Affix { token: k, prefix: prefix.to_owned(), suffix: suffix.to_owned() }
                })
            })
            .collect()
    }

    /// Returns true if and only if row `i` holds every span of `parts`.
    fn holds(&self, i: usize, parts: &[Part]) -> bool {
        let b = self.bounds_of(i);
        parts.iter().all(|part| match part {
            Part::Span { token, end, text } => match (b.get(*token), b.get(*end)) {
                (Some(&s), Some(&e)) => &self.lines[i][s as usize..e as usize] == text,
                _ => false,
            },
            Part::Affix { .. } => true,
        })
    }

    /// The longest prefix of every value that leaves each a field of its own and does not
    /// cut a run of letters or digits.
    fn shared_prefix<'v>(&self, values: &[&'v str]) -> &'v str {
        let Some(&first) = values.first() else { return "" };
        let mut len = values.iter().fold(first.len(), |len, v| common_prefix(&first[..len], v));
        while len > 0 {
            let cut_ok = |v: &&str| {
                let (head, tail) = v.split_at(len);
                tail.bytes().next().is_some_and(|b| !self.split.is_sep(b)) && clean_cut(head, tail)
            };
            if first.is_char_boundary(len) && values.iter().all(cut_ok) {
                break;
            }
            len -= 1;
        }
        &first[..len]
    }

    /// The same at the end of every value.
    fn shared_suffix<'v>(&self, values: &[&'v str]) -> &'v str {
        let Some(&first) = values.first() else { return "" };
        let mut len =
            values.iter().fold(first.len(), |len, v| common_suffix(&first[first.len() - len..], v));
        while len > 0 {
            let cut_ok = |v: &&str| {
                let (head, tail) = v.split_at(v.len() - len);
                head.bytes().last().is_some_and(|b| !self.split.is_sep(b)) && clean_cut(head, tail)
            };
            if first.is_char_boundary(first.len() - len) && values.iter().all(cut_ok) {
                break;
            }
            len -= 1;
        }
        &first[first.len() - len..]
    }

    /// The encoding's size in bytes with `layout` for `lines` lines in all, estimated from
    /// the sample, or None when too few sampled rows hold its parts.
    fn estimate(&self, layout: &Layout, lines: usize) -> Option<usize> {
        let mut out = String::new();
        let (mut bytes, mut factored) = (0, 0);
        for i in self.rows() {
            out.clear();
            if layout.factor(self.lines[i], self.bounds_of(i), &mut out) {
                factored += 1;
                bytes += out.len() + 1;
            } else {
                bytes += VERBATIM.len() + self.lines[i].len() + 1;
            }
        }
        let rows = self.rows().len().max(1);
        (factored >= MIN_ROWS).then(|| layout.legend().len() + bytes * lines / rows)
    }
}

/// The span for the run of constant tokens `from..to`: an even number of tokens, so the
/// rest of a row keeps its alternation, the longer text when the run is odd.
fn span(majorities: &[Majority<'_>], from: usize, to: usize) -> Option<Part> {
    let text = |a: usize, b: usize| -> String {
        (a..b).filter_map(|k| majorities[k].map(|(t, _)| t)).collect()
    };
    let (a, b) = if (to - from).is_multiple_of(2) {
        (from, to)
    } else if to - from == 1 {
        return None;
    } else if text(from, to - 1).len() >= text(from + 1, to).len() {
        (from, to - 1)
    } else {
        (from + 1, to)
    };
    let text = text(a, b);
    (text.trim().len() >= MIN_PART).then_some(Part::Span { token: a, end: b, text })
}

/// How many tokens a span `text` covers. Split alone, `text` gains a leading separator
/// token that is empty when it starts with a field; a span that ends in a separator
/// (fields, then the separator after them) starts with its field, so that token is not
/// part of it. A span that ends in a field starts with its separator (empty only at the
/// start of a row), which is.
fn span_tokens(split: Split, text: &str) -> usize {
    let mut bounds = Vec::new();
    split.bounds(text, usize::MAX, &mut bounds);
    let ends_in_sep = text.as_bytes().last().is_some_and(|&b| split.is_sep(b));
    (bounds.len() - 1) - usize::from(ends_in_sep)
}

/// Bytes `a` and `b` share at the start (whole characters).
fn common_prefix(a: &str, b: &str) -> usize {
    let n = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    (0..=n).rev().find(|&i| a.is_char_boundary(i)).unwrap_or(0)
}

/// Bytes `a` and `b` share at the end (whole characters).
fn common_suffix(a: &str, b: &str) -> usize {
    let n = a.bytes().rev().zip(b.bytes().rev()).take_while(|(x, y)| x == y).count();
    (0..=n).rev().find(|&i| a.is_char_boundary(a.len() - i)).unwrap_or(0)
}

/// Returns true if and only if cutting between `head` and `tail` does not split a run of
/// letters or a run of digits: `web-|07` and `customer|1` are clean, `web-0|7` is not.
fn clean_cut(head: &str, tail: &str) -> bool {
    match (head.chars().next_back(), tail.chars().next()) {
        (Some(a), Some(b)) => {
            !(a.is_alphabetic() && b.is_alphabetic() || a.is_numeric() && b.is_numeric())
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce::tokens;

    fn round_trip(lines: &[&str]) -> String {
        let text = encode(lines).expect("the table pays");
        assert_eq!(decode(&text).unwrap(), lines, "encoded:\n{text}");
        assert!(text.starts_with(LEGEND));
        text
    }

    fn refs(owned: &[String]) -> Vec<&str> {
        owned.iter().map(String::as_str).collect()
    }

    /// `ls -la` of a directory unpacked at once: mode, links, owner, size and date shared.
    fn ls_la() -> Vec<String> {
        let mut lines = vec!["total 1248".to_owned()];
        for (i, name) in
            ["@babel", "acorn", "ansi-regex", "chalk", "debug", "esbuild"].iter().enumerate()
        {
            lines.push(format!("drwxr-xr-x   {} root root   4096 Nov 30 02:29 {name}", i % 3 + 2));
        }
        for i in 0..40 {
            lines.push(format!("drwxr-xr-x   2 root root   4096 Nov 30 02:29 pkg-{i:02}"));
        }
        lines.push("-rw-r--r--   1 root root 151015 Nov 30 02:29 .package-lock.json".to_owned());
        lines
    }

    #[test]
    fn ls_la_states_the_shared_columns_once_and_keeps_padding() {
        let lines = ls_la();
        let text = round_trip(&refs(&lines));
        let legend = text.lines().next().unwrap();
        assert!(legend.contains("(fields split at spaces)"), "{legend}");
        assert!(legend.contains(r#"fields 3-8 " root root   4096 Nov 30 02:29""#), "{legend}");
        assert!(text.contains("\n» total 1248\n"));
        assert!(text.contains("\n2 pkg-07\n"), "{text}");
        // Another mode and size: kept whole.
        assert!(
            text.ends_with("\n» -rw-r--r--   1 root root 151015 Nov 30 02:29 .package-lock.json")
        );
    }

    #[test]
    fn sqlite_list_mode_splits_at_pipes_with_prefix_and_suffix() {
        let lines: Vec<String> = (1..=300)
            .map(|i| format!("{i}|active|eu-west-1|web-{:02}.prod.example.com|{}", i % 40, i * 37))
            .collect();
        let text = round_trip(&refs(&lines));
        let legend = text.lines().next().unwrap();
        assert!(legend.contains(r#"(fields split at "|")"#), "{legend}");
        assert!(legend.contains(r#"fields 2-3 "|active|eu-west-1""#), "{legend}");
        assert!(legend.contains(r#"field 4 starts "web-" ends ".prod.example.com""#), "{legend}");
        // The first line stays whole, so one full row is always in sight.
        assert_eq!(text.lines().nth(1), Some("» 1|active|eu-west-1|web-01.prod.example.com|37"));
        assert_eq!(text.lines().nth(2), Some("2|02|74"));
        let original = lines.join("\n");
        assert!(tokens::estimate(&text) * 3 < tokens::estimate(&original));
    }

    #[test]
    fn psql_aligned_keeps_header_rule_and_footer_verbatim() {
        let mut lines = vec![
            " id  |     name     |         email          | country".to_owned(),
            "-----+--------------+------------------------+---------".to_owned(),
        ];
        for i in 1..=120 {
            lines.push(format!("{i:>4} | Customer {i:<3} | customer{i:<3}@example.com | DE"));
        }
        lines.push("(120 rows)".to_owned());
        lines.push(String::new());
        let text = round_trip(&refs(&lines));
        assert!(text.contains("\n» -----+--------------+"));
        assert!(text.contains("\n» (120 rows)\n"), "{text}");
        assert!(text.ends_with('\n'), "the blank last line stays blank");
    }

    #[test]
    fn git_ls_tree_keeps_each_path_whole() {
        let mut lines = Vec::new();
        for i in 0..80u64 {
            let mode = if i % 20 == 7 { "100755" } else { "100644" };
            let sha = format!("{:040x}", i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            lines.push(format!("{mode} blob {sha}\ttests/fixtures/databases/case_{i}.json"));
        }
        // Mode and type alone do not pay; the path's shared start is no longer cut away
        // (`case_7.json` read as a file of its own).
        assert_eq!(encode(&refs(&lines)), None);
    }

    /// `grep -rn` hits: the path less its shared `src/` and the `:` after the line number
    /// read as another file (`reduce/mod.rs:4`); a path is never cut.
    #[test]
    fn a_search_hit_keeps_its_path_whole() {
        let mut lines = Vec::new();
        for dir in ["reduce", "cli"] {
            for i in 0..200 {
                lines.push(format!(
                    "src/{dir}/mod.rs:{}:    // TODO: handle case {i} properly",
                    i * 3 + 1
                ));
            }
        }
        let text = round_trip(&refs(&lines));
        for (line, row) in lines.iter().zip(text.lines().skip(1)) {
            let path = line.split(':').next().unwrap();
            assert!(row.contains(path), "{row:?} lost the path {path:?}\n{text}");
        }
    }

    #[test]
    fn a_rest_that_looks_verbatim_or_blank_is_written_whole() {
        let mut lines = vec!["header".to_owned()];
        for i in 0..60 {
            lines.push(format!("constant-cell-text {i}"));
        }
        // Its rest would start with "» ".
        lines.push("constant-cell-text » 5".to_owned());
        lines.push("» constant-cell-text 3".to_owned());
        // Tabs, unicode, blank lines and lines of the legend's own syntax.
        lines.push(String::new());
        lines.push("constant-cell-text\t漢字".to_owned());
        lines.push("[tj] columns factored: each line below lacks".to_owned());
        let text = round_trip(&refs(&lines));
        assert!(text.contains("\n» constant-cell-text » 5\n"), "{text}");
        assert!(text.contains("\n» » constant-cell-text 3\n"));
        assert!(text.contains("\n\n» constant-cell-text\t漢字\n"), "blank stays blank: {text}");
    }

    /// Found by `tests/lossless_columns.rs`: every row is one constant text, and one row
    /// also ends in a space, so it alone goes on past the run. The run still ends the table's
    /// rows: its last field stays in each rest, and the odd row is written whole.
    #[test]
    fn one_row_going_on_past_a_run_that_ends_the_others_is_the_odd_one() {
        const WIDE: &str = "-rw-r--r-- 1 root root 4096 Dec  1 12:00";
        for odd in [0, 7, 19] {
            let mut lines = vec!["header".to_owned()];
            lines.extend((0..20).map(|i| format!("{WIDE} »{}", if i == odd { " " } else { "" })));
            let text = round_trip(&refs(&lines));
            let whole = format!("» {WIDE} » ");
            assert!(text.lines().any(|l| l == whole), "{text}");
            assert_eq!(text.lines().filter(|l| *l == "»").count(), 19, "{text}");
        }
    }

    #[test]
    fn span_texts_with_quotes_backslashes_and_tabs_survive_the_legend() {
        let lines: Vec<String> =
            (0..50).map(|i| format!("{i}\t\"quoted\" C:\\dir\\ \t| x |\tvalue-{i}")).collect();
        round_trip(&refs(&lines));
    }

    #[test]
    fn declines_what_is_no_table() {
        assert_eq!(encode(&[]), None);
        assert_eq!(encode(&["a b c"; 3]), None);
        const WORDS: [&str; 8] = ["the", "build", "cache", "was", "warm", "so", "it", "ran"];
        let prose: Vec<String> = (0..100usize)
            .map(|i| {
                (0..i % 7 + 2).map(|w| WORDS[(i * 5 + w * 3) % 8]).collect::<Vec<_>>().join(" ")
            })
            .collect();
        assert_eq!(encode(&refs(&prose)), None);
        // A shared column too short to pay (ls -l of /usr/bin: only " 1 root root").
        const MONTHS: [&str; 6] = ["Jan", "Mar", "May", "Jul", "Sep", "Nov"];
        const TOOLS: [&str; 5] = ["gcc", "ld", "make", "perl", "zip"];
        let ls: Vec<String> = (0..100)
            .map(|i| {
                let (month, tool, day) = (MONTHS[i % 6], TOOLS[i % 5], i % 28 + 1);
                let size = (i * 7919).pow(2) % 99_999_999;
                let (mode, link) = match i % 3 {
                    0 => ("lrwxrwxrwx", format!(" -> ../lib/{tool}/bin/{tool}")),
                    _ => ("-rwxr-xr-x", String::new()),
                };
                format!(
                    "{mode} 1 root root {size:>8} {month} {day:>2}  202{} {tool}{i}{link}",
                    i % 4
                )
            })
            .collect();
        assert_eq!(encode(&refs(&ls)), None);
    }

    #[test]
    fn decode_names_the_bad_line() {
        assert_eq!(decode("not a legend").unwrap_err().line, 1);
        let legend = format!("{LEGEND_HEAD}spaces): fields 2-3 \" x y\"; {LEGEND_TAIL}");
        assert_eq!(decode(&format!("{legend}\na b\n» whole")).unwrap(), ["a x y b", "whole"]);
        let err = decode(&format!("{legend}\n» whole\n")).unwrap();
        assert_eq!(err, ["whole", ""]);
        let err = decode(&format!("{legend}\n» whole\n   ")).unwrap_err();
        assert_eq!((err.line, err.what), (3, "the row has too few fields"));
        let bad = format!("{LEGEND_HEAD}spaces): field 0 \"x\"; {LEGEND_TAIL}");
        assert_eq!(decode(&bad).unwrap_err().line, 1);
        let overlapping = format!(
            "{LEGEND_HEAD}spaces): fields 1-3 \"a b c\"; field 2 starts \"xyz\"; {LEGEND_TAIL}"
        );
        assert_eq!(decode(&overlapping).unwrap_err().line, 1);
    }

    #[test]
    fn tokens_alternate_and_cover_the_line() {
        let mut b = Vec::new();
        Split::Spaces.bounds("  a  bc\td ", usize::MAX, &mut b);
        assert_eq!(b, [0, 2, 3, 5, 7, 8, 9, 10]);
        b.clear();
        Split::Pipes.bounds("| a b |  c||d |", usize::MAX, &mut b);
        assert_eq!(b, [0, 2, 5, 9, 10, 12, 13, 15]);
        b.clear();
        Split::Spaces.bounds("", usize::MAX, &mut b);
        assert_eq!(b, [0, 0]);
    }

    #[test]
    fn prefixes_do_not_cut_a_run_of_digits_or_letters() {
        assert!(clean_cut("web-", "07"));
        assert!(clean_cut("customer", "1@x"));
        assert!(!clean_cut("web-0", "7"));
        assert!(!clean_cut("sess", "ion"));
    }

    #[test]
    fn encoding_is_deterministic() {
        let lines = ls_la();
        assert_eq!(encode(&refs(&lines)), encode(&refs(&lines)));
    }
}
