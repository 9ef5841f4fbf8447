//! The store of originals (DESIGN.md "Store"): every reduced output's raw bytes are spilled
//! to `<data dir>/spill/<id>.log` before any rendition naming them is emitted, with a
//! metadata file beside them. Directories are 0700 and files 0600: outputs hold secrets.
//!
//! The id is the first 12 hex digits of the SHA-256 of the raw bytes, so the same output
//! maps to the same file and storing it twice writes nothing new (it only restarts the
//! original's clock, so the sweep never takes an artifact a fresh rendition names).
//! Retention removes originals by age and total size, oldest first; a repeat within a
//! session becomes a stub ([`is_repeat`]); every reduction adds a line to the ledger
//! `tj stats` reads.
//!
//! Every file is reached through [`crate::fsx`]: the data directory and `spill/` must be
//! real directories of the user's, 0700 (a directory tj did not create is refused, never
//! tightened); no open follows a symbolic link; temporary names are unpredictable; and the
//! sweep removes only names of the store's own form. A store that fails these checks is
//! refused with one warning, and the run goes on without it (fail open).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::env::Env;
use crate::fsx;
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
    /// The agent harness whose hook routed the command here (`tj run --host`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl Metadata {
    /// Whether the run was watched live with no agent given a rendition (terminal mode, no
    /// side channel): tj stored its original and made no rendition of it.
    pub fn watched(&self) -> bool {
        self.mode.as_deref() == Some("terminal") && self.reduced_chars.is_none()
    }
}

/// How often [`Store::sweep_due`] lets a sweep run.
pub const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(600);

/// The id of `raw`: the first [`ID_LEN`] hex digits of its SHA-256, and the full digest.
pub fn id_of(raw: &[u8]) -> (String, String) {
    let digest = if raw.is_empty() { EMPTY_SHA256 } else { Sha256::digest(raw).into() };
    id_of_digest(&digest)
}

/// The SHA-256 of no bytes. A command that printed nothing gets its id without the hasher,
/// whose first use probes the processor (`cpuid`, a trap to the hypervisor on a virtual
/// machine: about 25 µs of `tj reduce /dev/null` on the machine of issue 13).
const EMPTY_SHA256: [u8; 32] = [
    0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
    0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
];

/// The id of the output whose SHA-256 is `digest`, and the full digest in hex.
pub fn id_of_digest(digest: &[u8; 32]) -> (String, String) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut hex = String::with_capacity(2 * digest.len());
    for &byte in digest {
        hex.push(char::from(DIGITS[usize::from(byte >> 4)]));
        hex.push(char::from(DIGITS[usize::from(byte & 0xf)]));
    }
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

    /// Persists `raw` and returns its reference. When an identical original is already
    /// stored, only refreshes its time, so the sweep counts its age from now.
    pub fn persist(&self, raw: &[u8], meta: &mut Metadata) -> Result<ArtifactRef> {
        let (id, sha) = id_of(raw);
        self.prepare()?;
        let path = self.spill_path(&id);
        if !reuse(&path, raw.len() as u64) {
            fsx::replace(&path, raw)
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

    /// Writes the metadata for an artifact already persisted. A record tj can make again:
    /// replaced without the cost of a durable replace ([`fsx::replace_volatile`]).
    pub fn write_metadata(&self, meta: &Metadata) -> Result<()> {
        let json = serde_json::to_vec_pretty(meta).context("could not encode metadata")?;
        fsx::replace_volatile(&self.meta_path(&meta.id), &json).context("could not write metadata")
    }

    /// Reads the original with this id (or a unique prefix of it).
    pub fn read(&self, id: &str) -> Result<Vec<u8>> {
        let id = self.resolve(id)?;
        let path = self.spill_path(&id);
        fsx::read(&path).with_context(|| format!("could not read `{}`", path.display()))
    }

    /// The full id for `prefix`, which must name exactly one stored original.
    pub fn resolve(&self, prefix: &str) -> Result<String> {
        if prefix.is_empty() || !prefix.bytes().all(|b| b.is_ascii_hexdigit()) {
            bail!("`{prefix}` is not an artifact id (ids are hex digits, as `tj ls` shows)");
        }
        let prefix = prefix.to_ascii_lowercase();
        let Some(entries) = self.entries()? else {
            bail!("no artifact `{prefix}`: nothing is stored yet in `{}`", self.root.display())
        };
        let mut found: Vec<String> = entries
            .filter_map(|(id, ext)| (ext == "log" && id.starts_with(&prefix)).then_some(id))
            .collect();
        found.sort();
        match found.len() {
            0 => bail!("no artifact `{prefix}` in `{}`", self.root.display()),
            1 => Ok(found.remove(0)),
            n => bail!("`{prefix}` matches {n} artifacts; give more digits"),
        }
    }
}

/// A store directory that could not be had: a failed creation says so itself; a refused
/// directory (a symlink, not the user's, open to others) also says what tj does instead.
fn refusal(err: fsx::DirError, instead: &'static str) -> anyhow::Error {
    match err {
        fsx::DirError::Create { .. } => anyhow::Error::new(err),
        refused => anyhow::Error::new(refused).context(instead),
    }
}

/// Returns true if and only if `path` is a regular file of `len` bytes (the original of the
/// same id, stored before) whose time could be refreshed: the sweep then counts its age from
/// this run, so a rendition made now never names an artifact the next sweep deletes.
fn reuse(path: &Path, len: u64) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.len() == len)
        && fsx::touch_nofollow(path).is_ok()
}

/// The extensions of the store's files: `<id>.log` (the original), `<id>.json`
/// (metadata), `<id>.tail` (the tail past the disk cap), `<id>.txt` (the rendition).
const EXTENSIONS: [&str; 4] = ["log", "json", "tail", "txt"];

/// The id and extension of a name of the store's own form, `<12 hex>.<known extension>`.
fn own_name(name: &str) -> Option<(&str, &str)> {
    let (id, ext) = name.split_once('.')?;
    (fsx::is_id(id) && EXTENSIONS.contains(&ext)).then_some((id, ext))
}

/// The extension of a last-run record (`<16 hex>.last`): its key is longer than an id, so
/// no prefix of an artifact id ever names one.
const LAST_RUN_EXT: &str = "last";

/// A last-run record is one id and one time.
const LAST_RUN_LIMIT: u64 = 64;

/// The key under which the runs of one command, in one session and one directory, are
/// recorded: 16 hex digits of a SHA-256 over them. `None` outside a session (`TJ_SESSION`,
/// set by the shell hook): a person running a command again by hand gets no delta, as they
/// get no dedupe stub.
pub fn run_key(meta: &Metadata) -> Option<String> {
    let session = meta.session.as_deref()?;
    let mut hasher = Sha256::new();
    for part in [session, meta.cwd.as_deref().unwrap_or(""), meta.command.as_deref().unwrap_or("")]
    {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    for arg in &meta.argv {
        hasher.update(arg.as_bytes());
        hasher.update([0]);
    }
    let digest: [u8; 32] = hasher.finalize().into();
    Some(digest[..8].iter().map(|b| format!("{b:02x}")).collect())
}

/// Returns true if and only if `name` is a last-run record's: `<16 hex>.last`.
fn is_last_run_name(name: &str) -> bool {
    name.split_once('.').is_some_and(|(key, ext)| {
        ext == LAST_RUN_EXT
            && key.len() == 16
            && key.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// Metadata files are a few hundred bytes; anything far larger is not one of ours.
const METADATA_LIMIT: u64 = 1 << 20;

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

    /// Creates the store's directories, private to the user, or refuses the store: each
    /// must be a real directory (not a symbolic link) of the user's, with no permission for
    /// group or others. An existing directory is never chmodded.
    pub fn prepare(&self) -> Result<()> {
        fsx::ensure_private_dir(&self.root)
            .and_then(|()| fsx::ensure_private_dir(&self.spill_dir()))
            .map_err(|err| refusal(err, "not storing the original"))
    }

    /// Checks the store's directories without creating them, as [`Store::prepare`] does.
    /// Returns false if and only if nothing is stored yet.
    fn check(&self) -> Result<bool> {
        let exists = fsx::check_private_dir(&self.root)
            .and_then(|root| Ok(root && fsx::check_private_dir(&self.spill_dir())?))
            .context("not reading the store")?;
        Ok(exists)
    }

    /// The `(id, extension)` of every regular file of the store's own form in `spill/`, or
    /// `None` when nothing is stored yet. Symbolic links, FIFOs, directories and names of any
    /// other form are skipped (`DirEntry::file_type` does not follow links).
    fn entries(&self) -> Result<Option<impl Iterator<Item = (String, String)>>> {
        if !self.check()? {
            return Ok(None);
        }
        let entries = match fs::read_dir(self.spill_dir()) {
            Ok(entries) => entries,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(err).context("could not list the store"),
        };
        Ok(Some(entries.flatten().filter_map(|entry| {
            if !entry.file_type().is_ok_and(|t| t.is_file()) {
                return None;
            }
            let name = entry.file_name();
            let (id, ext) = own_name(name.to_str()?)?;
            Some((id.to_owned(), ext.to_owned()))
        })))
    }

    /// Stores what a capture kept, under the id of everything the child wrote: a spilled
    /// capture's file is renamed into place; an in-memory one is written; a tail kept past the
    /// disk cap goes beside it as `<id>.tail`. An identical original already stored is kept
    /// and its time refreshed, as [`Store::persist`] does. A capture taken without a digest
    /// gets a fresh id that names no file of the store's (`Store::fresh_id`), and an empty
    /// `sha256` in `meta`.
    pub fn adopt(
        &self,
        captured: &crate::capture::Captured,
        meta: &mut Metadata,
    ) -> Result<ArtifactRef> {
        use crate::capture::Storage;
        self.prepare()?;
        let (id, sha) = match &captured.sha256 {
            Some(digest) => id_of_digest(digest),
            None => (self.fresh_id()?, String::new()),
        };
        let path = self.spill_path(&id);
        let same = captured.sha256.is_some() && reuse(&path, captured.storage.len());
        match &captured.storage {
            Storage::Memory(bytes) => {
                if !same {
                    fsx::replace(&path, bytes).with_context(|| {
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
            fsx::replace(&tail, &captured.tail)
                .with_context(|| format!("could not store the tail in `{}`", tail.display()))?;
        }
        meta.id.clone_from(&id);
        meta.sha256 = sha;
        meta.bytes = usize::try_from(captured.total_bytes).unwrap_or(usize::MAX);
        meta.dropped_bytes = captured.dropped_bytes;
        meta.tail_bytes = captured.tail.len() as u64;
        if meta.created_at == 0 {
            meta.created_at = now_secs();
        }
        Ok(ArtifactRef { id, path: path.display().to_string() })
    }

    /// An id of the store's form (12 hex digits) that names none of its files: for an
    /// original stored without a digest of its content. Unpredictable, so that two tj
    /// processes storing at the same moment do not pick the same one.
    fn fresh_id(&self) -> Result<String> {
        for _ in 0..16 {
            let id = format!("{:012x}", fsx::unpredictable() >> 16);
            let taken = EXTENSIONS.iter().any(|ext| {
                fs::symlink_metadata(self.spill_dir().join(format!("{id}.{ext}"))).is_ok()
            });
            if !taken {
                return Ok(id);
            }
        }
        bail!("could not find a free id in the store `{}`", self.spill_dir().display())
    }

    /// Whether a sweep is due: true at most once per [`SWEEP_EVERY`] (the mtime of
    /// `<data dir>/.last-sweep` is the clock, and this call resets it). Listing and stating a
    /// store of thousands of originals on every run cost more than the reduction itself;
    /// between sweeps the store may run over its limits by what ten minutes write.
    pub fn sweep_due(&self) -> bool {
        let marker = self.root.join(".last-sweep");
        let recent = fs::symlink_metadata(&marker)
            .ok()
            .filter(fs::Metadata::is_file)
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age < SWEEP_EVERY);
        if recent {
            return false;
        }
        // Never through a symbolic link, never truncating: a failure (a link or a FIFO
        // planted at the marker) only means the next run sweeps too.
        let _ = fsx::touch(&marker, true);
        true
    }

    /// Removes originals past the age limit, then the oldest while the total is over the
    /// size limit, never `keep`. Safe with concurrent tj processes: a file another process
    /// removed first is simply gone.
    ///
    /// Only names of the store's own form are removed (`<12 hex>.<log|json|tail|txt>` and
    /// tj's temporary names), only regular files are looked at, and a `spill/` that is not a
    /// private directory of the user's is refused: the sweep never deletes what is not tj's.
    pub fn sweep(&self, retention: &Retention, keep: Option<&str>) -> Result<usize> {
        let now = now_secs();
        if !self.check()? {
            return Ok(0);
        }
        let entries = match fs::read_dir(self.spill_dir()) {
            Ok(entries) => entries,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(0),
            Err(err) => return Err(err).context("could not list the store"),
        };
        let mut logs: Vec<(u64, u64, String)> = Vec::new(); // (mtime, size, id)
        for entry in entries.flatten() {
            // `file_type` and `metadata` of a `DirEntry` do not follow symbolic links.
            if !entry.file_type().is_ok_and(|t| t.is_file()) {
                continue;
            }
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let Ok(meta) = entry.metadata() else { continue };
            let mtime = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(now, |d| d.as_secs());
            if is_last_run_name(name) {
                if now.saturating_sub(mtime) > retention.max_age_secs {
                    let _ = fs::remove_file(entry.path());
                }
                continue;
            }
            if fsx::is_temp_name(name) {
                if now.saturating_sub(mtime) > STALE_TEMP_SECS {
                    let _ = fs::remove_file(entry.path());
                }
                continue;
            }
            if let Some((id, "log")) = own_name(name) {
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
                for ext in EXTENSIONS {
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
        let bytes = fsx::read_limited(&self.meta_path(id), METADATA_LIMIT).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Where the ledger lives: `<data dir>/ledger.jsonl`.
    pub fn ledger_path(&self) -> PathBuf {
        self.root.join("ledger.jsonl")
    }

    /// Appends one line to the ledger `tj stats` reads (`<data dir>/ledger.jsonl`, 0600),
    /// with one `write(2)`, so that lines from concurrent tj processes never interleave.
    ///
    /// On a file opened `O_APPEND`, the kernel moves to the end and writes under the inode's
    /// lock, so one `write` call lands whole and contiguous, whatever the other writers do.
    /// `write_all` would not do: after a short write (a full disk, a quota, a signal on a
    /// network file system) it writes the rest with a second call, which may land after
    /// another process's line, tearing both. Here a short write is ended with a newline of
    /// its own, so it spoils only its own line (which `tj stats` skips and counts), and is
    /// reported. Strings are bounded ([`LEDGER_FIELD_MAX`]) and the whole line too
    /// ([`LEDGER_LINE_MAX`]), so a reader can skip anything longer as corrupt.
    pub fn append_ledger(&self, entry: &LedgerEntry) -> Result<()> {
        let line = ledger_line(entry)?;
        let path = self.ledger_path();
        let fail = || format!("could not append to the ledger `{}`", path.display());
        let mut file = fsx::open_append(&path).with_context(fail)?;
        let written = loop {
            match file.write(&line) {
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                other => break other.with_context(fail)?,
            }
        };
        if written < line.len() {
            let _ = file.write(b"\n");
            bail!("{}: only {written} of {} bytes were written", fail(), line.len());
        }
        Ok(())
    }

    /// [`Store::append_ledger`] for a run that stored nothing: the data directory is
    /// checked (or created) first, as storing would have done.
    pub fn append_ledger_alone(&self, entry: &LedgerEntry) -> Result<()> {
        fsx::ensure_private_dir(&self.root)
            .map_err(|err| refusal(err, "not writing the ledger"))?;
        self.append_ledger(entry)
    }

    /// The artifact id and time of the last run recorded under `key` ([`run_key`]), if any.
    pub fn last_run(&self, key: &str) -> Option<(String, u64)> {
        let bytes = fsx::read_limited(&self.last_run_path(key), LAST_RUN_LIMIT).ok()?;
        let text = std::str::from_utf8(&bytes).ok()?;
        let (id, time) = text.trim_end().split_once(' ')?;
        let time = time.parse().ok()?;
        fsx::is_id(id).then(|| (id.to_owned(), time))
    }

    /// Records `id` as the last run under `key` ([`run_key`]), for the next run's delta
    /// (`reduce::delta`). A cache tj can do without: replaced without durability.
    pub fn set_last_run(&self, key: &str, id: &str, time: u64) -> Result<()> {
        fsx::replace_volatile(&self.last_run_path(key), format!("{id} {time}\n").as_bytes())
            .context("could not record the run for the next run's delta")
    }

    fn last_run_path(&self, key: &str) -> PathBuf {
        self.spill_dir().join(format!("{key}.{LAST_RUN_EXT}"))
    }

    /// Stores the rendition an artifact was given, for `tj expand --reduced`. The same
    /// rendition stored before (the same output reduced alike) is left as it is.
    pub fn write_rendition(&self, id: &str, text: &str) -> Result<()> {
        let path = self.spill_dir().join(format!("{id}.txt"));
        if fsx::holds(&path, text.as_bytes()) {
            return Ok(());
        }
        fsx::replace_volatile(&path, text.as_bytes()).context("could not store the rendition")
    }

    /// Reads the rendition stored for an artifact.
    pub fn read_rendition(&self, id: &str) -> Result<String> {
        let id = self.resolve(id)?;
        let path = self.spill_dir().join(format!("{id}.txt"));
        let bytes = fsx::read(&path).with_context(|| format!("no rendition stored for `{id}`"))?;
        String::from_utf8(bytes)
            .with_context(|| format!("the rendition stored for `{id}` is not text"))
    }

    /// Reads the rendition stored for the full id `id`, refusing one larger than `limit`
    /// bytes. Unlike [`Store::read_rendition`] it lists no directory: `tj rules replay`
    /// reads hundreds in a row.
    pub fn read_rendition_within(&self, id: &str, limit: u64) -> Result<String> {
        if !fsx::is_id(id) {
            bail!("`{id}` is not an artifact id");
        }
        let path = self.spill_dir().join(format!("{id}.txt"));
        let bytes = fsx::read_limited(&path, limit)
            .with_context(|| format!("could not read the rendition stored for `{id}`"))?;
        String::from_utf8(bytes)
            .with_context(|| format!("the rendition stored for `{id}` is not text"))
    }

    /// Reads the tail kept past the disk cap, if any.
    pub fn read_tail(&self, id: &str) -> Option<Vec<u8>> {
        fsx::read(&self.spill_dir().join(format!("{id}.tail"))).ok()
    }

    /// Every artifact's metadata, newest first. Unreadable or corrupt entries are skipped and
    /// counted.
    pub fn list(&self) -> Result<(Vec<Metadata>, usize)> {
        let Some(entries) = self.entries()? else { return Ok((Vec::new(), 0)) };
        let mut out = Vec::new();
        let mut corrupt = 0;
        for (id, ext) in entries {
            if ext != "json" {
                continue;
            }
            let path = self.meta_path(&id);
            let bytes = fsx::read_limited(&path, METADATA_LIMIT).ok();
            match bytes.and_then(|b| serde_json::from_slice::<Metadata>(&b).ok()) {
                Some(meta) => out.push(meta),
                None => corrupt += 1,
            }
        }
        out.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| a.id.cmp(&b.id)));
        Ok((out, corrupt))
    }
}

/// The longest string field of a ledger line, in bytes; longer ones are cut (at a character
/// boundary, marked `…`). Commands are rarely longer than this (a heredoc is), and a
/// command cut short still groups by its program in `tj stats`.
pub const LEDGER_FIELD_MAX: usize = 2048;

/// The longest ledger line written, and read (`stats::LINE_MAX`): six bounded strings,
/// even if every byte of each had to be escaped, fit several times over.
pub const LEDGER_LINE_MAX: usize = 64 * 1024;

/// `entry` as one JSON line, its strings cut to [`LEDGER_FIELD_MAX`].
fn ledger_line(entry: &LedgerEntry) -> Result<Vec<u8>> {
    let fits = |s: &str| s.len() <= LEDGER_FIELD_MAX;
    let strings = [&entry.id, &entry.command, &entry.rule, &entry.family];
    let optional = [&entry.session, &entry.cwd];
    let mut line = if strings.iter().all(|s| fits(s))
        && optional.iter().all(|s| s.as_deref().is_none_or(fits))
    {
        serde_json::to_vec(entry)
    } else {
        let cut = |s: &str| bounded(s).into_owned();
        serde_json::to_vec(&LedgerEntry {
            id: cut(&entry.id),
            command: cut(&entry.command),
            rule: cut(&entry.rule),
            family: cut(&entry.family),
            session: entry.session.as_deref().map(cut),
            cwd: entry.cwd.as_deref().map(cut),
            ..entry.clone()
        })
    }
    .context("could not encode the ledger entry")?;
    line.push(b'\n');
    if line.len() > LEDGER_LINE_MAX {
        bail!("the ledger entry is {} bytes, more than {LEDGER_LINE_MAX}", line.len());
    }
    Ok(line)
}

/// `text` cut to at most [`LEDGER_FIELD_MAX`] bytes, at a character boundary, ending in `…`.
fn bounded(text: &str) -> std::borrow::Cow<'_, str> {
    if text.len() <= LEDGER_FIELD_MAX {
        return text.into();
    }
    let end = crate::text::floor_char_boundary(text, LEDGER_FIELD_MAX - '…'.len_utf8());
    format!("{}…", &text[..end]).into()
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
    /// The selected rule's family (absent in ledgers written before it was recorded: take
    /// the rule id's part before `/`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub family: String,
    /// `TJ_SESSION`, if set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
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

/// A run of the same command in the same session and directory within this many seconds
/// of the last one leads with what changed since (`reduce::delta`).
pub const DELTA_TTL_SECS: u64 = 4 * 3600;

/// Returns true if and only if `prev` (read before this run overwrote it) describes the
/// same output of the same command, in the same place and the same `TJ_SESSION`, recently,
/// that an agent was given a rendition of (a run watched live was never shown to one).
pub fn is_repeat(prev: &Metadata, now: &Metadata) -> bool {
    !prev.sha256.is_empty()
        && !prev.watched()
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
    use std::fs::File;

    use super::*;
    use crate::testing::TempDir;

    fn temp(name: &str) -> TempDir {
        TempDir::new(&format!("store-{name}"))
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
        fsx::replace(&root.join("spill/ffffffffffff.json"), b"{ corrupt").unwrap();
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
    fn ledger_lines_are_bounded() {
        let root = temp("ledger-bounded");
        let store = Store::at(&root);
        store.prepare().unwrap();
        let long = "é".repeat(LEDGER_FIELD_MAX); // two bytes each: cut inside a character
        let entry = LedgerEntry {
            command: format!("cargo test {long}"),
            cwd: Some(long),
            session: Some("\u{1}".repeat(LEDGER_FIELD_MAX)), // six bytes each when escaped
            rule: "tests/cargo-test".into(),
            ..LedgerEntry::default()
        };
        store.append_ledger(&entry).unwrap();
        let text = fs::read_to_string(store.ledger_path()).unwrap();
        assert!(text.len() <= LEDGER_LINE_MAX && text.ends_with('\n'));
        let read: LedgerEntry = serde_json::from_str(&text).unwrap();
        assert!(read.command.starts_with("cargo test é") && read.command.ends_with('…'));
        assert!(read.command.len() <= LEDGER_FIELD_MAX, "{}", read.command.len());
        assert!(read.cwd.unwrap().len() <= LEDGER_FIELD_MAX);
        assert_eq!(read.rule, "tests/cargo-test");
        fs::remove_dir_all(&root).unwrap();
    }

    /// Sets the mtime of `path` (a regular file) to `secs` seconds ago.
    fn age(path: &Path, secs: u64) {
        let when = std::time::SystemTime::now() - std::time::Duration::from_secs(secs);
        File::options().write(true).open(path).unwrap().set_modified(when).unwrap();
    }

    fn mtime(path: &Path) -> std::time::SystemTime {
        fs::symlink_metadata(path).unwrap().modified().unwrap()
    }

    const DAY: u64 = 24 * 3600;

    #[test]
    fn storing_identical_output_again_refreshes_its_time_so_the_sweep_keeps_it() {
        let root = temp("refresh");
        let store = Store::at(&root);
        let art = store.persist(b"same output\n", &mut Metadata::default()).unwrap();
        let path = Path::new(&art.path);
        age(path, 8 * DAY);
        let again = store.persist(b"same output\n", &mut Metadata::default()).unwrap();
        assert_eq!(again.id, art.id);
        let fresh = mtime(path).elapsed().unwrap();
        assert!(fresh < std::time::Duration::from_secs(3600), "mtime not refreshed: {fresh:?}");
        assert_eq!(store.sweep(&Retention::default(), None).unwrap(), 0);
        assert_eq!(store.read(&art.id).unwrap(), b"same output\n");
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn the_last_run_is_kept_per_session_place_and_command_and_swept_when_old() {
        let root = temp("last-run");
        let store = Store::at(&root);
        let meta = Metadata {
            session: Some("s".into()),
            cwd: Some("/w".into()),
            argv: vec!["cargo".into(), "test".into()],
            ..Metadata::default()
        };
        let key = run_key(&meta).unwrap();
        assert_eq!(key.len(), 16);
        assert!(is_last_run_name(&format!("{key}.last")));
        assert_eq!(run_key(&Metadata { session: None, ..meta.clone() }), None);
        for other in [
            Metadata { session: Some("t".into()), ..meta.clone() },
            Metadata { cwd: Some("/x".into()), ..meta.clone() },
            Metadata { argv: vec!["cargo".into(), "test".into(), "x".into()], ..meta.clone() },
            Metadata { argv: vec!["cargo".into(), "te".into(), "st".into()], ..meta.clone() },
        ] {
            assert_ne!(run_key(&other).unwrap(), key, "{other:?}");
        }

        assert_eq!(store.last_run(&key), None);
        store.prepare().unwrap();
        store.set_last_run(&key, "0123456789ab", 42).unwrap();
        assert_eq!(store.last_run(&key), Some(("0123456789ab".into(), 42)));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(store.last_run_path(&key)).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // Not one of tj's ids: never read as one, never resolved by `tj expand`.
        fsx::replace(&store.last_run_path(&key), b"../../etc 42\n").unwrap();
        assert_eq!(store.last_run(&key), None);
        assert!(store.resolve(&key[..6]).is_err());

        // Old records go with the sweep; a fresh one stays.
        store.set_last_run(&key, "0123456789ab", 42).unwrap();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(8 * 24 * 3600);
        File::options()
            .write(true)
            .open(store.last_run_path(&key))
            .unwrap()
            .set_modified(old)
            .unwrap();
        let fresh = run_key(&Metadata { session: Some("u".into()), ..meta }).unwrap();
        store.set_last_run(&fresh, "0123456789ab", 43).unwrap();
        store.sweep(&Retention::default(), None).unwrap();
        assert_eq!(store.last_run(&key), None);
        assert_eq!(store.last_run(&fresh), Some(("0123456789ab".into(), 43)));
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn sweep_removes_only_regular_files_of_the_stores_own_form() {
        let root = temp("sweep-own");
        let store = Store::at(&root);
        store.prepare().unwrap();
        let spill = root.join("spill");
        let outside = temp("sweep-own-outside");
        fs::create_dir_all(&outside).unwrap();
        let victim = outside.join("victim.log");
        fsx::replace(&victim, b"not tj's").unwrap();
        age(&victim, 30 * DAY);
        std::os::unix::fs::symlink(&victim, spill.join("aaaaaaaaaaaa.log")).unwrap();
        let theirs = [
            "app.log",
            "error.json",
            "0123456789AB.log",
            "0123456789ab.exe",
            "notes.tmp",
            ".x.tmp",
        ];
        let ours =
            ["0123456789ab.log", "0123456789ab.json", "0123456789ab.txt", ".capture-1-2.tmp"];
        for name in theirs.iter().chain(&ours) {
            fsx::replace(&spill.join(name), b"old").unwrap();
            age(&spill.join(name), 30 * DAY);
        }
        store.sweep(&Retention::default(), None).unwrap();
        for name in theirs {
            assert!(spill.join(name).exists(), "{name} is not tj's and must survive");
        }
        for name in ours {
            assert!(!spill.join(name).exists(), "{name} is tj's, expired, and must go");
        }
        assert!(fs::symlink_metadata(spill.join("aaaaaaaaaaaa.log")).is_ok());
        assert_eq!(fs::read(&victim).unwrap(), b"not tj's");
        fs::remove_dir_all(&root).unwrap();
        fs::remove_dir_all(&outside).unwrap();
    }

    #[test]
    fn a_spill_dir_that_is_a_symlink_is_refused_and_nothing_it_points_to_is_swept() {
        let root = temp("spill-link");
        let victims = temp("spill-link-victims");
        fs::create_dir_all(&victims).unwrap();
        let names = ["app.log", "error.log", "0123456789ab.log", "0123456789ab.json"];
        for name in names {
            fsx::replace(&victims.join(name), b"precious").unwrap();
            age(&victims.join(name), 30 * DAY);
        }
        fsx::ensure_private_dir(&root).unwrap();
        std::os::unix::fs::symlink(&victims, root.join("spill")).unwrap();
        let store = Store::at(&root);
        let err = store.sweep(&Retention::default(), None).unwrap_err();
        assert!(format!("{err:#}").contains("is a symbolic link"), "{err:#}");
        let err = store.persist(b"x", &mut Metadata::default()).unwrap_err();
        assert!(format!("{err:#}").contains("not storing the original"), "{err:#}");
        assert!(store.list().is_err());
        for name in names {
            assert_eq!(fs::read(victims.join(name)).unwrap(), b"precious", "{name}");
        }
        assert_eq!(fs::read_dir(&victims).unwrap().count(), names.len());
        fs::remove_dir_all(&root).unwrap();
        fs::remove_dir_all(&victims).unwrap();
    }

    #[test]
    fn planted_symlinks_in_the_store_are_never_followed() {
        let root = temp("planted");
        let store = Store::at(&root);
        store.prepare().unwrap();
        let outside = temp("planted-outside");
        fs::create_dir_all(&outside).unwrap();
        let victim = outside.join("victim");
        fsx::replace(&victim, b"victim").unwrap();
        age(&victim, 30 * DAY);
        let before = mtime(&victim);
        let (id, _) = id_of(b"out\n");
        let spill = root.join("spill");
        for link in [
            root.join(".last-sweep"),
            root.join("ledger.jsonl"),
            spill.join(format!("{id}.log")),
            spill.join(format!("{id}.json")),
            spill.join(format!("{id}.txt")),
        ] {
            std::os::unix::fs::symlink(&victim, &link).unwrap();
        }
        // Reading through a planted link is refused, not followed.
        assert!(store.read(&id).is_err());
        assert!(store.previous(&id).is_none());
        assert!(store.read_rendition(&id).is_err());
        let mut meta = Metadata::default();
        let art = store.persist(b"out\n", &mut meta).unwrap();
        store.write_metadata(&meta).unwrap();
        store.write_rendition(&art.id, "rendition").unwrap();
        assert!(store.sweep_due());
        assert!(store.append_ledger(&LedgerEntry::default()).is_err());
        assert_eq!(fs::read(&victim).unwrap(), b"victim");
        assert_eq!(mtime(&victim), before);
        // The store's own names were replaced by its own files; the ledger and marker links
        // stay links, unused.
        assert_eq!(store.read(&art.id).unwrap(), b"out\n");
        assert!(fs::symlink_metadata(root.join("ledger.jsonl")).unwrap().is_symlink());
        fs::remove_dir_all(&root).unwrap();
        fs::remove_dir_all(&outside).unwrap();
    }

    #[test]
    fn an_existing_data_dir_that_is_not_private_is_refused_and_never_chmodded() {
        use std::os::unix::fs::PermissionsExt;
        for bits in [0o1777, 0o775, 0o770] {
            let root = temp(&format!("open-{bits:o}"));
            fs::create_dir_all(&root).unwrap();
            fs::set_permissions(&root, fs::Permissions::from_mode(bits)).unwrap();
            let store = Store::at(&root);
            let err = store.persist(b"x", &mut Metadata::default()).unwrap_err();
            let msg = format!("{err:#}");
            assert!(msg.contains(&format!("{bits:04o}")) && msg.contains("chmod 700"), "{msg}");
            let mode = fs::symlink_metadata(&root).unwrap().permissions().mode() & 0o7777;
            assert_eq!(mode, bits);
            assert!(!root.join("spill").exists());
            fs::remove_dir_all(&root).unwrap();
        }
    }

    #[test]
    fn an_identical_rendition_is_left_as_it_is_and_a_new_one_replaces_it() {
        use std::os::unix::fs::MetadataExt;
        let root = temp("rendition");
        let store = Store::at(&root);
        let mut meta = Metadata::default();
        let artifact = store.persist(b"output\n", &mut meta).unwrap();
        store.write_rendition(&artifact.id, "reduced").unwrap();
        let path = store.spill_dir().join(format!("{}.txt", artifact.id));
        let inode = fs::metadata(&path).unwrap().ino();
        store.write_rendition(&artifact.id, "reduced").unwrap();
        assert_eq!(
            fs::metadata(&path).unwrap().ino(),
            inode,
            "the same rendition is not rewritten"
        );
        store.write_rendition(&artifact.id, "reduced otherwise").unwrap();
        assert_eq!(store.read_rendition(&artifact.id).unwrap(), "reduced otherwise");
        meta.exit_code = Some(3);
        store.write_metadata(&meta).unwrap();
        meta.exit_code = Some(4);
        store.write_metadata(&meta).unwrap();
        assert_eq!(store.previous(&artifact.id).unwrap().exit_code, Some(4));
        let names: Vec<String> = fs::read_dir(store.spill_dir())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !fsx::is_temp_name(n)), "no temp file left: {names:?}");
    }

    #[test]
    fn id_is_a_sha256_prefix() {
        let (id, full) = id_of(b"");
        assert_eq!(full, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(id, "e3b0c44298fc");
        // The constant taken for no bytes is what the hasher gives, and the hex of any other
        // output is the hasher's digest.
        assert_eq!(EMPTY_SHA256, <[u8; 32]>::from(Sha256::digest([])));
        let digest = Sha256::digest(b"out\n");
        let expected: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(id_of(b"out\n").1, expected);
    }

    #[test]
    fn a_capture_without_digest_is_stored_under_an_id_of_its_own() {
        use crate::capture::{Capture, Limits};
        let root = temp("nodigest");
        let store = Store::at(&root);
        let captured = |digest: bool| {
            let mut capture = Capture::new(None, Limits::default());
            if !digest {
                capture = capture.without_digest();
            }
            capture.write(b"out\n");
            capture.finish()
        };
        let mut given = Metadata::default();
        let hashed = store.adopt(&captured(true), &mut given).unwrap();
        assert_eq!(hashed.id, id_of(b"out\n").0);
        let mut ids = vec![hashed.id.clone()];
        for _ in 0..2 {
            let mut meta = Metadata::default();
            let art = store.adopt(&captured(false), &mut meta).unwrap();
            assert!(fsx::is_id(&art.id), "{}", art.id);
            assert!(!ids.contains(&art.id), "{} reused", art.id);
            assert_eq!((meta.id.as_str(), meta.sha256.as_str()), (art.id.as_str(), ""));
            assert_eq!(store.read(&art.id).unwrap(), b"out\n");
            ids.push(art.id);
        }
        // The same bytes stored under the content's id are where they were.
        assert_eq!(store.read(&hashed.id).unwrap(), b"out\n");
        let _ = fs::remove_dir_all(&root);
    }
}
