//! The event store contract run against the KurrentDB adapter, on the server named by
//! `SCRIBE_TEST_KURRENTDB_URL` (for example `esdb://localhost:2113?tls=false`). Without it the
//! test prints a notice and returns: KurrentDB's server cannot be installed on the machines this
//! project is built on, so this suite has not been run here (see the README).
//!
//! Each run uses fresh stream names (a namespace per run and slot), so the server needs no reset.

use std::sync::Arc;

use scribe_eventstore::{EventStore, KurrentDbEventStore, StoreLocation, contract};

const URL_VARIABLE: &str = "SCRIBE_TEST_KURRENTDB_URL";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kurrentdb_store_passes_the_contract() {
    let Some(url) = std::env::var(URL_VARIABLE).ok().filter(|u| !u.is_empty()) else {
        eprintln!(
            "NOTICE: {URL_VARIABLE} is not set; the KurrentDB contract suite did not run (set it to esdb://host:2113?tls=false to run it)"
        );
        return;
    };
    assert!(
        matches!(StoreLocation::from_setting(Some(&url), std::path::Path::new(".")), Ok(StoreLocation::KurrentDb(_))),
        "{URL_VARIABLE} must be an esdb:// or kurrentdb:// URL"
    );
    let run = uuid::Uuid::new_v4().simple().to_string();
    contract::run_all(move |slot| {
        let (url, namespace) = (url.clone(), format!("scribe-test-{run}-{slot}:"));
        async move {
            Arc::new(
                KurrentDbEventStore::connect(&url, Some(&namespace))
                    .await
                    .unwrap(),
            ) as Arc<dyn EventStore>
        }
    })
    .await;
}

#[tokio::test]
async fn a_malformed_url_and_an_unreachable_server_are_clear_errors() {
    let malformed = KurrentDbEventStore::connect("esdb://localhost:notaport", None)
        .await
        .err()
        .expect("a port that is not a number is refused");
    assert!(malformed.to_string().contains("KurrentDB connection string"), "{malformed}");

    // Nothing listens on port 1 of loopback.
    let unreachable = tokio::time::timeout(
        std::time::Duration::from_secs(120),
        KurrentDbEventStore::connect("esdb://127.0.0.1:1?tls=false&maxDiscoverAttempts=1", None),
    )
    .await
    .expect("connecting gives up in time")
    .err()
    .expect("no server there");
    assert!(unreachable.to_string().contains("connecting to KurrentDB"), "{unreachable}");
}
