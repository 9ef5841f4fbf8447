//! Shape reducers (DESIGN.md "Reduction", step 4): pure functions that recognise a shape of
//! output the line window handles badly and re-encode it, lossless first.
//!
//! - [`json_table`]: JSON with a uniform array of flat objects (at the root, in a direct
//!   child, in a `{data:{items:[…]}}` envelope) or a root map of uniform objects, as CSV.
//!   Lossless, with a decoder that proves it.
//! - [`paths`]: listings and search hits folded under their shared directory and file
//!   prefixes. Lossless, with a decoder that proves it.
//! - [`ndjson`]: JSON Lines of one shape as one table; lines of other shapes stay in place.
//! - [`table`]: aligned tables (`ps`, `df`, `kubectl get`, `docker ps`): header, head and
//!   tail verbatim, the middle sampled, flagged rows always kept.
//! - [`compact_json`]: irregular pretty-printed JSON as indented `key: value` lines
//!   (TOON-like), lossless, with a decoder that re-prints the original text.
//! - [`json_elide`]: JSON too irregular to tabulate, elided structurally.
//! - [`log`]: long logs, runs of lines that differ only in timestamps, ids, durations and
//!   counts folded.
//! - [`testrun`]: the counts of a test run, from the runner's own summaries.
//! - [`diagnostics`]: a long list of located diagnostics, sampled by kind.
//! - [`columns`]: tables whose rows share text at the same fields (a constant column with
//!   its padding, a common prefix or suffix) with that text stated once. Lossless, with a
//!   decoder.
//! - [`repeats`]: identical consecutive lines and blocks written once with their count
//!   (`  [× N]`). Lossless, with a decoder.
//!
//! None of them sees the environment, a file or a rule: the pipeline in `reduce` decides
//! when each applies and the gate decides whether its result is adopted.

use std::error::Error;
use std::fmt;

pub mod columns;
pub mod compact_json;
pub mod diagnostics;
pub mod json_elide;
pub mod json_table;
pub mod log;
pub mod ndjson;
pub mod paths;
pub mod repeats;
pub mod table;
pub mod testrun;

/// Why a lossless route's text does not decode back to lines: the route, the 1-based line
/// of the encoded text (the legend is line 1) and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// The route's name (`paths`, `columns`, `repeats`).
    pub route: &'static str,
    /// 1-based line of the encoded text.
    pub line: usize,
    /// What is wrong with it.
    pub what: &'static str,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} line {}: {}", self.route, self.line, self.what)
    }
}

impl Error for DecodeError {}
