//! The behaviour every [`EventStore`] adapter must have, as executable checks.
//!
//! Written against the port only, so the SQLite, PostgreSQL and KurrentDB adapters run the very
//! same suite. An adapter's test calls [`run_all`] with an `open(slot)` function:
//! the same slot must give the same underlying store (opened again: for a server, a new
//! connection, as another Scribe node would), a new slot a new, empty one.
//! Each check panics with a message naming the broken property; use them from tests only (the
//! module exists with the crate's `testing` feature, which tests enable in their dev-dependencies).
//!
//! Positions are only required to increase in commit order (see the port's documentation): the
//! checks compare positions with each other and with `read_all`, and never count them.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::json;

use super::{EventStore, ExpectedVersion, NewEvent, RecordedEvent, StoreError};

/// Upper bound on waiting for a subscription, so a broken adapter fails instead of hanging.
const WAIT: Duration = Duration::from_secs(60);

/// Runs every check, each on a fresh store (slots 0, 1, 2, ...).
pub async fn run_all<F, Fut>(open: F)
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = Arc<dyn EventStore>>,
{
    append_then_read_round_trip(open(0).await).await;
    expected_version_is_enforced(open(1).await).await;
    concurrent_writers_with_same_expectation_exactly_one_wins(open(2).await).await;
    read_all_is_ordered_and_pages(open(3).await).await;
    subscription_catches_up_then_goes_live(open(4).await).await;
    subscription_sees_racing_appends_once_in_order(open(5).await).await;
    invalid_appends_are_refused(open(6).await).await;
    reopening_keeps_everything(&open, 7).await;
    several_nodes_append_concurrently_and_no_reader_misses_a_late_commit(&open, 8).await;
}

fn event(n: u64) -> NewEvent {
    NewEvent::new("Counted", json!({"type": "Counted", "v": 1, "n": n, "text": "naïve ✓ \"quoted\""}))
}

/// Appended events come back from `read_stream` exactly, with versions 0.. and increasing positions.
pub async fn append_then_read_round_trip(store: Arc<dyn EventStore>) {
    let first = store.append("job-a", ExpectedVersion::NoStream, vec![event(0), event(1)]).await.unwrap();
    assert_eq!(first.last_version, 1, "two events into a new stream end at version 1");
    let second = store.append("job-a", ExpectedVersion::Exact(1), vec![event(2)]).await.unwrap();
    assert_eq!(second.last_version, 2);
    assert!(second.position > first.position, "positions grow with each append");

    let events = store.read_stream("job-a", 0).await.unwrap();
    assert_eq!(events.len(), 3);
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.stream, "job-a");
        assert_eq!(e.version, i as u64);
        assert_eq!(e.event_type, "Counted");
        assert_eq!(e.data, event(i as u64).data, "the JSON body round-trips unchanged");
        assert!(e.recorded_at_ms > 1_600_000_000_000, "recorded_at_ms is a Unix time in ms");
    }
    assert_eq!(events[2].position, second.position, "Appended.position is the last event's position");

    let tail = store.read_stream("job-a", 2).await.unwrap();
    assert_eq!(tail.len(), 1, "read_stream starts at from_version");
    assert_eq!(tail[0].version, 2);
    assert!(store.read_stream("job-missing", 0).await.unwrap().is_empty(), "an unknown stream reads empty");
    assert_eq!(store.head_position().await.unwrap(), second.position);
}

/// NoStream on an existing stream, a stale Exact, and Exact on a missing stream are conflicts
/// that write nothing; Any always appends.
pub async fn expected_version_is_enforced(store: Arc<dyn EventStore>) {
    store.append("account-x", ExpectedVersion::NoStream, vec![event(0)]).await.unwrap();

    let conflicts = [
        ("account-x", ExpectedVersion::NoStream, Some(0)),
        ("account-x", ExpectedVersion::Exact(5), Some(0)),
        ("account-y", ExpectedVersion::Exact(0), None),
    ];
    for (stream, expected, want_actual) in conflicts {
        match store.append(stream, expected, vec![event(9)]).await {
            Err(StoreError::WrongExpectedVersion { stream: s, expected: e, actual }) => {
                assert_eq!((s.as_str(), e, actual), (stream, expected, want_actual));
            }
            other => panic!("append to {stream} expecting {expected} must conflict, got {other:?}"),
        }
    }
    assert_eq!(store.read_stream("account-x", 0).await.unwrap().len(), 1, "a refused append writes nothing");
    assert!(store.read_stream("account-y", 0).await.unwrap().is_empty());

    let any = store.append("account-x", ExpectedVersion::Any, vec![event(1)]).await.unwrap();
    assert_eq!(any.last_version, 1);
    let any_new = store.append("account-z", ExpectedVersion::Any, vec![event(0)]).await.unwrap();
    assert_eq!(any_new.last_version, 0, "Any creates a missing stream");
}

/// Many writers holding the same expected version race; exactly one wins, the history never forks.
pub async fn concurrent_writers_with_same_expectation_exactly_one_wins(store: Arc<dyn EventStore>) {
    store.append("job-race", ExpectedVersion::NoStream, vec![event(0)]).await.unwrap();
    for round in 0..5u64 {
        let writers: Vec<_> = (0..8u64)
            .map(|w| {
                let store = store.clone();
                tokio::spawn(async move {
                    store.append("job-race", ExpectedVersion::Exact(round), vec![event(100 * round + w)]).await
                })
            })
            .collect();
        let mut wins = 0;
        for writer in writers {
            match writer.await.unwrap() {
                Ok(appended) => {
                    wins += 1;
                    assert_eq!(appended.last_version, round + 1);
                }
                Err(StoreError::WrongExpectedVersion { actual, .. }) => {
                    assert_eq!(actual, Some(round + 1))
                }
                Err(other) => panic!("a losing writer must see WrongExpectedVersion, got {other}"),
            }
        }
        assert_eq!(wins, 1, "round {round}: exactly one of 8 writers with the same expectation wins");
    }
    let versions: Vec<u64> = store.read_stream("job-race", 0).await.unwrap().iter().map(|e| e.version).collect();
    assert_eq!(versions, (0..=5).collect::<Vec<_>>(), "one event per round, no fork");
}

/// `read_all` returns every event once, in commit order with increasing positions, and pages
/// cleanly from any position.
pub async fn read_all_is_ordered_and_pages(store: Arc<dyn EventStore>) {
    assert_eq!(store.head_position().await.unwrap(), 0, "a new store is empty");
    assert!(store.read_all(0, 10).await.unwrap().is_empty());
    let mut expected = Vec::new();
    for i in 0..7u64 {
        for stream in ["job-1", "job-2", "glossary-1"] {
            let appended = store.append(stream, ExpectedVersion::Any, vec![event(i), event(i + 100)]).await.unwrap();
            expected.push((stream.to_owned(), appended.last_version - 1));
            expected.push((stream.to_owned(), appended.last_version));
        }
    }
    let all = store.read_all(0, 1000).await.unwrap();
    assert_eq!(
        all.iter().map(|e| (e.stream.clone(), e.version)).collect::<Vec<_>>(),
        expected,
        "read_all follows commit order"
    );
    assert_positions_increase(&all, 0);
    let head = all.last().unwrap().position;
    assert_eq!(store.head_position().await.unwrap(), head, "the head is the last event's position");

    for page_size in [1, 4, 5, 42] {
        let mut paged = Vec::new();
        let mut after = 0;
        loop {
            let page = store.read_all(after, page_size).await.unwrap();
            assert!(page.len() <= page_size, "a page holds at most max events");
            let Some(last) = page.last() else { break };
            assert!(page[0].position > after, "read_all({after}, ..) starts after position {after}");
            after = last.position;
            paged.extend(page);
        }
        assert_eq!(paged, all, "pages of {page_size} add up to the whole log");
    }
    assert!(store.read_all(head, 10).await.unwrap().is_empty(), "nothing after the head");
    // Any number is a valid start, also one between two events' positions.
    let middle = &all[all.len() / 2];
    assert_eq!(
        store.read_all(middle.position - 1, 1).await.unwrap()[0],
        *middle,
        "read_all({}, 1) gives the event at {}",
        middle.position - 1,
        middle.position
    );
}

/// A subscription first delivers what is stored after its start position, then new appends.
pub async fn subscription_catches_up_then_goes_live(store: Arc<dyn EventStore>) {
    for i in 0..10 {
        store.append("job-sub", ExpectedVersion::Any, vec![event(i)]).await.unwrap();
    }
    let stored = store.read_all(0, 100).await.unwrap();
    let mut from_start = store.subscribe_all(0);
    let mut from_middle = store.subscribe_all(stored[3].position);
    let caught_up = take(&mut from_start, 10).await;
    assert_eq!(caught_up, stored, "catch-up delivers the stored log");
    let middle = take(&mut from_middle, 6).await;
    assert_eq!(middle, stored[4..], "a subscription starts right after its checkpoint");

    let writer = {
        let store = store.clone();
        tokio::spawn(async move {
            for i in 10..15 {
                tokio::time::sleep(Duration::from_millis(20)).await;
                store.append("job-live", ExpectedVersion::Any, vec![event(i)]).await.unwrap();
            }
        })
    };
    let live = take(&mut from_start, 5).await;
    writer.await.unwrap();
    assert_positions_increase(&live, stored[9].position);
    assert!(live.iter().all(|e| e.stream == "job-live"));
    assert_eq!(live, store.read_all(stored[9].position, 100).await.unwrap(), "live events are the stored ones");
    assert_eq!(take(&mut from_middle, 5).await, live, "every subscriber sees the same live events");
}

/// Subscriptions that start while writers append concurrently see every event exactly once, in
/// position order: no gap between catch-up and live, no duplicate.
pub async fn subscription_sees_racing_appends_once_in_order(store: Arc<dyn EventStore>) {
    const WRITERS: u64 = 6;
    const APPENDS: u64 = 40;
    let total = (WRITERS * APPENDS * 2) as usize;
    store.append("job-seed", ExpectedVersion::NoStream, vec![event(0), event(1)]).await.unwrap();

    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let store = store.clone();
            tokio::spawn(async move {
                for i in 0..APPENDS {
                    let stream = format!("job-w{w}");
                    store.append(&stream, ExpectedVersion::Any, vec![event(i), event(i + 1000)]).await.unwrap();
                    if i % 7 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
            })
        })
        .collect();
    // Subscribers start at different moments of the race, from the beginning of the log.
    let mut subscribers = Vec::new();
    for _ in 0..4 {
        let mut subscription = store.subscribe_all(0);
        subscribers.push(tokio::spawn(async move { take(&mut subscription, total + 2).await }));
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    for writer in writers {
        writer.await.unwrap();
    }
    let reference = store.read_all(0, total + 10).await.unwrap();
    assert_eq!(reference.len(), total + 2);
    for subscriber in subscribers {
        let seen = subscriber.await.unwrap();
        assert_positions_increase(&seen, 0);
        assert_eq!(seen, reference, "a subscriber sees exactly the log, in order");
    }
    let mut last_version: HashMap<&str, u64> = HashMap::new();
    for e in &reference {
        if let Some(previous) = last_version.insert(&e.stream, e.version) {
            assert_eq!(e.version, previous + 1, "stream {} is in version order within the log", e.stream);
        }
    }
}

/// Empty appends and empty stream names are refused as invalid, not stored.
pub async fn invalid_appends_are_refused(store: Arc<dyn EventStore>) {
    let empty = store.append("job-e", ExpectedVersion::Any, vec![]).await;
    assert!(matches!(empty, Err(StoreError::InvalidAppend { .. })), "an empty append is invalid: {empty:?}");
    let nameless = store.append("", ExpectedVersion::Any, vec![event(0)]).await;
    assert!(matches!(nameless, Err(StoreError::InvalidAppend { .. })), "an empty stream name is invalid");
    assert_eq!(store.head_position().await.unwrap(), 0);
}

/// Closing and opening the same store again keeps every event, its position and its version, and
/// appends continue where they left off.
pub async fn reopening_keeps_everything<F, Fut>(open: &F, slot: usize)
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = Arc<dyn EventStore>>,
{
    let before = {
        let store = open(slot).await;
        for i in 0..20 {
            store.append(&format!("job-{}", i % 3), ExpectedVersion::Any, vec![event(i)]).await.unwrap();
        }
        store.read_all(0, 100).await.unwrap()
    };
    let store = open(slot).await;
    let after = store.read_all(0, 100).await.unwrap();
    assert_eq!(after, before, "a reopened store holds exactly what was written");
    let next = store.append("job-0", ExpectedVersion::Exact(6), vec![event(99)]).await.unwrap();
    assert_eq!(next.last_version, 7, "stream versions continue");
    assert!(next.position > before.last().unwrap().position, "positions continue after the stored history");
    let streams: BTreeSet<String> = after.into_iter().map(|e| e.stream).collect();
    assert_eq!(streams.len(), 3);
}

/// Several handles on one store (several Scribe nodes on one database) append at once, to their
/// own streams and to one shared stream with expected versions. Meanwhile readers poll `read_all`
/// and follow subscriptions on every handle. At the end:
/// - every snapshot a reader took is a prefix of the final log: no event ever appeared *before* a
///   position a reader had already seen (a late commit would break a checkpoint);
/// - every subscription saw exactly the final log, in order;
/// - the shared stream did not fork, and its versions are gapless.
pub async fn several_nodes_append_concurrently_and_no_reader_misses_a_late_commit<F, Fut>(open: &F, slot: usize)
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = Arc<dyn EventStore>>,
{
    const NODES: usize = 3;
    const WRITERS_PER_NODE: usize = 3;
    const APPENDS: u64 = 30;
    let mut nodes = Vec::new();
    for _ in 0..NODES {
        nodes.push(open(slot).await);
    }
    let own_events = NODES * WRITERS_PER_NODE * APPENDS as usize * 2;
    let shared_rounds = 20u64;

    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut pollers = Vec::new();
    for node in &nodes {
        let (node, done) = (node.clone(), done.clone());
        pollers.push(tokio::spawn(async move {
            let mut previous: Vec<RecordedEvent> = Vec::new();
            let mut snapshots = 0usize;
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                let snapshot = node.read_all(0, usize::MAX).await.unwrap();
                assert!(
                    snapshot.len() >= previous.len() && snapshot[..previous.len()] == previous[..],
                    "each read_all extends the one before: an event appeared before a position already read"
                );
                previous = snapshot;
                snapshots += 1;
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            (snapshots, previous)
        }));
    }
    let mut writers = Vec::new();
    let mut racers = Vec::new();
    for (n, node) in nodes.iter().enumerate() {
        for w in 0..WRITERS_PER_NODE {
            let node = node.clone();
            writers.push(tokio::spawn(async move {
                let stream = format!("job-n{n}w{w}");
                for i in 0..APPENDS {
                    node.append(
                        &stream,
                        ExpectedVersion::after(i.checked_sub(1).map(|v| v * 2 + 1)),
                        vec![event(i), event(i + 1000)],
                    )
                    .await
                    .unwrap();
                }
            }));
        }
        // One writer per node competes for the shared stream: each round, every node tries to
        // append the next version; exactly one wins and the others reload and try again.
        let node = node.clone();
        racers.push(tokio::spawn(async move {
            let mut won = 0u64;
            loop {
                let current = node.read_stream("account-shared", 0).await.unwrap().last().map(|e| e.version);
                if current.map_or(0, |v| v + 1) >= shared_rounds {
                    return won;
                }
                match node.append("account-shared", ExpectedVersion::after(current), vec![event(n as u64)]).await {
                    Ok(_) => won += 1,
                    Err(StoreError::WrongExpectedVersion { .. }) => {}
                    Err(other) => panic!("a racing append failed: {other}"),
                }
            }
        }));
    }
    let total = own_events + shared_rounds as usize;
    let mut subscribers = Vec::new();
    for node in &nodes {
        let mut subscription = node.subscribe_all(0);
        subscribers.push(tokio::spawn(async move { take(&mut subscription, total).await }));
    }
    for writer in writers {
        writer.await.unwrap();
    }
    let mut shared_wins = 0;
    for racer in racers {
        shared_wins += racer.await.unwrap();
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);

    let log = nodes[0].read_all(0, usize::MAX).await.unwrap();
    assert_eq!(log.len(), total, "every append is stored once");
    assert_positions_increase(&log, 0);
    assert_eq!(shared_wins, shared_rounds, "one win per version of the shared stream");
    let shared: Vec<u64> = log.iter().filter(|e| e.stream == "account-shared").map(|e| e.version).collect();
    assert_eq!(shared, (0..shared_rounds).collect::<Vec<_>>(), "the shared stream did not fork");
    for node in &nodes[1..] {
        assert_eq!(node.read_all(0, usize::MAX).await.unwrap(), log, "every node reads the same log");
    }
    for poller in pollers {
        let (snapshots, last) = poller.await.unwrap();
        assert!(snapshots > 0, "the reader read while the writers wrote");
        assert_eq!(last[..], log[..last.len()], "a reader's last snapshot is a prefix of the final log");
    }
    for subscriber in subscribers {
        assert_eq!(subscriber.await.unwrap(), log, "a subscriber on every node sees exactly the log, in order");
    }
}

/// Takes `n` events from a subscription, failing on an error or after [`WAIT`].
async fn take(
    subscription: &mut (impl futures::Stream<Item = Result<RecordedEvent, StoreError>> + Unpin),
    n: usize,
) -> Vec<RecordedEvent> {
    let mut events = Vec::with_capacity(n);
    while events.len() < n {
        match tokio::time::timeout(WAIT, subscription.next()).await {
            Ok(Some(Ok(e))) => events.push(e),
            Ok(Some(Err(e))) => panic!("subscription failed after {} events: {e}", events.len()),
            Ok(None) => panic!("subscription ended after {} of {n} events", events.len()),
            Err(_) => panic!("subscription delivered {} of {n} events within {WAIT:?}", events.len()),
        }
    }
    events
}

/// Positions follow `after` and strictly increase (gaps are allowed, duplicates are not).
fn assert_positions_increase(events: &[RecordedEvent], after: u64) {
    let mut previous = after;
    for e in events {
        assert!(e.position > previous, "positions increase: {} follows {previous}", e.position);
        previous = e.position;
    }
}
