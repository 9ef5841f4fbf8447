//! Every `TJ_*` variable tj reads, as a documented constant, and [`Env`], the snapshot the
//! rest of the program receives instead of reading the environment itself (STYLE.md 2.1:
//! only this module reads `TJ_*`, so everything downstream is a pure function of its input).

use std::ffi::OsString;
use std::path::PathBuf;

/// Overrides the configuration directory (config.json, user rules). Default on Linux:
/// `~/.config/tokenjuice`, shared with tokenjuice so one set of user rules serves both.
pub const TJ_CONFIG_DIR: &str = "TJ_CONFIG_DIR";
/// Overrides the data directory (spilled originals, metadata, ledger). Default on Linux:
/// `~/.local/share/tj`.
pub const TJ_DATA_DIR: &str = "TJ_DATA_DIR";
/// `1`: renditions are the whole original, ANSI stripped, never reduced.
pub const TJ_RAW: &str = "TJ_RAW";
/// Groups artifacts for dedupe and statistics; set once per shell by the shell hook.
pub const TJ_SESSION: &str = "TJ_SESSION";
/// Gate: the largest reduced/original byte ratio adopted (default 0.72).
pub const TJ_KEEP_RATIO_MAX: &str = "TJ_KEEP_RATIO_MAX";
/// Gate: the fewest bytes a reduction must save to be adopted (default 500).
pub const TJ_MIN_SAVING_BYTES: &str = "TJ_MIN_SAVING_BYTES";
/// Below this semantic density an unmatched command's output is reduced (default 0.3).
pub const TJ_DENSITY_THRESHOLD: &str = "TJ_DENSITY_THRESHOLD";

/// A snapshot of the parts of the process environment tj uses.
#[derive(Clone, Debug, Default)]
pub struct Env {
    /// `TJ_CONFIG_DIR`, if set and non-empty.
    pub config_dir: Option<PathBuf>,
    /// `TJ_DATA_DIR`, if set and non-empty.
    pub data_dir: Option<PathBuf>,
    /// `TJ_RAW` is set to something other than empty or `0`.
    pub raw: bool,
    /// `TJ_SESSION`, if set.
    pub session: Option<String>,
    /// `TJ_KEEP_RATIO_MAX`, unparsed.
    pub keep_ratio_max: Option<String>,
    /// `TJ_MIN_SAVING_BYTES`, unparsed.
    pub min_saving_bytes: Option<String>,
    /// `TJ_DENSITY_THRESHOLD`, unparsed.
    pub density_threshold: Option<String>,
    /// The working directory, if it could be read.
    pub cwd: Option<PathBuf>,
}

impl Env {
    /// Reads the process environment once.
    pub fn capture() -> Env {
        Env::from_vars(std::env::vars_os(), std::env::current_dir().ok())
    }

    /// Builds a snapshot from explicit variables (tests use this instead of `set_var`).
    pub fn from_vars(
        vars: impl IntoIterator<Item = (OsString, OsString)>,
        cwd: Option<PathBuf>,
    ) -> Env {
        let mut env = Env { cwd, ..Env::default() };
        for (key, value) in vars {
            let Some(key) = key.to_str() else { continue };
            if value.is_empty() {
                continue;
            }
            let text = || value.to_string_lossy().into_owned();
            match key {
                TJ_CONFIG_DIR => env.config_dir = Some(PathBuf::from(&value)),
                TJ_DATA_DIR => env.data_dir = Some(PathBuf::from(&value)),
                TJ_RAW => env.raw = value != "0",
                TJ_SESSION => env.session = Some(text()),
                TJ_KEEP_RATIO_MAX => env.keep_ratio_max = Some(text()),
                TJ_MIN_SAVING_BYTES => env.min_saving_bytes = Some(text()),
                TJ_DENSITY_THRESHOLD => env.density_threshold = Some(text()),
                _ => {}
            }
        }
        env
    }

    /// The configuration directory: `TJ_CONFIG_DIR`, else `<platform config dir>/tokenjuice`.
    pub fn config_dir(&self) -> Option<PathBuf> {
        self.config_dir
            .clone()
            .or_else(|| directories::BaseDirs::new().map(|d| d.config_dir().join("tokenjuice")))
    }

    /// The data directory: `TJ_DATA_DIR`, else the platform data dir for `tj`.
    pub fn data_dir(&self) -> Option<PathBuf> {
        self.data_dir.clone().or_else(|| {
            directories::ProjectDirs::from("", "", "tj").map(|d| d.data_dir().to_path_buf())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect()
    }

    #[test]
    fn explicit_dirs_win() {
        let env = Env::from_vars(vars(&[(TJ_CONFIG_DIR, "/c"), (TJ_DATA_DIR, "/d")]), None);
        assert_eq!(env.config_dir(), Some(PathBuf::from("/c")));
        assert_eq!(env.data_dir(), Some(PathBuf::from("/d")));
    }

    #[test]
    fn raw_zero_and_empty_mean_off() {
        assert!(!Env::from_vars(vars(&[(TJ_RAW, "0")]), None).raw);
        assert!(!Env::from_vars(vars(&[(TJ_RAW, "")]), None).raw);
        assert!(Env::from_vars(vars(&[(TJ_RAW, "1")]), None).raw);
    }
}
