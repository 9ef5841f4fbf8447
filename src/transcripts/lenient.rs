//! Field types that read what they can and take anything else as absent, so that one field
//! of an unexpected shape (a harness changed its format, another tool wrote the line) costs
//! that field, not the line: only a line that is not JSON, or not an object, is skipped.
//!
//! They also keep parsing cheap: strings are borrowed from the line when they hold no
//! escape, and every value nobody asked for is skipped by serde without being built.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::reduce::tokens::Tally;

/// Consumes the rest of a sequence.
fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Consumes the rest of a map.
fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Implements the visitor methods of every JSON value a lenient type does not want: each
/// gives `$none`, after consuming what the value holds.
macro_rules! absent_otherwise {
    ($none:expr) => {
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($none)
        }
    };
}

/// A string, or `None` for a value of any other type.
#[derive(Debug, Default)]
pub(crate) struct Text<'a>(pub(crate) Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Text<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Text<'a>, E> {
                Ok(Text(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Text<'a>, E> {
                Ok(Text(Some(Cow::Owned(v.to_owned()))))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Text<'a>, E> {
                Ok(Text(Some(Cow::Owned(v))))
            }
            fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Text<'a>, E> {
                Ok(Text(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Text<'a>, A::Error> {
                drain_seq(seq).map(|()| Text(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Text<'a>, A::Error> {
                drain_map(map).map(|()| Text(None))
            }
            absent_otherwise!(Text(None));
        }
        deserializer.deserialize_any(V(PhantomData))
    }
}

impl Text<'_> {
    /// The string, if there was one.
    pub(crate) fn get(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

/// A boolean; `false` for a value of any other type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Flag(pub(crate) bool);

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Flag;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Flag, E> {
                Ok(Flag(v))
            }
            fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Flag, E> {
                Ok(Flag(false))
            }
            fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Flag, E> {
                Ok(Flag(false))
            }
            fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Flag, E> {
                Ok(Flag(false))
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Flag, E> {
                Ok(Flag(false))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Flag, E> {
                Ok(Flag(false))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Flag, A::Error> {
                drain_seq(seq).map(|()| Flag(false))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Flag, A::Error> {
                drain_map(map).map(|()| Flag(false))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// A count: a non-negative integer (or a float, truncated), else `None`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Num(pub(crate) Option<u64>);

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Num, E> {
                Ok(Num(Some(v)))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Num, E> {
                Ok(Num(u64::try_from(v).ok()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Num, E> {
                // Lossy: a fractional count is no count a harness writes; its integer part
                // is the best reading of it.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                Ok(Num((v.is_finite() && v >= 0.0).then_some(v as u64)))
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Num, A::Error> {
                drain_seq(seq).map(|()| Num(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Num, A::Error> {
                drain_map(map).map(|()| Num(None))
            }
            fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_none<E: serde::de::Error>(self) -> Result<Num, E> {
                Ok(Num(None))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// Two counts written as a list (`[raw, reduced]`), each as [`Num`] reads it; missing
/// ones, or a value that is no list, read as `None`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Pair(pub(crate) Option<u64>, pub(crate) Option<u64>);

impl<'de> Deserialize<'de> for Pair {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Pair;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Pair, A::Error> {
                let first = seq.next_element::<Num>()?.and_then(|n| n.0);
                let second = seq.next_element::<Num>()?.and_then(|n| n.0);
                drain_seq(seq).map(|()| Pair(first, second))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Pair, A::Error> {
                drain_map(map).map(|()| Pair::default())
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Pair, E> {
                Ok(Pair::default())
            }
            fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Pair, E> {
                Ok(Pair::default())
            }
            absent_otherwise!(Pair::default());
        }
        deserializer.deserialize_any(V)
    }
}

/// An object read as `T`, or `None` for a value of any other type.
///
/// `T`'s own fields should be lenient too: an error inside the object still fails the line.
#[derive(Debug)]
pub(crate) struct Obj<T>(pub(crate) Option<T>);

impl<T> Default for Obj<T> {
    fn default() -> Self {
        Obj(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Obj<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Obj<T>, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(|t| Obj(Some(t)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Obj<T>, A::Error> {
                drain_seq(seq).map(|()| Obj(None))
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Obj<T>, E> {
                Ok(Obj(None))
            }
            fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Obj<T>, E> {
                Ok(Obj(None))
            }
            absent_otherwise!(Obj(None));
        }
        deserializer.deserialize_any(V(PhantomData))
    }
}

/// The text a tool result gave the model, measured without being kept: every string found
/// in it, directly, in a list, or under a `text` or `content` key (Claude Code's
/// `[{"type": "text", "text": …}]`, Codex's structured outputs), added to a [`Tally`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Output {
    /// Characters and estimated tokens of the text.
    pub(crate) tally: Tally,
    /// A line of it starts with `[tj] `: tj's own notes (an exit code, what was omitted and
    /// how to get it back), which only a rendition tj made carries.
    pub(crate) marker: bool,
}

impl Output {
    fn add_text(&mut self, text: &str) {
        self.tally.add(text);
        self.marker |= has_marker(text);
    }

    fn merge(&mut self, other: Output) {
        self.tally.other += other.tally.other;
        self.tally.cjk += other.tally.cjk;
        self.tally.bytes += other.tally.bytes;
        self.marker |= other.marker;
    }
}

/// Returns true if and only if a line of `text` starts with `[tj] `.
pub(crate) fn has_marker(text: &str) -> bool {
    text.starts_with("[tj] ") || text.contains("\n[tj] ")
}

impl<'de> Deserialize<'de> for Output {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Output;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Output, E> {
                let mut out = Output::default();
                out.add_text(v);
                Ok(out)
            }
            fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Output, E> {
                Ok(Output::default())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Output, A::Error> {
                let mut out = Output::default();
                while let Some(item) = seq.next_element::<Output>()? {
                    out.merge(item);
                }
                Ok(out)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Output, A::Error> {
                let mut out = Output::default();
                while let Some(key) = map.next_key::<Text<'_>>()? {
                    if matches!(key.get(), Some("text" | "content")) {
                        out.merge(map.next_value::<Output>()?);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(out)
            }
            absent_otherwise!(Output::default());
        }
        deserializer.deserialize_any(V)
    }
}

/// A command as a harness gives it: a shell string, or an argv (made into one line, see
/// [`argv_line`]); `None` for anything else.
#[derive(Debug, Default)]
pub(crate) struct Command(pub(crate) Option<String>);

impl<'de> Deserialize<'de> for Command {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Command;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Command, E> {
                Ok(Command(Some(v.to_owned())))
            }
            fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Command, E> {
                Ok(Command(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Command, A::Error> {
                let mut argv = Vec::new();
                while let Some(word) = seq.next_element::<Text<'_>>()? {
                    argv.extend(word.0.map(Cow::into_owned));
                }
                Ok(Command((!argv.is_empty()).then(|| argv_line(&argv))))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Command, A::Error> {
                drain_map(map).map(|()| Command(None))
            }
            absent_otherwise!(Command(None));
        }
        deserializer.deserialize_any(V)
    }
}

/// An argv as the shell line it stands for: the script of `bash -lc SCRIPT` (Codex runs
/// every command that way), else the words joined, each quoted when the shell would split
/// or expand it.
pub(crate) fn argv_line(argv: &[String]) -> String {
    if let [shell, flag, script, ..] = argv {
        let name = shell.rsplit('/').next().unwrap_or(shell);
        let is_shell = matches!(name, "sh" | "bash" | "zsh" | "dash" | "ksh");
        if is_shell && flag.starts_with('-') && !flag.starts_with("--") && flag.ends_with('c') {
            return script.clone();
        }
    }
    let quoted: Vec<Cow<'_, str>> = argv.iter().map(|w| quote(w)).collect();
    quoted.join(" ")
}

/// `word` as one shell word: as it is when nothing in it is special, else single-quoted.
fn quote(word: &str) -> Cow<'_, str> {
    let plain = !word.is_empty()
        && word.bytes().all(|c| c.is_ascii_alphanumeric() || b"_-./:=@%+,".contains(&c));
    if plain {
        Cow::Borrowed(word)
    } else {
        Cow::Owned(format!("'{}'", word.replace('\'', r"'\''")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Probe<'a> {
        #[serde(default, borrow)]
        text: Text<'a>,
        #[serde(default)]
        num: Num,
        #[serde(default)]
        out: Output,
        #[serde(default)]
        command: Command,
    }

    #[test]
    fn any_shape_reads_as_absent_and_the_line_survives() {
        for odd in ["[1,[2]]", "{\"a\":{\"b\":[]}}", "true", "null", "-3", "1.5", "\"x\""] {
            let line = format!(r#"{{"text":{odd},"num":{odd},"out":{odd},"command":{odd}}}"#);
            let probe: Probe<'_> = serde_json::from_str(&line).unwrap();
            if !odd.starts_with('"') {
                assert_eq!(probe.text.get(), None, "{odd}");
            }
            assert!(probe.num.0.is_none() || odd == "1.5", "{odd}");
            let _ = (probe.out, probe.command);
        }
    }

    #[test]
    fn output_counts_every_text_it_holds() {
        let probe: Probe<'_> = serde_json::from_str(
            r#"{"out":[{"type":"text","text":"abcd"},{"type":"image","source":{"data":"zzzz"}},"ef"]}"#,
        )
        .unwrap();
        assert_eq!(probe.out.tally.chars(), 6);
        assert!(!probe.out.marker);
        let probe: Probe<'_> =
            serde_json::from_str(r#"{"out":{"content":"ok\n[tj] 10 of 90 lines omitted"}}"#)
                .unwrap();
        assert!(probe.out.marker);
        assert_eq!(
            probe.out.tally.tokens(),
            crate::reduce::tokens::estimate("ok\n[tj] 10 of 90 lines omitted")
        );
    }

    #[test]
    fn an_argv_becomes_the_line_it_stands_for() {
        let line =
            |words: &[&str]| argv_line(&words.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>());
        assert_eq!(line(&["bash", "-lc", "cargo test 2>&1 | tail"]), "cargo test 2>&1 | tail");
        assert_eq!(line(&["/bin/zsh", "-c", "ls"]), "ls");
        assert_eq!(line(&["git", "commit", "-m", "it's done"]), r"git commit -m 'it'\''s done'");
        let probe: Probe<'_> = serde_json::from_str(r#"{"command":["rg","-n","a b"]}"#).unwrap();
        assert_eq!(probe.command.0.as_deref(), Some("rg -n 'a b'"));
    }
}
