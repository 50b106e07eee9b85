//! `scribe rebuild`: replays the whole event log into a fresh read-model file and swaps it in.
//!
//! The new file is written next to the old one (`readmodels.sqlite3.rebuild`) and renamed over
//! it only when complete, so a crash or an error at any point leaves the old read models as they
//! were. Runs only while no server uses the data directory (it takes the read-model lock).

use std::path::Path;
use std::sync::Arc;

use scribe_eventstore::EventStore;

use crate::db::{self, DirLock};
use crate::error::{ProjectionError, io};
use crate::projector::{BATCH_SIZE, Projector};

/// What a rebuild did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RebuildReport {
    /// Events read from the log.
    pub events: u64,
    /// Checkpoint of the new read models (the log head when the rebuild started, or later).
    pub position: u64,
}

/// Rebuilds `<data_dir>/readmodels.sqlite3` from every event in `store`. See the module
/// documentation.
pub async fn rebuild(store: Arc<dyn EventStore>, data_dir: &Path) -> Result<RebuildReport, ProjectionError> {
    rebuild_with_progress(store, data_dir, |_, _| {}).await
}

/// As [`rebuild`], calling `progress(applied_position, head_position)` after every batch.
pub async fn rebuild_with_progress(
    store: Arc<dyn EventStore>,
    data_dir: &Path,
    mut progress: impl FnMut(u64, u64),
) -> Result<RebuildReport, ProjectionError> {
    let _lock = DirLock::acquire(data_dir)?;
    let target = db::path_in(data_dir);
    let scratch = data_dir.join(format!("{}.rebuild", db::FILE_NAME));
    remove_database(&scratch)?;

    let head = store.head_position().await?;
    let mut projector = {
        let (store, scratch) = (store.clone(), scratch.clone());
        tokio::task::spawn_blocking(move || Projector::open(store, &scratch))
            .await
            .map_err(|e| ProjectionError::Task(e.to_string()))??
    };
    let mut events = 0u64;
    while projector.position() < head {
        let batch = store.read_all(projector.position(), BATCH_SIZE).await?;
        let Some(last) = batch.last().map(|e| e.position) else { break };
        events += batch.len() as u64;
        projector.apply(batch, last).await?;
        progress(projector.position(), head);
    }
    let position = projector.position();

    tokio::task::spawn_blocking(move || -> Result<(), ProjectionError> {
        projector.finish()?;
        // A leftover WAL of the old file would be replayed into the new one: remove it first.
        remove_sidecars(&target)?;
        std::fs::rename(&scratch, &target).map_err(io("moving the rebuilt read models into place"))?;
        sync_dir(target.parent().unwrap_or(Path::new(".")))
    })
    .await
    .map_err(|e| ProjectionError::Task(e.to_string()))??;

    tracing::info!(events, position, "read models rebuilt");
    Ok(RebuildReport { events, position })
}

/// Removes an SQLite database file and its WAL and shared-memory files, if present.
fn remove_database(path: &Path) -> Result<(), ProjectionError> {
    remove_if_present(path)?;
    remove_sidecars(path)
}

fn remove_sidecars(path: &Path) -> Result<(), ProjectionError> {
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        remove_if_present(Path::new(&name))?;
    }
    Ok(())
}

fn remove_if_present(path: &Path) -> Result<(), ProjectionError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io("removing an old read-model file")(e)),
        _ => Ok(()),
    }
}

/// Makes a rename in `dir` durable.
fn sync_dir(dir: &Path) -> Result<(), ProjectionError> {
    std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(io("syncing the data directory"))
}
