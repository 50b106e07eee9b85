//! Applies batches of recorded events to the read-model file: decode and fold each event (see
//! `fold`), turn the new states into rows (see `rows`), write them and the checkpoint in one
//! transaction. Used by the live projection actor and by `rebuild` alike.

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::Connection;
use scribe_domain::Aggregate;
use scribe_domain::account::AccountAggregate;
use scribe_domain::glossary::GlossaryAggregate;
use scribe_domain::job::JobAggregate;
use scribe_eventstore::{EventStore, RecordedEvent};

use crate::cache::Changes;
use crate::db;
use crate::error::{ProjectionError, db};
use crate::fold::Folder;
use crate::rows::{AccountRow, GlossaryRow, JobRow, Row, RowBatch, write_batch};

/// Most events applied in one transaction (while catching up; live batches are smaller).
pub const BATCH_SIZE: usize = 500;

/// The writer of one read-model file.
pub(crate) struct Projector {
    store: Arc<dyn EventStore>,
    /// The only write connection; used on the blocking pool.
    conn: Arc<Mutex<Connection>>,
    /// Global position of the last event applied (the stored checkpoint).
    position: u64,
    jobs: Folder<JobAggregate>,
    glossaries: Folder<GlossaryAggregate>,
    accounts: Folder<AccountAggregate>,
    /// What committed batches changed, for the read cache (see `take_changes`).
    changes: Changes,
}

impl Projector {
    /// Opens (creating if needed) the file at `path` and reads its checkpoint. Blocking file I/O.
    pub(crate) fn open(store: Arc<dyn EventStore>, path: &Path) -> Result<Projector, ProjectionError> {
        let conn = db::open_writer(path)?;
        let position = db::read_checkpoint(&conn)?;
        Ok(Projector {
            store,
            conn: Arc::new(Mutex::new(conn)),
            position,
            jobs: Folder::new(),
            glossaries: Folder::new(),
            accounts: Folder::new(),
            changes: Changes::default(),
        })
    }

    /// The jobs and accounts changed by the batches committed since the last call.
    pub(crate) fn take_changes(&mut self) -> Changes {
        std::mem::take(&mut self.changes)
    }

    /// Global position of the last event applied.
    pub(crate) fn position(&self) -> u64 {
        self.position
    }

    /// Applies `events` (in position order) and moves the checkpoint to `through` (at least the
    /// last event's position; more when the caller steps over an event the store cannot read
    /// back). Events at or before the checkpoint are ignored, so a re-delivered batch is never
    /// applied twice. Returns the new checkpoint.
    ///
    /// An event that cannot be decoded stops the batch there: the events before it are written
    /// (the checkpoint stops just before it) and the error naming it is returned, so the read
    /// models never pass an event they did not apply.
    pub(crate) async fn apply(&mut self, events: Vec<RecordedEvent>, through: u64) -> Result<u64, ProjectionError> {
        let mut rows = RowBatch::default();
        let mut last = self.position;
        let checkpoint = self.position;
        let mut undecodable = None;
        for recorded in events.iter().filter(|e| e.position > checkpoint) {
            match self.row_for(recorded).await {
                Ok(Some(row)) => rows.push(row),
                Ok(None) => {}
                Err(error @ ProjectionError::Undecodable { .. }) => {
                    undecodable = Some(error);
                    break;
                }
                Err(error) => {
                    self.forget_states();
                    return Err(error);
                }
            }
            last = recorded.position;
        }
        if let Some(error) = undecodable {
            self.write(rows, last).await?;
            return Err(error);
        }
        self.write(rows, through.max(last)).await
    }

    /// Writes `rows` and moves the checkpoint to `through` in one transaction.
    async fn write(&mut self, rows: RowBatch, through: u64) -> Result<u64, ProjectionError> {
        if through <= self.position {
            return Ok(self.position);
        }
        let changes = rows.changes();
        let conn = self.conn.clone();
        let written = tokio::task::spawn_blocking(move || {
            let mut conn = conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            write_batch(&mut conn, &rows, through)
        })
        .await
        .unwrap_or_else(|e| Err(ProjectionError::Task(e.to_string())));
        match written {
            Ok(()) => {
                self.position = through;
                self.changes.job_ids.extend(changes.job_ids);
                self.changes.user_names.extend(changes.user_names);
                Ok(through)
            }
            Err(error) => {
                // The cached states are ahead of the file now; rebuild them from the store.
                self.forget_states();
                Err(error)
            }
        }
    }

    /// Leaves the file in rollback-journal mode (one self-contained file, ready to be renamed
    /// into place) and closes it.
    pub(crate) fn finish(self) -> Result<(), ProjectionError> {
        let conn = Arc::into_inner(self.conn).expect("no write is in flight").into_inner();
        let conn = conn.unwrap_or_else(|poisoned| poisoned.into_inner());
        let _: String = conn
            .query_row("PRAGMA journal_mode = DELETE", [], |row| row.get(0))
            .map_err(db("closing the rebuilt read models"))?;
        conn.close().map_err(|(_, e)| db("closing the rebuilt read models")(e))
    }

    async fn row_for(&mut self, recorded: &RecordedEvent) -> Result<Option<Row>, ProjectionError> {
        let store = &*self.store;
        let stream = recorded.stream.as_str();
        let row = if stream.starts_with(JobAggregate::STREAM_PREFIX) {
            let (_, state) = self.jobs.apply(store, recorded).await?;
            JobRow::from_state(state).map(Row::Job)
        } else if stream.starts_with(GlossaryAggregate::STREAM_PREFIX) {
            let (_, state) = self.glossaries.apply(store, recorded).await?;
            GlossaryRow::from_state(state).map(Row::Glossary)
        } else if stream.starts_with(AccountAggregate::STREAM_PREFIX) {
            let (event, state) = self.accounts.apply(store, recorded).await?;
            AccountRow::from_state(&event, state).map(Row::Account)
        } else {
            tracing::debug!(stream, position = recorded.position, "no read model for this stream; skipped");
            None
        };
        Ok(row)
    }

    fn forget_states(&mut self) {
        self.jobs.clear();
        self.glossaries.clear();
        self.accounts.clear();
    }
}
