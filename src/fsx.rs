//! Careful file-system primitives for the places where tj reads and writes in directories
//! that another user, or a hostile repository, may have touched: the store (`store`), the
//! capture's spill file (`capture`) and the rendition's side file (`emit`).
//!
//! Each primitive refuses rather than follows. A symbolic link in the last component of a
//! path is never followed (`O_NOFOLLOW`); only regular files are read, appended to or
//! touched, and a FIFO in their place cannot block the open (`O_NONBLOCK`, cleared once the
//! file is known to be regular); a temporary file is created with `O_CREAT|O_EXCL` under a
//! name nobody can predict; and a directory tj did not create is never chmodded: one that
//! is not the user's own and private is refused with the reason and the way out.
//!
//! What this module does not guard: a component *above* the last one being swapped between
//! a check and a use. The store checks that its directories are real, the user's and 0700,
//! so nobody but the user (and root) can plant anything inside them; a data directory whose
//! parent others may write is beyond what path-based checks can make safe.
//!
//! Unix only, as the crate is (`nix` is an unconditional dependency).

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use nix::fcntl::{FcntlArg, OFlag, fcntl};

/// Mode of the directories tj creates: outputs hold secrets.
pub const DIR_MODE: u32 = 0o700;

/// Mode of the files tj creates.
pub const FILE_MODE: u32 = 0o600;

/// The effective user id: the owner tj's own files and directories must have.
pub fn euid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// Why a directory is not fit to hold tj's private files.
#[derive(Debug)]
pub enum DirError {
    /// It did not exist and could not be created.
    Create {
        /// The directory.
        path: PathBuf,
        /// What the system said.
        err: io::Error,
    },
    /// It could not be examined.
    Stat {
        /// The directory.
        path: PathBuf,
        /// What the system said.
        err: io::Error,
    },
    /// It is a symbolic link (to a directory or not): whoever can change the link decides
    /// where tj writes.
    Symlink {
        /// The link.
        path: PathBuf,
    },
    /// It is something other than a directory.
    NotDir {
        /// The path.
        path: PathBuf,
        /// What it is instead ("regular file", "FIFO", …).
        kind: &'static str,
    },
    /// It belongs to another user, who could read or replace what tj keeps there.
    Owner {
        /// The directory.
        path: PathBuf,
        /// Its owner.
        uid: u32,
        /// The effective user id of tj.
        euid: u32,
    },
    /// Group or others may read or write it.
    Mode {
        /// The directory.
        path: PathBuf,
        /// Its permission bits, with the sticky, setuid and setgid bits.
        mode: u32,
    },
}

impl fmt::Display for DirError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DirError::Create { path, err } => {
                write!(f, "could not create `{}`: {err}", path.display())
            }
            DirError::Stat { path, err } => {
                write!(f, "could not examine `{}`: {err}", path.display())
            }
            DirError::Symlink { path } => {
                write!(f, "`{}` is a symbolic link, not a directory", path.display())
            }
            DirError::NotDir { path, kind } => {
                write!(f, "`{}` is a {kind}, not a directory", path.display())
            }
            DirError::Owner { path, uid, euid } => write!(
                f,
                "`{}` belongs to uid {uid}, not to you (uid {euid}); use a directory of your own",
                path.display()
            ),
            DirError::Mode { path, mode } => {
                // Suggesting `chmod 700 /tmp` or `chmod 700 /` would break the system: the
                // fix is offered for a directory that holds nothing else.
                write!(
                    f,
                    "`{p}` is writable by group or others (mode {mode:04o}); use a private \
                     directory, or `chmod 700 {p}` if nothing else lives there",
                    p = path.display()
                )
            }
        }
    }
}

impl std::error::Error for DirError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DirError::Create { err, .. } | DirError::Stat { err, .. } => Some(err),
            _ => None,
        }
    }
}

impl From<DirError> for io::Error {
    fn from(err: DirError) -> io::Error {
        let kind = match &err {
            DirError::Create { err, .. } | DirError::Stat { err, .. } => err.kind(),
            _ => io::ErrorKind::PermissionDenied,
        };
        io::Error::new(kind, err)
    }
}

/// Creates `dir` (and missing parents, all 0700) if it does not exist, then checks it as
/// [`check_private_dir`] does. Never changes the mode of a directory that exists: one tj
/// did not make private is refused, not tightened (`TJ_DATA_DIR=/` must not make `/` 0700).
pub fn ensure_private_dir(dir: &Path) -> Result<(), DirError> {
    if check_private_dir(dir)? {
        return Ok(());
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)
        .map_err(|err| DirError::Create { path: dir.to_owned(), err })?;
    // Checked again: another process may have made it first, or something else in its place.
    if check_private_dir(dir)? {
        Ok(())
    } else {
        let err = io::Error::from(io::ErrorKind::NotFound);
        Err(DirError::Create { path: dir.to_owned(), err })
    }
}

/// Checks that `dir`, if it exists, is a real directory (not a symbolic link), owned by the
/// effective user, and not writable by group or others (who could plant or swap what tj
/// keeps there). A directory others may only read is accepted: everything tj puts in it is
/// 0600, and the directories tj creates are 0700. Returns false if and only if
/// nothing exists at `dir`; creates nothing and changes nothing.
pub fn check_private_dir(dir: &Path) -> Result<bool, DirError> {
    let meta = match fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        // A file where a parent should be (ENOTDIR) is "absent" too: creating it then fails
        // with the reason.
        Err(err)
            if matches!(err.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) =>
        {
            return Ok(false);
        }
        Err(err) => return Err(DirError::Stat { path: dir.to_owned(), err }),
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        return Err(DirError::Symlink { path: dir.to_owned() });
    }
    if !kind.is_dir() {
        return Err(DirError::NotDir { path: dir.to_owned(), kind: kind_name(&kind) });
    }
    let euid = euid();
    if meta.uid() != euid {
        return Err(DirError::Owner { path: dir.to_owned(), uid: meta.uid(), euid });
    }
    if meta.mode() & 0o022 != 0 {
        return Err(DirError::Mode { path: dir.to_owned(), mode: meta.mode() & 0o7777 });
    }
    Ok(true)
}

/// What a file type is, with its article ("a FIFO", "a symbolic link"), for messages.
pub fn kind_phrase(kind: &fs::FileType) -> &'static str {
    if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_file() {
        "a regular file"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

/// [`kind_phrase`] without its article ("FIFO", "symbolic link").
pub fn kind_name(kind: &fs::FileType) -> &'static str {
    let phrase = kind_phrase(kind);
    phrase.strip_prefix("a ").unwrap_or(phrase)
}

/// Why [`read_regular`] read nothing.
#[derive(Debug)]
pub enum ReadError {
    /// Opening or reading failed (`NotFound` included).
    Io(io::Error),
    /// Not a regular file (what it is instead, as [`kind_phrase`] says it); it was not
    /// opened, or opened without blocking and closed unread.
    NotRegular(&'static str),
    /// Larger than the cap.
    TooLarge,
}

/// Reads the regular file at `path`, at most `max` bytes, and nothing that is not one.
///
/// The type is checked before opening (a device is never opened) and again on the open
/// descriptor, which is opened `O_NONBLOCK` (a FIFO swapped in meanwhile cannot block the
/// open), `O_NOCTTY` and, unless `follow`, `O_NOFOLLOW` (the last component must not be a
/// symlink). The read itself is capped: a file that grows, or lies about its size, still
/// costs at most `max + 1` bytes.
pub fn read_regular(path: &Path, follow: bool, max: u64) -> Result<Vec<u8>, ReadError> {
    let meta = if follow { fs::metadata(path) } else { fs::symlink_metadata(path) };
    let meta = meta.map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular(kind_phrase(&meta.file_type())));
    }
    let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | nofollow)
        .open(path)
        .map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular(kind_phrase(&meta.file_type())));
    }
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1)).read_to_end(&mut bytes).map_err(ReadError::Io)?;
    if bytes.len() as u64 > max {
        return Err(ReadError::TooLarge);
    }
    Ok(bytes)
}

/// Opens `path` with `options` plus `O_NOFOLLOW|O_NONBLOCK`, and returns it only if it is a
/// regular file, in blocking mode again. A symbolic link fails the open (`ELOOP`); a FIFO
/// opens without waiting for a peer (or fails with `ENXIO`) and is then refused.
fn open_regular(path: &Path, options: &mut OpenOptions) -> io::Result<File> {
    let file =
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path).map_err(|err| {
            // `O_NOFOLLOW` on a symbolic link fails with ELOOP, whose text ("Too many levels of
            // symbolic links") says nothing of why.
            if err.raw_os_error() == Some(libc::ELOOP) {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("`{}` is a symbolic link, which tj does not follow", path.display()),
                )
            } else {
                err
            }
        })?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` is {}, not a regular file", path.display(), kind_phrase(&kind)),
        ));
    }
    set_blocking(&file)?;
    Ok(file)
}

/// Clears `O_NONBLOCK` on `file`, so writes wait for a slow reader instead of failing.
pub fn set_blocking(file: &File) -> io::Result<()> {
    let flags = fcntl(file, FcntlArg::F_GETFL).map_err(io::Error::from)?;
    let flags = OFlag::from_bits_retain(flags) & !OFlag::O_NONBLOCK;
    fcntl(file, FcntlArg::F_SETFL(flags)).map_err(io::Error::from)?;
    Ok(())
}

/// Opens the regular file at `path` for reading, never through a symbolic link.
pub fn open_read(path: &Path) -> io::Result<File> {
    open_regular(path, OpenOptions::new().read(true))
}

/// Reads the regular file at `path` whole, never through a symbolic link.
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open_read(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Reads the regular file at `path`, never through a symbolic link, refusing one larger
/// than `limit` bytes (checked while reading, not from a size reported before it):
/// [`read_regular`] with its refusals as I/O errors.
pub fn read_limited(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    read_regular(path, false, limit).map_err(|err| match err {
        ReadError::Io(err) => err,
        ReadError::NotRegular(kind) => io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` is {kind}, not a regular file", path.display()),
        ),
        ReadError::TooLarge => io::Error::new(
            io::ErrorKind::InvalidData,
            format!("`{}` is larger than {limit} bytes", path.display()),
        ),
    })
}

/// Opens the regular file at `path` for appending, creating it 0600 if it does not exist;
/// never through a symbolic link.
pub fn open_append(path: &Path) -> io::Result<File> {
    open_regular(path, OpenOptions::new().append(true).create(true).mode(FILE_MODE))
}

/// Sets the modification time of the regular file at `path` to now, never through a
/// symbolic link; with `create`, creates it 0600 (empty) if it does not exist. Its contents
/// are never truncated.
pub fn touch(path: &Path, create: bool) -> io::Result<()> {
    let mut options = OpenOptions::new();
    if create {
        options.write(true).create(true).mode(FILE_MODE);
    } else {
        // Setting the times needs ownership, not write permission.
        options.read(true);
    }
    let file = open_regular(path, &mut options)?;
    file.set_modified(std::time::SystemTime::now())
}

/// Sets the modification time of `path` to now, without opening it and without following
/// a symbolic link there: one system call where [`touch`] makes six. For a file the caller
/// has just seen to be a regular file of its own; whatever may have been swapped in since
/// only has its time changed (a symbolic link itself, never what it points to).
pub fn touch_nofollow(path: &Path) -> io::Result<()> {
    use nix::sys::stat::{UtimensatFlags, utimensat};
    use nix::sys::time::TimeSpec;
    utimensat(
        nix::fcntl::AT_FDCWD,
        path,
        &TimeSpec::UTIME_OMIT,
        &TimeSpec::UTIME_NOW,
        UtimensatFlags::NoFollowSymlink,
    )
    .map_err(io::Error::from)
}

/// 64 bits nobody outside this process can predict.
///
/// `RandomState` draws its keys from the operating system's random source (`getrandom`)
/// once per thread and never reveals them; SipHash of a counter under those keys is as good
/// as fresh random bytes for naming a file, without a dependency or a file to open.
pub fn unpredictable() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(SEQ.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    hasher.finish()
}

/// Prefixes of tj's temporary names: [`create_temp`] names files `.<prefix>-<pid>-<hex>.tmp`.
const TEMP_PREFIXES: [&str; 2] = ["capture", "tj"];

/// Creates a new file, 0600, named `.<prefix>-<pid>-<16 random hex digits>.tmp` in `dir`,
/// with `O_CREAT|O_EXCL|O_NOFOLLOW`: nothing planted under a guessed name (a symbolic link,
/// a FIFO, another user's file) is ever opened. `prefix` is one of `capture` and `tj`, the
/// names [`is_temp_name`] recognises.
pub fn create_temp(dir: &Path, prefix: &str) -> io::Result<(PathBuf, File)> {
    debug_assert!(TEMP_PREFIXES.contains(&prefix), "unknown temp prefix {prefix}");
    let mut options = OpenOptions::new();
    options.write(true).create_new(true).mode(FILE_MODE).custom_flags(libc::O_NOFOLLOW);
    let mut tries = 0;
    loop {
        let name = format!(".{prefix}-{}-{:016x}.tmp", std::process::id(), unpredictable());
        let path = dir.join(name);
        match options.open(&path) {
            Ok(file) => return Ok((path, file)),
            // Only a 2^-64 collision gets here; a few retries cover it.
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists && tries < 8 => tries += 1,
            Err(err) => return Err(err),
        }
    }
}

/// Returns true if and only if `name` has the form of a temporary file tj creates (or an
/// earlier version of tj created): `.capture-<pid>-<n>.tmp`, `.<prefix>-<pid>-<hex>.tmp`,
/// or `.<12 hex>.<ext>.<pid>.tmp` (the store's names before it used [`create_temp`]).
pub fn is_temp_name(name: &str) -> bool {
    let Some(body) = name.strip_prefix('.').and_then(|n| n.strip_suffix(".tmp")) else {
        return false;
    };
    let is_hexish = |s: &str| {
        !s.is_empty()
            && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b) || b == b'-')
    };
    for prefix in TEMP_PREFIXES {
        if let Some(rest) = body.strip_prefix(prefix).and_then(|r| r.strip_prefix('-')) {
            return is_hexish(rest);
        }
    }
    // The store's temporary names before it used `create_temp`: `.<id>.<ext>.<pid>.tmp`.
    let mut parts = body.split('.');
    matches!(
        (parts.next(), parts.next(), parts.next(), parts.next()),
        (Some(id), Some(ext), Some(pid), None)
            if is_id(id) && ["log", "json", "tail", "txt"].contains(&ext)
                && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())
    )
}

/// Returns true if and only if `s` is a store id: 12 lowercase hex digits.
pub fn is_id(s: &str) -> bool {
    s.len() == 12 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Writes `bytes` to `path` through a new temporary file in the same directory (see
/// [`create_temp`]) and a rename, so a reader sees the old file or the new one, never half
/// of one. The rename replaces a symbolic link at `path` itself; it never writes through it.
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let (tmp, mut file) = create_temp(dir, "tj")?;
    let result = file.write_all(bytes).and_then(|()| fs::rename(&tmp, path));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// [`replace`] for files that are a cache of what tj can do again (the store's metadata and
/// renditions, a side-channel rendition): as atomic for readers, but cheaper where `path`
/// exists, at the price of durability across a crash.
///
/// Renaming a new file over an existing one makes ext4 (`auto_da_alloc`) write the new
/// file's data out before the rename returns, so that a crash cannot leave an empty file
/// where the old one was: a few milliseconds on every run, often more on a busy disk. An
/// exchange of the two names (`renameat2(RENAME_EXCHANGE)`) is just as atomic for a reader,
/// who sees the old file or the new one, never half of one and never none; the old file,
/// now under the temporary name, is then removed. After a crash the new file may be empty:
/// for these files that means a rendition or a metadata record to be made again, never a
/// lost original. Where the exchange is not available (another system, a file system without
/// it, nothing at `path` yet), this is [`replace`].
pub fn replace_volatile(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    // Only a file or a symbolic link is exchanged: a directory at `path` must make this
    // fail as `replace` does, not end up under a temporary name.
    let swappable = fs::symlink_metadata(path).is_ok_and(|m| !m.is_dir());
    let (tmp, mut file) = create_temp(dir, "tj")?;
    let result = file.write_all(bytes).and_then(|()| {
        if swappable && exchange(&tmp, path)? {
            // `tmp` now names the old file (or the symbolic link that was at `path`).
            let _ = fs::remove_file(&tmp);
            Ok(())
        } else {
            fs::rename(&tmp, path)
        }
    });
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Swaps the names `a` and `b` atomically. `Ok(false)` where that cannot be done (`b` does
/// not exist, or the system or file system has no exchange): nothing changed.
///
/// The system call rather than a libc wrapper, which older glibc and musl lack.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn exchange(a: &Path, b: &Path) -> io::Result<bool> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let a = CString::new(a.as_os_str().as_bytes())?;
    let b = CString::new(b.as_os_str().as_bytes())?;
    // SAFETY: both paths are NUL-terminated strings that outlive the call, which only reads
    // them.
    let done = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if done == 0 {
        return Ok(true);
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::ENOENT | libc::EINVAL | libc::ENOSYS) => Ok(false),
        _ => Err(err),
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> io::Result<bool> {
    Ok(false)
}

/// Returns true if and only if `path` is a regular file (not a symbolic link) holding
/// exactly `bytes`: writing them again would change nothing but its time.
pub fn holds(path: &Path, bytes: &[u8]) -> bool {
    // A longer file fails the read at its cap, a shorter one the comparison.
    read_limited(path, bytes.len() as u64).is_ok_and(|held| held == bytes)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{PermissionsExt, symlink};

    use super::*;

    /// A directory of the test's own, removed on drop.
    fn temp_dir(name: &str) -> crate::testing::TempDir {
        crate::testing::TempDir::created(&format!("fsx-{name}"))
    }

    fn mode(path: &Path) -> u32 {
        fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
    }

    fn mkfifo(path: &Path) {
        nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    }

    #[test]
    fn a_symbolic_link_is_refused_by_name_not_by_errno_text() {
        let tmp = temp_dir("link");
        let target = tmp.0.join("target");
        File::create(&target).unwrap();
        let link = tmp.0.join("link");
        symlink(&target, &link).unwrap();
        let err = open_read(&link).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("`{}` is a symbolic link, which tj does not follow", link.display())
        );
        assert!(open_read(&target).is_ok());
    }

    #[test]
    fn ensure_private_dir_creates_it_and_its_parents_0700() {
        let tmp = temp_dir("create");
        let dir = tmp.0.join("a/b/c");
        ensure_private_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&tmp.0.join("a")), 0o700);
        ensure_private_dir(&dir).unwrap();
    }

    #[test]
    fn a_dir_others_may_write_is_refused_and_its_mode_left_alone() {
        let tmp = temp_dir("open");
        for bits in [0o1777, 0o775, 0o720, 0o702] {
            let dir = tmp.0.join(format!("d{bits:o}"));
            fs::create_dir(&dir).unwrap();
            fs::set_permissions(&dir, fs::Permissions::from_mode(bits)).unwrap();
            let err = ensure_private_dir(&dir).unwrap_err();
            assert!(matches!(err, DirError::Mode { mode, .. } if mode == bits), "{err}");
            let msg = err.to_string();
            assert!(msg.contains("writable") && msg.contains(&format!("{bits:04o}")), "{msg}");
            assert!(msg.contains(&format!("chmod 700 {}", dir.display())), "{msg}");
            assert_eq!(mode(&dir), bits, "the mode of a dir tj did not create is unchanged");
        }
    }

    #[test]
    fn a_dir_others_may_only_read_is_accepted_and_its_mode_left_alone() {
        let tmp = temp_dir("readable");
        for bits in [0o755, 0o750, 0o711] {
            let dir = tmp.0.join(format!("d{bits:o}"));
            fs::create_dir(&dir).unwrap();
            fs::set_permissions(&dir, fs::Permissions::from_mode(bits)).unwrap();
            ensure_private_dir(&dir).unwrap();
            assert_eq!(mode(&dir), bits, "the mode of a dir tj did not create is unchanged");
        }
    }

    #[test]
    fn a_dir_of_another_owner_is_refused() {
        let tmp = temp_dir("owner");
        let dir = tmp.0.join("theirs");
        fs::DirBuilder::new().mode(0o700).create(&dir).unwrap();
        if euid() != 0 {
            eprintln!("skipped: only root can give a directory to another user");
            return;
        }
        std::os::unix::fs::chown(&dir, Some(12345), None).unwrap();
        let err = check_private_dir(&dir).unwrap_err();
        assert!(matches!(err, DirError::Owner { uid: 12345, .. }), "{err}");
        assert!(err.to_string().contains("uid 12345"), "{err}");
    }

    #[test]
    fn a_symlink_to_a_private_dir_is_refused() {
        let tmp = temp_dir("link");
        let real = tmp.0.join("real");
        fs::DirBuilder::new().mode(0o700).create(&real).unwrap();
        let link = tmp.0.join("link");
        symlink(&real, &link).unwrap();
        assert!(matches!(ensure_private_dir(&link), Err(DirError::Symlink { .. })));
        // A dangling one too: creating "through" it would make a dir where it points.
        let dangling = tmp.0.join("dangling");
        symlink(tmp.0.join("nowhere"), &dangling).unwrap();
        assert!(matches!(ensure_private_dir(&dangling), Err(DirError::Symlink { .. })));
        assert!(!tmp.0.join("nowhere").exists());
    }

    #[test]
    fn a_file_or_fifo_in_place_of_a_dir_is_refused() {
        let tmp = temp_dir("notdir");
        let file = tmp.0.join("file");
        File::create(&file).unwrap();
        assert!(matches!(
            ensure_private_dir(&file),
            Err(DirError::NotDir { kind: "regular file", .. })
        ));
        let fifo = tmp.0.join("fifo");
        mkfifo(&fifo);
        assert!(matches!(ensure_private_dir(&fifo), Err(DirError::NotDir { kind: "FIFO", .. })));
    }

    #[test]
    fn reads_refuse_symlinks_fifos_and_oversized_files() {
        let tmp = temp_dir("read");
        let file = tmp.0.join("file");
        File::create(&file).unwrap().write_all(b"12345").unwrap();
        assert_eq!(read(&file).unwrap(), b"12345");
        assert_eq!(read_limited(&file, 5).unwrap(), b"12345");
        assert!(read_limited(&file, 4).is_err());
        let link = tmp.0.join("link");
        symlink(&file, &link).unwrap();
        assert!(read(&link).is_err(), "a symlink to a regular file is not followed");
        let fifo = tmp.0.join("fifo");
        mkfifo(&fifo);
        // Without O_NONBLOCK this open would wait forever for a writer.
        let err = read(&fifo).unwrap_err();
        assert!(err.to_string().contains("FIFO"), "{err}");
        assert!(read(Path::new("/dev/zero")).is_err(), "a device is not a regular file");
    }

    #[test]
    fn append_and_touch_never_write_through_a_symlink() {
        let tmp = temp_dir("append");
        let victim = tmp.0.join("victim");
        File::create(&victim).unwrap().write_all(b"keep").unwrap();
        let old = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        File::options().write(true).open(&victim).unwrap().set_modified(old).unwrap();
        let link = tmp.0.join("link");
        symlink(&victim, &link).unwrap();
        assert!(open_append(&link).is_err());
        assert!(touch(&link, true).is_err());
        assert!(touch(&link, false).is_err());
        assert_eq!(fs::read(&victim).unwrap(), b"keep");
        assert_eq!(fs::metadata(&victim).unwrap().modified().unwrap(), old);

        let fifo = tmp.0.join("fifo");
        mkfifo(&fifo);
        assert!(open_append(&fifo).is_err(), "no reader: ENXIO, not a hang");
        assert!(touch(&fifo, true).is_err());
    }

    #[test]
    fn touch_refreshes_the_mtime_and_keeps_the_contents() {
        let tmp = temp_dir("touch");
        let file = tmp.0.join("file");
        File::create(&file).unwrap().write_all(b"data").unwrap();
        let old = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        File::options().write(true).open(&file).unwrap().set_modified(old).unwrap();
        touch(&file, false).unwrap();
        assert!(fs::metadata(&file).unwrap().modified().unwrap() > old);
        assert_eq!(fs::read(&file).unwrap(), b"data");
        let made = tmp.0.join("made");
        touch(&made, true).unwrap();
        assert_eq!(mode(&made), 0o600);
        assert!(touch(&tmp.0.join("absent"), false).is_err());
    }

    #[test]
    fn touch_nofollow_refreshes_the_mtime_of_the_file_not_of_a_link_s_target() {
        let tmp = temp_dir("touch-nofollow");
        let file = tmp.0.join("file");
        File::create(&file).unwrap().write_all(b"data").unwrap();
        let old = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        File::options().write(true).open(&file).unwrap().set_modified(old).unwrap();
        let link = tmp.0.join("link");
        symlink(&file, &link).unwrap();
        touch_nofollow(&link).unwrap();
        assert_eq!(fs::metadata(&file).unwrap().modified().unwrap(), old, "not through a link");
        touch_nofollow(&file).unwrap();
        assert!(fs::metadata(&file).unwrap().modified().unwrap() > old);
        assert_eq!(fs::read(&file).unwrap(), b"data");
        assert!(touch_nofollow(&tmp.0.join("absent")).is_err());
    }

    #[test]
    fn temp_names_are_unpredictable_exclusive_and_recognised() {
        let tmp = temp_dir("temp");
        let (a, _) = create_temp(&tmp.0, "tj").unwrap();
        let (b, _) = create_temp(&tmp.0, "capture").unwrap();
        assert_ne!(a, b);
        for path in [&a, &b] {
            let name = path.file_name().unwrap().to_str().unwrap();
            assert!(is_temp_name(name), "{name}");
            assert_eq!(mode(path), 0o600);
        }
        let pid = std::process::id();
        let (c, _) = create_temp(&tmp.0, "tj").unwrap();
        let hex = |p: &Path| {
            let name = p.file_name().unwrap().to_str().unwrap().to_owned();
            name.trim_start_matches(&format!(".tj-{pid}-")).trim_end_matches(".tmp").to_owned()
        };
        assert_eq!(hex(&a).len(), 16);
        assert_ne!(hex(&a), hex(&c));
    }

    #[test]
    fn temp_name_forms() {
        for name in [
            ".capture-123-0.tmp",
            ".capture-123-00ff00ff00ff00ff.tmp",
            ".tj-9-abcdef0123456789.tmp",
            ".0123456789ab.log.4242.tmp",
            ".0123456789ab.json.1.tmp",
        ] {
            assert!(is_temp_name(name), "{name}");
        }
        for name in [
            "app.log",
            ".capture-.tmp",
            ".capture-x.tmp",
            ".tj-1-ABC.tmp",
            "tj-1-abc.tmp",
            ".tj-1-abc.tmp.bak",
            ".0123456789ab.exe.1.tmp",
            ".0123456789ab.log.x.tmp",
            ".other-1-2.tmp",
        ] {
            assert!(!is_temp_name(name), "{name}");
        }
    }

    #[test]
    fn replace_swaps_a_symlink_for_a_file_and_leaves_its_target() {
        let tmp = temp_dir("replace");
        let victim = tmp.0.join("victim");
        File::create(&victim).unwrap().write_all(b"keep").unwrap();
        let link = tmp.0.join("out");
        symlink(&victim, &link).unwrap();
        replace(&link, b"new").unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().is_file());
        assert_eq!(fs::read(&link).unwrap(), b"new");
        assert_eq!(fs::read(&victim).unwrap(), b"keep");
        assert_eq!(mode(&link), 0o600);
        let left: Vec<_> = fs::read_dir(&tmp.0).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(left.len(), 2, "no temp file left behind: {left:?}");
    }

    #[test]
    fn replace_volatile_swaps_in_the_new_file_and_leaves_nothing_behind() {
        use std::os::unix::fs::MetadataExt;
        let tmp = temp_dir("volatile");
        let file = tmp.0.join("meta.json");
        replace_volatile(&file, b"first").unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"first");
        let before = fs::metadata(&file).unwrap().ino();
        replace_volatile(&file, b"second, longer").unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"second, longer");
        assert_ne!(fs::metadata(&file).unwrap().ino(), before, "a new file, not one rewritten");
        assert_eq!(mode(&file), 0o600);
        // A symbolic link at the path is replaced, never written through.
        let victim = tmp.0.join("victim");
        File::create(&victim).unwrap().write_all(b"keep").unwrap();
        let link = tmp.0.join("out");
        symlink(&victim, &link).unwrap();
        replace_volatile(&link, b"new").unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().is_file());
        assert_eq!(fs::read(&link).unwrap(), b"new");
        assert_eq!(fs::read(&victim).unwrap(), b"keep");
        let mut left: Vec<_> =
            fs::read_dir(&tmp.0).unwrap().flatten().map(|e| e.file_name()).collect();
        left.sort();
        assert_eq!(left, ["meta.json", "out", "victim"], "no temp file left behind");
    }

    #[test]
    fn replace_volatile_refuses_a_directory_as_replace_does() {
        let tmp = temp_dir("volatile-dir");
        let target = tmp.0.join("dir");
        fs::create_dir(&target).unwrap();
        fs::create_dir(target.join("inner")).unwrap();
        assert!(replace_volatile(&target, b"x").is_err());
        assert!(target.join("inner").is_dir(), "the directory stays where it was");
        assert_eq!(fs::read_dir(&tmp.0).unwrap().count(), 1, "no temp file left behind");
    }

    #[test]
    fn holds_compares_the_bytes_of_a_regular_file_only() {
        let tmp = temp_dir("holds");
        let file = tmp.0.join("f");
        assert!(!holds(&file, b""), "nothing there");
        File::create(&file).unwrap().write_all(b"abc").unwrap();
        assert!(holds(&file, b"abc"));
        assert!(!holds(&file, b"abd"), "same length, other bytes");
        assert!(!holds(&file, b"abcd"));
        let link = tmp.0.join("link");
        symlink(&file, &link).unwrap();
        assert!(!holds(&link, b"abc"), "never through a symbolic link");
    }

    #[test]
    fn a_failed_replace_leaves_no_temp_file() {
        let tmp = temp_dir("replace-fail");
        let target = tmp.0.join("dir");
        fs::create_dir(&target).unwrap();
        fs::create_dir(target.join("inner")).unwrap();
        assert!(replace(&target, b"x").is_err(), "a non-empty directory cannot be replaced");
        assert_eq!(fs::read_dir(&tmp.0).unwrap().count(), 1);
    }
}
