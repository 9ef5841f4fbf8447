//! `tj compact`: a session log with its stale tool results replaced by placeholders, written
//! as a new file or a new session; the original log is never modified. Deterministic: the
//! same log gives the same bytes, and no model is called.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::emit;
use crate::env::Env;
use crate::exit::Status;
use crate::session::rewrite::{self, Compacted};
use crate::session::sidecar;
use crate::session::{Harness, Transcript, same_shape};
use crate::store::{Metadata, Store};

/// Replace a session's stale tool results by placeholders (verbatim otherwise)
///
/// Keeps the first prompt, the newest messages, failed calls, edits, calls that cannot be
/// re-run and the newest read of each file; drops reads superseded by a later read or edit,
/// test/build/lint runs superseded by a later run of the same command, listings nothing later
/// refers to, and tj renditions whose original is stored. Each dropped result is stored first
/// and its placeholder names `tj expand ID`. The original log is never modified.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("mode").required(true).multiple(true).args(["out", "resume", "dry_run"])))]
pub(crate) struct Args {
    /// The session log, or its id
    session: String,

    /// Write the compacted log to FILE (never the input)
    #[arg(long, value_name = "FILE", conflicts_with = "resume")]
    out: Option<PathBuf>,

    /// Write the compacted log as a new session of the same harness, and print the command
    /// that resumes it
    #[arg(long)]
    resume: bool,

    /// Write nothing: print what would be dropped and the tokens before and after
    #[arg(long)]
    dry_run: bool,

    /// The newest messages never touched
    #[arg(long, value_name = "N", default_value_t = 12)]
    keep_last: usize,

    /// Write nothing unless at least this many estimated tokens are reclaimed
    #[arg(long, value_name = "TOKENS", default_value_t = 800)]
    threshold: usize,
}

pub(crate) fn run(args: &Args, env: &Env) -> Result<Status> {
    let (path, bytes, transcript) = super::audit::load(&args.session, env)?;
    let plan = super::audit::plan_for(&transcript, &bytes, args.keep_last, env);
    let compacted = rewrite::rewrite(&transcript, &bytes, &plan)?;
    let after = checked(&transcript, &compacted.bytes)?;
    let (before, after) = (transcript.tokens(), after.tokens());
    let reclaimed = before.saturating_sub(after);
    emit::stdout(&summary(&transcript, &plan, &compacted))?;
    let totals = format!("tokens: ~{before} before, ~{after} after (~{reclaimed} reclaimed)");
    if compacted.dropped.is_empty() || reclaimed < args.threshold {
        emit::stdout(&format!(
            "{totals}: below the threshold of {} tokens; nothing written\n",
            args.threshold
        ))?;
        return Ok(Status::Ok);
    }
    if args.dry_run {
        emit::stdout(&format!("{totals}; nothing written (--dry-run)\n"))?;
        return Ok(Status::Ok);
    }
    store_dropped(&transcript, &compacted, env)?;
    if let Some(out) = &args.out {
        write_out(&path, out, &compacted.bytes)?;
        emit::stdout(&format!("{totals}; written to {}\n", out.display()))?;
    } else {
        let (new_path, command) = write_session(&path, &transcript, &compacted.bytes)?;
        emit::stdout(&format!(
            "{totals}; new session {}\nresume it with: {command}\n",
            new_path.display()
        ))?;
    }
    Ok(Status::Ok)
}

/// `bytes` parsed, and checked to have the shape of `before`.
fn checked(before: &Transcript, bytes: &[u8]) -> Result<Transcript> {
    let after = Transcript::parse(bytes)
        .context("the compacted log does not parse (a bug in tj); nothing written")?;
    same_shape(before, &after)
        .context("the compacted log lost its shape (a bug in tj); nothing written")?;
    Ok(after)
}

/// One line per dropped result, in log order.
fn summary(t: &Transcript, plan: &crate::session::plan::Plan, c: &Compacted) -> String {
    let mut out = String::new();
    for d in &c.dropped {
        let r = &t.results[d.result];
        let call = &t.calls[r.call];
        let _ = writeln!(
            out,
            "drop line {}: {} {} (~{} tokens): {}; tj expand {}",
            r.line + 1,
            call.tool,
            call.label.lines().next().unwrap_or_default(),
            r.tokens,
            plan.verdicts[d.result].why,
            d.id
        );
    }
    let _ = writeln!(out, "{} of {} tool results dropped", c.dropped.len(), t.results.len());
    out
}

/// Stores every dropped result's text before anything names it; an id other than the one
/// the placeholder names stops everything.
fn store_dropped(t: &Transcript, c: &Compacted, env: &Env) -> Result<()> {
    let store = Store::new(env)?;
    for d in &c.dropped {
        let r = &t.results[d.result];
        let call = &t.calls[r.call];
        let text = r.text.as_deref().unwrap_or_default();
        let mut meta = Metadata {
            command: Some(call.label.clone()),
            mode: Some("compact".to_owned()),
            host: Some(t.harness.name().to_owned()),
            ..Metadata::default()
        };
        let stored = store
            .persist(text.as_bytes(), &mut meta)
            .context("could not store a dropped result; nothing written")?;
        if stored.id != d.id {
            bail!("the store gave id {} where {} was expected; nothing written", stored.id, d.id);
        }
        if let Err(err) = store.write_metadata(&meta) {
            crate::diag::warn_once(&format!("could not write the metadata of {}: {err:#}", d.id));
        }
    }
    Ok(())
}

/// Writes `bytes` to `out` atomically, refusing to replace the input log.
fn write_out(input: &Path, out: &Path, bytes: &[u8]) -> Result<()> {
    if same_file(input, out) {
        bail!(
            "--out `{}` is the input log; tj never modifies it: give another path",
            out.display()
        );
    }
    crate::fsx::replace(out, bytes).with_context(|| format!("could not write `{}`", out.display()))
}

/// Returns true if and only if `a` and `b` name the same file (through links too).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// Writes the compacted log as a new session beside the original, under an id derived from
/// its content (every occurrence of the old id rewritten); returns its path and the command
/// that resumes it.
fn write_session(input: &Path, t: &Transcript, bytes: &[u8]) -> Result<(PathBuf, String)> {
    let Some(old) = t.session_id.as_deref().filter(|id| !id.is_empty()) else {
        bail!(
            "the log records no session id, so --resume cannot make a session of it; use --out FILE"
        );
    };
    let new = content_uuid(bytes);
    let renamed = replace_all(bytes, old.as_bytes(), new.as_bytes());
    let after = checked(t, &renamed)?;
    if after.session_id.as_deref() != Some(new.as_str()) {
        bail!("the session id could not be rewritten; nothing written");
    }
    let dir = input.parent().unwrap_or(Path::new("."));
    let name = input.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let (file, command) = match t.harness {
        Harness::ClaudeCode => (format!("{new}.jsonl"), format!("claude --resume {new}")),
        Harness::Codex => {
            let stem =
                name.strip_suffix(&format!("{old}.jsonl")).filter(|s| s.starts_with("rollout-"));
            (format!("{}{new}.jsonl", stem.unwrap_or("rollout-")), format!("codex resume {new}"))
        }
    };
    let path = dir.join(file);
    if std::fs::symlink_metadata(&path).is_ok() && !crate::fsx::holds(&path, &renamed) {
        bail!("`{}` exists and differs; nothing written", path.display());
    }
    if t.harness == Harness::ClaudeCode {
        // Before the log: it must never name a file that is not there yet.
        copy_sidecars(input, old, &new)?;
    }
    crate::fsx::replace(&path, &renamed)
        .with_context(|| format!("could not write `{}`", path.display()))?;
    Ok((path, command))
}

/// Copies the directories Claude Code keeps under the old session's id (saved outputs,
/// sub-agent transcripts, checkpoint backups) under the new one, where the rewritten log
/// names them; warns once about anything skipped.
fn copy_sidecars(log: &Path, old: &str, new: &str) -> Result<()> {
    let rename = |bytes: &[u8]| replace_all(bytes, old.as_bytes(), new.as_bytes());
    for dir in sidecar::claude(log, old, new) {
        let copied = sidecar::copy(&dir, &rename).with_context(|| {
            format!(
                "could not copy `{}` to `{}`; the new session was not written",
                dir.from.display(),
                dir.to.display()
            )
        })?;
        if !copied.skipped.is_empty() {
            crate::diag::warn_once(&format!(
                "not copied to `{}`, so the new session's log may name what is missing there: {}",
                dir.to.display(),
                copied.skipped.join(", ")
            ));
        }
    }
    Ok(())
}

/// A UUID-shaped id (version 4 layout) from the SHA-256 of `bytes`.
fn content_uuid(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let mut d: [u8; 32] = Sha256::digest(bytes).into();
    d[6] = (d[6] & 0x0f) | 0x40;
    d[8] = (d[8] & 0x3f) | 0x80;
    let hex: String = d[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
}

/// `bytes` with every occurrence of `from` replaced by `to`.
fn replace_all(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let finder = aho_corasick::AhoCorasick::new([from]);
    let Ok(finder) = finder else { return bytes.to_vec() };
    let mut out = Vec::with_capacity(bytes.len());
    finder.replace_all_with_bytes(bytes, &mut out, |_, _, dst| {
        dst.extend_from_slice(to);
        true
    });
    out
}
