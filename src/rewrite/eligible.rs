//! What the rewrite refuses whatever the rules say, and the word-prefix matcher that both
//! these lists and the user's `rewrite.exclude` use.
//!
//! The allowlist itself is not here: a command is admitted by the rule it selects (see
//! `admitted_by_rules`). These lists only take away: programs that run other
//! commands out of tj's sight or change the shell, commands whose output is data an agent
//! reads or parses, and servers, watchers and prompts that would never finish.

/// Command words that are never rewritten, and why. Matched on the command word's last
/// path component.
const BLOCKED: &[(&[&str], &str)] = &[
    (&["sudo", "doas", "su", "pkexec", "run0"], "runs the command as another user"),
    (
        &["eval", "exec", "source", ".", "command", "builtin", "noglob", "nocorrect"],
        "is a shell builtin: tj cannot run it as a program",
    ),
    (&["xargs", "parallel"], "runs commands built from its input"),
    (
        &["sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "busybox"],
        "is a shell: the line inside is not looked at",
    ),
    (
        &["nohup", "setsid", "stdbuf", "ionice", "chroot", "unbuffer", "script", "expect"],
        "is a wrapper the rewrite does not see through",
    ),
    (&["xvfb-run", "env", "timeout", "nice", "time"], "is a wrapper used in a form not supported"),
    (
        &["watch", "nodemon", "entr", "less", "more", "top", "htop", "vi", "vim", "nano"],
        "is interactive or never ends",
    ),
];

/// Commands whose output is data the agent is about to read or parse, never rewritten
/// whatever the rules say (each is a data family anyway; this keeps it so if a rule file is
/// changed). Word prefixes, see [`prefix_matches`].
const DATA: &[&str] = &[
    "cat",
    "bat",
    "batcat",
    "sed",
    "awk",
    "gawk",
    "head",
    "tail",
    "jq",
    "yq",
    "gojq",
    "jaq",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ack",
    "ls",
    "find",
    "fd",
    "tree",
    "curl",
    "wget",
    "echo",
    "printf",
    "base64",
    "xxd",
    "od",
    "hexdump",
    "sort",
    "uniq",
    "cut",
    "tr",
    "wc",
    "diff",
    "cmp",
    "comm",
    "strings",
    "stat",
    "readlink",
    "realpath",
    "pwd",
    "printenv",
    "column",
    "nl",
    "tac",
    "git diff",
    "git show",
    "git log",
    "git blame",
    "git cat-file",
    "git format-patch",
    "git grep",
    "git ls-files",
    "git ls-tree",
    "git rev-parse",
];

/// A long-running or interactive command shape.
struct Never {
    /// A word prefix ([`prefix_matches`]).
    pattern: &'static str,
    /// Any of these options makes it finish without asking (`docker compose up -d`).
    unless: &'static [&'static str],
    /// Why, for a person.
    why: &'static str,
}

const SERVER: &str = "runs a server that never ends";
const PROMPTS: &str = "asks for confirmation on a terminal";
const FOLLOWS: &str = "follows its output forever";
const INTERACTIVE: &str = "is interactive";

/// Servers, watchers and prompts. Script and task names (`npm run dev`, `make serve`) are
/// caught by [`long_running_task`], watch flags by [`watch_flag`].
const NEVER: &[Never] = &[
    Never { pattern: "cargo watch", unless: &[], why: "watches files and never ends" },
    Never {
        pattern: "cargo run",
        unless: &[],
        why: "runs your program: its output is the program's",
    },
    Never {
        pattern: "bazel run",
        unless: &[],
        why: "runs your program: its output is the program's",
    },
    Never {
        pattern: "bazelisk run",
        unless: &[],
        why: "runs your program: its output is the program's",
    },
    Never { pattern: "bazel query", unless: &[], why: "prints data to be read" },
    Never { pattern: "bazel cquery", unless: &[], why: "prints data to be read" },
    Never { pattern: "bazel aquery", unless: &[], why: "prints data to be read" },
    Never { pattern: "webpack serve", unless: &[], why: SERVER },
    Never { pattern: "webpack server", unless: &[], why: SERVER },
    Never { pattern: "webpack s", unless: &[], why: SERVER },
    Never { pattern: "webpack-cli serve", unless: &[], why: SERVER },
    Never { pattern: "next dev", unless: &[], why: SERVER },
    Never { pattern: "next start", unless: &[], why: SERVER },
    Never { pattern: "nuxt dev", unless: &[], why: SERVER },
    Never { pattern: "nuxi dev", unless: &[], why: SERVER },
    Never { pattern: "ng serve", unless: &[], why: SERVER },
    Never {
        pattern: "ng test",
        unless: &["--watch=false", "--no-watch"],
        why: "watches files unless told `--no-watch`",
    },
    Never {
        pattern: "karma start",
        unless: &["--single-run"],
        why: "watches files unless told `--single-run`",
    },
    Never {
        pattern: "docker compose up",
        unless: &["-d", "--detach"],
        why: "stays attached to the services (no `-d`)",
    },
    Never {
        pattern: "docker-compose up",
        unless: &["-d", "--detach"],
        why: "stays attached to the services (no `-d`)",
    },
    Never { pattern: "docker compose run", unless: &[], why: INTERACTIVE },
    Never { pattern: "docker compose exec", unless: &[], why: INTERACTIVE },
    Never { pattern: "docker compose watch", unless: &[], why: "watches files and never ends" },
    Never { pattern: "docker run", unless: &[], why: INTERACTIVE },
    Never { pattern: "docker exec", unless: &[], why: INTERACTIVE },
    Never { pattern: "docker attach", unless: &[], why: INTERACTIVE },
    Never { pattern: "kubectl logs -f", unless: &[], why: FOLLOWS },
    Never { pattern: "kubectl logs --follow", unless: &[], why: FOLLOWS },
    Never { pattern: "kubectl port-forward", unless: &[], why: SERVER },
    Never { pattern: "kubectl proxy", unless: &[], why: SERVER },
    Never { pattern: "kubectl exec", unless: &[], why: INTERACTIVE },
    Never { pattern: "kubectl attach", unless: &[], why: INTERACTIVE },
    Never { pattern: "kubectl edit", unless: &[], why: "opens an editor" },
    Never {
        pattern: "terraform apply",
        unless: &["-auto-approve", "--auto-approve"],
        why: PROMPTS,
    },
    Never {
        pattern: "terraform destroy",
        unless: &["-auto-approve", "--auto-approve"],
        why: PROMPTS,
    },
    Never { pattern: "terraform console", unless: &[], why: INTERACTIVE },
    Never { pattern: "tofu apply", unless: &["-auto-approve", "--auto-approve"], why: PROMPTS },
    Never { pattern: "tofu destroy", unless: &["-auto-approve", "--auto-approve"], why: PROMPTS },
    Never { pattern: "pulumi up", unless: &["--yes", "-y"], why: PROMPTS },
    Never { pattern: "pulumi update", unless: &["--yes", "-y"], why: PROMPTS },
    Never { pattern: "pulumi destroy", unless: &["--yes", "-y"], why: PROMPTS },
    Never { pattern: "pulumi down", unless: &["--yes", "-y"], why: PROMPTS },
    Never { pattern: "pulumi refresh", unless: &["--yes", "-y"], why: PROMPTS },
    Never { pattern: "pulumi watch", unless: &[], why: "watches files and never ends" },
    Never { pattern: "npm init", unless: &[], why: INTERACTIVE },
    Never { pattern: "npm create", unless: &[], why: INTERACTIVE },
    Never { pattern: "npm exec", unless: &[], why: "runs another program" },
    Never { pattern: "npm login", unless: &[], why: INTERACTIVE },
    Never { pattern: "npm publish", unless: &[], why: PROMPTS },
    Never { pattern: "yarn init", unless: &[], why: INTERACTIVE },
    Never { pattern: "yarn create", unless: &[], why: INTERACTIVE },
    Never { pattern: "pnpm init", unless: &[], why: INTERACTIVE },
    Never { pattern: "pnpm create", unless: &[], why: INTERACTIVE },
    Never { pattern: "bun init", unless: &[], why: INTERACTIVE },
    Never { pattern: "bun create", unless: &[], why: INTERACTIVE },
    Never { pattern: "gh run watch", unless: &[], why: FOLLOWS },
    Never { pattern: "tail -f", unless: &[], why: FOLLOWS },
    Never { pattern: "tail -F", unless: &[], why: FOLLOWS },
    Never { pattern: "tail --follow", unless: &[], why: FOLLOWS },
];

/// Script and task names that start servers and watchers: `npm run dev`, `yarn start`,
/// `make serve`, `turbo run dev`, `npm run test:watch`.
const SERVER_TASKS: &[&str] = &["dev", "start", "serve", "server", "watch", "preview", "storybook"];

/// Package managers: their first argument is a subcommand (`install`, `test`), or a
/// script name (`yarn dev`), and the one after `run` is a script name.
const PACKAGE_MANAGERS: &[&str] = &["npm", "pnpm", "yarn", "bun", "deno"];

/// Task runners: every argument that is not an option names a target or task.
const TASK_RUNNERS: &[&str] =
    &["turbo", "nx", "lerna", "make", "gmake", "just", "rake", "mage", "task"];

/// Programs for which `-w` means "watch" (for jest it means workers, so it is not here).
const W_IS_WATCH: &[&str] = &[
    "vitest", "mocha", "tsc", "vue-tsc", "tsup", "rollup", "webpack", "ava", "tap", "ruff",
    "babel", "sass", "kubectl", "oc",
];

/// Options that, for these programs, watch, loop or stop for a person: `pytest -f`
/// (`--looponfail`, pytest-xdist) reruns on every change, `--pdb`/`--trace` open the
/// debugger, `gradle -t` (`--continuous`) rebuilds on every change, `playwright test
/// --debug` waits in the inspector.
const LOOPING_OPTIONS: &[(&[&str], &[&str], &str)] = &[
    (
        &["pytest", "py.test"],
        &["-f", "--looponfail", "--pdb", "--trace"],
        "reruns on every change or stops in the debugger",
    ),
    (&["gradle", "gradlew"], &["-t", "--continuous"], "rebuilds on every change and never ends"),
    (&["playwright"], &["--debug"], "waits in the inspector for a person"),
];

/// Why `word` (a command word, quotes removed) is never rewritten, if it is one of those.
pub(super) fn blocked(word: &str) -> Option<String> {
    let name = basename(word);
    BLOCKED
        .iter()
        .find(|(names, _)| names.contains(&name))
        .map(|(_, why)| format!("`{name}` {why}"))
}

/// Why the command (its words from the command word on, as typed, and as the rules see it)
/// is never rewritten, if so.
pub(super) fn refused(typed: &[String], identity: &[String]) -> Option<String> {
    let both = [typed, identity];
    for pattern in DATA {
        if both.iter().any(|argv| prefix_matches(pattern, argv)) {
            return Some(format!("`{pattern}` prints data the agent reads"));
        }
    }
    for never in NEVER {
        let hit = both.iter().any(|argv| {
            prefix_matches(never.pattern, argv) && !argv.iter().any(|a| has_option(a, never.unless))
        });
        if hit {
            return Some(format!("`{}` {}", never.pattern, never.why));
        }
    }
    if identity.first().is_some_and(|p| p == "vite")
        && !identity.iter().skip(1).any(|a| a == "build")
    {
        return Some("`vite` without `build` runs a server that never ends".to_owned());
    }
    for argv in both {
        if let Some(task) = long_running_task(argv) {
            return Some(format!("`{task}` looks like a server or watcher that never ends"));
        }
        if let Some(flag) = watch_flag(argv) {
            return Some(format!("`{flag}` watches and never ends"));
        }
        if let Some((flag, why)) = looping_option(argv) {
            return Some(format!("`{flag}` {why}"));
        }
        if let Some(flag) = data_flag(argv) {
            return Some(format!("`{flag}` asks for output to be parsed or read as data"));
        }
    }
    None
}

/// Whether `arg` is one of `options`, or one of them with `=value`.
fn has_option(arg: &str, options: &[&str]) -> bool {
    options.iter().any(|o| arg == *o || arg.strip_prefix(o).is_some_and(|r| r.starts_with('=')))
}

/// A script or task name that names a server or watcher (any `:`- or `-`-separated part of
/// it: `dev`, `dev:api`, `test:watch`): a package manager's script (`npm run dev`, `yarn
/// start`) or any target of a task runner (`make serve`, `turbo run dev`).
fn long_running_task(argv: &[String]) -> Option<&str> {
    let (program, args) = argv.split_first()?;
    let program = basename(program);
    let mut names = args.iter().take_while(|a| *a != "--").filter(|a| !a.starts_with('-'));
    let is_server =
        |name: &&String| name.split([':', '-']).any(|part| SERVER_TASKS.contains(&part));
    if PACKAGE_MANAGERS.contains(&program) {
        // The first word (`yarn dev`), and the word after `run` wherever it is (options
        // with values such as `--prefix web` come before it).
        let names: Vec<&String> = names.collect();
        let after_run = names
            .windows(2)
            .find(|w| matches!(w[0].as_str(), "run" | "run-script" | "task"))
            .map(|w| w[1]);
        return names
            .first()
            .copied()
            .into_iter()
            .chain(after_run)
            .find(is_server)
            .map(String::as_str);
    }
    if TASK_RUNNERS.contains(&program) {
        return names.find(is_server).map(String::as_str);
    }
    None
}

/// A watch option: `--watch`, `--watchAll`, `--watch-all` (not `=false`), `-w` for the
/// programs where it means watch, and `--ui`/`--serve`, which start a server.
fn watch_flag(argv: &[String]) -> Option<&str> {
    let (program, args) = argv.split_first()?;
    let w_is_watch = W_IS_WATCH.contains(&basename(program));
    // After `--`, a package manager's arguments go to a script tj cannot see: `npm test --
    // -w` may be `vitest -w`, so `-w` there counts as watch.
    let script_args = PACKAGE_MANAGERS.contains(&basename(program)) || basename(program) == "npx";
    let mut after_dashes = false;
    args.iter()
        .find(|a| {
            after_dashes |= *a == "--";
            let w_is_watch = w_is_watch || (script_args && after_dashes);
            let (name, value) = a.split_once('=').unwrap_or((a, ""));
            let off = matches!(value, "false" | "0" | "no");
            (matches!(name, "--watch" | "--watchAll" | "--watch-all" | "--ui" | "--serve") && !off)
                || (w_is_watch && *a == "-w")
        })
        .map(String::as_str)
}

/// An option of [`LOOPING_OPTIONS`] for the program of `argv`, before any `--`.
fn looping_option(argv: &[String]) -> Option<(&str, &'static str)> {
    let (program, args) = argv.split_first()?;
    let (_, options, why) =
        LOOPING_OPTIONS.iter().find(|(programs, _, _)| programs.contains(&basename(program)))?;
    args.iter()
        .take_while(|a| *a != "--")
        .find(|a| has_option(a, options))
        .map(|a| (a.as_str(), *why))
}

/// An option asking for machine-readable or data output (`--json`, `--format=json`,
/// `-o yaml`, `--message-format json`, `--diff`, `--stdout`, a lone `-`).
fn data_flag(argv: &[String]) -> Option<&str> {
    const FORMATS: &[&str] = &[
        "json",
        "ndjson",
        "jsonl",
        "yaml",
        "yml",
        "xml",
        "csv",
        "tsv",
        "sarif",
        "checkstyle",
        "junit",
        "xunit",
        "codeclimate",
        "gitlab",
    ];
    const FORMAT_OPTIONS: &[&str] = &[
        "--format",
        "--output",
        "-o",
        "--reporter",
        "--message-format",
        "--out",
        "--emit",
        "--output-format",
        "--out-format",
        "--error-format",
        "-f",
        "-R",
    ];
    let args = argv.get(1..)?;
    for (i, arg) in args.iter().enumerate() {
        // `docker build --output type=tar,dest=-` writes an archive to stdout.
        if matches!(arg.as_str(), "--json" | "-json" | "--porcelain" | "--diff" | "--stdout" | "-")
            || arg.starts_with("--json=")
            || arg.split(',').any(|part| part == "dest=-")
        {
            return Some(arg);
        }
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (arg.as_str(), None),
        };
        if FORMAT_OPTIONS.contains(&name) {
            let value = inline.or_else(|| args.get(i + 1).map(String::as_str)).unwrap_or("");
            let value = value.to_ascii_lowercase();
            // `-f` and `-R` also name files and other things (`kubectl apply -f
            // yaml/x.yaml`): for them only a format name itself counts.
            let named = if matches!(name, "-f" | "-R") {
                FORMATS.contains(&value.as_str())
            } else {
                FORMATS.iter().any(|f| value.starts_with(f))
            };
            if named || value == "stdout" {
                return Some(arg);
            }
        }
    }
    None
}

/// Whether `argv` starts with the words of `pattern`.
///
/// The first pattern word is compared with the program as written or with its last path
/// component (`jest` matches `./node_modules/.bin/jest`). Each further pattern word must be
/// the next word of the command; options (words starting with `-`) that are not that word
/// are skipped on the way. So `npm run dev` matches `npm --silent run dev -- --port 3`
/// but not `npm run develop` nor `npm run build dev`. An empty pattern matches nothing.
pub fn prefix_matches(pattern: &str, argv: &[String]) -> bool {
    let mut pattern = pattern.split_whitespace();
    let Some(first) = pattern.next() else { return false };
    let Some((program, args)) = argv.split_first() else { return false };
    if first != program && (first.contains('/') || first != basename(program)) {
        return false;
    }
    let mut args = args.iter();
    'words: for want in pattern {
        for arg in args.by_ref() {
            if arg == want {
                continue 'words;
            }
            if !arg.starts_with('-') {
                return false;
            }
        }
        return false;
    }
    true
}

/// The last path component of a command word.
pub(super) fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn prefixes_skip_options_and_compare_the_program_by_name() {
        assert!(prefix_matches("npm run dev", &argv("npm --silent run dev -- --port 3")));
        assert!(prefix_matches("jest", &argv("./node_modules/.bin/jest --ci")));
        assert!(prefix_matches("cargo test --release", &argv("cargo test -q --release")));
        assert!(!prefix_matches("npm run dev", &argv("npm run develop")));
        assert!(!prefix_matches("npm run dev", &argv("npm run build dev")));
        assert!(!prefix_matches("./x", &argv("/bin/x")));
        assert!(!prefix_matches("", &argv("cargo test")));
        assert!(!prefix_matches("  ", &argv("cargo test")));
    }

    #[test]
    fn servers_watchers_prompts_and_data_are_refused() {
        for line in [
            "npm run dev",
            "yarn start",
            "make serve",
            "npm run test:watch",
            "vitest --watch",
            "tsc -w",
            "jest --watchAll",
            "docker compose up --build",
            "terraform apply",
            "pulumi up",
            "vite",
            "cargo build --message-format=json",
            "go test -json ./...",
            "kubectl apply -f x.yaml -o yaml",
            "black --diff .",
            "git diff",
            "pnpm run dev:api",
            "turbo run dev",
        ] {
            assert!(refused(&argv(line), &argv(line)).is_some(), "{line}");
        }
        for line in [
            "docker compose up -d",
            "terraform apply -auto-approve",
            "pulumi up --yes",
            "vitest --watch=false",
            "jest -w 4",
            "vite build",
            "make build",
            "npm run build",
            "npm install webpack-dev-server",
            "yarn add -D storybook",
            "cargo test",
        ] {
            assert_eq!(refused(&argv(line), &argv(line)), None, "{line}");
        }
    }
}
