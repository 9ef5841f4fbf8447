//! `tj` sits between a command and the AI agent that ran it.
//!
//! ```text
//!  argv ─▶ run (PTY relay) ──live bytes, byte-exact──▶ the human's terminal
//!               │ tee
//!               ▼
//!          capture (bounded memory, spills to a file past a cap, sha256 while streaming)
//!               ▼
//!          rules::select (command identity → one rule, or the fallback)
//!               ▼
//!          reduce: render terminal → transforms → filters → counters
//!                  → head/tail around evidence → format
//!               ▼
//!          gate: lossy only if the evidence invariant holds;
//!                adopted only if smaller by ratio, bytes AND tokens — else the original
//!               ▼
//!          store: persist the original (before anything is emitted)
//!               ▼
//!          emit: stdout, as text or JSON
//! ```
//!
//! Every stage between the two ends is a plain function from data to data (`reduce`,
//! `rules::select`, `rules::identity`); I/O lives in `cli`, `store` and `emit`.

pub mod capture;
pub mod cli;
pub mod config;
pub mod diag;
pub mod emit;
pub mod env;
pub mod exit;
pub mod fsx;
pub mod hook;
pub mod host;
pub mod install;
pub mod matchers;
pub mod redact;
pub mod reduce;
pub mod rewrite;
pub mod rules;
#[cfg(unix)]
pub mod run;
pub mod session;
pub mod shell;
pub mod skills;
pub mod stats;
pub mod stdio;
pub mod store;
#[doc(hidden)]
pub mod testing;
pub mod text;
pub mod transcripts;
pub mod verify;
