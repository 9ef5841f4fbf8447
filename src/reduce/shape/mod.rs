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
