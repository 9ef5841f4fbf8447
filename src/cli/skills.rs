//! `tj skills rank`: the skills of a catalog a task needs.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Result, bail};

use crate::emit;
use crate::env::Env;
use crate::exit::Status;
use crate::skills::{self, Keep};

/// Agent skills (`SKILL.md` catalogs)
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
    /// The skills a task needs, in the catalog's order
    ///
    /// Scores each skill's name and description against the task by the words they share
    /// (rarer words weigh more, a word in the name counts twice; no model) and prints the
    /// best, at most --max and at least --min, in the order the catalog lists them. The
    /// same catalog and task always give the same answer.
    Rank(RankArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct RankArgs {
    /// The task, in words
    #[arg(long, value_name = "TEXT")]
    task: String,

    /// Catalog directories, read in this order (default: Claude Code's user skills, then
    /// the project's `.claude/skills`, where they exist)
    #[arg(value_name = "DIR")]
    dirs: Vec<PathBuf>,

    /// Keep at most this many skills
    #[arg(long, default_value_t = 12, value_name = "N")]
    max: usize,

    /// Keep at least this many, where the catalog has them
    #[arg(long, default_value_t = 5, value_name = "N")]
    min: usize,

    /// How to print: text (name, score, path) or json
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Output formats of `tj skills rank`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// One skill a line
    Text,
    /// One JSON document
    Json,
}

pub(crate) fn run(cmd: Command, env: &Env) -> Result<Status> {
    match cmd {
        Command::Rank(args) => rank(&args, env),
    }
}

fn rank(args: &RankArgs, env: &Env) -> Result<Status> {
    let dirs = if args.dirs.is_empty() { default_dirs(env) } else { args.dirs.clone() };
    for dir in &args.dirs {
        if !dir.is_dir() {
            bail!("`{}` is not a directory of skills", dir.display());
        }
    }
    let (catalog, problems) = skills::catalog(&dirs);
    for problem in &problems {
        crate::diag::warn(&format!("{problem}; skipped"));
    }
    let ranked = skills::rank(&catalog, &args.task, Keep { max: args.max, min: args.min });
    match args.format {
        Format::Json => emit::json(&serde_json::json!({
            "task": args.task,
            "catalog": catalog.len(),
            "kept": ranked,
        }))?,
        Format::Text if catalog.is_empty() => {
            let looked: Vec<String> = dirs.iter().map(|d| format!("`{}`", d.display())).collect();
            let looked = if looked.is_empty() { "nowhere".to_owned() } else { looked.join(", ") };
            emit::stdout(&format!("no skills found (looked in {looked})"))?;
        }
        Format::Text => {
            let width = ranked.iter().map(|r| r.skill.name.chars().count()).max().unwrap_or(0);
            let mut out = String::new();
            for r in &ranked {
                let name = crate::rules::printable(&r.skill.name);
                let path = crate::rules::printable_path(&r.skill.path);
                let _ = writeln!(out, "{name:width$}  {:>6}  {path}", r.score);
            }
            emit::stdout(out.trim_end())?;
        }
    }
    Ok(Status::Ok)
}

/// Claude Code's user skills (`$CLAUDE_CONFIG_DIR/skills` or `~/.claude/skills`), then the
/// project's (`.claude/skills` in the working directory), those that exist.
fn default_dirs(env: &Env) -> Vec<PathBuf> {
    let user = env
        .claude_config_dir
        .clone()
        .or_else(|| env.home.as_ref().map(|h| h.join(".claude")))
        .map(|d| d.join("skills"));
    let project = env.cwd.as_ref().map(|c| c.join(".claude/skills"));
    user.into_iter().chain(project).filter(|d| d.is_dir()).collect()
}
