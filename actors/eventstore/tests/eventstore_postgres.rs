//! The event store contract run against the PostgreSQL adapter on a real, throwaway PostgreSQL
//! cluster (initdb + pg_ctl in a temporary directory, unix socket only), plus what only a server
//! can show: a broken connection is opened again, bad URLs and unreachable servers give clear
//! errors, and the writer still refuses a fork when another client bypasses Scribe's lock.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use scribe_eventstore::throwaway_postgres::ThrowawayPostgres;
use scribe_eventstore::{
    EventStore, ExpectedVersion, NewEvent, PostgresEventStore, StoreError, StoreLocation, contract,
};
use serde_json::json;

fn cluster() -> Arc<ThrowawayPostgres> {
    Arc::new(ThrowawayPostgres::start(false).expect("a throwaway PostgreSQL cluster"))
}

fn event(n: u64) -> NewEvent {
    NewEvent::new("Counted", json!({"type": "Counted", "v": 1, "n": n}))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_store_passes_the_contract() {
    let cluster = cluster();
    let databases = cluster.clone();
    contract::run_all(move |slot| {
        let cluster = databases.clone();
        async move {
            let url = cluster.create_database(&format!("slot{slot}")).await.unwrap();
            Arc::new(PostgresEventStore::connect(&url).await.unwrap()) as Arc<dyn EventStore>
        }
    })
    .await;
    drop(cluster);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_store_setting_opens_postgres() {
    let cluster = cluster();
    let url = cluster.create_database("by_setting").await.unwrap();
    let location = StoreLocation::from_setting(Some(&url), std::path::Path::new("unused")).unwrap();
    assert!(matches!(location, StoreLocation::Postgres(_)));
    let store = location.open().await.unwrap();
    let appended = store.append("job-1", ExpectedVersion::NoStream, vec![event(1)]).await.unwrap();
    assert_eq!(store.head_position().await.unwrap(), appended.position);
}

/// Every connection of the store is killed by the server (as a failover or a restart would);
/// appends, reads and a running subscription carry on once their connections are opened again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_connections_are_opened_again() {
    let cluster = cluster();
    let url = cluster.create_database("reconnect").await.unwrap();
    let store = PostgresEventStore::connect(&url).await.unwrap();
    store.append("job-1", ExpectedVersion::NoStream, vec![event(0)]).await.unwrap();
    let mut log = store.subscribe_all(0);
    assert_eq!(log.next().await.unwrap().unwrap().version, 0);

    let (admin, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    let killed = admin
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE application_name = 'scribe' AND pid <> pg_backend_pid()",
            &[],
        )
        .await
        .unwrap();
    assert!(killed.len() >= 2, "the store's connections were found ({} killed)", killed.len());
    tokio::time::sleep(Duration::from_millis(200)).await;

    // An append caught in the break may fail with a clear error; the next one must succeed.
    let mut appended = None;
    for _ in 0..3 {
        match store.append("job-1", ExpectedVersion::Exact(0), vec![event(1)]).await {
            Ok(a) => {
                appended = Some(a);
                break;
            }
            Err(StoreError::Backend { .. }) => tokio::time::sleep(Duration::from_millis(100)).await,
            Err(other) => panic!("unexpected error after the connections were killed: {other}"),
        }
    }
    let appended = appended.expect("appends work again after the connections were killed");
    assert_eq!(appended.last_version, 1);
    assert_eq!(store.read_stream("job-1", 0).await.unwrap().len(), 2);
    // The running subscription either goes on or ends with an error (then its owner resubscribes
    // from its checkpoint, as follow_log's users do); it never skips the event.
    match tokio::time::timeout(Duration::from_secs(30), log.next()).await {
        Ok(Some(Ok(next))) => assert_eq!((next.stream.as_str(), next.version), ("job-1", 1)),
        Ok(Some(Err(StoreError::Backend { .. }))) => {
            let mut again = store.subscribe_all(appended.position - 1);
            let next = again.next().await.unwrap().unwrap();
            assert_eq!(next.position, appended.position);
        }
        other => panic!("the subscription neither went on nor failed clearly: {other:?}"),
    }
}

/// A client that writes without Scribe's advisory lock cannot fork a stream either: the unique
/// constraint stops it, and the append that lost sees a conflict, not a database error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_unique_constraint_turns_a_bypassing_write_into_a_conflict() {
    let cluster = cluster();
    let url = cluster.create_database("bypass").await.unwrap();
    let store = PostgresEventStore::connect(&url).await.unwrap();
    store.append("job-1", ExpectedVersion::NoStream, vec![event(0)]).await.unwrap();
    let (mut other, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    // The other client takes version 1 without the lock and keeps its transaction open...
    let tx = other.transaction().await.unwrap();
    tx.execute(
        "INSERT INTO scribe_events (position, stream, version, type, data, recorded_at)
         VALUES (1000, 'job-1', 1, 'Counted', '{}', 0)",
        &[],
    )
    .await
    .unwrap();
    // ... while Scribe appends version 1 too: its insert waits on the other's uncommitted row.
    let racing = {
        let store = store.clone();
        tokio::spawn(async move { store.append("job-1", ExpectedVersion::Exact(0), vec![event(1)]).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    tx.commit().await.unwrap();
    match racing.await.unwrap() {
        Err(StoreError::WrongExpectedVersion { actual, .. }) => assert_eq!(actual, Some(1)),
        other => panic!("the losing append must be a conflict, got {other:?}"),
    }
    let versions: Vec<u64> = store.read_stream("job-1", 0).await.unwrap().iter().map(|e| e.version).collect();
    assert_eq!(versions, vec![0, 1], "no fork");
}

#[tokio::test]
async fn a_bad_url_and_an_unreachable_server_are_clear_errors() {
    let bad =
        PostgresEventStore::connect("postgres://host:notaport/db").await.err().expect("a malformed URL is refused");
    assert!(bad.to_string().contains("PostgreSQL URL"), "{bad}");

    let dir = tempfile::tempdir().unwrap();
    let nobody =
        format!("postgres://scribe@{}:5432/scribe?connect_timeout=2", dir.path().to_string_lossy().replace('/', "%2F"));
    let unreachable = PostgresEventStore::connect(&nobody).await.err().expect("no server there");
    let message = unreachable.to_string();
    assert!(message.contains("connecting to PostgreSQL") && message.contains("error connecting"), "{message}");
}

/// A test that panics still stops its cluster and deletes its files (the harness's `Drop`).
#[test]
fn a_panicking_test_still_stops_and_removes_its_cluster() {
    let (started, seen) = std::sync::mpsc::channel();
    let outcome = std::thread::spawn(move || {
        let cluster = ThrowawayPostgres::start(false).unwrap();
        let dir = cluster.socket_dir().to_owned();
        let pid_file = std::fs::read_to_string(dir.join("data/postmaster.pid")).unwrap();
        let pid: u32 = pid_file.lines().next().unwrap().trim().parse().unwrap();
        started.send((dir, pid)).unwrap();
        panic!("a failing test");
    })
    .join();
    assert!(outcome.is_err(), "the thread panicked");
    let (dir, pid) = seen.recv().unwrap();
    assert!(!dir.exists(), "{} was removed", dir.display());
    // `pg_ctl stop -w` returns once the server removed its pid file, a moment before the process
    // is gone (or a zombie, until its parent, init, reaps it).
    let running = || {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .unwrap_or_default()
            .lines()
            .find(|line| line.starts_with("State:"))
            .is_some_and(|line| !line.contains("zombie"))
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while running() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!running(), "the postmaster (pid {pid}) has stopped");
}
