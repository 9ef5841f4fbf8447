//! What tj saved, added up from its ledger (`<data dir>/ledger.jsonl`, one line per `tj run`
//! and `tj reduce`, written by [`Store::append_ledger`](crate::store::Store::append_ledger)).
//!
//! This module owns the reading and the arithmetic: it streams the ledger line by line,
//! keeps the lines a [`Filter`] lets through, and adds them up in [`Totals`], overall and per
//! family, rule, command and UTC day ([`Summary`]). Opening the file, printing and the
//! formats belong to `cli::stats`.
//!
//! The ledger is written by every tj process and read by none but this one, so it is
//! treated as untrusted: a line that is not JSON, not UTF-8, lacks the fields we add up, or
//! is longer than [`LINE_MAX`] is skipped and counted ([`Summary::skipped`]), never fatal.
//! A 100,000-line ledger (28 MB) takes about a tenth of a second of CPU, most of it in
//! serde_json: each line is parsed where it lies in the reader's buffer into a struct that
//! borrows its strings (one is copied only when it holds a JSON escape), and each group key
//! is allocated once, the first time it is seen (`scripts/bench-stats.py`).
//!
//! Token counts come from the ledger, where tj's estimator put them
//! ([`crate::reduce::tokens::estimate`]: about 3.8 characters per token, 0.75 tokens per CJK
//! character). "Avoided" tokens are therefore an estimate too: the estimated tokens of the
//! originals minus those of the renditions the agent got.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{self, BufRead};

use serde::Deserialize;

use crate::rules::identity;

/// The longest ledger line read. [`Store::append_ledger`](crate::store::Store::append_ledger)
/// never writes one longer ([`crate::store::LEDGER_LINE_MAX`]); a longer line is corruption
/// (two lines run together, or a file that is not a ledger) and is skipped without being
/// held in memory.
pub const LINE_MAX: usize = crate::store::LEDGER_LINE_MAX;

/// Which lines count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Filter<'a> {
    /// Only lines at or after this time (seconds since the Unix epoch).
    pub since: Option<u64>,
    /// Only lines of this session (`TJ_SESSION`), compared exactly.
    pub session: Option<&'a str>,
}

/// The groupings of a [`Summary`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
pub enum Group {
    /// The selected rule's family (`tests`, `build`, `git`, …).
    Family,
    /// The selected rule (`tests/cargo-test`).
    Rule,
    /// The command, by program and subcommand: `cargo test --lib x` counts as `cargo test`.
    // (See `command_key`; a link would show in `--help` as it is written.)
    Command,
    /// The UTC day the run ended.
    Day,
}

impl Group {
    /// Every grouping, in the order they are printed.
    pub const ALL: [Group; 4] = [Group::Family, Group::Rule, Group::Command, Group::Day];

    /// The grouping's name, as `--by` and the CSV's `group` column spell it.
    pub fn name(self) -> &'static str {
        match self {
            Group::Family => "family",
            Group::Rule => "rule",
            Group::Command => "command",
            Group::Day => "day",
        }
    }
}

impl fmt::Display for Group {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Runs and tokens added up over some ledger lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Ledger lines: one per `tj run` or `tj reduce`.
    pub runs: u64,
    /// Runs whose reduction was adopted (the agent got less than the original).
    pub reduced: u64,
    /// Reduced runs whose rendition dropped nothing (lossless re-encodings).
    pub lossless: u64,
    /// Runs whose rendition was a one-line stub naming an identical earlier output.
    pub deduped: u64,
    /// Estimated tokens of the originals.
    pub raw_tokens: u64,
    /// Estimated tokens of what the agent got.
    pub rendition_tokens: u64,
    /// Characters of the originals.
    pub raw_chars: u64,
    /// Characters of what the agent got.
    pub rendition_chars: u64,
}

impl Totals {
    /// Adds one ledger line.
    fn add(&mut self, line: &Line<'_>) {
        self.runs += 1;
        self.reduced += u64::from(line.reduced);
        self.lossless += u64::from(line.reduced && line.lossless);
        self.deduped += u64::from(line.deduped);
        self.raw_tokens = self.raw_tokens.saturating_add(line.tokens.0);
        self.rendition_tokens = self.rendition_tokens.saturating_add(line.tokens.1);
        self.raw_chars = self.raw_chars.saturating_add(line.chars.0);
        self.rendition_chars = self.rendition_chars.saturating_add(line.chars.1);
    }

    /// Adds `other`.
    fn merge(&mut self, other: &Totals) {
        self.runs += other.runs;
        self.reduced += other.reduced;
        self.lossless += other.lossless;
        self.deduped += other.deduped;
        self.raw_tokens = self.raw_tokens.saturating_add(other.raw_tokens);
        self.rendition_tokens = self.rendition_tokens.saturating_add(other.rendition_tokens);
        self.raw_chars = self.raw_chars.saturating_add(other.raw_chars);
        self.rendition_chars = self.rendition_chars.saturating_add(other.rendition_chars);
    }

    /// Estimated tokens the agent did not have to read: raw minus rendition, over the whole
    /// group (so a run whose rendition came out longer counts against the others), never
    /// below zero.
    pub fn avoided_tokens(&self) -> u64 {
        self.raw_tokens.saturating_sub(self.rendition_tokens)
    }

    /// Characters the agent did not have to read, as [`Totals::avoided_tokens`].
    pub fn avoided_chars(&self) -> u64 {
        self.raw_chars.saturating_sub(self.rendition_chars)
    }

    /// The share of reduced runs that were lossless, or `None` when none was reduced.
    pub fn lossless_share(&self) -> Option<f64> {
        #[allow(clippy::cast_precision_loss, reason = "a share for display")]
        (self.reduced > 0).then(|| self.lossless as f64 / self.reduced as f64)
    }
}

/// One row of a grouping: its key and what it adds up to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row<K> {
    /// What the rows are grouped by: a family, a rule id, a command, a day.
    pub key: K,
    /// The runs of this key.
    pub totals: Totals,
}

/// The ledger added up.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Lines read and understood, before filtering.
    pub recorded: u64,
    /// Lines that could not be read (not JSON, not UTF-8, missing fields, too long).
    pub skipped: u64,
    /// Everything the filter let through.
    pub totals: Totals,
    /// Per family, most avoided tokens first (ties by name).
    pub families: Vec<Row<String>>,
    /// Per rule id, most avoided tokens first (ties by name).
    pub rules: Vec<Row<String>>,
    /// Per [`command_key`], most avoided tokens first (ties by name).
    pub commands: Vec<Row<String>>,
    /// Per UTC day (days since 1970-01-01), newest first: a time series reads in order.
    pub days: Vec<Row<u64>>,
}

/// One ledger line as read: the fields the totals need, strings borrowed from the line.
/// The id and working directory are not read (serde skips unknown fields without copying).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Line<'a> {
    time: u64,
    #[serde(borrow, default)]
    command: Text<'a>,
    #[serde(borrow, default)]
    rule: Text<'a>,
    #[serde(borrow, default)]
    family: Text<'a>,
    #[serde(borrow, default)]
    session: Option<Text<'a>>,
    #[serde(default)]
    chars: (u64, u64),
    tokens: (u64, u64),
    #[serde(default)]
    reduced: bool,
    #[serde(default)]
    lossless: bool,
    #[serde(default)]
    deduped: bool,
}

/// A JSON string borrowed from the line when it holds no escape, copied when it does.
///
/// serde borrows a bare `Cow<str>` field on request, but not one inside an `Option` (the
/// session); this newtype's visitor borrows wherever it is.
#[derive(Default)]
struct Text<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Text<'a>, D::Error> {
        /// Takes the string as given: borrowed when the input allows.
        struct Visitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visitor<'a> {
            type Value = Text<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, s: &'de str) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Borrowed(s)))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Owned(s)))
            }
        }
        de.deserialize_str(Visitor(std::marker::PhantomData))
    }
}

/// Running totals keyed by group, each key allocated once.
#[derive(Default)]
struct Accumulator {
    summary: Summary,
    families: Groups<Box<str>>,
    rules: Groups<Box<str>>,
    /// By the command exactly as recorded; folded into [`command_key`]s at the end, so the
    /// shell parsing runs once per distinct command, not once per line.
    commands: Groups<Box<str>>,
    days: Groups<u64>,
}

/// Totals by key, hashed with [`FxHasher`].
type Groups<K> = HashMap<K, Totals, BuildHasherDefault<FxHasher>>;

/// rustc's FxHash: a multiply and a rotate per eight bytes. Four lookups per ledger line
/// made the standard SipHash a tenth of `tj stats`. Its weakness, keys chosen to collide,
/// needs someone who can write the user's ledger, who could as well make it huge.
#[derive(Clone, Copy, Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let mut word = [0; 8];
        word[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        self.add(u64::from_le_bytes(word));
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    fn write_u64(&mut self, word: u64) {
        self.add(word);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl FxHasher {
    /// Mixes in one word.
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Accumulator {
    /// Reads one ledger line (`None`: one too long to read) and counts it if `filter` lets
    /// it through. The line is checked as UTF-8 once, whole, and parsed as a `str`: cheaper
    /// than serde_json checking each string it borrows from a byte slice.
    fn line(&mut self, bytes: Option<&[u8]>, filter: &Filter<'_>) {
        if bytes.is_some_and(|b| b.iter().all(u8::is_ascii_whitespace)) {
            return;
        }
        let text = bytes.and_then(|b| std::str::from_utf8(b).ok());
        let Some(line) = text.and_then(|t| serde_json::from_str::<Line<'_>>(t).ok()) else {
            self.summary.skipped += 1;
            return;
        };
        self.summary.recorded += 1;
        let session = |s: &str| line.session.as_ref().is_some_and(|l| l.0 == s);
        if filter.since.is_none_or(|since| line.time >= since) && filter.session.is_none_or(session)
        {
            self.add(&line);
        }
    }

    /// Counts one line that passed the filter.
    fn add(&mut self, line: &Line<'_>) {
        self.summary.totals.add(line);
        let family = match &*line.family.0 {
            "" => line.rule.0.split('/').next().unwrap_or_default(),
            family => family,
        };
        bump(&mut self.families, or_none(family), line);
        bump(&mut self.rules, or_none(&line.rule.0), line);
        bump(&mut self.commands, &line.command.0, line);
        self.days.entry(line.time / 86_400).or_default().add(line);
    }

    /// The summary, with every grouping sorted.
    fn finish(mut self) -> Summary {
        let mut by_key: HashMap<String, Totals> = HashMap::new();
        for (command, totals) in self.commands {
            by_key.entry(command_key(&command)).or_default().merge(&totals);
        }
        self.summary.families = ranked(self.families.into_iter().map(|(k, t)| (k.into(), t)));
        self.summary.rules = ranked(self.rules.into_iter().map(|(k, t)| (k.into(), t)));
        self.summary.commands = ranked(by_key.into_iter());
        let mut days: Vec<Row<u64>> =
            self.days.into_iter().map(|(key, totals)| Row { key, totals }).collect();
        days.sort_unstable_by_key(|row| std::cmp::Reverse(row.key));
        self.summary.days = days;
        self.summary
    }
}

/// Adds `line` to `key`'s totals, allocating the key only the first time it is seen.
fn bump(map: &mut Groups<Box<str>>, key: &str, line: &Line<'_>) {
    if let Some(totals) = map.get_mut(key) {
        totals.add(line);
    } else {
        map.entry(key.into()).or_default().add(line);
    }
}

/// `key`, or `(none)` when it is empty (a ledger line without a rule).
fn or_none(key: &str) -> &str {
    if key.is_empty() { "(none)" } else { key }
}

/// Rows sorted by avoided tokens, most first; ties by key, so the order is total.
fn ranked(rows: impl Iterator<Item = (String, Totals)>) -> Vec<Row<String>> {
    let mut rows: Vec<Row<String>> = rows.map(|(key, totals)| Row { key, totals }).collect();
    rows.sort_unstable_by(|a, b| {
        b.totals.avoided_tokens().cmp(&a.totals.avoided_tokens()).then_with(|| a.key.cmp(&b.key))
    });
    rows
}

/// Adds up the ledger read from `reader`, counting the lines `filter` lets through.
///
/// Fails only when reading fails; a line that cannot be understood is counted in
/// [`Summary::skipped`] and the rest still count. Blank lines are ignored.
///
/// ```
/// let ledger = br#"{"time":86400,"command":"cargo test","rule":"tests/cargo-test","tokens":[100,10],"reduced":true,"lossless":false,"deduped":false}
/// not json
/// "#;
/// let summary = tj::stats::aggregate(&ledger[..], &tj::stats::Filter::default()).unwrap();
/// assert_eq!((summary.totals.runs, summary.skipped), (1, 1));
/// assert_eq!(summary.totals.avoided_tokens(), 90);
/// assert_eq!(summary.families[0].key, "tests"); // the rule's family when none is recorded
/// ```
pub fn aggregate(mut reader: impl BufRead, filter: &Filter<'_>) -> io::Result<Summary> {
    let mut acc = Accumulator::default();
    // The start of a line the reader's buffer ended in the middle of. Lines are parsed
    // where they lie in the reader's buffer; only the one straddling a refill is copied.
    let mut carry = Carry::default();
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        if chunk.is_empty() {
            break;
        }
        let len = chunk.len();
        let mut rest = chunk;
        if carry.is_pending() {
            let Some(at) = memchr::memchr(b'\n', rest) else {
                carry.extend(rest);
                reader.consume(len);
                continue;
            };
            carry.extend(&rest[..at]);
            acc.line(carry.take().as_deref(), filter);
            rest = &rest[at + 1..];
        }
        while let Some(at) = memchr::memchr(b'\n', rest) {
            acc.line(Some(&rest[..at]).filter(|line| line.len() <= LINE_MAX), filter);
            rest = &rest[at + 1..];
        }
        carry.extend(rest);
        reader.consume(len);
    }
    if carry.is_pending() {
        acc.line(carry.take().as_deref(), filter);
    }
    Ok(acc.finish())
}

/// The part of a line read so far, bounded: past [`LINE_MAX`] bytes it is dropped and only
/// remembered as too long, so memory stays bounded whatever the file holds.
#[derive(Default)]
struct Carry {
    bytes: Vec<u8>,
    too_long: bool,
}

impl Carry {
    /// Returns true if and only if a line has begun and not ended.
    fn is_pending(&self) -> bool {
        !self.bytes.is_empty() || self.too_long
    }

    /// Adds `more` to the line.
    fn extend(&mut self, more: &[u8]) {
        if self.too_long {
            return;
        }
        if self.bytes.len() + more.len() > LINE_MAX {
            self.too_long = true;
            self.bytes = Vec::new();
        } else {
            self.bytes.extend_from_slice(more);
        }
    }

    /// The line, or `None` if it was too long; and a fresh start.
    fn take(&mut self) -> Option<Vec<u8>> {
        let too_long = std::mem::take(&mut self.too_long);
        let bytes = std::mem::take(&mut self.bytes);
        (!too_long).then_some(bytes)
    }
}

/// The key a command is grouped under: its program and, when the next word looks like a
/// subcommand, that word (`cargo test --lib foo` → `cargo test`, `git -C x log` →
/// `git log`, `ls -la src` → `ls`).
///
/// The program is found as rules find it ([`identity::normalize`]): wrappers (`env`,
/// `sudo`, `timeout`, `npx`, `uv run`, `bash -c`, …), `NAME=value` assignments and the
/// program's directory are dropped. A subcommand is a lowercase word of letters, digits,
/// `-`, `_` and `:` that starts with a letter, so options, paths and most test filters are
/// left out; a search pattern that happens to look like one stays (`rg todo` and `rg fixme`
/// are two rows). A compound command (`cd x && make`) or one that does not parse is keyed
/// the same way by its words as typed (`cd x`): `tj run` records the argv, so these come
/// only from `tj reduce --command`. Grouping by the whole command would give every test
/// filter and every path its own row, and the table would say nothing.
pub fn command_key(command: &str) -> String {
    let words = match identity::identify(command) {
        Some(words) if !words.is_empty() => words,
        _ => command.split_whitespace().take(2).map(str::to_owned).collect(),
    };
    let Some((program, rest)) = words.split_first() else {
        return "(none)".to_owned();
    };
    let sub = identity::git_subcommand(&words)
        .or_else(|| rest.first().map(String::as_str).filter(|word| is_subcommand_like(word)));
    match sub {
        Some(sub) => format!("{program} {sub}"),
        None => program.clone(),
    }
}

/// Returns true if and only if `word` could be a subcommand: a lowercase ASCII word of
/// letters, digits, `-`, `_` and `:` that starts with a letter, at most 32 bytes.
fn is_subcommand_like(word: &str) -> bool {
    word.len() <= 32
        && word.starts_with(|c: char| c.is_ascii_lowercase())
        && word.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_:".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ledger line as tj writes it.
    fn line(time: u64, command: &str, rule: &str, tokens: (u64, u64), flags: &str) -> String {
        let mut v = serde_json::json!({
            "time": time, "id": "0123456789ab", "command": command, "rule": rule,
            "exitCode": 0, "chars": [tokens.0 * 4, tokens.1 * 4], "tokens": [tokens.0, tokens.1],
            "reduced": flags.contains('r'), "lossless": flags.contains('l'),
            "deduped": flags.contains('d'),
        });
        if let Some(session) = flags.strip_prefix("s=") {
            v["session"] = session.into();
        }
        v.to_string()
    }

    fn sum(text: &str, filter: &Filter<'_>) -> Summary {
        aggregate(text.as_bytes(), filter).unwrap()
    }

    #[test]
    fn adds_up_totals_and_groups() {
        let ledger = [
            line(86_400, "cargo test --lib a", "tests/cargo-test", (1000, 100), "rl"),
            line(86_401, "cargo test b", "tests/cargo-test", (500, 200), "r"),
            line(2 * 86_400, "git status", "git/status", (300, 300), ""),
            line(2 * 86_400 + 5, "git status", "git/status", (50, 10), "rd"),
        ]
        .join("\n");
        let s = sum(&ledger, &Filter::default());
        let t = s.totals;
        assert_eq!((s.recorded, s.skipped), (4, 0));
        assert_eq!((t.runs, t.reduced, t.lossless, t.deduped), (4, 3, 1, 1));
        assert_eq!((t.raw_tokens, t.rendition_tokens, t.avoided_tokens()), (1850, 610, 1240));
        assert_eq!((t.raw_chars, t.rendition_chars, t.avoided_chars()), (7400, 2440, 4960));
        assert_eq!(t.lossless_share(), Some(1.0 / 3.0));

        let keys = |rows: &[Row<String>]| -> Vec<(String, u64)> {
            rows.iter().map(|r| (r.key.clone(), r.totals.avoided_tokens())).collect()
        };
        assert_eq!(keys(&s.families), [("tests".into(), 1200), ("git".into(), 40)]);
        assert_eq!(keys(&s.rules), [("tests/cargo-test".into(), 1200), ("git/status".into(), 40)]);
        assert_eq!(keys(&s.commands), [("cargo test".into(), 1200), ("git status".into(), 40)]);
        let days: Vec<(u64, u64)> = s.days.iter().map(|r| (r.key, r.totals.runs)).collect();
        assert_eq!(days, [(2, 2), (1, 2)]);
    }

    #[test]
    fn ties_are_broken_by_name_and_longer_renditions_count_against() {
        let ledger = [
            line(1, "b", "x/b", (10, 5), "r"),
            line(1, "a", "x/a", (10, 5), "r"),
            line(1, "a", "x/a", (10, 20), ""),
        ]
        .join("\n");
        let s = sum(&ledger, &Filter::default());
        let rules: Vec<&str> = s.rules.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(rules, ["x/b", "x/a"]); // x/a: 20 raw, 25 rendition → 0 avoided
        assert_eq!(s.rules[1].totals.avoided_tokens(), 0);
        assert_eq!(s.totals.avoided_tokens(), 0); // 30 raw, 30 rendition
        let ledger = [line(1, "b", "x/b", (10, 5), ""), line(1, "a", "x/a", (10, 5), "")];
        let s = sum(&ledger.join("\n"), &Filter::default());
        let rules: Vec<&str> = s.rules.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(rules, ["x/a", "x/b"]);
    }

    #[test]
    fn family_is_recorded_or_taken_from_the_rule() {
        let mut with_family: serde_json::Value =
            serde_json::from_str(&line(1, "x", "build/make", (9, 1), "r")).unwrap();
        with_family["family"] = "custom".into();
        let ledger = format!(
            "{with_family}\n{}\n{}\n",
            line(1, "y", "fallback", (9, 1), "r"),
            line(1, "z", "", (9, 1), "r")
        );
        let s = sum(&ledger, &Filter::default());
        let families: Vec<&str> = s.families.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(families, ["(none)", "custom", "fallback"]);
    }

    #[test]
    fn since_and_session_filter_lines() {
        let ledger = [
            line(100, "a", "t/a", (10, 1), "s=one"),
            line(200, "a", "t/a", (20, 1), "s=two"),
            line(300, "a", "t/a", (40, 1), ""),
        ]
        .join("\n");
        let raw = |filter: Filter<'_>| sum(&ledger, &filter).totals.raw_tokens;
        assert_eq!(raw(Filter { since: Some(200), session: None }), 60);
        assert_eq!(raw(Filter { since: Some(301), session: None }), 0);
        assert_eq!(raw(Filter { since: None, session: Some("one") }), 10);
        assert_eq!(raw(Filter { since: None, session: Some("on") }), 0);
        assert_eq!(raw(Filter { since: Some(150), session: Some("one") }), 0);
        let s = sum(&ledger, &Filter { since: Some(1000), session: None });
        assert_eq!((s.recorded, s.totals.runs), (3, 0));
        assert!(s.families.is_empty() && s.days.is_empty());
    }

    #[test]
    fn corrupt_lines_are_skipped_and_counted() {
        let good = line(1, "cargo test", "tests/cargo-test", (10, 1), "r");
        let huge =
            format!("{{\"time\":1,\"command\":\"{}\",\"tokens\":[1,1]}}", "x".repeat(LINE_MAX));
        let mut ledger = Vec::new();
        for bad in [
            "not json".as_bytes(),
            b"{\"time\":1}",                                           // no tokens
            b"{\"time\":\"yesterday\",\"tokens\":[1,1]}",              // wrong type
            b"{\"time\":1,\"command\":\"\xff\xfe\",\"tokens\":[1,1]}", // not UTF-8
            &good.as_bytes()[..good.len() / 2],                        // torn
            huge.as_bytes(),
            b"[1,2,3]",
        ] {
            ledger.extend_from_slice(good.as_bytes());
            ledger.push(b'\n');
            ledger.extend_from_slice(bad);
            ledger.extend_from_slice(b"\n\n  \n");
        }
        ledger.extend_from_slice(good.as_bytes()); // no final newline
        let s = aggregate(&ledger[..], &Filter::default()).unwrap();
        assert_eq!((s.totals.runs, s.skipped, s.recorded), (8, 7, 8));
    }

    #[test]
    fn a_long_line_is_skipped_across_buffer_refills() {
        let good = line(1, "make", "build/make", (10, 1), "r");
        let text = format!("{}\n{good}\n{}", "y".repeat(LINE_MAX * 3), "z".repeat(LINE_MAX + 1));
        for capacity in [7, 64, 1 << 16, 1 << 20] {
            let reader = io::BufReader::with_capacity(capacity, text.as_bytes());
            let s = aggregate(reader, &Filter::default()).unwrap();
            assert_eq!((s.totals.runs, s.skipped), (1, 2), "{capacity}");
        }
        // A line of exactly LINE_MAX bytes fits.
        let mut exact = good.into_bytes();
        exact.resize(LINE_MAX, b' ');
        exact.extend_from_slice(b"\n");
        exact.extend_from_slice(&exact.clone());
        for capacity in [64, 1 << 20] {
            let reader = io::BufReader::with_capacity(capacity, &exact[..]);
            let s = aggregate(reader, &Filter::default()).unwrap();
            assert_eq!((s.totals.runs, s.skipped), (2, 0), "{capacity}");
        }
    }

    #[test]
    fn escaped_strings_are_read_too() {
        let ledger = r#"{"time":1,"command":"echo \"a,b\"","rule":"t\/x","session":"s\u0031","tokens":[5,1]}"#;
        let s = sum(ledger, &Filter { since: None, session: Some("s1") });
        assert_eq!(s.totals.runs, 1);
        assert_eq!(s.rules[0].key, "t/x");
        assert_eq!(s.commands[0].key, "echo");
    }

    #[test]
    fn commands_group_by_program_and_subcommand() {
        for (command, key) in [
            ("cargo test --lib foo", "cargo test"),
            ("cargo test bar", "cargo test"),
            ("RUST_LOG=1 timeout 60 cargo +nightly test", "cargo test"),
            ("/usr/bin/git -C sub log --oneline", "git log"),
            ("git --version", "git"),
            ("ls -la src", "ls"),
            ("pytest tests/test_a.py", "pytest"),
            ("npx jest --watch", "jest"),
            ("python -m pytest -x", "pytest"),
            ("npm run build", "npm run"),
            ("cd x && make all", "cd x"),
            ("echo 'unterminated", "echo"),
            ("", "(none)"),
            ("docker compose up", "docker compose"),
            ("make Release", "make"),
        ] {
            assert_eq!(command_key(command), key, "{command}");
        }
    }

    #[test]
    fn same_input_same_summary() {
        let ledger: String = (0..200)
            .map(|i| line(i * 977, &format!("cmd{} sub{}", i % 7, i % 3), "f/r", (i, i / 2), "r"))
            .collect::<Vec<_>>()
            .join("\n");
        let whole = sum(&ledger, &Filter::default());
        assert_eq!(whole.totals.runs, 200);
        // However the reader's buffer cuts the lines.
        for capacity in [1, 3, 64, 4096] {
            let reader = io::BufReader::with_capacity(capacity, ledger.as_bytes());
            assert_eq!(aggregate(reader, &Filter::default()).unwrap(), whole, "{capacity}");
        }
    }
}
