//! The PostgreSQL event store: one table shared by every Scribe node that points at the database.
//!
//! Why it is shaped like this:
//! - **One table**, `scribe_events`, with `UNIQUE (stream, version)`: two writers can never both
//!   store version `n` of a stream, so a stream's history cannot fork even if a writer bypassed
//!   the checks below. A violation of that constraint is reported as
//!   [`StoreError::WrongExpectedVersion`].
//! - **Global positions in commit order, no reader ever skips a late commit.** A sequence alone is
//!   not enough: transaction A may draw position 7, transaction B position 8, and B commit first;
//!   a reader that saw 8 and moved its checkpoint past it would never see 7. Marten answers with a
//!   high-water mark (readers stop below the lowest position still in flight) and Message DB with
//!   an advisory lock per category. Scribe's write rate is small (a few events per job), so it takes
//!   the simplest safe answer: **every append transaction first takes one transaction-scoped
//!   advisory lock** ([`APPEND_LOCK`]) and then numbers its events `MAX(position) + 1, ...`. The
//!   lock is released only after the commit is visible to other sessions (PostgreSQL ends the
//!   transaction in the process array before it releases locks), so commits happen one at a time,
//!   in position order, and a reader that can see position `p` can see every position below it.
//!   Positions are gapless in practice (a rolled-back append takes no number), though the port only
//!   promises that they increase. The price is one commit at a time across all nodes; each node
//!   sends its waiting appends in one transaction (group commit), as the SQLite adapter does.
//! - **Expected versions** are checked inside that locked transaction, so the check and the insert
//!   see the same stream.
//! - **Subscriptions** page through the table and, once caught up, sleep until the head moves.
//!   The head is bumped by this process's own commits and by `LISTEN scribe_events`: every append
//!   transaction sends `pg_notify('scribe_events', <new head>)`, which PostgreSQL delivers at commit
//!   to every listening node. The table stays the only source of events; a notification is only a
//!   wake-up, and a slow poll covers a lost listener connection.
//! - **Connections**: one for the writer task, one shared by readers (tokio-postgres pipelines
//!   concurrent queries on it), one for `LISTEN`. Each is opened again when it breaks.
//! - TLS is not built in: reach a remote server through a unix socket, a private network or a TLS
//!   tunnel (`sslmode=require` is refused when connecting).

use std::collections::{HashMap, VecDeque};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde_json::Value;
use tokio::sync::{Mutex, mpsc, watch};
use tokio_postgres::error::SqlState;
use tokio_postgres::{AsyncMessage, Client, Config, IsolationLevel, NoTls};

use super::append::{AppendRequest, wrong_version};
use super::{Appended, EventStore, ExpectedVersion, NewEvent, RecordedEvent, StoreError, backend};

/// Key of the transaction-scoped advisory lock every append (and the schema set-up) takes
/// (`'scribe.events'` as ASCII bytes; any constant works as long as every node uses the same).
pub const APPEND_LOCK: i64 = 0x7363_7269_6265_2e65;
/// The channel of `LISTEN`/`NOTIFY` wake-ups.
const CHANNEL: &str = "scribe_events";
/// How many events a subscription reads per query while catching up.
const CATCH_UP_BATCH: usize = 512;
/// How often a caught-up subscription looks at the table even without a wake-up.
const POLL_INTERVAL: Duration = Duration::from_secs(1);
/// Most append requests committed in one transaction.
const MAX_GROUP: usize = 256;
/// How long to wait before opening a broken listener connection again.
const RECONNECT_PAUSE: Duration = Duration::from_secs(1);
/// Connection timeout when the URL gives none.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS scribe_events (
    position    BIGINT PRIMARY KEY,
    stream      TEXT   NOT NULL,
    version     BIGINT NOT NULL,
    type        TEXT   NOT NULL,
    data        JSONB  NOT NULL,
    recorded_at BIGINT NOT NULL,
    UNIQUE (stream, version)
)";

const SELECT_EVENT: &str = "SELECT position, stream, version, type, data::text, recorded_at FROM scribe_events";

/// The PostgreSQL adapter of [`EventStore`]. Cheap to clone; clones share the connections.
#[derive(Clone)]
pub struct PostgresEventStore {
    inner: Arc<Inner>,
}

struct Inner {
    config: Config,
    writer: mpsc::UnboundedSender<AppendRequest>,
    reader: Mutex<Option<Arc<Client>>>,
    head: watch::Receiver<u64>,
}

impl PostgresEventStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/database`, or any
    /// form tokio-postgres accepts, such as a percent-encoded socket directory as host), creates
    /// the table if it is missing, and starts the writer and the listener. Call it inside a tokio
    /// runtime.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let mut config = Config::from_str(url).map_err(|e| {
            StoreError::Configuration(format!(
                "cannot read the PostgreSQL URL ({}); expected postgres://user:password@host:port/database",
                describe(&e)
            ))
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(DEFAULT_CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("scribe");
        }
        let mut setup = connect(&config).await.map_err(|e| pg_backend("connecting to PostgreSQL", e))?;
        create_schema(&mut setup).await.map_err(|e| pg_backend("creating the scribe_events table", e))?;
        let head = query_head(&setup).await.map_err(|e| pg_backend("reading the log head", e))?;

        let (head_tx, head_rx) = watch::channel(head);
        let (writer_tx, writer_rx) = mpsc::unbounded_channel();
        tokio::spawn(run_writer(config.clone(), Some(setup), writer_rx, head_tx.clone()));
        tokio::spawn(run_listener(config.clone(), head_tx));
        Ok(PostgresEventStore {
            inner: Arc::new(Inner { config, writer: writer_tx, reader: Mutex::new(None), head: head_rx }),
        })
    }
}

impl EventStore for PostgresEventStore {
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
        Box::pin(async move {
            const ACTION: &str = "reading a stream";
            let client = self.inner.reader(ACTION).await?;
            let rows = client
                .query(
                    &format!("{SELECT_EVENT} WHERE stream = $1 AND version >= $2 ORDER BY version"),
                    &[&stream, &to_sql_int(from_version)],
                )
                .await
                .map_err(|e| pg_backend(ACTION, e))?;
            rows.iter().map(parse_row).collect()
        })
    }

    fn read_all(&self, after_position: u64, max: usize) -> BoxFuture<'_, Result<Vec<RecordedEvent>, StoreError>> {
        Box::pin(self.inner.clone().read_all(after_position, max))
    }

    fn head_position(&self) -> BoxFuture<'_, Result<u64, StoreError>> {
        Box::pin(async move {
            const ACTION: &str = "reading the log head";
            let client = self.inner.reader(ACTION).await?;
            query_head(client.as_ref()).await.map_err(|e| pg_backend(ACTION, e))
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
    /// The shared read connection, opened (again) if there is none or it broke.
    async fn reader(&self, action: &'static str) -> Result<Arc<Client>, StoreError> {
        let mut slot = self.reader.lock().await;
        if let Some(client) = slot.as_ref().filter(|c| !c.is_closed()) {
            return Ok(client.clone());
        }
        let client = Arc::new(connect(&self.config).await.map_err(|e| pg_backend(action, e))?);
        *slot = Some(client.clone());
        Ok(client)
    }

    async fn read_all(self: Arc<Self>, after_position: u64, max: usize) -> Result<Vec<RecordedEvent>, StoreError> {
        const ACTION: &str = "reading the log";
        let client = self.reader(ACTION).await?;
        let limit = i64::try_from(max).unwrap_or(i64::MAX);
        let rows = client
            .query(
                &format!("{SELECT_EVENT} WHERE position > $1 ORDER BY position LIMIT $2"),
                &[&to_sql_int(after_position), &limit],
            )
            .await
            .map_err(|e| pg_backend(ACTION, e))?;
        rows.iter().map(parse_row).collect()
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
                    // Caught up. Heads are published after their commit is visible, and
                    // `wait_for` looks at the current value first, so no append is missed.
                    let after = self.after;
                    if *self.head.borrow() > after {
                        // A head we cannot see yet (another database's notification, say):
                        // do not spin on it.
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        continue;
                    }
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

// ---- the writer task ----

/// Commits appends in groups on one connection, opening it again after a failure.
async fn run_writer(
    config: Config,
    mut client: Option<Client>,
    mut requests: mpsc::UnboundedReceiver<AppendRequest>,
    head: watch::Sender<u64>,
) {
    while let Some(first) = requests.recv().await {
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match requests.try_recv() {
                Ok(request) => group.push(request),
                Err(_) => break,
            }
        }
        let conn = match client.take().filter(|c| !c.is_closed()) {
            Some(conn) => conn,
            None => match connect(&config).await {
                Ok(conn) => conn,
                Err(error) => {
                    let message = describe(&error);
                    tracing::error!(%message, "cannot connect to PostgreSQL to append events");
                    fail_all(group, &message);
                    continue;
                }
            },
        };
        let mut conn = conn;
        match write_group(&mut conn, &group).await {
            Ok((outcomes, new_head)) => {
                publish_head(&head, new_head);
                for (request, outcome) in group.into_iter().zip(outcomes) {
                    let _ = request.reply.send(outcome);
                }
            }
            // Only a writer that skipped the advisory lock can cause this: fall back to one
            // transaction per append, so the conflict lands on the append that caused it.
            Err(error) if is_unique_violation(&error) => {
                for request in group {
                    let outcome = write_alone(&mut conn, &request, &head).await;
                    let _ = request.reply.send(outcome);
                }
            }
            Err(error) => {
                let message = describe(&error);
                tracing::error!(%message, appends = group.len(), "event store commit failed");
                fail_all(group, &message);
            }
        }
        client = Some(conn);
    }
}

fn fail_all(group: Vec<AppendRequest>, message: &str) {
    for request in group {
        let _ = request.reply.send(Err(backend("appending events", message.to_owned())));
    }
}

fn publish_head(head: &watch::Sender<u64>, new_head: u64) {
    head.send_if_modified(|h| {
        let moved = new_head > *h;
        *h = (*h).max(new_head);
        moved
    });
}

/// Appends one request in its own transaction, turning a unique violation into a conflict.
async fn write_alone(
    conn: &mut Client,
    request: &AppendRequest,
    head: &watch::Sender<u64>,
) -> Result<Appended, StoreError> {
    match write_group(conn, std::slice::from_ref(request)).await {
        Ok((mut outcomes, new_head)) => {
            publish_head(head, new_head);
            outcomes.pop().unwrap_or_else(|| Err(writer_gone()))
        }
        Err(error) if is_unique_violation(&error) => {
            let actual = current_version(conn, &request.stream)
                .await
                .map_err(|e| pg_backend("reading a stream's version", e))?;
            Err(wrong_version(&request.stream, request.expected, actual))
        }
        Err(error) => Err(pg_backend("appending events", error)),
    }
}

/// Writes a group of appends in one transaction under [`APPEND_LOCK`]. A refused append (wrong
/// expected version) writes nothing and does not affect the others; an SQL error fails the group.
async fn write_group(
    conn: &mut Client,
    group: &[AppendRequest],
) -> Result<(Vec<Result<Appended, StoreError>>, u64), tokio_postgres::Error> {
    // READ COMMITTED whatever the database's default: each statement then sees what committed
    // before it started, so the head read after the lock includes the previous holder's commit.
    let tx = conn.build_transaction().isolation_level(IsolationLevel::ReadCommitted).start().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&APPEND_LOCK]).await?;
    let mut head = query_head(&tx).await?;

    let mut streams: Vec<&str> = group.iter().map(|r| r.stream.as_str()).collect();
    streams.sort_unstable();
    streams.dedup();
    let mut current: HashMap<String, Option<u64>> = streams.iter().map(|s| ((*s).to_owned(), None)).collect();
    for row in tx
        .query("SELECT stream, MAX(version) FROM scribe_events WHERE stream = ANY($1) GROUP BY stream", &[&streams])
        .await?
    {
        let version: i64 = row.get(1);
        current.insert(row.get(0), Some(version as u64));
    }

    let mut positions = Vec::new();
    let mut stream_names = Vec::new();
    let mut versions = Vec::new();
    let mut types = Vec::new();
    let mut bodies: Vec<&Value> = Vec::new();
    let mut outcomes = Vec::with_capacity(group.len());
    for request in group {
        let actual = current.get(&request.stream).copied().flatten();
        let placement = match request.place(actual, head) {
            Ok(placement) => placement,
            Err(refused) => {
                outcomes.push(Err(refused));
                continue;
            }
        };
        for (event, slot) in request.events.iter().zip(placement.slots()) {
            positions.push(to_sql_int(slot.position));
            stream_names.push(request.stream.as_str());
            versions.push(to_sql_int(slot.version));
            types.push(event.event_type.as_str());
            bodies.push(&event.data);
        }
        let appended = placement.appended();
        head = appended.position;
        current.insert(request.stream.clone(), Some(appended.last_version));
        outcomes.push(Ok(appended));
    }
    if !positions.is_empty() {
        tx.execute(
            "INSERT INTO scribe_events (position, stream, version, type, data, recorded_at)
             SELECT p, s, v, t, d, (extract(epoch FROM statement_timestamp()) * 1000)::bigint
             FROM UNNEST($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::jsonb[]) AS e(p, s, v, t, d)",
            &[&positions, &stream_names, &versions, &types, &bodies],
        )
        .await?;
        tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &head.to_string()]).await?;
    }
    tx.commit().await?;
    Ok((outcomes, head))
}

async fn current_version(conn: &Client, stream: &str) -> Result<Option<u64>, tokio_postgres::Error> {
    let row = conn.query_one("SELECT MAX(version) FROM scribe_events WHERE stream = $1", &[&stream]).await?;
    Ok(row.get::<_, Option<i64>>(0).map(|v| v as u64))
}

// ---- the listener task ----

/// Keeps a `LISTEN` connection open and moves the head on every notification, until every
/// handle on the store (and every subscription) is gone.
async fn run_listener(config: Config, head: watch::Sender<u64>) {
    loop {
        let listened = tokio::select! {
            result = listen_once(&config, &head) => result,
            () = head.closed() => return,
        };
        if let Err(error) = listened {
            tracing::warn!(error = %describe(&error), "the PostgreSQL listener connection broke; opening it again");
        }
        tokio::select! {
            () = tokio::time::sleep(RECONNECT_PAUSE) => {}
            () = head.closed() => return,
        }
    }
}

async fn listen_once(config: &Config, head: &watch::Sender<u64>) -> Result<(), tokio_postgres::Error> {
    let (client, mut connection) = config.connect(NoTls).await?;
    let (notified_tx, mut notified) = mpsc::unbounded_channel();
    let driver = tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = messages.next().await {
            match message {
                Ok(AsyncMessage::Notification(n)) => {
                    if notified_tx.send(n.payload().to_owned()).is_err() {
                        return Ok(());
                    }
                }
                Ok(_) => {}
                Err(error) => return Err(error),
            }
        }
        Ok(())
    });
    client.batch_execute(&format!("LISTEN {CHANNEL}")).await?;
    // Appends made while no listener was connected sent their wake-ups to nobody.
    publish_head(head, query_head(&client).await?);
    while let Some(payload) = notified.recv().await {
        if let Ok(position) = payload.parse::<u64>() {
            publish_head(head, position);
        }
    }
    drop(client);
    match driver.await {
        Ok(result) => result,
        Err(_) => Ok(()),
    }
}

// ---- connections and rows ----

async fn connect(config: &Config) -> Result<Client, tokio_postgres::Error> {
    let (client, connection) = config.connect(NoTls).await?;
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::warn!(error = %describe(&error), "a PostgreSQL connection of the event store closed");
        }
    });
    Ok(client)
}

/// Creates the table under the append lock, so that nodes starting together do not race on it.
async fn create_schema(client: &mut Client) -> Result<(), tokio_postgres::Error> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&APPEND_LOCK]).await?;
    tx.batch_execute(SCHEMA).await?;
    tx.commit().await
}

async fn query_head(client: &impl tokio_postgres::GenericClient) -> Result<u64, tokio_postgres::Error> {
    let row = client.query_one("SELECT COALESCE(MAX(position), 0) FROM scribe_events", &[]).await?;
    Ok(row.get::<_, i64>(0) as u64)
}

fn parse_row(row: &tokio_postgres::Row) -> Result<RecordedEvent, StoreError> {
    let position = row.get::<_, i64>(0) as u64;
    let text: String = row.get(4);
    let data = serde_json::from_str(&text).map_err(|e| StoreError::Corrupt { position, reason: e.to_string() })?;
    Ok(RecordedEvent {
        stream: row.get(1),
        version: row.get::<_, i64>(2) as u64,
        position,
        event_type: row.get(3),
        data,
        recorded_at_ms: row.get(5),
    })
}

fn is_unique_violation(error: &tokio_postgres::Error) -> bool {
    error.code() == Some(&SqlState::UNIQUE_VIOLATION)
}

/// tokio-postgres's own `Display` leaves out the server's message; this puts it back.
fn describe(error: &tokio_postgres::Error) -> String {
    match std::error::Error::source(error) {
        Some(cause) => format!("{error}: {cause}"),
        None => error.to_string(),
    }
}

/// PostgreSQL integers are i64; positions and versions never come near 2^63.
fn to_sql_int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn pg_backend(action: &'static str, error: tokio_postgres::Error) -> StoreError {
    backend(action, describe(&error))
}

fn writer_gone() -> StoreError {
    backend("appending events", "the event store writer task has stopped")
}
