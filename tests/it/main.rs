//! Integration tests through the real `tj` binary: one test binary (ripgrep's layout), each
#![allow(missing_docs, clippy::unwrap_used)] // test code: a panic is the failure report
//! test in a fresh temporary HOME with an empty environment.

mod delta;
mod discover;
mod fullscreen;
mod fuzz_tree;
mod hardening_fs;
mod harness;
mod hook;
mod hostile_repo;
mod hosts;
#[cfg(target_os = "linux")]
mod image;
mod init;
mod install;
mod mode;
mod output;
mod pty;
mod reduce;
mod relay;
mod replay;
mod rewrite;
mod rules;
mod run;
mod session;
mod skills;
mod stats;
mod tmux;
mod transcripts;
mod transparency;
mod util;
