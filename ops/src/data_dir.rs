//! The data directory is owner-only: it holds the event log (with every account's callback
//! signing secret), the read models, the uploaded media and the transcripts, none of which
//! another user of the machine may read.
//!
//! Two parts: [`restrict_new_files`] sets the process umask to 077 at start, so every file and
//! folder Scribe (or SQLite, for its `-wal`/`-shm` files) creates is 0600/0700 whoever creates
//! it; [`prepare`] creates the directory 0700 and repairs what an earlier version, an operator or
//! a restore left readable by group or others: such entries are made owner-only and reported
//! with a warning (refusing to start would only stop the service over a fact we can fix).

use std::fs;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::Context;

/// Permission bits of group and others.
const GROUP_OTHER: u32 = 0o077;

/// From now on, files and folders this process creates are readable by their owner only.
pub fn restrict_new_files() {
    rustix::process::umask(rustix::fs::Mode::from_bits_truncate(GROUP_OTHER));
}

/// Creates `dir` (0700) if needed and makes every entry under it owner-only; returns the
/// entries it had to repair, which the caller reports.
pub fn prepare(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("cannot create the data directory {}", dir.display()))?;
    let mut repaired = Vec::new();
    repair(dir, &mut repaired)?;
    Ok(repaired)
}

/// Removes group and other permissions from `path` and, for a directory, everything in it.
/// Symbolic links are left alone (their own mode means nothing; their target is not ours).
fn repair(path: &Path, repaired: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let meta = fs::symlink_metadata(path).with_context(|| format!("cannot inspect {}", path.display()))?;
    if meta.file_type().is_symlink() {
        return Ok(());
    }
    let mode = meta.permissions().mode();
    if mode & GROUP_OTHER != 0 {
        fs::set_permissions(path, fs::Permissions::from_mode(mode & 0o7700))
            .with_context(|| format!("cannot make {} owner-only", path.display()))?;
        repaired.push(path.to_owned());
    }
    if meta.is_dir() {
        for entry in fs::read_dir(path).with_context(|| format!("cannot list {}", path.display()))? {
            let entry = entry.with_context(|| format!("cannot list {}", path.display()))?;
            repair(&entry.path(), repaired)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readable_entries_become_owner_only() {
        let home = tempfile::tempdir().unwrap();
        let data = home.path().join("data");
        fs::create_dir_all(data.join("media/job")).unwrap();
        fs::write(data.join("events.sqlite3"), b"x").unwrap();
        fs::write(data.join("media/job/a.wav"), b"x").unwrap();
        for p in ["", "media", "media/job"] {
            fs::set_permissions(data.join(p), fs::Permissions::from_mode(0o755)).unwrap();
        }
        fs::set_permissions(data.join("events.sqlite3"), fs::Permissions::from_mode(0o644)).unwrap();
        fs::set_permissions(data.join("media/job/a.wav"), fs::Permissions::from_mode(0o600)).unwrap();

        let repaired = prepare(&data).unwrap();
        assert_eq!(repaired.len(), 4, "{repaired:?}");
        let mode = |p: &str| fs::metadata(data.join(p)).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(""), mode("media"), mode("media/job")), (0o700, 0o700, 0o700));
        assert_eq!((mode("events.sqlite3"), mode("media/job/a.wav")), (0o600, 0o600));
        assert!(prepare(&data).unwrap().is_empty(), "nothing left to repair");
    }

    #[test]
    fn a_new_data_directory_is_owner_only() {
        let home = tempfile::tempdir().unwrap();
        let data = home.path().join("new/data");
        assert!(prepare(&data).unwrap().is_empty());
        assert_eq!(fs::metadata(&data).unwrap().permissions().mode() & 0o777, 0o700);
    }
}
