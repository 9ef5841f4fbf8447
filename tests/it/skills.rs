//! `tj skills rank` through the binary, on catalogs laid out as Claude Code lays them.

use crate::util::{TestEnv, stderr, stdout};

fn skill(env: &TestEnv, dir: &str, name: &str, description: &str) {
    env.write(
        &format!("{dir}/{name}/SKILL.md"),
        &format!("---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\nBody.\n"),
    );
}

fn catalog(env: &TestEnv) {
    let user = "home/.claude/skills";
    skill(env, user, "pdf", "Extract text and tables from PDF files, merge documents");
    skill(env, user, "rust-testing", "Run Rust tests with cargo test and nextest");
    skill(env, user, "docker", "Build and debug Docker images");
    skill(env, "work/.claude/skills", "release", "Tag a release and publish the crate");
}

/// The kept names, in order, from the text output.
fn kept(text: &str) -> Vec<String> {
    text.lines().map(|l| l.split_whitespace().next().unwrap().to_owned()).collect()
}

#[test]
fn ranks_the_user_and_project_catalogs_and_keeps_their_order() {
    let env = TestEnv::new();
    catalog(&env);
    let out = env.run(
        &[
            "skills",
            "rank",
            "--task",
            "publish the crate after cargo test",
            "--max",
            "2",
            "--min",
            "0",
        ],
        b"",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    // User skills first, then the project's: the catalog order, not the score order.
    assert_eq!(kept(&stdout(&out)), ["rust-testing", "release"], "{}", stdout(&out));

    // At least --min, filled in catalog order.
    let out = env.run(&["skills", "rank", "--task", "zzz", "--min", "2"], b"");
    assert_eq!(kept(&stdout(&out)), ["docker", "pdf"], "{}", stdout(&out));

    // The same answer twice, byte for byte; JSON carries names, scores and paths.
    let args = ["skills", "rank", "--task", "merge PDF documents", "--format", "json"];
    let a = env.run(&args, b"");
    assert_eq!(a.stdout, env.run(&args, b"").stdout);
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    assert_eq!(v["catalog"], 4);
    let first = &v["kept"][0];
    assert_eq!(first["name"], "docker");
    let pdf = v["kept"].as_array().unwrap().iter().find(|k| k["name"] == "pdf").unwrap();
    assert!(pdf["score"].as_u64().unwrap() > 0);
    assert!(pdf["path"].as_str().unwrap().ends_with("pdf/SKILL.md"));
}

#[test]
fn explicit_directories_bad_files_and_links() {
    let env = TestEnv::new();
    catalog(&env);
    env.write("cat/plain/SKILL.md", "no front matter at all\n");
    env.write("cat/group/deep/SKILL.md", "---\nname: deep\n---\n");
    env.write("cat/group/deep/too/SKILL.md", "---\nname: too-deep\n---\n");
    std::os::unix::fs::symlink(env.root.join("home/.claude/skills"), env.root.join("cat/link"))
        .unwrap();
    let dir = env.root.join("cat");
    let out = env.run(&["skills", "rank", "--task", "docker", dir.to_str().unwrap()], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    // Sorted by path, two levels down; the name falls back to the directory's; the link to
    // another catalog is not followed.
    assert_eq!(kept(&stdout(&out)), ["deep", "plain"], "{}", stdout(&out));

    let missing = env.root.join("nope");
    let out = env.run(&["skills", "rank", "--task", "x", missing.to_str().unwrap()], b"");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("is not a directory of skills"), "{}", stderr(&out));

    let empty = TestEnv::new();
    let out = empty.run(&["skills", "rank", "--task", "x"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("no skills found"), "{}", stdout(&out));
}
