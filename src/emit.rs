//! The only writer of renditions (STYLE.md 2.1): text or JSON, to stdout for now; the side
//! file and file-descriptor channels arrive with `tj run`.

use std::io::{self, Write};

use anyhow::{Context, Result};

/// The rendition's format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Plain text for a model to read.
    #[default]
    Text,
    /// A JSON object (a superset of tokenjuice's `CompactResult`).
    Json,
}

/// Writes `text` and a final newline to stdout.
pub fn stdout(text: &str) -> Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| if text.ends_with('\n') { Ok(()) } else { out.write_all(b"\n") })
        .and_then(|()| out.flush())
        .context("could not write the rendition to stdout")
}

/// Writes raw bytes to stdout unchanged (`tj expand --raw`).
pub fn stdout_bytes(bytes: &[u8]) -> Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(bytes).and_then(|()| out.flush()).context("could not write to stdout")
}

/// Serialises `value` as pretty JSON on stdout.
pub fn json<T: serde::Serialize>(value: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(value).context("could not encode JSON")?;
    stdout(&text)
}
