//! The command line: `Cli` (clap derive) and one module per subcommand, each with its
//! `Args` and a `run(args, &Env) -> Result<Status>`.

mod audit;
mod compact;
mod discover;
mod doctor;
mod expand;
mod hook;
mod init;
mod install;
mod ls;
mod reduce;
mod reduce_json;
mod replay;
mod rewrite;
mod rules;
#[cfg(unix)]
mod run;
mod skills;
mod stats;
mod stats_transcripts;

use anyhow::Result;
use clap::{Parser, Subcommand};

use crate::env::Env;
use crate::exit::Status;

/// Run builds and tests for AI agents: every failure kept, the noise dropped
///
/// tj reduces command output for AI coding agents. Errors, failures, assertion diffs,
/// stack frames, file:line locations and summaries are kept verbatim; passing tests,
/// progress redraws, ANSI codes and repeats are dropped. The original is stored first and
/// the rendition says how to get it back (`tj expand ID`).
#[derive(Debug, Parser)]
#[command(name = "tj", version, propagate_version = true, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    #[cfg(unix)]
    Run(run::Args),
    Reduce(reduce::Args),
    ReduceJson(reduce_json::Args),
    Expand(expand::Args),
    Ls(ls::Args),
    Stats(stats::Args),
    Discover(discover::Args),
    Audit(audit::Args),
    Compact(compact::Args),
    #[command(subcommand)]
    Skills(skills::Command),
    #[command(subcommand)]
    Rules(rules::Command),
    Init(init::Args),
    Doctor(doctor::Args),
    Rewrite(rewrite::Args),
    Hook(hook::Args),
    Install(install::Args),
    Uninstall(install::UninstallArgs),
}

impl Cli {
    /// The command line of this process, parsed; on an error, or for `--help` and
    /// `--version`, clap prints what it prints and the process exits. `Err` is the status
    /// to end with when that could not be printed (`exit_for`).
    ///
    /// The calls made for every command an agent runs (`tj run`, `tj reduce`, `tj
    /// reduce-json`, `tj rewrite`, `tj hook`) are first parsed against their own subcommand
    /// alone: building the whole command line (every subcommand and its arguments) costs
    /// more than the parse. Whatever that does not accept (help, version, a mistake) is
    /// parsed again by the whole command line, so every message is the same.
    pub fn from_env() -> Result<Cli, Status> {
        let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
        if let Some(command) = args.get(1..).and_then(parse_hot) {
            return Ok(Cli { command });
        }
        Cli::try_parse_from(args).map_err(|err| exit_for(&err))
    }
}

/// For a command line clap did not turn into a command: clap's message and status. The
/// help and the version are printed here and the status returned, so that one that cannot
/// be written fails as `ls --help >&-` and `ls --help >/dev/full` do, where clap would say
/// nothing and exit 0 (a stdout closed when tj started takes the write into the /dev/null
/// Rust's runtime put there: see [`crate::stdio`]). Every other message (a mistake on the
/// command line) ends the process as clap ends it.
fn exit_for(err: &clap::Error) -> Status {
    use std::io::Write;

    use clap::error::ErrorKind;
    let what = match err.kind() {
        ErrorKind::DisplayHelp => "the help",
        ErrorKind::DisplayVersion => "the version",
        _ => err.exit(),
    };
    let printed = match crate::stdio::stdout_closed_error() {
        Some(closed) => Err(closed),
        None => err.print().and_then(|()| std::io::stdout().flush()),
    };
    match printed {
        Ok(()) => Status::Ok,
        Err(failed) if failed.kind() == std::io::ErrorKind::BrokenPipe => Status::Ok,
        Err(failed) => {
            crate::diag::error(&anyhow::anyhow!("could not write {what} to stdout: {failed}"));
            Status::TjFailed
        }
    }
}

/// `args` (a subcommand's name and what follows it) as that subcommand alone parses them,
/// if it is one of the hot ones and accepts them as they are.
fn parse_hot(args: &[std::ffi::OsString]) -> Option<Command> {
    Some(match args.first()?.to_str()? {
        #[cfg(unix)]
        "run" => {
            Command::Run(run::Args::parse_plain(&args[1..]).or_else(|| parse_alone("run", args))?)
        }
        "reduce" => Command::Reduce(parse_alone("reduce", args)?),
        "reduce-json" => Command::ReduceJson(parse_alone("reduce-json", args)?),
        "rewrite" => Command::Rewrite(parse_alone("rewrite", args)?),
        "hook" => Command::Hook(parse_alone("hook", args)?),
        _ => return None,
    })
}

/// `args` parsed by the subcommand `name` built alone from `A`.
fn parse_alone<A: clap::Args + clap::FromArgMatches>(
    name: &'static str,
    args: &[std::ffi::OsString],
) -> Option<A> {
    let command = A::augment_args(clap::Command::new(name));
    let matches = command.try_get_matches_from(args).ok()?;
    A::from_arg_matches(&matches).ok()
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<Status> {
    let env = Env::capture();
    let result = match cli.command {
        #[cfg(unix)]
        Command::Run(args) => run::run(args, &env),
        Command::Reduce(args) => reduce::run(&args, &env),
        Command::ReduceJson(args) => reduce_json::run(&args, &env),
        Command::Expand(args) => expand::run(&args, &env),
        Command::Ls(args) => ls::run(&args, &env),
        Command::Stats(args) => stats::run(&args, &env),
        Command::Discover(args) => discover::run(&args, &env),
        Command::Audit(args) => audit::run(&args, &env),
        Command::Compact(args) => compact::run(&args, &env),
        Command::Skills(cmd) => skills::run(cmd, &env),
        Command::Rules(cmd) => rules::run(cmd, &env),
        Command::Init(args) => init::run(&args, &env),
        Command::Doctor(args) => doctor::run(args, &env),
        Command::Rewrite(args) => rewrite::run(&args, &env),
        Command::Hook(args) => hook::run(&args, &env),
        Command::Install(args) => install::install(&args, &env),
        Command::Uninstall(args) => install::uninstall(&args, &env),
    };
    match result {
        Err(err) if crate::diag::is_broken_pipe(&err) => Ok(Status::Ok),
        other => other,
    }
}

/// The configuration file and environment, each problem warned about once.
fn load_config(env: &Env) -> crate::config::Config {
    let config = crate::config::Config::load(env);
    warn_config(&config);
    config
}

/// Warns once about each problem met reading the configuration.
fn warn_config(config: &crate::config::Config) {
    for problem in &config.problems {
        crate::diag::warn_once(problem);
    }
}

/// The merged rule set, each problem (a skipped file, unknown keys) warned about once.
fn load_rules(env: &Env) -> crate::rules::RuleSet {
    let set = crate::rules::load::load(env);
    for problem in &set.problems {
        crate::diag::warn_once(&problem.to_string());
    }
    set
}

/// [`load_rules`] for reducing the output of one command: only the builtin rules that could
/// be selected for its program are parsed (DESIGN.md "Rules": start-up does not pay for
/// every rule).
fn load_rules_for(env: &Env, argv: &[String], command: Option<&str>) -> crate::rules::RuleSet {
    let set = read_rules_for(env, argv, command);
    warn_rules(&set);
    set
}

/// [`load_rules_for`] without the warnings: [`warn_rules`] gives them when they may be
/// printed.
fn read_rules_for(env: &Env, argv: &[String], command: Option<&str>) -> crate::rules::RuleSet {
    let query = crate::rules::select::Query { argv, command, ..Default::default() };
    let identity = crate::rules::select::identify(&query);
    // A compound command only ever gets the fallback: no program's rules are needed.
    let argv: &[String] = if identity.compound { &[] } else { &identity.argv };
    crate::rules::load::load_for(env, argv)
}

/// Warns once about each problem met loading `set`.
fn warn_rules(set: &crate::rules::RuleSet) {
    for problem in &set.problems {
        crate::diag::warn_once(&problem.to_string());
    }
}

/// Reduces through the fail-open boundary, warning once about a panic or a disabled pattern.
fn reduce_reporting(
    input: &crate::reduce::Input<'_>,
    set: &crate::rules::RuleSet,
    opts: &crate::reduce::Options<'_>,
) -> crate::reduce::Reduction {
    let outcome = crate::reduce::run(input, set, opts);
    if outcome.passthrough == Some(crate::reduce::Passthrough::Panicked) {
        crate::diag::warn_once("the reducer failed (a bug in tj); the rendition is the original");
    }
    for problem in &outcome.problems {
        crate::diag::warn_once(problem);
    }
    outcome
}

/// [`reduce_reporting`] for an output too large to hold, reduced as `feed` pushes its
/// chunks (`reduce::stream`). `None`, after one warning, if the reducer panicked.
fn stream_reporting<'a>(
    input: &crate::reduce::Input<'_>,
    head: &[u8],
    set: &crate::rules::RuleSet,
    opts: &crate::reduce::Options<'a>,
    feed: impl FnOnce(&mut crate::reduce::stream::Stream<'a>),
) -> Option<crate::reduce::Reduction> {
    let Some(outcome) = crate::reduce::stream::run(input, head, set, opts, feed) else {
        crate::diag::warn_once("the reducer failed (a bug in tj); the rendition is the original");
        return None;
    };
    for problem in &outcome.problems {
        crate::diag::warn_once(problem);
    }
    Some(outcome)
}

/// Replaces the secrets in a rendition by markers naming their kind (issue 14), after every
/// check of the reduction: the gate judged the text before, and an evidence line loses
/// only its secret. The stored original keeps them.
fn redact(outcome: &mut crate::reduce::Reduction) {
    if let std::borrow::Cow::Owned(text) = crate::redact::redact(&outcome.text) {
        outcome.text = text;
    }
}

/// Reads all of a file, or stdin for `None` or `-`.
fn read_input(path: Option<&std::path::Path>) -> Result<Vec<u8>> {
    use std::io::Read;

    use anyhow::Context;
    let mut bytes = Vec::new();
    match path {
        Some(p) if p.as_os_str() != "-" => {
            std::fs::File::open(p)
                .and_then(|mut f| f.read_to_end(&mut bytes))
                .with_context(|| format!("could not read `{}`", p.display()))?;
        }
        _ => {
            // A stdin closed when tj started fails as `cat <&-` does, not as the empty input
            // of the /dev/null Rust's runtime put there (see `crate::stdio`).
            match crate::stdio::stdin_closed_error() {
                Some(closed) => Err(closed),
                None => std::io::stdin().lock().read_to_end(&mut bytes).map(drop),
            }
            .context("could not read stdin")?;
        }
    }
    Ok(bytes)
}

#[cfg(all(test, unix))]
mod tests {
    use clap::Parser;

    use super::*;

    fn argv(args: &[&str]) -> Vec<std::ffi::OsString> {
        args.iter().map(std::ffi::OsString::from).collect()
    }

    #[test]
    fn a_hot_subcommand_alone_parses_as_the_whole_command_line_does() {
        for args in [
            &["tj", "run", "--", "cargo", "test"][..],
            &["tj", "run", "cargo", "test", "--", "--nocapture"],
            &["tj", "run", "--agent", "--host", "claude", "--", "ls", "-la"],
            &["tj", "run", "--live", "--no-pty", "--raw", "make"],
            &["tj", "run", "--emit", "/tmp/x", "--emit-format", "json", "--emit-fd", "9", "true"],
            &["tj", "run", "--agent-stdout", "1:2", "--", "--help"],
            &["tj", "reduce", "/dev/null", "--command", "cargo test"],
            &["tj", "reduce", "--exit-code", "101", "--", "cargo", "test"],
            &["tj", "reduce", "--raw", "log.txt"],
            &["tj", "reduce-json"],
            &["tj", "rewrite", "cargo test"],
            &["tj", "hook", "claude-code"],
            &["tj", "hook", "codex"],
        ] {
            let fast = parse_hot(&argv(&args[1..])).unwrap_or_else(|| panic!("{args:?}"));
            let full = Cli::try_parse_from(argv(args)).unwrap().command;
            assert_eq!(format!("{fast:?}"), format!("{full:?}"), "{args:?}");
        }
    }

    /// Every command line `run::Args::parse_plain` accepts, clap parses the same; the forms
    /// adapters and people type are accepted. The lines are every sequence of up to three
    /// options from a set that holds each form of each option, a few wrong ones among them,
    /// each followed by a command with and without `--`.
    #[test]
    fn run_s_plain_parse_is_clap_s_parse_wherever_it_answers() {
        let options: &[&[&str]] = &[
            &["--agent"],
            &["--live"],
            &["--no-pty"],
            &["--raw"],
            &["--full"],
            &["--no-redact"],
            &["--agent-stdout", "64769:12"],
            &["--agent-stdout=1:2"],
            &["--emit", "/tmp/out"],
            &["--emit=/tmp/out"],
            &["--emit-fd", "9"],
            &["--emit-fd=3"],
            &["--emit-fd", "x"],
            &["--emit-format", "json"],
            &["--emit-format=text"],
            &["--emit-format", "JSON"],
            &["--host", "claude"],
            &["--host=codex"],
            &["--host", "gemini-cli"],
            &["--host", "-x"],
            &["--agent=1"],
            &["--emit="],
            &["-h"],
            &["--bogus"],
        ];
        let commands: &[&[&str]] = &[
            &["--", "cargo", "test", "--", "--nocapture"],
            &["cargo", "test", "--", "--nocapture"],
            &["--", "--agent"],
            &["make", "--live"],
            &[],
            &["--"],
        ];
        let mut lines: Vec<Vec<&str>> = vec![vec![]];
        let mut last = lines.clone();
        for _ in 0..3 {
            last = last
                .iter()
                .flat_map(|line| {
                    options.iter().map(move |option| [line.as_slice(), option].concat())
                })
                .collect();
            lines.extend(last.iter().cloned());
        }
        let mut accepted = 0;
        for line in &lines {
            for command in commands {
                let args: Vec<&str> = ["tj", "run"]
                    .into_iter()
                    .chain(line.iter().copied())
                    .chain(command.iter().copied())
                    .collect();
                let Some(plain) = run::Args::parse_plain(&argv(&args[2..])) else { continue };
                accepted += 1;
                let full = Cli::try_parse_from(argv(&args)).unwrap_or_else(|err| {
                    panic!("{args:?}: clap refuses what the plain parse took: {err}")
                });
                assert_eq!(
                    format!("{:?}", Command::Run(plain)),
                    format!("{:?}", full.command),
                    "{args:?}"
                );
            }
        }
        assert!(accepted > 10_000, "{accepted}");
        for args in [
            &["--agent", "--host", "claude-code", "--", "cargo", "test"][..],
            &["--agent", "--agent-stdout", "64769:12", "--", "npm", "test"],
            &["--emit", "/tmp/x", "--emit-format", "json", "make"],
            &["cargo", "build", "--release"],
        ] {
            assert!(run::Args::parse_plain(&argv(args)).is_some(), "{args:?}");
        }
    }

    #[test]
    fn a_hot_subcommand_alone_leaves_help_version_and_mistakes_to_the_whole_command_line() {
        for args in [
            &["run", "--help"][..],
            &["run", "-h"],
            &["run", "--version"],
            &["run"],
            &["run", "--agent", "--live", "true"],
            &["run", "--bogus", "true"],
            &["run", "--emit-format", "xml", "true"],
            &["run", "--host", "nobody", "true"],
            &["reduce", "--help"],
            &["reduce", "--version"],
            &["reduce", "--bogus"],
            &["reduce-json", "-h"],
            &["rewrite", "--help"],
            &["hook", "--help"],
            &["hook", "nobody"],
            &["hook"],
            &["expand", "abc"],
            &["ls"],
            &["--version"],
        ] {
            assert!(parse_hot(&argv(args)).is_none(), "{args:?}");
        }
    }
}
