use std::ffi::OsString;
use std::path::Path;

use super::*;

const TJ: &str = "/opt/tj/bin/tj";

/// Writes `text` to `rel` under `dir`, making its directories.
fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    #[allow(clippy::disallowed_methods)]
    std::fs::write(path, text).unwrap();
}

/// An environment whose user rules live in `config` (if any), working in `cwd`.
fn env_in(config: Option<&Path>, cwd: Option<&Path>) -> Env {
    let vars = config
        .map(|c| (OsString::from(crate::env::TJ_CONFIG_DIR), c.as_os_str().to_owned()))
        .into_iter();
    Env::from_vars(vars, cwd.map(Path::to_path_buf))
}

fn decide(
    line: &str,
    env: &Env,
    host: Option<Host>,
    exclude: &[String],
) -> Result<Rewrite, Ineligible> {
    rewrite(line, &Context { env, tj: Path::new(TJ), host, exclude })
}

fn plain(line: &str) -> Result<String, String> {
    let env = env_in(None, None);
    decide(line, &env, None, &[]).map(|r| r.line).map_err(|e| e.0)
}

#[test]
fn the_insert_goes_before_the_command_word_and_nothing_else_changes() {
    let p = format!("{TJ} run --agent -- ");
    assert_eq!(plain("cargo test"), Ok(format!("{p}cargo test")));
    assert_eq!(plain("  cargo test  "), Ok(format!("  {p}cargo test  ")));
    assert_eq!(plain("FOO='x y' cargo test"), Ok(format!("FOO='x y' {p}cargo test")));
    assert_eq!(
        plain("cd 'a b' && \\\n timeout -s INT 1.5m nice -n -3 time -p cargo test 2>&1"),
        Ok(format!("cd 'a b' && \\\n timeout -s INT 1.5m nice -n -3 time -p {p}cargo test 2>&1"))
    );
    assert_eq!(plain("env A=1 B='2 3' pytest"), Ok(format!("env A=1 B='2 3' {p}pytest")));
}

#[test]
fn the_host_is_passed_on_and_an_unusual_tj_path_is_quoted() {
    let env = env_in(None, None);
    let r = decide("cargo test", &env, Some(Host::ClaudeCode), &[]).unwrap();
    assert_eq!(r.line, format!("{TJ} run --agent --host claude-code -- cargo test"));
    let odd = Path::new("/home/o'neil/my bin/tj");
    let ctx = Context { env: &env, tj: odd, host: None, exclude: &[] };
    assert_eq!(
        rewrite("cargo test", &ctx).unwrap().line,
        r"'/home/o'\''neil/my bin/tj' run --agent -- cargo test"
    );
    let relative = Context { env: &env, tj: Path::new("tj"), host: None, exclude: &[] };
    assert!(rewrite("cargo test", &relative).unwrap_err().0.contains("not absolute"));
}

#[test]
fn segments_are_the_simple_commands_of_the_original_line() {
    let env = env_in(None, None);
    let r = decide(
        "cd \"a b\" && cd x && FOO='x y' timeout 5 cargo test --release 2>&1 # go",
        &env,
        None,
        &[],
    )
    .unwrap();
    let texts: Vec<&str> = r.segments.iter().map(|s| s.text.as_str()).collect();
    assert_eq!(texts, ["cd \"a b\"", "cd x", "FOO='x y' timeout 5 cargo test --release 2>&1"]);
    assert_eq!(r.segments[0].words, ["cd", "a b"]);
    assert_eq!(r.segments[2].words, ["timeout", "5", "cargo", "test", "--release"]);
}

#[test]
fn the_user_excludes_commands_by_word_prefix() {
    let env = env_in(None, None);
    let exclude = |list: &[&str], line: &str| {
        let list: Vec<String> = list.iter().map(|s| (*s).to_owned()).collect();
        decide(line, &env, None, &list).map(|_| ()).map_err(|e| e.0)
    };
    assert!(exclude(&["cargo"], "cargo test").unwrap_err().contains("rewrite.exclude (`cargo`)"));
    assert!(exclude(&["cargo test --release"], "cargo test -q --release").is_err());
    assert!(exclude(&["cargo test --release"], "cargo test").is_ok());
    assert!(exclude(&["pytest"], "python -m pytest -x").is_err(), "matched on the identity too");
    assert!(exclude(&["jest"], "./node_modules/.bin/jest").is_err());
    assert!(exclude(&["npm run test"], "npm test").is_ok());
}

#[test]
fn project_rules_cannot_widen_what_is_rewritten_but_user_rules_can() {
    let home = crate::testing::TempDir::created("rewrite-layers");
    let repo = home.0.join("repo");
    write(&home, "repo/.git/HEAD", "");
    // A hostile repository calls `cat` and a tool of its own tests.
    let rule = |id: &str, program: &str| {
        format!(r#"{{"id":"{id}","family":"tests","match":{{"argv0":["{program}"]}}}}"#)
    };
    write(&home, "repo/.tokenjuice/rules/cat.json", &rule("tests/cat", "cat"));
    write(&home, "repo/.tokenjuice/rules/mine.json", &rule("tests/mine", "mytool"));
    let env = env_in(Some(&home.0.join("config")), Some(&repo));
    assert!(decide("cat secrets", &env, None, &[]).is_err());
    assert!(decide("mytool", &env, None, &[]).unwrap_err().0.contains("no rule"));

    write(&home, "config/rules/mine.json", &rule("tests/mine", "mytool"));
    write(
        &home,
        "config/rules/cargo.json",
        r#"{"id":"tests/cargo-test","family":"tests","wrap":false,"match":{"argv0":["cargo"],"subcommands":["test"]}}"#,
    );
    let env = env_in(Some(&home.0.join("config")), Some(&repo));
    assert!(decide("mytool --check", &env, None, &[]).is_ok(), "the user's own rule admits");
    let why = decide("cargo test", &env, None, &[]).unwrap_err().0;
    assert!(why.contains("\"wrap\": false"), "{why}");
}

#[test]
fn rules_decide_by_family_and_wrap() {
    assert!(plain("kubectl apply -f k.yaml").is_ok(), "devops, marked wrap");
    assert!(plain("docker build .").is_ok());
    assert!(plain("terraform plan").is_ok());
    assert!(plain("kubectl get pods").unwrap_err().contains("family `devops`"));
    assert!(plain("prettier src/a.ts").unwrap_err().contains("\"wrap\": false"));
    assert!(plain("frobnicate --all").unwrap_err().contains("no rule"));
    assert!(plain("git status").unwrap_err().contains("family `git`"));
}

#[test]
fn an_already_wrapped_line_is_left_alone() {
    let once = plain("cargo test").unwrap();
    assert!(plain(&once).unwrap_err().contains("already runs through tj"));
    assert!(plain("tj run -- cargo test").is_err());
    assert!(plain("./target/debug/tj run --agent -- cargo test").is_err());
}

#[test]
fn every_rewrite_differs_from_its_line_only_by_the_insert() {
    let env = env_in(None, None);
    let insert = format!("{TJ} run --agent -- ");
    for line in ["cargo test", "a=1 cargo  test\t2>/dev/null", "cd x &&\n  make -j4 # build\n"] {
        let r = decide(line, &env, None, &[]).unwrap();
        let at = r.line.find(&insert).unwrap();
        assert_eq!(format!("{}{}", &r.line[..at], &r.line[at + insert.len()..]), line);
    }
}

#[test]
fn long_lines_are_refused_and_the_lexer_is_linear() {
    let env = env_in(None, None);
    let long = format!("cargo test {}", "x ".repeat(MAX_LINE_BYTES));
    assert!(decide(&long, &env, None, &[]).unwrap_err().0.contains("longer than"));
    let at_limit = format!("cargo test {}", "'a b' ".repeat((MAX_LINE_BYTES - 11) / 6));
    assert!(decide(&at_limit, &env, None, &[]).is_ok());
    // The lexer itself has no cap: it stays linear on a megabyte of hostile text.
    for line in [
        format!("cargo test {}", "'a b' ".repeat(170_000)),
        format!("cargo test {}", "${".repeat(500_000)),
        format!("cargo test -- {}", "a\\\n".repeat(330_000)),
        format!("x {}", "\"a\\\"b\" ".repeat(170_000)),
    ] {
        let start = std::time::Instant::now();
        let _ = lex::lex(&line);
        // Quadratic work on a megabyte would take minutes; linear takes milliseconds.
        assert!(start.elapsed() < std::time::Duration::from_secs(5), "{:?}", start.elapsed());
    }
}
