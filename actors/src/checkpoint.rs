//! Checkpoints of the reactors that follow the whole log (the pipeline, the refund reactor), so a
//! node that restarts on a long history reads only what came after its last checkpoint instead
//! of the whole log.
//!
//! A checkpoint is a small JSON file in the node's data directory, `checkpoints/<name>.json`:
//! the log position the reactor had folded in, and the streams it was still following with the
//! stream version it had folded (only unfinished jobs, so its size follows the work in flight,
//! not the history). On start the reactor reads each of those streams up to that version, then
//! follows the log after the position; events of those streams that it has already folded are
//! recognised by their version and skipped. It is written atomically (temp file, fsync, rename)
//! every few seconds while the reactor is live; a missing or unreadable checkpoint means "start
//! from the beginning", which is always correct, only slower.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use scribe_domain::job::{JobAggregate, JobState};
use scribe_domain::{Aggregate, VersionedEvent};
use scribe_eventstore::{EventStore, StoreError};
use serde::{Serialize, de::DeserializeOwned};

/// How often a live reactor writes its checkpoint (when it has moved).
pub const SAVE_EVERY: Duration = Duration::from_secs(5);

/// Where a reactor keeps its checkpoint.
#[derive(Debug, Clone)]
pub struct CheckpointFile {
    path: PathBuf,
}

impl CheckpointFile {
    /// `<node_dir>/checkpoints/<name>.json`.
    pub fn new(node_dir: &Path, name: &str) -> CheckpointFile {
        CheckpointFile { path: node_dir.join("checkpoints").join(format!("{name}.json")) }
    }

    /// The saved checkpoint; `None` (logged) when there is none or it cannot be read.
    pub fn load<T: DeserializeOwned>(&self) -> Option<T> {
        let text = match std::fs::read(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                tracing::warn!(path = %self.path.display(), error = %e, "cannot read a checkpoint; reading the log from the start");
                return None;
            }
        };
        match serde_json::from_slice(&text) {
            Ok(value) => Some(value),
            Err(e) => {
                tracing::warn!(path = %self.path.display(), error = %e, "unreadable checkpoint; reading the log from the start");
                None
            }
        }
    }

    /// Writes `value` durably in place of the previous checkpoint (on the blocking pool).
    pub async fn save<T: Serialize>(&self, value: &T) {
        let bytes = serde_json::to_vec(value).expect("a checkpoint serializes");
        let path = self.path.clone();
        let written = tokio::task::spawn_blocking(move || write_atomically(&path, &bytes)).await;
        match written {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(path = %self.path.display(), error = %e, "writing a checkpoint"),
            Err(e) => tracing::warn!(path = %self.path.display(), error = %e, "writing a checkpoint panicked"),
        }
    }
}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().expect("a checkpoint lives in a directory");
    std::fs::create_dir_all(dir)?;
    let temp = path.with_extension("json.tmp");
    {
        use std::io::Write;
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
    }
    std::fs::rename(&temp, path)?;
    std::fs::File::open(dir)?.sync_all()
}

/// The state of a job from its stream's events up to `version` (inclusive): how a reactor
/// restores a job it was following at its checkpoint. `None` when the stream has no such events.
pub async fn job_state_at(store: &dyn EventStore, stream: &str, version: u64) -> Result<Option<JobState>, StoreError> {
    let events = store.read_stream(stream, 0).await?;
    let mut state = None;
    for recorded in events.iter().take_while(|e| e.version <= version) {
        match scribe_domain::job::JobEvent::decode(&recorded.data) {
            Ok(event) => state = Some(JobAggregate::evolve(state.unwrap_or_default(), &event)),
            Err(e) => tracing::error!(%stream, version = recorded.version, error = %e, "skipping unreadable job event"),
        }
    }
    Ok(state)
}

/// Stream versions by job id, as checkpoints store them.
pub type Versions = BTreeMap<String, u64>;

/// The pipeline's checkpoint: the position it had folded in, and its unfinished jobs.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct PipelineCheckpoint {
    pub position: u64,
    /// Unfinished jobs and the stream version folded into each.
    pub open: Versions,
}

/// The refund reactor's checkpoint.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct RefundCheckpoint {
    pub position: u64,
    /// Charged jobs not yet finished: job id → the paying account.
    pub charged: BTreeMap<String, String>,
    /// Failed (or refundably deleted) jobs whose refund was not seen yet: job id → account.
    pub pending: BTreeMap<String, String>,
    /// Jobs a deletion would still refund, and the stream version folded into each (written as
    /// `manual` by versions that refunded only manual jobs on deletion).
    #[serde(alias = "manual")]
    pub refundable: Versions,
}

/// Restores the jobs a checkpoint names: each job's state up to its saved version, with that
/// version. Jobs whose stream cannot be parsed back are left out (logged). The streams are read
/// `RESTORE_READS` at a time: on a networked store each read is a round trip.
pub async fn restore_jobs(
    store: &dyn EventStore,
    jobs: &Versions,
) -> Result<Vec<(scribe_domain::ids::JobId, JobState, u64)>, StoreError> {
    use futures::{StreamExt, TryStreamExt};
    let mut valid = Vec::with_capacity(jobs.len());
    for (id, version) in jobs {
        match scribe_domain::ids::JobId::parse(id) {
            Ok(job_id) => valid.push((job_id, *version)),
            Err(_) => tracing::warn!(job_id = %id, "a checkpoint names an invalid job id; skipped"),
        }
    }
    let states: Vec<_> = futures::stream::iter(valid)
        .map(|(job_id, version)| async move {
            let state = job_state_at(store, &scribe_domain::ids::job_stream(&job_id), version).await?;
            Ok::<_, StoreError>(state.map(|s| (job_id, s, version)))
        })
        .buffered(RESTORE_READS)
        .try_collect()
        .await?;
    Ok(states.into_iter().flatten().collect())
}

/// Job streams read at once when a checkpoint is restored.
const RESTORE_READS: usize = 16;
