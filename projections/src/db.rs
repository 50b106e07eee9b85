//! The read-model SQLite file: where it lives, its tables, and how connections to it are opened.
//!
//! It is a separate file from the event store (`<data_dir>/readmodels.sqlite3`) because it is
//! derived data: it can be deleted or rebuilt from the log at any time. That is also why it runs
//! with `synchronous=NORMAL`: after a power cut it may lose its last transactions, but each one
//! carries the checkpoint of the events it applied, so the projection re-applies exactly those.
//!
//! A file written with another table layout ([`SCHEMA_VERSION`]) is emptied and refilled from the
//! log on open, never migrated by hand.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use crate::error::{ProjectionError, db, io};

/// File name of the read models inside the data directory.
pub const FILE_NAME: &str = "readmodels.sqlite3";
/// Lock file held by whoever owns the read models of a data directory (a server, a rebuild).
const LOCK_FILE_NAME: &str = "readmodels.lock";
/// Table layout version, in `PRAGMA user_version`. Bump it whenever a table or the meaning of a
/// column changes (including the shape of the stored Job/Glossary JSON): the file is then
/// rebuilt from the log on the next start.
/// (4: the Job JSON gained `progress`.)
pub const SCHEMA_VERSION: i64 = 4;
/// How long a connection waits for another one's lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

const TABLES: &[&str] = &["checkpoint", "jobs", "glossaries", "accounts", "api_keys", "tasks"];

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS checkpoint (
    id       INTEGER PRIMARY KEY CHECK (id = 0),
    position INTEGER NOT NULL
);
INSERT OR IGNORE INTO checkpoint (id, position) VALUES (0, 0);

CREATE TABLE IF NOT EXISTS jobs (
    job_id             TEXT PRIMARY KEY,
    owner              TEXT    NOT NULL,
    created            INTEGER NOT NULL,
    status             TEXT    NOT NULL,
    job_type           TEXT    NOT NULL,
    transcription_type TEXT    NOT NULL,
    deleted            INTEGER NOT NULL,
    error_msg          TEXT,
    job                TEXT    NOT NULL,
    -- The document the job delivers, relative to the data directory, as its events name it.
    document           TEXT
);
CREATE INDEX IF NOT EXISTS jobs_newest ON jobs (owner, created DESC, job_id DESC) WHERE deleted = 0;
CREATE INDEX IF NOT EXISTS jobs_newest_by_status ON jobs (owner, status, created DESC, job_id DESC) WHERE deleted = 0;

CREATE TABLE IF NOT EXISTS glossaries (
    id       TEXT PRIMARY KEY,
    owner    TEXT    NOT NULL,
    created  INTEGER NOT NULL,
    name     TEXT    NOT NULL,
    deleted  INTEGER NOT NULL,
    glossary TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS glossaries_of_owner ON glossaries (owner) WHERE deleted = 0;

CREATE TABLE IF NOT EXISTS accounts (
    user_name      TEXT PRIMARY KEY,
    balance_cents  INTEGER NOT NULL,
    webhook_secret TEXT    NOT NULL,
    created        INTEGER NOT NULL,
    role           TEXT    NOT NULL,
    languages      TEXT    NOT NULL
);

CREATE TABLE IF NOT EXISTS api_keys (
    key_hash  TEXT PRIMARY KEY,
    key_id    TEXT    NOT NULL,
    user_name TEXT    NOT NULL,
    issued    INTEGER NOT NULL,
    revoked   INTEGER
);
CREATE INDEX IF NOT EXISTS api_keys_of_user ON api_keys (user_name);

-- The open tasks of manual jobs (the work queue). A task leaves when it is submitted or its
-- job ends or is deleted.
CREATE TABLE IF NOT EXISTS tasks (
    task_id     TEXT PRIMARY KEY,
    job_id      TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    deadline    INTEGER NOT NULL,
    holder      TEXT,
    lease_until INTEGER,
    task        TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS tasks_by_deadline ON tasks (kind, deadline, task_id);
CREATE INDEX IF NOT EXISTS tasks_of_job ON tasks (job_id);
";

/// The read-model file of a data directory.
pub fn path_in(data_dir: &Path) -> PathBuf {
    data_dir.join(FILE_NAME)
}

/// An exclusive claim on the read models of one data directory, released when dropped.
/// Two writers on one file would interleave checkpoints, and a rebuild must never replace a file
/// a running server has open.
#[derive(Debug)]
pub(crate) struct DirLock {
    _file: File,
}

impl DirLock {
    pub(crate) fn acquire(data_dir: &Path) -> Result<DirLock, ProjectionError> {
        std::fs::create_dir_all(data_dir).map_err(io("creating the data directory"))?;
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(data_dir.join(LOCK_FILE_NAME))
            .map_err(io("opening the read-model lock file"))?;
        match file.try_lock() {
            Ok(()) => Ok(DirLock { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => {
                Err(ProjectionError::InUse { dir: data_dir.display().to_string() })
            }
            Err(std::fs::TryLockError::Error(e)) => Err(io("locking the read models")(e)),
        }
    }
}

/// Opens the file for writing (creating it and its tables if needed), in WAL mode.
pub(crate) fn open_writer(path: &Path) -> Result<Connection, ProjectionError> {
    let mut conn = Connection::open(path).map_err(db("opening the read-model file"))?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(db("configuring the read-model file"))?;
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
        .map_err(db("switching the read-model file to WAL"))?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!(journal_mode = %mode, "the read-model file refused WAL mode; readers may wait for the writer");
    }
    conn.pragma_update(None, "synchronous", "NORMAL").map_err(db("configuring the read-model file"))?;
    ensure_schema(&mut conn)?;
    Ok(conn)
}

/// Opens a connection for queries only.
pub(crate) fn open_reader(path: &Path) -> Result<Connection, ProjectionError> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(db("opening the read-model file for reading"))?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(db("configuring a read-model reader"))?;
    conn.pragma_update(None, "query_only", true).map_err(db("configuring a read-model reader"))?;
    Ok(conn)
}

/// The global position of the last event applied (0: none).
pub(crate) fn read_checkpoint(conn: &Connection) -> Result<u64, ProjectionError> {
    let position: i64 = conn
        .query_row("SELECT position FROM checkpoint WHERE id = 0", [], |row| row.get(0))
        .map_err(db("reading the checkpoint"))?;
    Ok(from_sql_int(position))
}

/// Creates the tables, or empties a file of another layout so that it is refilled from the log.
fn ensure_schema(conn: &mut Connection) -> Result<(), ProjectionError> {
    const ACTION: &str = "preparing the read-model tables";
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(db(ACTION))?;
    let version: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0)).map_err(db(ACTION))?;
    if version != 0 && version != SCHEMA_VERSION {
        tracing::warn!(
            found = version,
            expected = SCHEMA_VERSION,
            "the read models have another layout; they are rebuilt from the event log"
        );
        for table in TABLES {
            tx.execute_batch(&format!("DROP TABLE IF EXISTS {table}")).map_err(db(ACTION))?;
        }
    }
    tx.execute_batch(SCHEMA).map_err(db(ACTION))?;
    tx.pragma_update(None, "user_version", SCHEMA_VERSION).map_err(db(ACTION))?;
    tx.commit().map_err(db(ACTION))
}

/// SQLite integers are i64; positions, times and cents never come near 2^63.
pub(crate) fn to_sql_int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

pub(crate) fn from_sql_int(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}
