//! The KurrentDB (EventStoreDB's successor) event store, through the official `kurrentdb` gRPC
//! client.
//!
//! How the port maps onto KurrentDB:
//! - A Scribe stream is a KurrentDB stream; [`ExpectedVersion`] becomes the append's
//!   `StreamState` (`Exact(n)` → `StreamRevision(n)`), and the server's
//!   `WrongExpectedVersion` becomes ours.
//! - The global position is the event's **commit position in `$all`**, as KurrentDB gives it: a
//!   byte offset in its transaction log, so it increases in commit order with large gaps (which
//!   the port allows). A checkpoint `p` resumes with `$all` from `Position { commit: p,
//!   prepare: p }`; every append of this adapter is a single-stream append, whose events each
//!   carry their own position with commit equal to prepare. An event whose commit position does
//!   not increase (only a multi-event transaction written by another client could do that) is
//!   reported as unreadable instead of being given a position it does not have.
//! - `subscribe_all` is the server's `$all` subscription from the checkpoint, catch-up then live.
//! - **Namespace**: a store opened with a namespace prefixes every stream name with it and reads
//!   `$all` through a server-side stream-name prefix filter, so several stores (the contract
//!   tests, or two Scribe installations) can share one server. Without a namespace, system
//!   streams (`$...`) are filtered out and every other stream is Scribe's.
//! - The client installs its own rustls `CryptoProvider` only if none is installed, so it lives
//!   beside reqwest's (see `shared/research/rust-stack.md`).
//!
//! This adapter's contract suite runs only when `SCRIBE_TEST_KURRENTDB_URL` names a server.

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use kurrentdb::{
    AppendToStreamOptions, Client, ClientSettings, EventData, Position, ReadAllOptions, ReadStreamOptions,
    StreamPosition, StreamState, SubscribeToAllOptions, SubscriptionFilter,
};

use super::append::{check_request, wrong_version};
use super::{Appended, EventStore, ExpectedVersion, NewEvent, RecordedEvent, StoreError, backend};

/// The KurrentDB adapter of [`EventStore`]. Cheap to clone (the client is shared).
#[derive(Clone)]
pub struct KurrentDbEventStore {
    client: Client,
    /// Prefix of every stream name of this store ("" without a namespace).
    namespace: String,
}

impl KurrentDbEventStore {
    /// Connects to the server at `url` (`esdb://host:2113?tls=false`, `kurrentdb://...`, or any
    /// connection string the `kurrentdb` client accepts) and checks that it answers. With
    /// `namespace`, every stream name is prefixed with it (see the module documentation).
    pub async fn connect(url: &str, namespace: Option<&str>) -> Result<Self, StoreError> {
        let settings: ClientSettings = url.parse().map_err(|e: kurrentdb::ClientSettingsParseError| {
            StoreError::Configuration(format!(
                "cannot read the KurrentDB connection string ({e}); expected esdb://host:2113?tls=false"
            ))
        })?;
        let client = Client::new(settings).map_err(|e| backend("starting the KurrentDB client", e.to_string()))?;
        let store = KurrentDbEventStore { client, namespace: namespace.unwrap_or_default().to_owned() };
        store.head().await.map_err(|e| backend("connecting to KurrentDB", e.to_string()))?;
        Ok(store)
    }

    fn filter(&self) -> SubscriptionFilter {
        if self.namespace.is_empty() {
            SubscriptionFilter::on_stream_name().exclude_system_events()
        } else {
            SubscriptionFilter::on_stream_name().add_prefix(&self.namespace)
        }
    }

    /// Our stream name for a KurrentDB stream name (`None`: not one of ours).
    fn ours<'a>(&self, stream: &'a str) -> Option<&'a str> {
        stream.strip_prefix(self.namespace.as_str())
    }

    async fn head(&self) -> Result<u64, kurrentdb::Error> {
        let options =
            ReadAllOptions::default().backwards().position(StreamPosition::End).filter(self.filter()).max_count(1);
        let mut read = self.client.read_all(&options).await?;
        match read.next().await? {
            Some(event) => Ok(event.get_original_event().position.commit),
            None => Ok(0),
        }
    }

    /// Converts a KurrentDB event; `None` for events of other namespaces (the filter keeps them
    /// away, this is a second fence).
    fn convert(&self, event: &kurrentdb::RecordedEvent) -> Option<Result<RecordedEvent, StoreError>> {
        let stream = self.ours(event.stream_id())?.to_owned();
        let position = event.position.commit;
        // Stream reads of older servers carry no $all position (all bits set): report 0.
        let position = if position == u64::MAX { 0 } else { position };
        let data = match serde_json::from_slice(&event.data) {
            Ok(data) => data,
            Err(e) => {
                return Some(Err(StoreError::Corrupt { position, reason: e.to_string() }));
            }
        };
        Some(Ok(RecordedEvent {
            stream,
            version: event.revision,
            position,
            event_type: event.event_type.clone(),
            data,
            recorded_at_ms: event.created.timestamp_millis(),
        }))
    }
}

/// Where `$all` is read from for "everything after `after`".
fn all_from(after: u64) -> StreamPosition<Position> {
    if after == 0 {
        StreamPosition::Start
    } else {
        StreamPosition::Position(Position { commit: after, prepare: after })
    }
}

impl EventStore for KurrentDbEventStore {
    fn append<'a>(
        &'a self,
        stream: &'a str,
        expected: ExpectedVersion,
        events: Vec<NewEvent>,
    ) -> BoxFuture<'a, Result<Appended, StoreError>> {
        Box::pin(async move {
            check_request(stream, &events)?;
            let data = events
                .iter()
                .map(|e| {
                    EventData::json(&e.event_type, &e.data)
                        .map(|d| d.id(uuid::Uuid::new_v4()))
                        .map_err(|e| backend("encoding an event", e))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let state = match expected {
                ExpectedVersion::Any => StreamState::Any,
                ExpectedVersion::NoStream => StreamState::NoStream,
                ExpectedVersion::Exact(v) => StreamState::StreamRevision(v),
            };
            let options = AppendToStreamOptions::default().stream_state(state);
            let name = format!("{}{stream}", self.namespace);
            match self.client.append_to_stream(name, &options, data).await {
                Ok(written) => {
                    Ok(Appended { last_version: written.next_expected_version, position: written.position.commit })
                }
                Err(kurrentdb::Error::WrongExpectedVersion { current, .. }) => {
                    let actual = match current {
                        kurrentdb::CurrentRevision::Current(v) => Some(v),
                        kurrentdb::CurrentRevision::NoStream => None,
                    };
                    Err(wrong_version(stream, expected, actual))
                }
                Err(e) => Err(backend("appending events", e.to_string())),
            }
        })
    }

    fn read_stream<'a>(
        &'a self,
        stream: &'a str,
        from_version: u64,
    ) -> BoxFuture<'a, Result<Vec<RecordedEvent>, StoreError>> {
        Box::pin(async move {
            const ACTION: &str = "reading a stream";
            let options = ReadStreamOptions::default().forwards().position(StreamPosition::Position(from_version));
            let name = format!("{}{stream}", self.namespace);
            let mut read = match self.client.read_stream(name, &options).await {
                Ok(read) => read,
                Err(kurrentdb::Error::ResourceNotFound) => return Ok(Vec::new()),
                Err(e) => return Err(backend(ACTION, e.to_string())),
            };
            let mut events = Vec::new();
            loop {
                match read.next().await {
                    Ok(Some(event)) => {
                        if let Some(event) = self.convert(event.get_original_event()) {
                            events.push(event?);
                        }
                    }
                    Ok(None) => return Ok(events),
                    Err(kurrentdb::Error::ResourceNotFound) => return Ok(Vec::new()),
                    Err(e) => return Err(backend(ACTION, e.to_string())),
                }
            }
        })
    }

    fn read_all(&self, after_position: u64, max: usize) -> BoxFuture<'_, Result<Vec<RecordedEvent>, StoreError>> {
        Box::pin(async move {
            const ACTION: &str = "reading the log";
            if max == 0 {
                return Ok(Vec::new());
            }
            // The start position is inclusive: ask for one more and drop the event at `after`.
            let options = ReadAllOptions::default()
                .forwards()
                .position(all_from(after_position))
                .filter(self.filter())
                .max_count(max.saturating_add(1));
            let mut read = self.client.read_all(&options).await.map_err(|e| backend(ACTION, e.to_string()))?;
            let mut events: Vec<RecordedEvent> = Vec::new();
            while events.len() < max {
                match read.next().await {
                    Ok(Some(event)) => {
                        let Some(event) = self.convert(event.get_original_event()) else {
                            continue;
                        };
                        let event = event?;
                        if events.is_empty() && event.position <= after_position {
                            continue; // the start position is inclusive
                        }
                        check_increasing(events.last().map(|e| e.position), &event)?;
                        events.push(event);
                    }
                    Ok(None) => break,
                    Err(e) => return Err(backend(ACTION, e.to_string())),
                }
            }
            Ok(events)
        })
    }

    fn head_position(&self) -> BoxFuture<'_, Result<u64, StoreError>> {
        Box::pin(async move { self.head().await.map_err(|e| backend("reading the log head", e.to_string())) })
    }

    fn subscribe_all(&self, after_position: u64) -> BoxStream<'static, Result<RecordedEvent, StoreError>> {
        let state = Following {
            store: self.clone(),
            subscription: None,
            after: after_position,
            yielded: false,
            finished: false,
        };
        Box::pin(futures::stream::unfold(state, Following::next))
    }
}

/// State of one `subscribe_all` stream.
struct Following {
    store: KurrentDbEventStore,
    subscription: Option<kurrentdb::Subscription>,
    /// Position of the last event yielded (or the checkpoint).
    after: u64,
    /// Whether an event was yielded since subscribing: before that, an event at the checkpoint
    /// itself is the server including its start position and is skipped.
    yielded: bool,
    finished: bool,
}

impl Following {
    async fn next(mut self) -> Option<(Result<RecordedEvent, StoreError>, Self)> {
        if self.finished {
            return None;
        }
        let mut subscription = match self.subscription.take() {
            Some(subscription) => subscription,
            None => {
                let options =
                    SubscribeToAllOptions::default().position(all_from(self.after)).filter(self.store.filter());
                self.store.client.subscribe_to_all(&options).await
            }
        };
        loop {
            let outcome = match subscription.next().await {
                Ok(event) => match self.store.convert(event.get_original_event()) {
                    None => continue,
                    Some(Ok(event)) if !self.yielded && event.position <= self.after => continue,
                    Some(Ok(event)) => check_increasing(Some(self.after), &event).map(|()| event),
                    Some(Err(e)) => Err(e),
                },
                Err(e) => Err(backend("following the log", e.to_string())),
            };
            match outcome {
                Ok(event) => {
                    self.after = event.position;
                    self.yielded = true;
                    self.subscription = Some(subscription);
                    return Some((Ok(event), self));
                }
                Err(e) => {
                    self.finished = true;
                    return Some((Err(e), self));
                }
            }
        }
    }
}

/// Refuses an event whose position does not follow the previous one (see the module docs).
fn check_increasing(previous: Option<u64>, event: &RecordedEvent) -> Result<(), StoreError> {
    match previous {
        Some(p) if event.position <= p => Err(StoreError::Corrupt {
            position: event.position,
            reason: format!(
                "its $all commit position does not follow the previous event's ({p}); was it written in a multi-event transaction?"
            ),
        }),
        _ => Ok(()),
    }
}
