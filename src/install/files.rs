//! Reading and replacing a harness's settings file: a numbered backup first, then an atomic
//! replace that keeps the file's permissions.
//!
//! - **Symbolic links.** A settings file that is a link (dotfile managers make them) is
//!   followed to its target, and the target is edited in place of the link, so the link
//!   survives; the report names the target. A target that is not a regular file of the
//!   user's own is refused: tj does not edit a file someone else controls.
//! - **Backups.** Before any change, the current bytes go to `<file>.tj-backup.<N>` beside
//!   it, N one more than the highest there, created exclusively (never overwriting one).
//! - **Atomic replace.** The new text goes to a temporary file in the same directory, which
//!   gets the old file's mode (a new file gets the usual `0666` minus the umask, as the
//!   harnesses' own writes do) and is renamed over the file: a harness reading concurrently
//!   sees the old file or the new one.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

use crate::fsx;

/// Settings files larger than this are refused: no harness writes one.
const MAX_SETTINGS: u64 = 16 << 20;

/// A settings file as found.
#[derive(Debug)]
pub(crate) struct Existing {
    /// The file to edit: the path itself, or the target of the link at it.
    pub(crate) real: PathBuf,
    /// Its text, `None` when it does not exist.
    pub(crate) text: Option<String>,
    /// Its permission bits.
    pub(crate) mode: Option<u32>,
}

/// Reads the settings file at `path` (following a link to a file of the user's own).
pub(crate) fn read(path: &Path) -> Result<Existing> {
    let meta = match fs::symlink_metadata(path) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            return Ok(Existing { real: path.to_owned(), text: None, mode: None });
        }
        other => other.with_context(|| format!("could not examine `{}`", path.display()))?,
    };
    let real = if meta.file_type().is_symlink() {
        let target = fs::canonicalize(path).with_context(|| {
            format!("`{}` is a symbolic link whose target cannot be found", path.display())
        })?;
        let tmeta = fs::metadata(&target)
            .with_context(|| format!("could not examine `{}`", target.display()))?;
        if tmeta.uid() != fsx::euid() {
            bail!(
                "`{}` links to `{}`, which belongs to uid {}, not to you; tj changed nothing",
                path.display(),
                target.display(),
                tmeta.uid()
            );
        }
        target
    } else {
        path.to_owned()
    };
    let meta =
        fs::metadata(&real).with_context(|| format!("could not examine `{}`", real.display()))?;
    if !meta.is_file() {
        bail!(
            "`{}` is {}, not a file; tj changed nothing",
            real.display(),
            fsx::kind_phrase(&meta.file_type())
        );
    }
    let bytes = fsx::read_limited(&real, MAX_SETTINGS)
        .with_context(|| format!("could not read `{}`", real.display()))?;
    let text = String::from_utf8(bytes).map_err(|_| {
        anyhow::anyhow!("`{}` is not UTF-8 text; tj changed nothing", real.display())
    })?;
    Ok(Existing { real, text: Some(text), mode: Some(meta.permissions().mode() & 0o7777) })
}

/// Copies the current bytes of `file` to the next free `<file>.tj-backup.<N>`.
pub(crate) fn backup(file: &Path, text: &str, mode: u32) -> Result<PathBuf> {
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let dir = parent(file);
    let prefix = format!("{name}.tj-backup.");
    let highest = fs::read_dir(dir)
        .with_context(|| format!("could not list `{}`", dir.display()))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_prefix(&prefix)?.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    // Numbers go up from the highest present, so a backup is never overwritten; a name
    // another process takes meanwhile is skipped (a few times at most).
    for next in (1..=100).filter_map(|step| highest.checked_add(step)) {
        let path = dir.join(format!("{prefix}{next}"));
        match create(&path, mode) {
            Ok(mut f) => {
                f.write_all(text.as_bytes())
                    .with_context(|| format!("could not write the backup `{}`", path.display()))?;
                return Ok(path);
            }
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
            Err(err) => {
                return Err(err).with_context(|| format!("could not create `{}`", path.display()));
            }
        }
    }
    bail!(
        "could not find a free backup name after `{prefix}{highest}` in `{}`; move old backups away",
        dir.display()
    )
}

/// Replaces `file` with `text` atomically, keeping `mode` (or the umask default for a new
/// file), creating its directory if needed.
pub(crate) fn replace(file: &Path, text: &str, mode: Option<u32>) -> Result<()> {
    let dir = parent(file);
    fs::create_dir_all(dir).with_context(|| format!("could not create `{}`", dir.display()))?;
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut n = 0u32;
    let (tmp, mut f) = loop {
        let tmp = dir.join(format!(".{name}.tj-{}-{n}.tmp", std::process::id()));
        match create(&tmp, 0o666) {
            Ok(f) => break (tmp, f),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists && n < 100 => n += 1,
            Err(err) => {
                return Err(err).with_context(|| format!("could not create `{}`", tmp.display()));
            }
        }
    };
    let result = (|| -> io::Result<()> {
        if let Some(mode) = mode {
            f.set_permissions(fs::Permissions::from_mode(mode))?;
        }
        f.write_all(text.as_bytes())?;
        drop(f);
        fs::rename(&tmp, file)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.with_context(|| format!("could not write `{}`", file.display()))
}

/// Removes `file`.
pub(crate) fn remove(file: &Path) -> Result<()> {
    fs::remove_file(file).with_context(|| format!("could not remove `{}`", file.display()))
}

/// A new file, exclusively, never through a link; `mode` is masked by the umask.
fn create(path: &Path, mode: u32) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

fn parent(file: &Path) -> &Path {
    match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures written with fs::write: nobody reads them meanwhile
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tj-files-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn backups_are_numbered_after_the_highest_present() {
        let dir = scratch("numbered");
        let file = dir.join("settings.json");
        fs::write(dir.join("settings.json.tj-backup.7"), "old").unwrap();
        let made = backup(&file, "{}", 0o600).unwrap();
        assert_eq!(made, dir.join("settings.json.tj-backup.8"));
        assert_eq!(fs::read_to_string(&made).unwrap(), "{}");
        assert_eq!(fs::read_to_string(dir.join("settings.json.tj-backup.7")).unwrap(), "old");
        let _ = fs::remove_dir_all(dir);
    }

    #[test]
    fn a_backup_number_at_the_limit_is_an_error_not_a_panic() {
        let dir = scratch("limit");
        let file = dir.join("settings.json");
        fs::write(dir.join(format!("settings.json.tj-backup.{}", u64::MAX)), "").unwrap();
        let err = backup(&file, "{}", 0o600).unwrap_err();
        assert!(format!("{err:#}").contains("free backup name"), "{err:#}");
        let _ = fs::remove_dir_all(dir);
    }
}
