//! `tj doctor [host]`: for each host and scope, whether tj is wired, the tj each entry runs
//! and whether it exists and is this one, what the hook answers for a sample `cargo test`
//! call (the entry's own command, run as the harness runs it: `sh -c`, the host's payload
//! on stdin) and how long it takes, and for each problem the command that fixes it.

use std::fmt::Write as _;
use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::hooks::{self, Layout};
use super::paths::{self, Scope};
use super::{codex, files, opencode};
use crate::env::Env;
use crate::host::Host;

/// The command every sample payload carries.
pub(crate) const SAMPLE: &str = "cargo test";

/// Runs of the hook timed for the median.
const RUNS: usize = 5;

/// The report, and whether it found a problem.
#[derive(Default)]
pub(crate) struct Report {
    pub(crate) text: String,
    pub(crate) problems: usize,
}

impl Report {
    fn line(&mut self, text: &str) {
        self.text.push_str(text);
        self.text.push('\n');
    }

    fn problem(&mut self, what: &str, fix: &str) {
        self.problems += 1;
        let _ = writeln!(self.text, "           problem  {what}\n           fix      {fix}");
    }
}

/// Checks `hosts`; `asked` when the user named them (then a host wired nowhere is a
/// problem, not just a fact).
pub(crate) fn check(hosts: &[Host], asked: bool, env: &Env) -> Report {
    let mut report = Report::default();
    for &host in hosts {
        report.line(host.name());
        let mut wired = false;
        for scope in Scope::ALL {
            // In the home directory the project's file is the user's: report it once.
            let user = paths::settings_file(host, Scope::User, env).ok();
            if scope == Scope::Project && user == paths::settings_file(host, scope, env).ok() {
                continue;
            }
            wired |= check_scope(&mut report, host, scope, env);
        }
        if asked && !wired {
            report.problem(&format!("{host} is not wired to tj"), &format!("tj install {host}"));
        }
    }
    report
}

/// One host and scope; returns true if and only if tj is wired there.
fn check_scope(report: &mut Report, host: Host, scope: Scope, env: &Env) -> bool {
    let head = format!("  {:<8} ", scope.name());
    let path = match paths::settings_file(host, scope, env) {
        Ok(path) => path,
        Err(err) => {
            report.line(&format!("{head}{err:#}"));
            return false;
        }
    };
    let shown = path.display();
    let existing = match files::read(&path) {
        Ok(existing) => existing,
        Err(err) => {
            report.line(&format!("{head}{shown}: unreadable"));
            report.problem(&format!("{err:#}"), &format!("look at {shown}"));
            return false;
        }
    };
    let Some(text) = existing.text else {
        report.line(&format!("{head}{shown}: not wired (no such file)"));
        return false;
    };
    let programs = match programs(host, &text) {
        Ok(programs) => programs,
        Err(why) => {
            report.line(&format!("{head}{shown}: cannot be read by tj"));
            report.problem(&why, &format!("repair {shown} (tj install and uninstall refuse it)"));
            return false;
        }
    };
    if programs.is_empty() {
        report.line(&format!("{head}{shown}: not wired"));
        return false;
    }
    report.line(&format!("{head}{shown}: wired"));
    for (command, program) in &programs {
        check_entry(report, host, scope, command, program);
    }
    host_extras(report, host, scope, &path, &text, env);
    true
}

/// tj's entries in the file: `(command the host runs, tj program)`.
fn programs(host: Host, text: &str) -> Result<Vec<(Vec<String>, String)>, String> {
    let Some(layout) = hooks::layout(host) else {
        return Ok(opencode::program(text)
            .map(|p| {
                let argv = [&p, "rewrite", "--host", "opencode", "--", SAMPLE];
                vec![(argv.iter().map(|s| (*s).to_owned()).collect(), p.clone())]
            })
            .unwrap_or_default());
    };
    let doc = hooks::parse(text, &layout)?;
    Ok(hooks::find(&doc, &layout, host)
        .into_iter()
        .map(|f| (vec!["sh".to_owned(), "-c".to_owned(), f.command], f.program))
        .collect())
}

/// The program an entry runs, and what its hook answers.
fn check_entry(report: &mut Report, host: Host, scope: Scope, argv: &[String], program: &str) {
    let fix = format!("tj install {host}{}", scope.flag());
    let me = std::env::current_exe().ok();
    let exists = Path::new(program).is_file();
    let this = me.as_deref().is_some_and(|me| same_file(me, Path::new(program)));
    let whose = match (exists, this) {
        (false, _) => "which does not exist",
        (true, true) => "this tj",
        (true, false) => "another tj than this one",
    };
    report.line(&format!("           tj       {program} ({whose})"));
    if !exists {
        report.problem(&format!("the entry runs {program}, which does not exist"), &fix);
        return;
    }
    if !this && let Some(me) = &me {
        let _ = writeln!(
            report.text,
            "           note     this tj is {}; `{fix}` points the entry at it",
            me.display()
        );
    }
    sample(report, host, argv);
}

/// Runs the hook [`RUNS`] times with the host's sample payload; reports the first answer
/// and the median time.
fn sample(report: &mut Report, host: Host, argv: &[String]) {
    let payload = payload(host);
    let mut times = Vec::new();
    let mut first = None;
    for _ in 0..RUNS {
        let start = Instant::now();
        let outcome = run(argv, payload.as_bytes());
        times.push(start.elapsed());
        let failed = !matches!(outcome, Ok((0, _)));
        first.get_or_insert(outcome);
        if failed {
            break;
        }
    }
    times.sort();
    let median = times[times.len() / 2].as_secs_f64() * 1000.0;
    let shown = |out: &str| {
        let flat: String = out.trim_end().chars().take(300).collect();
        crate::diag::escape(&flat).into_owned()
    };
    match first.unwrap_or_else(|| Err("not run".to_owned())) {
        Err(why) => report.problem(
            &format!("the hook failed: {why}"),
            "run `tj doctor` again; report it if it persists",
        ),
        Ok((code, out)) if code != 0 => report.problem(
            &format!("the hook exited with {code}, printing {:?}", shown(&out)),
            "reinstall tj, or report a bug",
        ),
        Ok((_, out)) if !out.contains(" run --agent ") => {
            report.line(&format!(
                "           sample   `{SAMPLE}` not rewritten ({median:.1} ms): printed {:?}",
                shown(&out)
            ));
            report.problem(
                &format!("the hook does not rewrite `{SAMPLE}`"),
                &format!(
                    "`tj rewrite -v '{SAMPLE}'` says why; a deny rule or an older tj are likely"
                ),
            );
        }
        Ok((_, out)) => {
            let n = times.len();
            report.line(&format!(
                "           sample   `{SAMPLE}` rewritten, {median:.1} ms (median of {n})"
            ));
            report.line(&format!("           answer   {}", shown(&out)));
        }
    }
}

/// The most of a hook's answer doctor reads: an answer is a few kilobytes.
const MAX_ANSWER: u64 = 1 << 20;

/// Runs `argv` with `stdin`, at most 10 seconds; its exit code and stdout (the first
/// [`MAX_ANSWER`] bytes). Its stdout is read on a thread of its own, so that neither a
/// program that prints without end nor one that leaves a child holding its stdout open
/// keeps doctor waiting past the deadline.
fn run(argv: &[String], stdin: &[u8]) -> Result<(i32, String), String> {
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("could not run {}: {e}", argv[0]))?;
    let (sender, answer) = std::sync::mpsc::channel();
    if let Some(stdout) = child.stdout.take() {
        std::thread::spawn(move || {
            let mut out = Vec::new();
            let _ = stdout.take(MAX_ANSWER).read_to_end(&mut out);
            let _ = sender.send(String::from_utf8_lossy(&out).into_owned());
        });
    }
    if let Some(mut input) = child.stdin.take() {
        let _ = input.write_all(stdin);
    }
    let deadline = Instant::now() + Duration::from_secs(hooks::TIMEOUT_SECS);
    let too_late = || format!("no answer within {} s", hooks::TIMEOUT_SECS);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(1)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(too_late());
            }
        }
    };
    let out = answer
        .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        .map_err(|_| too_late())?;
    Ok((status.code().unwrap_or(-1), out))
}

/// A `cargo test` shell call as `host` sends it to its hook.
fn payload(host: Host) -> String {
    let cwd = std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_default();
    let value = match host {
        Host::ClaudeCode => serde_json::json!({
            "session_id": "tj-doctor", "transcript_path": "", "cwd": cwd,
            "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": SAMPLE, "description": "Run the tests"},
            "tool_use_id": "toolu_tj_doctor",
        }),
        // Codex takes a rewrite only where the original would run without a prompt.
        Host::Codex => serde_json::json!({
            "session_id": "tj-doctor", "turn_id": "tj-doctor", "transcript_path": null,
            "cwd": cwd, "hook_event_name": "PreToolUse", "model": "tj-doctor",
            "permission_mode": "bypassPermissions", "tool_name": "Bash",
            "tool_input": {"command": SAMPLE}, "tool_use_id": "call_tj_doctor",
        }),
        Host::Gemini => serde_json::json!({
            "session_id": "tj-doctor", "transcript_path": "", "cwd": cwd,
            "hook_event_name": "BeforeTool", "timestamp": "2026-01-01T00:00:00.000Z",
            "tool_name": "run_shell_command",
            "tool_input": {"command": SAMPLE, "description": "Run the tests"},
        }),
        Host::Cursor => serde_json::json!({
            "hook_event_name": "preToolUse", "conversation_id": "tj-doctor",
            "generation_id": "tj-doctor", "workspace_roots": [cwd], "tool_name": "Shell",
            "tool_input": {"command": SAMPLE},
        }),
        Host::Copilot => serde_json::json!({
            "timestamp": 1_767_225_600_000_u64, "cwd": cwd, "toolName": "bash",
            "toolArgs": serde_json::json!({"command": SAMPLE}).to_string(),
        }),
        Host::OpenCode => serde_json::Value::Null,
    };
    value.to_string()
}

/// Host-specific checks on a wired file: Codex's trust, Gemini's hooks switch.
fn host_extras(report: &mut Report, host: Host, scope: Scope, path: &Path, text: &str, env: &Env) {
    match host {
        Host::Codex => codex_trust(report, path, text, env),
        Host::Gemini => {
            let Some(layout) = hooks::layout(host) else { return };
            if let Some(off) = gemini_hooks_off(text, &layout) {
                report.problem(
                    &format!("`{off}` is false in {}: Gemini CLI runs no hook", path.display()),
                    &format!("set `{off}` to true in {}", path.display()),
                );
            }
        }
        _ => {}
    }
    let _ = scope;
}

fn codex_trust(report: &mut Report, path: &Path, text: &str, env: &Env) {
    let Some(layout) = hooks::layout(Host::Codex) else { return };
    let Ok(doc) = hooks::parse(text, &layout) else { return };
    let config_path = codex::config_toml(env);
    let config = config_path.as_deref().and_then(|p| crate::fsx::read(p).ok());
    let config = config.map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
    for found in hooks::find(&doc, &layout, Host::Codex) {
        let key = codex::state_key(path, &found);
        let Some(hash) = codex::trust_hash(&found) else {
            report
                .line("           trust    unknown (the entry was edited; check /hooks in codex)");
            continue;
        };
        match codex::trusted(&config, &key, &hash) {
            Some(true) => report.line("           trust    trusted in Codex's config.toml"),
            state => {
                let what = if state.is_some() {
                    "changed since it was trusted"
                } else {
                    "not trusted yet"
                };
                report.problem(
                    &format!("Codex skips the entry silently: {what}"),
                    &format!(
                        "trust it in codex's /hooks, or add to config.toml: [hooks.state.{}] trusted_hash = \"{hash}\"",
                        serde_json::Value::String(key)
                    ),
                );
            }
        }
    }
}

/// The switch that turns Gemini CLI's hooks off in `text`, if one is `false` there.
fn gemini_hooks_off(text: &str, layout: &Layout) -> Option<&'static str> {
    let doc = hooks::parse(text, layout).ok()?;
    let is_false = |outer: &str, inner: &str| {
        let member = doc.root.get(outer).ok()??.value.get(inner).ok()??.clone();
        Some(&doc.text[member.value.start..member.value.end] == "false")
    };
    if is_false("tools", "enableHooks") == Some(true) {
        return Some("tools.enableHooks");
    }
    if is_false("hooksConfig", "enabled") == Some(true) {
        return Some("hooksConfig.enabled");
    }
    None
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
