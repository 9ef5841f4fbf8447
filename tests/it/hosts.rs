//! `tj install`, `tj uninstall` and `tj doctor` on fixture settings files (issue 11).
//!
//! Every test runs the real binary in a temporary HOME with each harness's directory moved
//! by its own variable (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `COPILOT_HOME`,
//! `XDG_CONFIG_HOME`), stdin empty. The fixtures live in `tests/settings/` (not under
//! `tests/fixtures/`, whose every file the golden test reads as a reduction case).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::*;

const HOSTS: [&str; 6] = ["claude-code", "codex", "gemini", "cursor", "copilot", "opencode"];

/// A TestEnv whose harness directories are moved by their variables.
struct Hosts {
    env: TestEnv,
}

impl Hosts {
    fn new() -> Hosts {
        Hosts { env: TestEnv::new() }
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = self.env.cmd(args);
        let root = &self.env.root;
        cmd.env("CLAUDE_CONFIG_DIR", root.join("claude-config"))
            .env("CODEX_HOME", root.join("codex-home"))
            .env("COPILOT_HOME", root.join("copilot-home"))
            .env("XDG_CONFIG_HOME", root.join("xdg"));
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.env.run_cmd(self.cmd(args), b"")
    }

    /// Runs and asserts success.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(out.status.success(), "tj {args:?}: {}{}", stdout(&out), stderr(&out));
        stdout(&out)
    }

    /// The user-scope file tj writes for `host`.
    fn user_file(&self, host: &str) -> PathBuf {
        let root = &self.env.root;
        match host {
            "claude-code" => root.join("claude-config/settings.json"),
            "codex" => root.join("codex-home/hooks.json"),
            "gemini" => root.join("home/.gemini/settings.json"),
            "cursor" => root.join("home/.cursor/hooks.json"),
            "copilot" => root.join("copilot-home/hooks/tj.json"),
            "opencode" => root.join("xdg/opencode/plugins/tj.js"),
            _ => unreachable!(),
        }
    }

    fn put(&self, path: &Path, bytes: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        #[allow(clippy::disallowed_methods)]
        std::fs::write(path, bytes).unwrap();
    }
}

fn tj_path() -> String {
    std::fs::canonicalize(crate::util::tj_bin()).unwrap().display().to_string()
}

fn fixture(host: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/settings/{host}.json"));
    std::fs::read_to_string(path).unwrap()
}

/// The fixture as it is, and as it would be with CRLF line endings, without its final
/// newline, and indented with tabs instead of its spaces.
fn variants(text: &str) -> Vec<(&'static str, String)> {
    let tabs: String = text
        .lines()
        .map(|l| {
            let body = l.trim_start_matches(' ');
            let n = (l.len() - body.len()) / 2;
            format!("{}{body}\n", "\t".repeat(n))
        })
        .collect();
    vec![
        ("as is", text.to_owned()),
        ("crlf", text.replace('\n', "\r\n")),
        ("no final newline", text.trim_end().to_owned()),
        ("tabs", tabs),
    ]
}

fn backups(file: &Path) -> Vec<String> {
    let name = file.file_name().unwrap().to_str().unwrap().to_owned();
    let mut found: Vec<String> = std::fs::read_dir(file.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().into_string().ok())
        .filter(|n| n.starts_with(&format!("{name}.tj-backup.")))
        .collect();
    found.sort();
    found
}

/// The parsed file with comments removed (Gemini's fixture has some).
fn parse_json(text: &str) -> serde_json::Value {
    let mut clean = String::new();
    for line in text.lines() {
        let line = line.trim_start();
        if line.starts_with("//") || line.starts_with("/*") {
            continue;
        }
        clean.push_str(line);
        clean.push('\n');
    }
    serde_json::from_str(&clean).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The commands of the pre-tool-use hooks in `value` for `host`.
fn hook_commands(host: &str, value: &serde_json::Value) -> Vec<String> {
    let (event, grouped, key) = match host {
        "claude-code" | "codex" => ("PreToolUse", true, "command"),
        "gemini" => ("BeforeTool", true, "command"),
        "cursor" => ("preToolUse", false, "command"),
        _ => ("preToolUse", false, "bash"),
    };
    let items = value["hooks"][event].as_array().cloned().unwrap_or_default();
    let entries: Vec<serde_json::Value> = if grouped {
        items.iter().flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default()).collect()
    } else {
        items
    };
    entries.iter().filter_map(|e| e[key].as_str().map(str::to_owned)).collect()
}

#[test]
fn install_then_uninstall_restores_every_fixture_byte_for_byte() {
    for host in ["claude-code", "codex", "gemini", "cursor", "copilot"] {
        for (variant, original) in variants(&fixture(host)) {
            let h = Hosts::new();
            let file = h.user_file(host);
            h.put(&file, &original);
            let out = h.ok(&["install", host]);
            assert!(out.contains(&format!("undo: tj uninstall {host}")), "{out}");
            let installed = std::fs::read_to_string(&file).unwrap();
            let commands = hook_commands(host, &parse_json(&installed));
            let want = format!("{} hook {host}", tj_path());
            assert!(commands.contains(&want), "{host} {variant}: {commands:?}\n{installed}");
            assert!(commands.len() >= 2, "{host} {variant}: the other tool's hook is kept");
            if variant == "crlf" {
                assert!(!installed.replace("\r\n", "").contains('\n'), "{host}: a bare LF added");
            }
            if variant == "tabs" && original.contains("\n\t") {
                assert!(!installed.contains("\n "), "{host}: space indentation in a tab file");
            }

            h.ok(&["install", host]);
            assert_eq!(std::fs::read_to_string(&file).unwrap(), installed, "{host} {variant}");
            assert_eq!(backups(&file).len(), 1, "a second install writes nothing");

            h.ok(&["uninstall", host]);
            assert_eq!(std::fs::read_to_string(&file).unwrap(), original, "{host} {variant}");
        }
    }
}

#[test]
fn install_creates_missing_files_and_uninstall_removes_them() {
    for host in HOSTS {
        let h = Hosts::new();
        let file = h.user_file(host);
        h.ok(&["install", host]);
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains(&tj_path()), "{host}: {text}");
        assert!(backups(&file).is_empty(), "nothing to back up");
        if host == "codex" {
            let root = parse_json(&text);
            let keys: Vec<&String> = root.as_object().unwrap().keys().collect();
            assert_eq!(keys, ["hooks"], "Codex rejects any root key but description and hooks");
        }
        if host == "cursor" || host == "copilot" {
            assert_eq!(parse_json(&text)["version"], 1);
        }
        h.ok(&["uninstall", host]);
        assert!(!file.exists(), "{host}: the file tj created is gone");
        let out = h.ok(&["uninstall", host]);
        assert!(out.contains("was not wired"), "{out}");
    }
}

#[test]
fn a_file_that_does_not_parse_is_left_untouched_with_the_reason() {
    for host in ["claude-code", "codex", "gemini", "cursor", "copilot"] {
        for bad in
            ["{\n  \"hooks\": {\n    \"PreToolUse\": [,]\n  }\n}\n", "[1, 2]\n", "{\"hooks\": 3}"]
        {
            let h = Hosts::new();
            let file = h.user_file(host);
            h.put(&file, bad);
            for args in [["install", host], ["uninstall", host]] {
                let out = h.run(&args);
                assert!(!out.status.success(), "{host} {bad:?}");
                let err = stderr(&out);
                assert!(err.contains(&file.display().to_string()), "{err}");
                assert!(err.contains("tj changed nothing"), "{err}");
                assert_eq!(std::fs::read_to_string(&file).unwrap(), bad);
                assert!(backups(&file).is_empty());
            }
        }
    }
    let h = Hosts::new();
    let file = h.user_file("claude-code");
    h.put(&file, "{\n  \"model\": \"opus\",\n  \"hooks\": {\"PreToolUse\": [}\n}\n");
    let err = stderr(&h.run(&["install", "claude-code"]));
    assert!(err.contains("not valid JSON: expected a value at line 3 column 28"), "{err}");
}

#[test]
fn dry_run_prints_the_diff_and_changes_nothing() {
    let h = Hosts::new();
    let file = h.user_file("codex");
    let original = fixture("codex");
    h.put(&file, &original);
    let out = h.ok(&["install", "codex", "--dry-run"]);
    let path = file.display().to_string();
    assert!(out.starts_with(&format!("--- {path}\n+++ {path}\n@@ ")), "{out}");
    assert!(
        out.contains(&format!("+            \"command\": \"{} hook codex\",", tj_path())),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
    assert!(backups(&file).is_empty());

    let missing = h.user_file("cursor");
    let out = h.ok(&["install", "cursor", "--dry-run"]);
    assert!(out.starts_with("--- /dev/null\n"), "{out}");
    assert!(!missing.exists());

    h.ok(&["install", "codex"]);
    let installed = std::fs::read_to_string(&file).unwrap();
    let out = h.ok(&["uninstall", "codex", "--dry-run"]);
    assert!(out.lines().any(|l| l.starts_with('-') && l.contains("hook codex")), "{out}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), installed);
}

#[test]
fn backups_are_numbered_and_never_overwritten() {
    let h = Hosts::new();
    let file = h.user_file("claude-code");
    let original = fixture("claude-code");
    h.put(&file, &original);
    let name = file.file_name().unwrap().to_str().unwrap().to_owned();
    h.put(&file.with_file_name(format!("{name}.tj-backup.7")), "someone's old backup");
    h.ok(&["install", "claude-code"]);
    let installed = std::fs::read_to_string(&file).unwrap();
    h.ok(&["uninstall", "claude-code"]);
    h.ok(&["install", "claude-code"]);
    let read =
        |n: u32| std::fs::read_to_string(file.with_file_name(format!("{name}.tj-backup.{n}")));
    assert_eq!(read(7).unwrap(), "someone's old backup");
    assert_eq!(read(8).unwrap(), original);
    assert_eq!(read(9).unwrap(), installed);
    assert_eq!(read(10).unwrap(), original);
    assert_eq!(backups(&file).len(), 4);
}

#[test]
fn an_entry_for_an_older_tj_is_updated_not_duplicated() {
    let h = Hosts::new();
    let file = h.user_file("claude-code");
    let old = "{\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\n        \"matcher\": \"Bash\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"'/old place/tj' hook claude\",\n            \"timeout\": 10\n          }\n        ]\n      }\n    ]\n  }\n}\n";
    h.put(&file, old);
    h.ok(&["install", "claude-code"]);
    let text = std::fs::read_to_string(&file).unwrap();
    let commands = hook_commands("claude-code", &parse_json(&text));
    assert_eq!(commands, [format!("{} hook claude-code", tj_path())]);
    assert_eq!(
        text,
        old.replace("'/old place/tj' hook claude", &format!("{} hook claude-code", tj_path()))
    );
    h.ok(&["uninstall", "claude-code"]);
    assert!(!file.exists(), "only tj's entry was there");
}

#[test]
fn a_linked_settings_file_is_edited_at_its_target_and_stays_a_link() {
    let h = Hosts::new();
    let file = h.user_file("claude-code");
    let target = h.env.root.join("dotfiles/claude.json");
    let original = fixture("claude-code");
    h.put(&target, &original);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&target, &file).unwrap();
    let out = h.ok(&["install", "claude-code"]);
    assert!(out.contains("a link to"), "{out}");
    assert!(std::fs::symlink_metadata(&file).unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(&target).unwrap().contains(&tj_path()));
    assert_eq!(backups(&target).len(), 1);
    h.ok(&["uninstall", "claude-code"]);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), original);
}

#[test]
fn the_files_mode_is_kept() {
    let h = Hosts::new();
    let file = h.user_file("gemini");
    h.put(&file, &fixture("gemini"));
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    h.ok(&["install", "gemini"]);
    assert!(is_private(&file, 0o640));
    h.ok(&["uninstall", "gemini"]);
    assert!(is_private(&file, 0o640));
}

#[test]
fn project_scope_writes_the_projects_files() {
    let h = Hosts::new();
    let work = h.env.work();
    let expect = [
        ("claude-code", ".claude/settings.local.json"),
        ("codex", ".codex/hooks.json"),
        ("gemini", ".gemini/settings.json"),
        ("cursor", ".cursor/hooks.json"),
        ("copilot", ".github/hooks/tj.json"),
        ("opencode", ".opencode/plugins/tj.js"),
    ];
    for (host, rel) in expect {
        let out = h.ok(&["install", host, "--project"]);
        assert!(out.contains(&format!("undo: tj uninstall {host} --project")), "{out}");
        assert!(work.join(rel).is_file(), "{host}: {rel}");
        assert!(!h.user_file(host).exists(), "{host}: the user's file is not touched");
    }
    for (host, rel) in expect {
        h.ok(&["uninstall", host, "--project"]);
        assert!(!work.join(rel).exists(), "{host}");
    }
}

#[test]
fn someone_elses_opencode_plugin_is_never_replaced() {
    let h = Hosts::new();
    let file = h.user_file("opencode");
    h.put(&file, "export const Mine = async () => ({});\n");
    let out = h.run(&["install", "opencode"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("is not tj's plugin"), "{}", stderr(&out));
    h.ok(&["uninstall", "opencode"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "export const Mine = async () => ({});\n");
}

/// The plugin, loaded by node as OpenCode loads it: `cargo test` comes back through tj,
/// and with tj missing the command is left as it was.
#[test]
fn the_opencode_plugin_rewrites_through_tj_and_fails_open() {
    if Command::new("node").arg("--version").output().is_err() {
        println!("skipping: node is not installed");
        return;
    }
    let h = Hosts::new();
    h.ok(&["install", "opencode"]);
    let plugin = h.user_file("opencode");
    let broken = h.env.root.join("broken/tj.js");
    let text = std::fs::read_to_string(&plugin).unwrap();
    h.put(&broken, &text.replace(&tj_path(), "/nonexistent/tj"));
    let script = r#"
        const [good, bad] = process.argv.slice(1);
        for (const file of [good, bad]) {
          const mod = await import(file);
          const hooks = await Object.values(mod)[0]({});
          const output = { args: { command: "cargo test" } };
          await hooks["tool.execute.before"]({ tool: "bash" }, output);
          const other = { args: { command: "cargo test" } };
          await hooks["tool.execute.before"]({ tool: "read" }, other);
          console.log(JSON.stringify([output.args.command, other.args.command]));
        }
    "#;
    let out = Command::new("node")
        .args(["--input-type=module", "-e", script])
        .arg(&plugin)
        .arg(&broken)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<serde_json::Value> =
        stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[1], serde_json::json!(["cargo test", "cargo test"]), "fails open");
    assert_eq!(lines[0][1], "cargo test", "another tool is left alone");
    let rewritten = lines[0][0].as_str().unwrap();
    assert!(
        rewritten.contains(" run --agent ") && rewritten.ends_with("cargo test"),
        "{rewritten}"
    );
}

#[test]
fn doctor_reports_wired_and_not_wired() {
    let h = Hosts::new();
    h.ok(&["install", "cursor"]);
    let out = h.run(&["doctor"]);
    let text = stdout(&out);
    let cursor = h.user_file("cursor").display().to_string();
    assert!(text.contains(&format!("{cursor}: wired")), "{text}");
    assert!(text.contains(&format!("tj       {} (this tj)", tj_path())), "{text}");
    assert!(text.contains("claude-code\n  user     "), "{text}");
    assert!(text.contains("settings.json: not wired (no such file)"), "{text}");

    let out = h.run(&["doctor", "codex"]);
    assert_eq!(out.status.code(), Some(1), "a host asked about and wired nowhere");
    assert!(stdout(&out).contains("fix      tj install codex"), "{}", stdout(&out));
    assert!(!stdout(&out).contains("cursor"), "only the host asked about");
}

#[test]
fn doctor_reports_a_stale_path_and_the_command_that_fixes_it() {
    let h = Hosts::new();
    let file = h.user_file("claude-code");
    h.put(&file, "{\"hooks\":{\"PreToolUse\":[{\"matcher\":\"Bash\",\"hooks\":[{\"type\":\"command\",\"command\":\"/gone/bin/tj hook claude-code\"}]}]}}");
    let out = h.run(&["doctor", "claude-code"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("/gone/bin/tj (which does not exist)"), "{text}");
    assert!(text.contains("fix      tj install claude-code\n"), "{text}");
    h.ok(&["install", "claude-code"]);
    let text = stdout(&h.run(&["doctor", "claude-code"]));
    assert!(!text.contains("/gone/bin/tj"), "{text}");
}

#[test]
fn doctor_reports_a_file_it_cannot_parse() {
    let h = Hosts::new();
    h.put(&h.user_file("gemini"), "{\"hooks\": ");
    let out = h.run(&["doctor", "gemini"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("not valid JSON"), "{}", stdout(&out));
}

#[test]
fn codex_install_says_how_to_trust_the_hook() {
    let h = Hosts::new();
    let out = h.ok(&["install", "codex"]);
    assert!(out.contains("/hooks"), "{out}");
    let key = format!("{}:pre_tool_use:0:0", h.user_file("codex").display());
    assert!(out.contains(&format!("[hooks.state.\"{key}\"]\ntrusted_hash = \"sha256:")), "{out}");
    let text = stdout(&h.run(&["doctor", "codex"]));
    assert!(text.contains("not trusted yet"), "{text}");
    let toml: String = out
        .lines()
        .filter(|l| l.starts_with("[hooks.state") || l.starts_with("trusted_hash"))
        .map(|l| format!("{l}\n"))
        .collect();
    h.put(&h.env.root.join("codex-home/config.toml"), &toml);
    let text = stdout(&h.run(&["doctor", "codex"]));
    assert!(text.contains("trusted in Codex's config.toml"), "{text}");
}

/// A harness's binary from the npm prefix in `TJ_TEST_HARNESS_DIR` (`.ci/run` fills it).
fn harness_bin(name: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("TJ_TEST_HARNESS_DIR")?;
    let bin = PathBuf::from(dir).join("node_modules/.bin").join(name);
    // Set but incomplete is a broken install: fail rather than skip (CI sets it).
    assert!(bin.exists(), "TJ_TEST_HARNESS_DIR is set but {} is missing", bin.display());
    Some(bin)
}

/// Codex itself reads the hooks.json tj wrote (its app server's `hooks/list`): the entry is
/// there, with no warning or error, and the hash tj prints for trusting it is the one Codex
/// computes.
#[test]
fn codex_reads_the_installed_hook_and_the_trust_hash_tj_prints() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    let Some(codex) = harness_bin("codex") else {
        println!("skipping: TJ_TEST_HARNESS_DIR is not set (.ci/run installs codex there)");
        return;
    };
    let h = Hosts::new();
    let file = h.user_file("codex");
    h.put(&file, &fixture("codex"));
    let out = h.ok(&["install", "codex"]);
    let hash =
        out.lines().find_map(|l| l.strip_prefix("trusted_hash = ")).unwrap().trim_matches('"');
    let mut child = Command::new(codex)
        .arg("app-server")
        .env_clear()
        .env("HOME", h.env.root.join("home"))
        .env("CODEX_HOME", h.env.root.join("codex-home"))
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .current_dir(h.env.work())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _guard = KillOnDrop(child.id() as i32);
    let mut input = child.stdin.take().unwrap();
    let work = h.env.work().display().to_string();
    for msg in [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "tj-test", "version": "1"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [work]}}),
    ] {
        writeln!(input, "{msg}").unwrap();
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let reply = loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let line = rx.recv_timeout(left).expect("codex app-server answered hooks/list");
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        if value["id"] == 2 {
            break value;
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    let data = &reply["result"]["data"][0];
    assert_eq!(data["errors"], serde_json::json!([]), "{reply}");
    assert_eq!(data["warnings"], serde_json::json!([]), "{reply}");
    let command = format!("{} hook codex", tj_path());
    let hooks = data["hooks"].as_array().unwrap();
    let ours = hooks.iter().find(|hk| hk["command"] == command.as_str()).expect("tj's hook listed");
    assert_eq!(ours["eventName"], "preToolUse", "{ours}");
    assert_eq!(ours["matcher"], "^Bash$");
    assert_eq!(ours["timeoutSec"], 10);
    assert_eq!(ours["currentHash"], hash, "the hash tj prints is Codex's");
    assert_eq!(ours["key"], format!("{}:pre_tool_use:1:0", file.display()));
    assert!(hooks.len() >= 3, "the fixture's own hooks are read too: {reply}");
}

#[test]
fn a_project_install_never_writes_outside_the_project_through_a_link() {
    // A repository may hold `.claude/settings.local.json` as a link to the user's own
    // settings, or `.opencode/plugins` as a link to a directory outside it: a project-scope
    // install must not follow either out of the project.
    let h = Hosts::new();
    let work = h.env.work();
    let outside = h.env.write("elsewhere/settings.json", "{\"model\": \"x\"}\n");
    std::fs::create_dir_all(work.join(".claude")).unwrap();
    std::os::unix::fs::symlink(&outside, work.join(".claude/settings.local.json")).unwrap();
    std::fs::create_dir_all(work.join(".opencode")).unwrap();
    std::os::unix::fs::symlink(outside.parent().unwrap(), work.join(".opencode/plugins")).unwrap();
    for host in ["claude-code", "opencode"] {
        let out = h.run(&["install", host, "--project"]);
        assert!(!out.status.success(), "{host}: {}{}", stdout(&out), stderr(&out));
        assert!(stderr(&out).contains("outside the project"), "{host}: {}", stderr(&out));
    }
    #[allow(clippy::disallowed_methods)]
    let text = std::fs::read_to_string(&outside).unwrap();
    assert_eq!(text, "{\"model\": \"x\"}\n");
    let names: Vec<_> = std::fs::read_dir(outside.parent().unwrap()).unwrap().collect();
    assert_eq!(names.len(), 1, "no backup, no plugin written outside the project");
}

#[test]
fn doctor_gives_up_on_a_hook_that_leaves_its_output_open() {
    // The wired program exits but leaves a child holding its stdout: doctor must not wait
    // for that output to end, nor read without bound.
    let h = Hosts::new();
    let fake = h.env.root.join("bin/tj");
    std::fs::create_dir_all(fake.parent().unwrap()).unwrap();
    #[allow(clippy::disallowed_methods)]
    std::fs::write(&fake, "#!/bin/sh\nsleep 60 &\necho '{}'\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let command = format!("{} hook claude-code", fake.display());
    let settings = serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "Bash",
        "hooks": [{"type": "command", "command": command}]}]}});
    h.put(&h.user_file("claude-code"), &settings.to_string());
    let start = std::time::Instant::now();
    let out =
        run_within(h.cmd(&["doctor", "claude-code"]), b"", std::time::Duration::from_secs(40));
    assert!(start.elapsed() < std::time::Duration::from_secs(25), "{:?}", start.elapsed());
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).len() < 100_000, "doctor printed {} bytes", stdout(&out).len());
}
