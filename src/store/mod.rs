//! The store of originals (DESIGN.md "Store"): every reduced output's raw bytes are spilled
//! to `<data dir>/spill/<id>.log` before any rendition naming them is emitted, with a
//! metadata file beside them. Directories are 0700 and files 0600: outputs hold secrets.
//!
//! The id is the first 12 hex digits of the SHA-256 of the raw bytes, so the same output
//! maps to the same file and storing it twice writes nothing new. Retention removes
//! originals by age and total size, oldest first; a repeat within a session becomes a
//! stub ([`is_repeat`]); every reduction adds a line to the ledger `tj stats` reads.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::env::Env;
use crate::reduce::ArtifactRef;

/// Hex digits of the SHA-256 used as the artifact id.
pub const ID_LEN: usize = 12;

/// The store, rooted at the data directory.
#[derive(Clone, Debug)]
pub struct Store {
    root: PathBuf,
}

/// What is recorded beside a spilled original.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// The artifact id.
    pub id: String,
    /// The full SHA-256 of the raw bytes.
    pub sha256: String,
    /// Seconds since the Unix epoch when stored.
    pub created_at: u64,
    /// The command, as given.
    pub command: Option<String>,
    /// The argv, as given.
    pub argv: Vec<String>,
    /// The working directory.
    pub cwd: Option<String>,
    /// The exit code.
    pub exit_code: Option<i64>,
    /// Raw bytes.
    pub bytes: usize,
    /// The selected rule.
    pub rule: Option<String>,
    /// Characters of the rendition.
    pub reduced_chars: Option<usize>,
    /// Estimated tokens before and after.
    pub tokens: Option<(usize, usize)>,
    /// `TJ_SESSION`.
    pub session: Option<String>,
    /// Bytes neither stored nor in the tail (past the disk cap, or lost to a disk error).
    #[serde(default)]
    pub dropped_bytes: u64,
    /// Bytes of the tail kept in `<id>.tail` when anything was dropped.
    #[serde(default)]
    pub tail_bytes: u64,
    /// How long the command ran, in milliseconds (`tj run` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The signal that ended the command, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// A descendant kept the PTY open after the command exited; reading stopped at the cap.
    #[serde(default)]
    pub pty_held_open: bool,
    /// How tj ran: `terminal`, `agent`, or `reduce` for existing text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Whether a reduction was adopted.
    #[serde(default)]
    pub reduced: bool,
    /// The width of the PTY the command wrote to, if it wrote to one: the renderer wraps
    /// at it, so `tj expand` numbers lines as the rendition did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cols: Option<u16>,
}

/// How often [`Store::sweep_due`] lets a sweep run.
pub const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(600);

/// The id of `raw`: the first [`ID_LEN`] hex digits of its SHA-256, and the full digest.
pub fn id_of(raw: &[u8]) -> (String, String) {
    let digest = Sha256::digest(raw);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    (hex[..ID_LEN].to_owned(), hex)
}

impl Store {
    /// The store for this environment (`TJ_DATA_DIR` or the platform data dir). Creates
    /// nothing yet.
    pub fn new(env: &Env) -> Result<Store> {
        let root = env.data_dir().context("could not find a data directory (set TJ_DATA_DIR)")?;
        Ok(Store { root })
    }

    /// A store rooted at `root`.
    pub fn at(root: impl Into<PathBuf>) -> Store {
        Store { root: root.into() }
    }

    fn spill_dir(&self) -> PathBuf {
        self.root.join("spill")
    }

    /// Where the original with this id lives.
    pub fn spill_path(&self, id: &str) -> PathBuf {
        self.spill_dir().join(format!("{id}.log"))
    }

    fn meta_path(&self, id: &str) -> PathBuf {
        self.spill_dir().join(format!("{id}.json"))
    }

    /// Persists `raw` and returns its reference. Writes nothing when an identical original
    /// is already stored.
    pub fn persist(&self, raw: &[u8], meta: &mut Metadata) -> Result<ArtifactRef> {
        let (id, sha) = id_of(raw);
        let dir = self.spill_dir();
        create_private_dir(&self.root)?;
        create_private_dir(&dir)?;
        let path = self.spill_path(&id);
        let same = fs::metadata(&path).is_ok_and(|m| m.len() == raw.len() as u64);
        if !same {
            atomic_write(&path, raw)
                .with_context(|| format!("could not store the original in `{}`", path.display()))?;
        }
        meta.id.clone_from(&id);
        meta.sha256 = sha;
        meta.bytes = raw.len();
        meta.created_at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Ok(ArtifactRef { id, path: path.display().to_string() })
    }

    /// Writes the metadata for an artifact already persisted.
    pub fn write_metadata(&self, meta: &Metadata) -> Result<()> {
        let json = serde_json::to_vec_pretty(meta).context("could not encode metadata")?;
        atomic_write(&self.meta_path(&meta.id), &json).context("could not write metadata")
    }

    /// Reads the original with this id (or a unique prefix of it).
    pub fn read(&self, id: &str) -> Result<Vec<u8>> {
        let id = self.resolve(id)?;
        let path = self.spill_path(&id);
        let mut bytes = Vec::new();
        File::open(&path)
            .and_then(|mut f| f.read_to_end(&mut bytes))
            .with_context(|| format!("could not read `{}`", path.display()))?;
        Ok(bytes)
    }

    /// The full id for `prefix`, which must name exactly one stored original.
    pub fn resolve(&self, prefix: &str) -> Result<String> {
        if prefix.is_empty() || !prefix.bytes().all(|b| b.is_ascii_hexdigit()) {
            bail!("`{prefix}` is not an artifact id (ids are hex digits, as `tj ls` shows)");
        }
        let prefix = prefix.to_ascii_lowercase();
        let entries = match fs::read_dir(self.spill_dir()) {
            Ok(entries) => entries,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                bail!("no artifact `{prefix}`: nothing is stored yet in `{}`", self.root.display())
            }
            Err(err) => return Err(err).context("could not list the store"),
        };
        let mut found: Vec<String> = entries
            .flatten()
            .filter_map(|e| {
                e.file_name().to_str().and_then(|n| n.strip_suffix(".log")).map(str::to_owned)
            })
            .filter(|id| id.starts_with(&prefix))
            .collect();
        found.sort();
        match found.len() {
            0 => bail!("no artifact `{prefix}` in `{}`", self.root.display()),
            1 => Ok(found.remove(0)),
            n => bail!("`{prefix}` matches {n} artifacts; give more digits"),
        }
    }
}

/// Creates `dir` (and parents) private to the user, and tightens it if it already exists.
fn create_private_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("could not create `{}`", dir.display()))?;
        let meta =
            fs::metadata(dir).with_context(|| format!("could not stat `{}`", dir.display()))?;
        if meta.permissions().mode() & 0o077 != 0 {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
                .with_context(|| format!("could not make `{}` private", dir.display()))?;
        }
    }
    #[cfg(not(unix))]
    fs::create_dir_all(dir).with_context(|| format!("could not create `{}`", dir.display()))?;
    Ok(())
}

/// Writes `bytes` to `path` through a private temporary file in the same directory and a
/// rename, so a reader sees the old file or the new one, never half of one.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("tj");
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let result = (|| {
        let mut file = options.open(&tmp)?;
        file.write_all(bytes)?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// How long originals are kept, and how much of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retention {
    /// Originals older than this many seconds are removed.
    pub max_age_secs: u64,
    /// When all originals together exceed this many bytes, the oldest go first.
    pub max_total_bytes: u64,
}

impl Default for Retention {
    fn default() -> Retention {
        Retention { max_age_secs: 7 * 24 * 3600, max_total_bytes: 2 << 30 }
    }
}

/// Temp files of a capture that never finished (a SIGKILLed tj) are swept after this long.
const STALE_TEMP_SECS: u64 = 24 * 3600;

impl Store {
    /// The directory spilled originals live in (capture spills here too, so that adopting
    /// a spill file is a rename within one directory).
    pub fn spill_dir_path(&self) -> PathBuf {
        self.spill_dir()
    }

    /// Creates the store's directories, private to the user.
    pub fn prepare(&self) -> Result<()> {
        create_private_dir(&self.root)?;
        create_private_dir(&self.spill_dir())
    }

    /// Stores what a capture kept, under the id of everything the child wrote: a spilled
    /// capture's file is renamed into place; an in-memory one is written; a tail kept past the
    /// disk cap goes beside it as `<id>.tail`.
    pub fn adopt(
        &self,
        captured: &crate::capture::Captured,
        meta: &mut Metadata,
    ) -> Result<ArtifactRef> {
        use crate::capture::Storage;
        let id = captured.hex_id();
        self.prepare()?;
        let path = self.spill_path(&id);
        let kept = captured.storage.len();
        let same = fs::metadata(&path).is_ok_and(|m| m.len() == kept);
        match &captured.storage {
            Storage::Memory(bytes) => {
                if !same {
                    atomic_write(&path, bytes).with_context(|| {
                        format!("could not store the original in `{}`", path.display())
                    })?;
                }
            }
            Storage::Spilled { path: temp, .. } => {
                if same {
                    let _ = fs::remove_file(temp);
                } else {
                    fs::rename(temp, &path).with_context(|| {
                        format!("could not store the original in `{}`", path.display())
                    })?;
                }
            }
        }
        if !captured.tail.is_empty() {
            let tail = self.spill_dir().join(format!("{id}.tail"));
            atomic_write(&tail, &captured.tail)
                .with_context(|| format!("could not store the tail in `{}`", tail.display()))?;
        }
        meta.id.clone_from(&id);
        meta.sha256 = captured.sha256.iter().map(|b| format!("{b:02x}")).collect();
        meta.bytes = usize::try_from(captured.total_bytes).unwrap_or(usize::MAX);
        meta.dropped_bytes = captured.dropped_bytes;
        meta.tail_bytes = captured.tail.len() as u64;
        if meta.created_at == 0 {
            meta.created_at = now_secs();
        }
        Ok(ArtifactRef { id, path: path.display().to_string() })
    }

    /// Whether a sweep is due: true at most once per [`SWEEP_EVERY`] (the mtime of
    /// `<data dir>/.last-sweep` is the clock, and this call resets it). Listing and stating a
    /// store of thousands of originals on every run cost more than the reduction itself;
    /// between sweeps the store may run over its limits by what ten minutes write.
    pub fn sweep_due(&self) -> bool {
        use std::os::unix::fs::OpenOptionsExt;
        let marker = self.root.join(".last-sweep");
        let recent = fs::metadata(&marker)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age < SWEEP_EVERY);
        if recent {
            return false;
        }
        // Truncating rewrites the mtime; a failure only means the next run sweeps too.
        let _ = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&marker);
        true
    }

    /// Removes originals past the age limit, then the oldest while the total is over the
    /// size limit, never `keep`. Safe with concurrent tj processes: a file another process
    /// removed first is simply gone.
    pub fn sweep(&self, retention: &Retention, keep: Option<&str>) -> Result<usize> {
        let now = now_secs();
        let entries = match fs::read_dir(self.spill_dir()) {
            Ok(entries) => entries,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(0),
            Err(err) => return Err(err).context("could not list the store"),
        };
        let mut logs: Vec<(u64, u64, String)> = Vec::new(); // (mtime, size, id)
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let Ok(meta) = entry.metadata() else { continue };
            let mtime = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(now, |d| d.as_secs());
            if name.starts_with(".capture-") || name.ends_with(".tmp") {
                if now.saturating_sub(mtime) > STALE_TEMP_SECS {
                    let _ = fs::remove_file(entry.path());
                }
                continue;
            }
            if let Some(id) = name.strip_suffix(".log") {
                logs.push((mtime, meta.len(), id.to_owned()));
            }
        }
        logs.sort();
        let mut total: u64 = logs.iter().map(|(_, size, _)| size).sum();
        let mut removed = 0;
        for (mtime, size, id) in &logs {
            if Some(id.as_str()) == keep {
                continue;
            }
            let expired = now.saturating_sub(*mtime) > retention.max_age_secs;
            if expired || total > retention.max_total_bytes {
                for ext in ["log", "json", "tail", "txt"] {
                    let _ = fs::remove_file(self.spill_dir().join(format!("{id}.{ext}")));
                }
                total = total.saturating_sub(*size);
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// The metadata stored for `id`, if any (read before it is overwritten, for dedupe; and
    /// by `tj expand`, for the width the output was rendered at).
    pub fn previous(&self, id: &str) -> Option<Metadata> {
        let bytes = fs::read(self.meta_path(id)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Appends one line to the ledger `tj stats` reads (`<data dir>/ledger.jsonl`, 0600).
    /// One `write` of one line in append mode: concurrent tj processes never interleave.
    pub fn append_ledger(&self, entry: &LedgerEntry) -> Result<()> {
        let mut line = serde_json::to_vec(entry).context("could not encode the ledger entry")?;
        line.push(b'\n');
        let path = self.root.join("ledger.jsonl");
        let mut options = OpenOptions::new();
        options.append(true).create(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        options
            .open(&path)
            .and_then(|mut f| f.write_all(&line))
            .with_context(|| format!("could not append to the ledger `{}`", path.display()))
    }

    /// Stores the rendition an artifact was given, for `tj expand --reduced`.
    pub fn write_rendition(&self, id: &str, text: &str) -> Result<()> {
        atomic_write(&self.spill_dir().join(format!("{id}.txt")), text.as_bytes())
            .context("could not store the rendition")
    }

    /// Reads the rendition stored for an artifact.
    pub fn read_rendition(&self, id: &str) -> Result<String> {
        let id = self.resolve(id)?;
        let path = self.spill_dir().join(format!("{id}.txt"));
        fs::read_to_string(&path).with_context(|| format!("no rendition stored for `{id}`"))
    }

    /// Reads the tail kept past the disk cap, if any.
    pub fn read_tail(&self, id: &str) -> Option<Vec<u8>> {
        fs::read(self.spill_dir().join(format!("{id}.tail"))).ok()
    }

    /// Every artifact's metadata, newest first. Unreadable or corrupt entries are skipped and
    /// counted.
    pub fn list(&self) -> Result<(Vec<Metadata>, usize)> {
        let entries = match fs::read_dir(self.spill_dir()) {
            Ok(entries) => entries,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
            Err(err) => return Err(err).context("could not list the store"),
        };
        let mut out = Vec::new();
        let mut corrupt = 0;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            match fs::read(&path).ok().and_then(|b| serde_json::from_slice::<Metadata>(&b).ok()) {
                Some(meta) => out.push(meta),
                None => corrupt += 1,
            }
        }
        out.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| a.id.cmp(&b.id)));
        Ok((out, corrupt))
    }
}

/// One line of the ledger: what one reduction did.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerEntry {
    /// Seconds since the Unix epoch.
    pub time: u64,
    /// The artifact id.
    pub id: String,
    /// The command.
    pub command: String,
    /// The selected rule.
    pub rule: String,
    /// The exit code.
    pub exit_code: Option<i64>,
    /// Raw and reduced characters.
    pub chars: (usize, usize),
    /// Estimated raw and reduced tokens.
    pub tokens: (usize, usize),
    /// Whether a reduction was adopted, and whether it dropped nothing.
    pub reduced: bool,
    /// See `reduced`.
    pub lossless: bool,
    /// The rendition was a stub naming an identical earlier output.
    pub deduped: bool,
}

/// An output identical to one stored for the same session, directory, command and exit
/// code within this many seconds becomes a one-line stub (DESIGN.md "Store", dedupe).
pub const DEDUPE_TTL_SECS: u64 = 600;

/// Returns true if and only if `prev` (read before this run overwrote it) describes the
/// same output of the same command, in the same place and the same `TJ_SESSION`, recently.
pub fn is_repeat(prev: &Metadata, now: &Metadata) -> bool {
    !prev.sha256.is_empty()
        && prev.sha256 == now.sha256
        // Only within a session (TJ_SESSION, set by the shell hook): a person running the
        // same command twice by hand wants to see its output twice.
        && prev.session.is_some()
        && prev.session == now.session
        && prev.cwd == now.cwd
        && prev.command == now.command
        && prev.argv == now.argv
        && prev.exit_code == now.exit_code
        && now.created_at.saturating_sub(prev.created_at) <= DEDUPE_TTL_SECS
}

/// Seconds since the Unix epoch.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tj-store-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn persists_privately_and_reads_back() {
        let root = temp("rw");
        let store = Store::at(&root);
        let mut meta = Metadata::default();
        let art = store.persist(b"secret output\n", &mut meta).unwrap();
        assert_eq!(art.id.len(), ID_LEN);
        assert_eq!(store.read(&art.id).unwrap(), b"secret output\n");
        assert_eq!(store.read(&art.id[..6]).unwrap(), b"secret output\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&root), 0o700);
            assert_eq!(mode(&root.join("spill")), 0o700);
            assert_eq!(mode(Path::new(&art.path)), 0o600);
        }
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn unknown_and_malformed_ids_are_clear_errors() {
        let root = temp("ids");
        let store = Store::at(&root);
        assert!(store.read("abc").unwrap_err().to_string().contains("nothing is stored yet"));
        assert!(store.read("../etc").unwrap_err().to_string().contains("not an artifact id"));
    }

    #[test]
    fn a_sweep_is_due_once_per_interval() {
        let root = temp("sweep-due");
        let store = Store::at(&root);
        store.prepare().unwrap();
        assert!(store.sweep_due());
        assert!(!store.sweep_due());
        assert!(!store.sweep_due());
    }

    #[test]
    fn sweep_removes_the_oldest_past_the_size_limit_but_never_the_one_kept() {
        let root = temp("sweep");
        let store = Store::at(&root);
        let mut ids = Vec::new();
        for i in 0..4u8 {
            let mut meta = Metadata::default();
            let art = store.persist(&vec![i; 1000], &mut meta).unwrap();
            // Distinct, increasing mtimes without sleeping.
            let file = File::options().write(true).open(&art.path).unwrap();
            file.set_modified(
                std::time::UNIX_EPOCH
                    + std::time::Duration::from_secs(now_secs() - 100 + u64::from(i)),
            )
            .unwrap();
            ids.push(art.id);
        }
        let retention = Retention { max_age_secs: 3600, max_total_bytes: 2500 };
        assert_eq!(store.sweep(&retention, Some(&ids[0])).unwrap(), 2);
        assert!(Path::new(&store.spill_path(&ids[0])).exists(), "kept one survives");
        assert!(!store.spill_path(&ids[1]).exists());
        assert!(!store.spill_path(&ids[2]).exists());
        assert!(store.spill_path(&ids[3]).exists());
        let expire = Retention { max_age_secs: 10, max_total_bytes: u64::MAX };
        assert_eq!(store.sweep(&expire, None).unwrap(), 2);
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn list_skips_corrupt_metadata_and_sorts_newest_first() {
        let root = temp("list");
        let store = Store::at(&root);
        for (i, bytes) in [b"a".as_slice(), b"b"].iter().enumerate() {
            let mut meta = Metadata::default();
            store.persist(bytes, &mut meta).unwrap();
            meta.created_at = 100 + i as u64;
            store.write_metadata(&meta).unwrap();
        }
        atomic_write(&root.join("spill/ffffffffffff.json"), b"{ corrupt").unwrap();
        let (list, corrupt) = store.list().unwrap();
        assert_eq!(corrupt, 1);
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].created_at, 101);
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_repeat_is_the_same_output_command_place_and_session_recently() {
        let base = Metadata {
            sha256: "ab".into(),
            session: Some("s".into()),
            cwd: Some("/w".into()),
            argv: vec!["cargo".into(), "test".into()],
            exit_code: Some(101),
            created_at: 1000,
            ..Metadata::default()
        };
        let now = Metadata { created_at: 1000 + DEDUPE_TTL_SECS, ..base.clone() };
        assert!(is_repeat(&base, &now));
        assert!(!is_repeat(&base, &Metadata { created_at: 1001 + DEDUPE_TTL_SECS, ..now.clone() }));
        assert!(!is_repeat(&base, &Metadata { exit_code: Some(0), ..now.clone() }));
        assert!(!is_repeat(&base, &Metadata { cwd: Some("/x".into()), ..now.clone() }));
        assert!(!is_repeat(&base, &Metadata { session: None, ..now.clone() }));
        assert!(!is_repeat(
            &Metadata { sha256: String::new(), ..base },
            &Metadata { sha256: String::new(), ..now }
        ));
    }

    #[test]
    fn ledger_appends_private_json_lines() {
        let root = temp("ledger");
        let store = Store::at(&root);
        store.prepare().unwrap();
        for id in ["a", "b"] {
            store.append_ledger(&LedgerEntry { id: id.into(), ..LedgerEntry::default() }).unwrap();
        }
        let text = fs::read_to_string(root.join("ledger.jsonl")).unwrap();
        let ids: Vec<String> =
            text.lines().map(|l| serde_json::from_str::<LedgerEntry>(l).unwrap().id).collect();
        assert_eq!(ids, ["a", "b"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                fs::metadata(root.join("ledger.jsonl")).unwrap().permissions().mode() & 0o777,
                0o600
            );
        }
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn id_is_a_sha256_prefix() {
        let (id, full) = id_of(b"");
        assert_eq!(full, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(id, "e3b0c44298fc");
    }
}
