//! `tj reduce`: reduce output that already exists (a file or stdin).

use std::path::PathBuf;

use anyhow::Result;

use crate::emit::{self, Format};
use crate::env::Env;
use crate::exit::Status;
use crate::reduce::{self, ArtifactRef, Input, Options};
use crate::store::{LedgerEntry, Metadata, Retention, Store};
use crate::{diag, rules};

/// Reduce output that already exists
///
/// Reads FILE (or stdin), picks a rule from the command given with --command or after
/// `--`, and prints the rendition. The original is stored first; the rendition names it
/// (`tj expand ID`). When it cannot be stored, nothing is dropped.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The output to reduce; stdin when absent or `-`
    file: Option<PathBuf>,

    /// The command that produced the output, as a shell string
    #[arg(long, value_name = "CMD", conflicts_with = "argv")]
    command: Option<String>,

    /// Its exit code (failure windows are wider, and the rendition says it)
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    exit_code: Option<i64>,

    /// The width of the terminal the output was captured from, if it came from a PTY:
    /// lines wrap at it as they did on screen (progress bars that pad to the width need it)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    cols: Option<u16>,

    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,

    /// Print the whole original (ANSI stripped), no reduction
    #[arg(long, alias = "full", env = crate::env::TJ_RAW, value_parser = clap::builder::FalseyValueParser::new())]
    raw: bool,

    /// Leave secrets in the rendition (by default each becomes `[tj: redacted KIND]`; the
    /// stored original always keeps them)
    #[arg(long)]
    no_redact: bool,

    /// The command's argv, exactly as run
    #[arg(last = true, value_name = "ARGV")]
    argv: Vec<String>,
}

pub(crate) fn run(args: &Args, env: &Env) -> Result<Status> {
    let raw = super::read_input(args.file.as_deref())?;
    let outcome = reduce_and_store(
        &raw,
        &Request {
            argv: &args.argv,
            command: args.command.as_deref(),
            tool_name: None,
            exit_code: args.exit_code,
            raw: args.raw,
            classifier: None,
            cols: args.cols,
            no_redact: args.no_redact,
            give_back: false,
        },
        env,
    );
    match args.format {
        Format::Text => emit::stdout(&outcome.text)?,
        Format::Json => emit::json(&outcome.to_json(None, None))?,
    }
    Ok(Status::Ok)
}

/// What to reduce, shared by `reduce` and `reduce-json`.
pub(crate) struct Request<'a> {
    pub(crate) argv: &'a [String],
    pub(crate) command: Option<&'a str>,
    pub(crate) tool_name: Option<&'a str>,
    pub(crate) exit_code: Option<i64>,
    pub(crate) raw: bool,
    /// Force this rule id (tokenjuice's `classifier` option).
    pub(crate) classifier: Option<&'a str>,
    /// The PTY width the output was captured at, if any.
    pub(crate) cols: Option<u16>,
    /// `--no-redact`: secrets stay in the rendition.
    pub(crate) no_redact: bool,
    /// When no reduction is adopted, the rendition is the text as given, not rendered
    /// (`reduce-json`: see [`give_back`]).
    pub(crate) give_back: bool,
}

/// Loads configuration and rules, stores the original, reduces, records metadata. Every
/// problem is one warning on stderr and a fail-open outcome, never an error.
pub(crate) fn reduce_and_store(raw: &[u8], req: &Request<'_>, env: &Env) -> reduce::Reduction {
    let config = super::load_config(env);
    let set = rules_for(req, env);
    let store = Store::new(env);
    let mut meta = Metadata {
        command: req.command.map(str::to_owned),
        argv: req.argv.to_vec(),
        cwd: env.cwd.as_ref().map(|p| p.display().to_string()),
        exit_code: req.exit_code,
        session: env.session.clone(),
        mode: Some("reduce".to_owned()),
        cols: req.cols,
        ..Metadata::default()
    };
    // An empty output is not stored (see `record_unstored`).
    let persisted = match &store {
        _ if raw.is_empty() => None,
        Ok(store) => Some(store.persist(raw, &mut meta)),
        Err(err) => Some(Err(anyhow::anyhow!("{err:#}"))),
    };
    let artifact: Option<ArtifactRef> = match persisted {
        None => None,
        Some(Ok(artifact)) => Some(artifact),
        Some(Err(err)) => {
            diag::warn_once(&format!("{err:#}; the rendition is the whole original"));
            None
        }
    };
    // The caller passed the exit code in: it has it already (`[tj] exit N` is for `tj run`,
    // where tj is the agent's only view of the run).
    let (last, previous) = look_back(store.as_ref().ok(), &meta, artifact.as_ref());
    let opts = Options {
        limits: config.limits,
        raw: req.raw,
        artifact: artifact.as_ref(),
        hide_exit: true,
        previous: previous.as_ref(),
    };
    let input = Input {
        raw,
        argv: req.argv,
        command: req.command,
        tool_name: req.tool_name,
        exit_code: req.exit_code,
        cols: req.cols,
    };
    let streamed = (raw.len() > reduce::stream::WHOLE_MAX && artifact.is_some() && !req.raw)
        .then(|| {
            // Numbered and windowed as `tj run` and `tj expand` do an output this large.
            super::stream_reporting(&input, raw, &set, &opts, |stream| {
                reduce::stream::chunks(raw).for_each(|chunk| stream.push(chunk));
            })
        })
        .flatten();
    let mut outcome = streamed.unwrap_or_else(|| super::reduce_reporting(&input, &set, &opts));
    if req.give_back && declined(&outcome) {
        give_back(&mut outcome, raw);
    }
    if config.redact && !req.no_redact {
        super::redact(&mut outcome);
    }
    match (&store, &artifact) {
        (Ok(store), Some(artifact)) => record(store, artifact, &mut meta, &mut outcome, &last),
        (Ok(store), None) if raw.is_empty() => record_unstored(store, &meta, &outcome),
        _ => {}
    }
    outcome
}

/// The rules to reduce with: those the command could select, or with `--classifier ID`
/// every rule, that one forced.
fn rules_for(req: &Request<'_>, env: &Env) -> rules::RuleSet {
    // Forcing a rule by id needs every rule; otherwise only those the program could select.
    let mut set = match req.classifier {
        Some(_) => super::load_rules(env),
        None => super::load_rules_for(env, req.argv, req.command),
    };
    if let Some(id) = req.classifier {
        match set.get(id) {
            Some(rule) => {
                // Forcing a rule: a one-rule set (plus the fallback) selects it for any argv.
                let mut forced = rule.clone();
                forced.rule.matcher = rules::schema::Match::default();
                forced.rule.priority = i64::MAX / 2000;
                set.insert(forced);
            }
            None => diag::warn_once(&format!("no rule `{id}`; selecting by command instead")),
        }
    }
    set
}

/// Nothing was adopted, and the caller did not ask for the whole output rendered (`raw`).
fn declined(outcome: &crate::reduce::Reduction) -> bool {
    !matches!(outcome.passthrough, None | Some(crate::reduce::Passthrough::Raw))
}

/// When tj adopts no reduction, the harness gets its own text back byte for byte (only its
/// secrets redacted): it knows the exit code already, and a rendered copy (ANSI stripped, a
/// `[tj] exit N` line added) would change what it showed without saving anything (issue
/// 12, "never worse, visibly"). `raw` is the harness's text, so it is valid UTF-8.
fn give_back(outcome: &mut crate::reduce::Reduction, raw: &[u8]) {
    let text = String::from_utf8_lossy(raw).into_owned();
    outcome.reduced_chars = text.chars().count();
    outcome.reduced_tokens = crate::reduce::tokens::estimate(&text);
    outcome.text = text;
}

/// The largest previous rendition read for a delta; a larger one (an output that went out
/// whole) gives none.
const PREVIOUS_LIMIT: u64 = 4 << 20;

/// The last run recorded for this command in this session and directory (`None` outside a
/// session), read once: before this run is recorded over it, for both the delta and the
/// dedupe check.
#[derive(Debug, Default)]
pub(crate) struct LastRun {
    /// The record's key ([`crate::store::run_key`]).
    key: Option<String>,
    /// The artifact id and time recorded under it.
    recorded: Option<(String, u64)>,
}

/// The last run of the command `meta` describes, and the previous run its delta is told
/// against, if the original was stored (`artifact`); nothing otherwise.
pub(crate) fn look_back(
    store: Option<&Store>,
    meta: &Metadata,
    artifact: Option<&ArtifactRef>,
) -> (LastRun, Option<reduce::delta::Previous>) {
    let (Some(store), Some(artifact)) = (store, artifact) else {
        return (LastRun::default(), None);
    };
    let last = LastRun::read(store, meta);
    let previous = last.previous(store, meta, artifact);
    (last, previous)
}

impl LastRun {
    /// Reads the record for the run `meta` describes.
    pub(crate) fn read(store: &Store, meta: &Metadata) -> LastRun {
        let key = crate::store::run_key(meta);
        let recorded = key.as_deref().and_then(|key| store.last_run(key));
        LastRun { key, recorded }
    }

    /// The previous run, if it was recorded recently and its output differs from this one's
    /// (an identical output is a dedupe stub's business): its id, its age and the failures
    /// its rendition names (`reduce::delta`). `meta` is this run's, after the original was
    /// stored.
    pub(crate) fn previous(
        &self,
        store: &Store,
        meta: &Metadata,
        artifact: &ArtifactRef,
    ) -> Option<reduce::delta::Previous> {
        let (id, time) = self.recorded.as_ref()?;
        let age_secs = meta.created_at.saturating_sub(*time);
        if *id == artifact.id || age_secs > crate::store::DELTA_TTL_SECS {
            return None;
        }
        let text = store.read_rendition_within(id, PREVIOUS_LIMIT).ok()?;
        let failures = reduce::delta::failures(&text);
        Some(reduce::delta::Previous { id: id.clone(), age_secs, failures })
    }
}

/// Records a run whose output was empty: a ledger line, nothing else. There is nothing to get
/// back, so nothing is stored and no rendition names an artifact; storing it cost a fifth of
/// such a run (metadata rewritten, the rendition read back, a time refreshed), and a repeat
/// would have become a stub longer than `(no output)`. Output-less commands (`mkdir`, `git
/// add`, `cp`) are a good share of what an agent runs.
pub(crate) fn record_unstored(store: &Store, meta: &Metadata, outcome: &reduce::Reduction) {
    let (id, _) = crate::store::id_of(&[]);
    let entry =
        LedgerEntry { time: crate::store::now_secs(), ..ledger_entry(&id, meta, outcome, false) };
    warn_unledgered(store.append_ledger_alone(&entry));
}

/// The ledger line of a run.
fn ledger_entry(
    id: &str,
    meta: &Metadata,
    outcome: &reduce::Reduction,
    deduped: bool,
) -> LedgerEntry {
    LedgerEntry {
        time: meta.created_at,
        id: id.to_owned(),
        command: outcome.command.clone(),
        rule: outcome.rule.clone(),
        family: outcome.family.clone(),
        session: meta.session.clone(),
        cwd: meta.cwd.clone(),
        exit_code: meta.exit_code,
        chars: (outcome.raw_chars, outcome.text.chars().count()),
        tokens: (outcome.raw_tokens, crate::reduce::tokens::estimate(&outcome.text)),
        reduced: outcome.is_reduced(),
        lossless: outcome.lossless,
        deduped,
    }
}

/// One warning when a run's ledger line could not be written.
fn warn_unledgered(written: Result<()>) {
    if let Err(err) = written {
        diag::warn_once(&format!("{err:#}; savings statistics will miss this run"));
    }
}

/// Records what became of a stored original: its metadata, the rendition the agent got
/// (for `tj expand --reduced`), a ledger line, then retention. An output identical to one
/// just seen for the same command, place and session becomes a one-line stub (the full
/// rendition is still stored). Each failure is one warning; none of them loses output.
pub(crate) fn record(
    store: &Store,
    artifact: &ArtifactRef,
    meta: &mut Metadata,
    outcome: &mut reduce::Reduction,
    last: &LastRun,
) {
    // A repeat of the last run only: after a different output in between, this one is news
    // again, and the delta ([`LastRun::previous`]) tells how.
    let repeat = store
        .previous(&artifact.id)
        .filter(|prev| crate::store::is_repeat(prev, meta))
        .filter(|_| last.recorded.as_ref().is_none_or(|(id, _)| *id == artifact.id));
    meta.rule = Some(outcome.rule.clone());
    meta.reduced_chars = Some(outcome.reduced_chars);
    meta.tokens = Some((outcome.raw_tokens, outcome.reduced_tokens));
    meta.reduced = outcome.is_reduced();
    if let Err(err) = store.write_metadata(meta) {
        diag::warn_once(&format!("{err:#}; the original is stored, its metadata is not"));
    }
    if let Err(err) = store.write_rendition(&artifact.id, &outcome.text) {
        diag::warn_once(&format!("{err:#}"));
    }
    if let Some(prev) = &repeat {
        let age = meta.created_at.saturating_sub(prev.created_at);
        outcome.text = format!(
            "[tj] same output as {age} s ago (same command, directory and exit code): tj expand {id} --reduced · tj expand {id}",
            id = artifact.id
        );
    }
    warn_unledgered(store.append_ledger(&ledger_entry(
        &artifact.id,
        meta,
        outcome,
        repeat.is_some(),
    )));
    if let Some(key) = &last.key
        && let Err(err) = store.set_last_run(key, &artifact.id, meta.created_at)
    {
        diag::warn_once(&format!("{err:#}"));
    }
    sweep_if_due(store, &artifact.id);
}

/// Removes old originals when a sweep is due ([`Store::sweep_due`]), never `keep`: one
/// warning if that failed.
pub(crate) fn sweep_if_due(store: &Store, keep: &str) {
    if store.sweep_due()
        && let Err(err) = store.sweep(&Retention::default(), Some(keep))
    {
        diag::warn_once(&format!("{err:#}; old originals were not cleaned up"));
    }
}
