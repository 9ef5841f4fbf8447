//! The optional configuration file, `<config dir>/config.json` (DESIGN.md "Configuration"),
//! merged with `TJ_*` variables (which win) into the effective settings, each with where it
//! came from. A malformed file is reported once and ignored, never fatal.

#[cfg(test)]
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::env::{self, Env};
use crate::fsx::{ReadError, read_regular};
use crate::reduce::Limits;
use crate::shell::ShellHook;

/// A config file larger than this is not read: every key together is a few hundred bytes.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Where a setting's value came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// The built-in default.
    Default,
    /// The config file.
    File(PathBuf),
    /// An environment variable.
    Env(&'static str),
}

/// The effective configuration.
#[derive(Clone, Debug)]
pub struct Config {
    /// Gate thresholds.
    pub limits: Limits,
    /// Where each limit came from: keepRatioMax, minSavingBytes, densityThreshold,
    /// dataBudget.
    pub sources: [Source; 4],
    /// `shellCommands`: the commands `tj init` wraps when neither `--commands` nor
    /// `TJ_COMMANDS` says (`None`: the built-in list).
    pub shell_commands: Option<Vec<String>>,
    /// `shellHook`: where `tj init`'s hook defines its functions (default: in agents' shells).
    pub shell_hook: ShellHook,
    /// `rewrite.exclude`: commands the adapters never rewrite (issue 11).
    pub rewrite_exclude: Vec<String>,
    /// `redact`: secrets in renditions are replaced by markers (default true; issue 14).
    pub redact: bool,
    /// The config file's path, whether or not it exists.
    pub path: Option<PathBuf>,
    /// Problems met (unreadable or malformed file, bad values), for one warning each.
    pub problems: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct File {
    shell_commands: Option<Vec<String>>,
    // A string, not the enum: a bad value is one problem, not a file that fails to parse.
    shell_hook: Option<String>,
    keep_ratio_max: Option<f64>,
    min_saving_bytes: Option<usize>,
    density_threshold: Option<f64>,
    data_budget: Option<usize>,
    // Any JSON: a bad `rewrite` value is one problem, not a file that fails to parse.
    rewrite: Option<serde_json::Value>,
    // Any JSON: a bad `redact` value is one problem, not a file that fails to parse.
    redact: Option<serde_json::Value>,
}

impl Config {
    /// Loads the file (if any) and applies the environment.
    pub fn load(env: &Env) -> Config {
        let path = env.config_dir().map(|d| d.join("config.json"));
        let mut config = Config {
            limits: Limits::default(),
            sources: [Source::Default, Source::Default, Source::Default, Source::Default],
            shell_commands: None,
            shell_hook: ShellHook::default(),
            rewrite_exclude: Vec::new(),
            redact: true,
            path: path.clone(),
            problems: Vec::new(),
        };
        if let Some(path) = path {
            config.read_file(&path);
        }
        config.apply_env(env);
        config
    }

    /// Reads and applies the file: a regular file only (a FIFO or device is never opened),
    /// capped at [`MAX_CONFIG_BYTES`] while reading. Problems never quote the file: a
    /// config file can come from a dotfiles repository, and a value may be a secret.
    fn read_file(&mut self, path: &Path) {
        let shown = crate::rules::printable_path(path);
        let text = match read_regular(path, true, MAX_CONFIG_BYTES) {
            Ok(bytes) => bytes,
            Err(ReadError::Io(err)) if err.kind() == std::io::ErrorKind::NotFound => return,
            Err(ReadError::Io(err)) => {
                self.problems
                    .push(format!("could not read config `{shown}`: {err}; using defaults"));
                return;
            }
            Err(ReadError::NotRegular(kind)) => {
                self.problems.push(format!(
                    "config `{shown}` is not a regular file ({kind}); using defaults"
                ));
                return;
            }
            Err(ReadError::TooLarge) => {
                self.problems.push(format!(
                    "config `{shown}` is larger than the {MAX_CONFIG_BYTES}-byte limit; using defaults"
                ));
                return;
            }
        };
        match serde_json::from_slice::<File>(&text) {
            Ok(file) => self.apply_file(&file, path),
            Err(err) => self.problems.push(format!(
                "could not parse config `{shown}`: {}; using defaults",
                crate::rules::describe_json_error(&err)
            )),
        }
    }

    fn apply_file(&mut self, file: &File, path: &Path) {
        self.shell_commands.clone_from(&file.shell_commands);
        if let Some(text) = &file.shell_hook {
            match ShellHook::parse(text) {
                Some(hook) => self.shell_hook = hook,
                None => self.problems.push(format!(
                    "shellHook must be \"auto\", \"always\" or \"never\", got {text:?}; using \"{}\"",
                    self.shell_hook.as_str()
                )),
            }
        }
        if let Some(v) = file.keep_ratio_max {
            self.set_ratio(v, Source::File(path.to_path_buf()), "keepRatioMax");
        }
        if let Some(v) = file.min_saving_bytes {
            self.limits.min_saving_bytes = v;
            self.sources[1] = Source::File(path.to_path_buf());
        }
        if let Some(v) = file.density_threshold {
            self.set_density(v, Source::File(path.to_path_buf()), "densityThreshold");
        }
        if let Some(v) = file.data_budget {
            self.limits.data_budget = v;
            self.sources[3] = Source::File(path.to_path_buf());
        }
        if let Some(rewrite) = &file.rewrite {
            self.set_rewrite(rewrite);
        }
        match &file.redact {
            None => {}
            Some(serde_json::Value::Bool(on)) => self.redact = *on,
            Some(_) => {
                self.problems.push("redact must be true or false; secrets are redacted".to_owned());
            }
        }
    }

    /// `"rewrite": {"exclude": ["npm run dev", "make"]}`: the commands the agent adapters
    /// never rewrite. Entries that are not non-blank strings are skipped with one problem,
    /// the others still apply; values are never quoted (see [`Config::read_file`]).
    fn set_rewrite(&mut self, rewrite: &serde_json::Value) {
        let Some(object) = rewrite.as_object() else {
            self.problems.push(
                "rewrite must be an object like {\"exclude\": [\"npm run dev\"]}; ignored"
                    .to_owned(),
            );
            return;
        };
        let Some(exclude) = object.get("exclude") else { return };
        let Some(items) = exclude.as_array() else {
            self.problems.push("rewrite.exclude must be a list of strings; ignored".to_owned());
            return;
        };
        let mut skipped = 0;
        for item in items {
            match item.as_str() {
                Some(text) if !text.trim().is_empty() => self.rewrite_exclude.push(text.to_owned()),
                _ => skipped += 1,
            }
        }
        if skipped > 0 {
            self.problems.push(format!(
                "rewrite.exclude: {skipped} of {} entries are not non-blank strings; they are skipped",
                items.len()
            ));
        }
    }

    fn apply_env(&mut self, env: &Env) {
        if let Some(text) = &env.keep_ratio_max {
            match text.parse::<f64>() {
                Ok(v) => {
                    self.set_ratio(v, Source::Env(env::TJ_KEEP_RATIO_MAX), env::TJ_KEEP_RATIO_MAX);
                }
                Err(_) => self.bad(env::TJ_KEEP_RATIO_MAX, text),
            }
        }
        if let Some(text) = &env.min_saving_bytes {
            match text.parse::<usize>() {
                Ok(v) => {
                    self.limits.min_saving_bytes = v;
                    self.sources[1] = Source::Env(env::TJ_MIN_SAVING_BYTES);
                }
                Err(_) => self.bad(env::TJ_MIN_SAVING_BYTES, text),
            }
        }
        if let Some(text) = &env.density_threshold {
            match text.parse::<f64>() {
                Ok(v) => self.set_density(
                    v,
                    Source::Env(env::TJ_DENSITY_THRESHOLD),
                    env::TJ_DENSITY_THRESHOLD,
                ),
                Err(_) => self.bad(env::TJ_DENSITY_THRESHOLD, text),
            }
        }
        if let Some(text) = &env.data_budget {
            match text.parse::<usize>() {
                Ok(v) => {
                    self.limits.data_budget = v;
                    self.sources[3] = Source::Env(env::TJ_DATA_BUDGET);
                }
                Err(_) => self.bad(env::TJ_DATA_BUDGET, text),
            }
        }
    }

    fn set_ratio(&mut self, v: f64, source: Source, name: &str) {
        // Above 1.0 would adopt renditions larger than the original: never worse is not
        // configurable.
        if v.is_finite() && v > 0.0 && v <= 1.0 {
            self.limits.keep_ratio_max = v;
            self.sources[0] = source;
        } else {
            self.problems.push(format!(
                "{name} must be in (0, 1], got {v}; using {}",
                self.limits.keep_ratio_max
            ));
        }
    }

    fn set_density(&mut self, v: f64, source: Source, name: &str) {
        if v.is_finite() && (0.0..=1.0).contains(&v) {
            self.limits.density_threshold = v;
            self.sources[2] = source;
        } else {
            self.problems.push(format!(
                "{name} must be in [0, 1], got {v}; using {}",
                self.limits.density_threshold
            ));
        }
    }

    fn bad(&mut self, name: &str, text: &str) {
        self.problems.push(format!("{name}={text:?} is not a number; ignored"));
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;

    fn env_with(pairs: &[(&str, &str)]) -> Env {
        Env::from_vars(pairs.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))), None)
    }

    #[test]
    fn env_overrides_defaults_and_bad_values_are_reported() {
        let dir = std::env::temp_dir().join(format!("tj-config-{}", std::process::id()));
        let d = dir.to_string_lossy().into_owned();
        let config = Config::load(&env_with(&[
            (env::TJ_CONFIG_DIR, &d),
            (env::TJ_KEEP_RATIO_MAX, "0.5"),
            (env::TJ_MIN_SAVING_BYTES, "lots"),
            (env::TJ_DENSITY_THRESHOLD, "7"),
            (env::TJ_DATA_BUDGET, "1200"),
        ]));
        assert!((config.limits.keep_ratio_max - 0.5).abs() < f64::EPSILON);
        assert_eq!(config.sources[0], Source::Env(env::TJ_KEEP_RATIO_MAX));
        assert_eq!(config.limits.min_saving_bytes, 500);
        assert_eq!(config.limits.data_budget, 1200);
        assert_eq!(config.sources[3], Source::Env(env::TJ_DATA_BUDGET));
        assert_eq!(config.problems.len(), 2);
    }

    #[test]
    fn shell_commands_come_from_the_file() {
        let dir = std::env::temp_dir().join(format!("tj-config-cmds-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        #[allow(clippy::disallowed_methods)]
        fs::write(dir.join("config.json"), r#"{"shellCommands": ["cargo", "just"]}"#).unwrap();
        let config = Config::load(&env_with(&[(env::TJ_CONFIG_DIR, &dir.to_string_lossy())]));
        assert_eq!(config.shell_commands, Some(vec!["cargo".to_owned(), "just".to_owned()]));
        assert!(config.problems.is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn shell_hook_comes_from_the_file_and_a_bad_value_is_reported() {
        let dir = std::env::temp_dir().join(format!("tj-config-hook-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let env = env_with(&[(env::TJ_CONFIG_DIR, &dir.to_string_lossy())]);
        assert_eq!(Config::load(&env).shell_hook, ShellHook::Auto);
        #[allow(clippy::disallowed_methods)]
        fs::write(dir.join("config.json"), r#"{"shellHook": "always", "minSavingBytes": 9}"#)
            .unwrap();
        let config = Config::load(&env);
        assert_eq!(config.shell_hook, ShellHook::Always);
        assert!(config.problems.is_empty(), "{:?}", config.problems);
        #[allow(clippy::disallowed_methods)]
        fs::write(dir.join("config.json"), r#"{"shellHook": "sometimes", "minSavingBytes": 9}"#)
            .unwrap();
        let config = Config::load(&env);
        assert_eq!(config.shell_hook, ShellHook::Auto);
        assert_eq!(config.limits.min_saving_bytes, 9, "the rest of the file still applies");
        assert_eq!(config.problems.len(), 1);
        assert!(config.problems[0].contains(r#"got "sometimes""#), "{:?}", config.problems);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn malformed_file_is_reported_and_ignored() {
        let dir = std::env::temp_dir().join(format!("tj-config-bad-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        #[allow(clippy::disallowed_methods)]
        fs::write(dir.join("config.json"), "{ not json").unwrap();
        let config = Config::load(&env_with(&[(env::TJ_CONFIG_DIR, &dir.to_string_lossy())]));
        assert_eq!(config.limits, Limits::default());
        assert!(config.problems[0].contains("could not parse config"));
        fs::remove_dir_all(&dir).unwrap();
    }
    #[test]
    fn rewrite_exclude_comes_from_the_file_and_bad_entries_are_one_problem() {
        let dir = std::env::temp_dir().join(format!("tj-config-rewrite-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let env = env_with(&[(env::TJ_CONFIG_DIR, &dir.to_string_lossy())]);
        let write = |text: &str| {
            #[allow(clippy::disallowed_methods)]
            fs::write(dir.join("config.json"), text).unwrap();
        };
        write(r#"{"rewrite": {"exclude": ["npm run dev", "make"]}}"#);
        let config = Config::load(&env);
        assert_eq!(config.rewrite_exclude, ["npm run dev", "make"]);
        assert!(config.problems.is_empty(), "{:?}", config.problems);

        write(r#"{"rewrite": {"exclude": ["make", 3, " ", "SECRET-ish"]}, "minSavingBytes": 9}"#);
        let config = Config::load(&env);
        assert_eq!(config.rewrite_exclude, ["make", "SECRET-ish"]);
        assert_eq!(config.limits.min_saving_bytes, 9, "the rest of the file still applies");
        assert_eq!(config.problems.len(), 1, "{:?}", config.problems);
        assert!(config.problems[0].contains("2 of 4 entries"), "{:?}", config.problems);

        for bad in [r#"{"rewrite": {"exclude": "make"}}"#, r#"{"rewrite": ["make"]}"#] {
            write(bad);
            let config = Config::load(&env);
            assert!(config.rewrite_exclude.is_empty());
            assert_eq!(config.problems.len(), 1, "{bad}: {:?}", config.problems);
            assert!(!config.problems[0].contains("make\""), "values are never quoted");
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_config_is_skipped_unopened_and_parse_errors_quote_nothing() {
        let dir = std::env::temp_dir().join(format!("tj-config-fifo-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        nix::unistd::mkfifo(&dir.join("config.json"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let env = env_with(&[(env::TJ_CONFIG_DIR, &dir.to_string_lossy())]);
        // On another thread: opening a FIFO for reading would block until a writer came.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(Config::load(&env).problems).unwrap());
        let problems = rx.recv_timeout(std::time::Duration::from_secs(20)).expect("no hang");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("is not a regular file (a FIFO); using defaults"));

        fs::remove_file(dir.join("config.json")).unwrap();
        #[allow(clippy::disallowed_methods)]
        fs::write(dir.join("config.json"), r#"{"keepRatioMax": "\u001b]0;PWNED\u0007"}"#).unwrap();
        let config = Config::load(&env_with(&[(env::TJ_CONFIG_DIR, &dir.to_string_lossy())]));
        assert_eq!(config.problems.len(), 1);
        let problem = &config.problems[0];
        assert!(!problem.contains('\u{1b}') && !problem.contains("PWNED"), "{problem}");
        assert!(
            problem.contains("a value has the wrong type (expected f64) at line 1"),
            "{problem}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
