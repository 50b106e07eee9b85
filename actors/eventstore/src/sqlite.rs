//! The embedded event store: one SQLite file in the data directory.
//!
//! Why it is shaped like this:
//! - **One writer thread** owns the only write connection. Appends travel to it over a channel and
//!   their results come back on a oneshot, so the tokio runtime never blocks on `fsync`. The thread
//!   takes every request that is already waiting and commits them in one transaction (group
//!   commit): one `fsync` for many appends when many jobs write at once.
//! - **WAL + `synchronous=FULL`**: a commit is on disk before `append` returns, so an acknowledged
//!   event survives a SIGKILL or a power cut; readers never wait for the writer.
//! - **Positions are assigned inside the write transaction** (`MAX(position) + 1`, under SQLite's
//!   write lock), so they are gapless and in commit order even if another process (for example
//!   `scribe keys create`) appends to the same file.
//! - **Reads** run on the blocking pool with a small pool of read connections.
//! - **Subscriptions** page through `read_all` and, once caught up, sleep on a `watch` of the head
//!   position that the writer bumps after each commit (plus a slow poll, to notice appends by
//!   another process). Reading the head also bumps it, so a caller that saw another process's
//!   append (a key from `scribe keys create`) wakes the subscriptions at once.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak, mpsc};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use rusqlite::{Connection, OpenFlags, TransactionBehavior, params};
use tokio::sync::watch;

use super::append::AppendRequest;
use super::{Appended, EventStore, ExpectedVersion, NewEvent, RecordedEvent, StoreError, backend};

/// File name of the store inside the data directory.
pub const FILE_NAME: &str = "events.sqlite3";

/// Schema version written to `PRAGMA user_version`; a file from a newer Scribe is refused.
const SCHEMA_VERSION: i64 = 1;
/// How many events a subscription reads per query while catching up.
const CATCH_UP_BATCH: usize = 512;
/// How often a caught-up subscription looks at the file even without a wake-up.
const POLL_INTERVAL: Duration = Duration::from_secs(1);
/// Most append requests committed in one transaction.
const MAX_GROUP: usize = 256;
/// Idle read connections kept open.
const MAX_IDLE_READERS: usize = 8;
/// How long a connection waits for another one's lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS events (
    position    INTEGER PRIMARY KEY,
    stream      TEXT    NOT NULL,
    version     INTEGER NOT NULL,
    type        TEXT    NOT NULL,
    data        TEXT    NOT NULL,
    recorded_at INTEGER NOT NULL,
    UNIQUE (stream, version)
);";

const SELECT_EVENT: &str = "SELECT position, stream, version, type, data, recorded_at FROM events";

/// The SQLite adapter of [`EventStore`]. Cheap to clone; all clones share one writer.
#[derive(Clone)]
pub struct SqliteEventStore {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    writer: mpsc::Sender<AppendRequest>,
    readers: Mutex<Vec<Connection>>,
    head: watch::Receiver<u64>,
    /// The writer's sender of the head, to publish a head read from the file (see
    /// [`EventStore::head_position`]); weak, so that the channel still closes when the writer
    /// thread ends.
    head_waker: Weak<watch::Sender<u64>>,
}

impl SqliteEventStore {
    /// Opens (creating if needed) the store at `<data_dir>/events.sqlite3`.
    pub fn open_in(data_dir: &Path) -> Result<Self, StoreError> {
        std::fs::create_dir_all(data_dir).map_err(|e| backend("creating the data directory", e))?;
        Self::open(&data_dir.join(FILE_NAME))
    }

    /// Opens (creating if needed) the store in the SQLite file `path`. Blocks briefly (file I/O);
    /// call it at start-up.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let mut conn = Connection::open(path).map_err(|e| backend("opening the event store file", e))?;
        configure_writer(&mut conn)?;
        let head = query_head(&conn).map_err(|e| backend("reading the log head", e))?;

        let (head_tx, head_rx) = watch::channel(head);
        let head_tx = Arc::new(head_tx);
        let head_waker = Arc::downgrade(&head_tx);
        let (writer_tx, writer_rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("eventstore-writer".into())
            .spawn(move || run_writer(conn, writer_rx, head_tx))
            .map_err(|e| backend("starting the writer thread", e))?;

        Ok(SqliteEventStore {
            inner: Arc::new(Inner {
                path: path.to_owned(),
                writer: writer_tx,
                readers: Mutex::new(Vec::new()),
                head: head_rx,
                head_waker,
            }),
        })
    }

    /// The SQLite file behind this store.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }
}

impl EventStore for SqliteEventStore {
    fn append<'a>(
        &'a self,
        stream: &'a str,
        expected: ExpectedVersion,
        events: Vec<NewEvent>,
    ) -> BoxFuture<'a, Result<Appended, StoreError>> {
        Box::pin(async move {
            let (request, answer) = AppendRequest::new(stream, expected, events)?;
            self.inner.writer.send(request).map_err(|_| writer_gone())?;
            answer.await.map_err(|_| writer_gone())?
        })
    }

    fn read_stream<'a>(
        &'a self,
        stream: &'a str,
        from_version: u64,
    ) -> BoxFuture<'a, Result<Vec<RecordedEvent>, StoreError>> {
        let stream = stream.to_owned();
        Box::pin(self.inner.clone().with_reader("reading a stream", move |conn| {
            let mut stmt =
                conn.prepare_cached(&format!("{SELECT_EVENT} WHERE stream = ?1 AND version >= ?2 ORDER BY version"))?;
            let rows = stmt.query_map(params![stream, to_sql_int(from_version)], RawEvent::from_row)?;
            collect_events(rows)
        }))
    }

    fn read_all(&self, after_position: u64, max: usize) -> BoxFuture<'_, Result<Vec<RecordedEvent>, StoreError>> {
        Box::pin(self.inner.clone().read_all(after_position, max))
    }

    fn head_position(&self) -> BoxFuture<'_, Result<u64, StoreError>> {
        Box::pin(async move {
            let head = self.inner.clone().with_reader("reading the log head", |conn| Ok(query_head(conn)?)).await?;
            if let Some(sender) = self.inner.head_waker.upgrade() {
                publish_head(&sender, head);
            }
            Ok(head)
        })
    }

    fn subscribe_all(&self, after_position: u64) -> BoxStream<'static, Result<RecordedEvent, StoreError>> {
        let state = Subscription {
            inner: self.inner.clone(),
            head: self.inner.head.clone(),
            after: after_position,
            buffer: VecDeque::new(),
            finished: false,
        };
        Box::pin(futures::stream::unfold(state, Subscription::next))
    }
}

impl Inner {
    /// Runs `query` on a pooled read connection on the blocking thread pool.
    async fn with_reader<T, F>(self: Arc<Self>, action: &'static str, query: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, ReadError> + Send + 'static,
    {
        let task = tokio::task::spawn_blocking(move || {
            let pooled = self.readers.lock().unwrap_or_else(|p| p.into_inner()).pop();
            let conn = match pooled {
                Some(conn) => conn,
                None => open_reader(&self.path).map_err(|e| backend(action, e))?,
            };
            let result = query(&conn).map_err(|e| e.into_store_error(action));
            let mut idle = self.readers.lock().unwrap_or_else(|p| p.into_inner());
            if idle.len() < MAX_IDLE_READERS {
                idle.push(conn);
            }
            result
        });
        task.await.map_err(|e| backend(action, e))?
    }

    async fn read_all(self: Arc<Self>, after_position: u64, max: usize) -> Result<Vec<RecordedEvent>, StoreError> {
        self.with_reader("reading the log", move |conn| {
            let mut stmt =
                conn.prepare_cached(&format!("{SELECT_EVENT} WHERE position > ?1 ORDER BY position LIMIT ?2"))?;
            let limit = i64::try_from(max).unwrap_or(i64::MAX);
            let rows = stmt.query_map(params![to_sql_int(after_position), limit], RawEvent::from_row)?;
            collect_events(rows)
        })
        .await
    }
}

/// State of one `subscribe_all` stream.
struct Subscription {
    inner: Arc<Inner>,
    head: watch::Receiver<u64>,
    /// Position of the last event yielded.
    after: u64,
    buffer: VecDeque<RecordedEvent>,
    finished: bool,
}

impl Subscription {
    async fn next(mut self) -> Option<(Result<RecordedEvent, StoreError>, Self)> {
        if self.finished {
            return None;
        }
        loop {
            if let Some(event) = self.buffer.pop_front() {
                self.after = event.position;
                return Some((Ok(event), self));
            }
            match self.inner.clone().read_all(self.after, CATCH_UP_BATCH).await {
                Ok(events) if !events.is_empty() => self.buffer.extend(events),
                Ok(_) => {
                    // Caught up. The writer publishes the head only after its commit, and
                    // `wait_for` looks at the current value first, so no append is missed.
                    let after = self.after;
                    // `matches!` drops the borrowed value at once: holding it would block the writer.
                    let closed = matches!(
                        tokio::time::timeout(POLL_INTERVAL, self.head.wait_for(|h| *h > after)).await,
                        Ok(Err(_))
                    );
                    if closed {
                        self.finished = true;
                        return Some((Err(writer_gone()), self));
                    }
                }
                Err(error) => {
                    self.finished = true;
                    return Some((Err(error), self));
                }
            }
        }
    }
}

// ---- the writer thread ----

/// Moves the published head forward to `head` (never back), waking the subscriptions.
fn publish_head(sender: &watch::Sender<u64>, head: u64) {
    sender.send_if_modified(|h| {
        let moved = head > *h;
        *h = (*h).max(head);
        moved
    });
}

fn run_writer(mut conn: Connection, requests: mpsc::Receiver<AppendRequest>, head: Arc<watch::Sender<u64>>) {
    while let Ok(first) = requests.recv() {
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match requests.try_recv() {
                Ok(request) => group.push(request),
                Err(_) => break,
            }
        }
        match write_group(&mut conn, &group) {
            Ok((outcomes, new_head)) => {
                publish_head(&head, new_head);
                for (request, outcome) in group.into_iter().zip(outcomes) {
                    let _ = request.reply.send(outcome);
                }
            }
            Err(error) => {
                tracing::error!(%error, appends = group.len(), "event store commit failed");
                let message = error.to_string();
                for request in group {
                    let _ = request.reply.send(Err(backend("appending events", message.clone())));
                }
            }
        }
    }
}

/// Writes a group of appends in one transaction. A refused append (wrong expected version) writes
/// nothing and does not affect the others; an SQL error fails the whole group.
fn write_group(
    conn: &mut Connection,
    group: &[AppendRequest],
) -> rusqlite::Result<(Vec<Result<Appended, StoreError>>, u64)> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut head = query_head(&tx)?;
    let recorded_at = now_ms();
    let mut outcomes = Vec::with_capacity(group.len());
    {
        let mut current_version = tx.prepare_cached("SELECT MAX(version) FROM events WHERE stream = ?1")?;
        let mut insert = tx.prepare_cached(
            "INSERT INTO events (position, stream, version, type, data, recorded_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        for request in group {
            let actual: Option<i64> = current_version.query_row([&request.stream], |row| row.get(0))?;
            let placement = match request.place(actual.map(|v| v as u64), head) {
                Ok(placement) => placement,
                Err(refused) => {
                    outcomes.push(Err(refused));
                    continue;
                }
            };
            for (event, slot) in request.events.iter().zip(placement.slots()) {
                let data = event.data.to_string();
                insert.execute(params![
                    to_sql_int(slot.position),
                    request.stream,
                    to_sql_int(slot.version),
                    event.event_type,
                    data,
                    recorded_at
                ])?;
            }
            let appended = placement.appended();
            head = appended.position;
            outcomes.push(Ok(appended));
        }
    }
    tx.commit()?;
    Ok((outcomes, head))
}

// ---- connections and rows ----

fn configure_writer(conn: &mut Connection) -> Result<(), StoreError> {
    const ACTION: &str = "preparing the event store file";
    let sql = |e: rusqlite::Error| backend(ACTION, e);
    conn.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0)).map_err(sql)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(backend(ACTION, format!("the file refused WAL mode (journal_mode is {mode})")));
    }
    conn.pragma_update(None, "synchronous", "FULL").map_err(sql)?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
    let version: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0)).map_err(sql)?;
    if version > SCHEMA_VERSION {
        return Err(backend(
            ACTION,
            format!("the file has schema version {version}, newer than this Scribe understands ({SCHEMA_VERSION})"),
        ));
    }
    tx.execute_batch(SCHEMA).map_err(sql)?;
    tx.pragma_update(None, "user_version", SCHEMA_VERSION).map_err(sql)?;
    tx.commit().map_err(sql)
}

fn open_reader(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "query_only", true)?;
    Ok(conn)
}

fn query_head(conn: &Connection) -> rusqlite::Result<u64> {
    let head: i64 = conn.query_row("SELECT COALESCE(MAX(position), 0) FROM events", [], |row| row.get(0))?;
    Ok(head as u64)
}

/// A row before its JSON is parsed (parse errors become `StoreError::Corrupt`, not SQL errors).
struct RawEvent {
    position: i64,
    stream: String,
    version: i64,
    event_type: String,
    data: String,
    recorded_at_ms: i64,
}

impl RawEvent {
    fn from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        Ok(RawEvent {
            position: row.get(0)?,
            stream: row.get(1)?,
            version: row.get(2)?,
            event_type: row.get(3)?,
            data: row.get(4)?,
            recorded_at_ms: row.get(5)?,
        })
    }

    fn parse(self) -> Result<RecordedEvent, ReadError> {
        let position = self.position as u64;
        let data = serde_json::from_str(&self.data)
            .map_err(|e| ReadError::Corrupt(StoreError::Corrupt { position, reason: e.to_string() }))?;
        Ok(RecordedEvent {
            stream: self.stream,
            version: self.version as u64,
            position,
            event_type: self.event_type,
            data,
            recorded_at_ms: self.recorded_at_ms,
        })
    }
}

fn collect_events(rows: impl Iterator<Item = rusqlite::Result<RawEvent>>) -> Result<Vec<RecordedEvent>, ReadError> {
    rows.map(|row| row?.parse()).collect()
}

/// Errors inside a read closure: SQL failures get their context added later.
enum ReadError {
    Sql(rusqlite::Error),
    Corrupt(StoreError),
}

impl From<rusqlite::Error> for ReadError {
    fn from(e: rusqlite::Error) -> Self {
        ReadError::Sql(e)
    }
}

impl ReadError {
    fn into_store_error(self, action: &'static str) -> StoreError {
        match self {
            ReadError::Sql(e) => backend(action, e),
            ReadError::Corrupt(e) => e,
        }
    }
}

/// SQLite integers are i64; positions and versions never come near 2^63.
fn to_sql_int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

fn writer_gone() -> StoreError {
    backend("appending events", "the event store writer thread has stopped")
}
