//! Callback delivery against a real receiver on 127.0.0.1, with the real job actors on a SQLite
//! event store in a temp dir: signatures a receiver can verify, retries while the receiver is
//! down or failing, `410 Gone`, redirects, the address guard, and resuming after a restart.
//! The test plays the pipeline: it hands finished jobs to the callback actor and collects the
//! stage reports. Schedules are milliseconds; the tests wait for outcomes, never for times.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use hmac::{Hmac, KeyInit, Mac};
use poem::http::StatusCode;
use poem::listener::{Acceptor, Listener, TcpListener};
use poem::{Request, Response, Server};
use ractor::{Actor, ActorProcessingErr, ActorRef};
use scribe_actors::callbacks::{CallbackActor, CallbackArgs, CallbackMsg, CallbackSettings, WebhookSecret};
use scribe_actors::cluster::ClusterSettings;
use scribe_actors::command;
use scribe_actors::jobs::Jobs;
use scribe_actors::media::AddressGuard;
use scribe_actors::worker::{StageDone, StageReport};
use scribe_domain::VersionedEvent;
use scribe_domain::account::{AccountAggregate, AccountCommand};
use scribe_domain::ids::{JobId, UserName, account_stream, job_stream};
use scribe_domain::job::{JobCommand, JobEvent, JobState, NewMedia, Stage, StoredMedia};
use scribe_domain::requests::JobParams;
use scribe_eventstore::{EventStore, SqliteEventStore};
use serde_json::Value;
use sha2::Sha256;
use tokio::task::JoinHandle;

// --- The receiver: a real HTTP server that answers from a script and keeps what it got.

#[derive(Debug, Clone)]
struct Received {
    path: String,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

impl Received {
    fn header(&self, name: &str) -> &str {
        self.headers.get(name).map_or("", String::as_str)
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("the callback body is JSON")
    }
}

#[derive(Default)]
struct Receiver {
    /// Status codes to answer with, in order; 200 once they run out. A 302 points to /landing.
    answers: Mutex<VecDeque<u16>>,
    received: Mutex<Vec<Received>>,
}

impl Receiver {
    fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

struct Running {
    receiver: Arc<Receiver>,
    url: String,
    server: JoinHandle<()>,
}

/// Starts a receiver on `port` (0: any free one) that answers `answers` first.
async fn receiver_on(port: u16, answers: &[u16]) -> Running {
    let receiver = Arc::new(Receiver { answers: Mutex::new(answers.iter().copied().collect()), ..Receiver::default() });
    let shared = receiver.clone();
    let app = poem::endpoint::make(move |mut req: Request| {
        let receiver = shared.clone();
        async move {
            let body = req.take_body().into_vec().await.unwrap_or_default();
            let headers = req
                .headers()
                .iter()
                .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or_default().to_owned()))
                .collect();
            receiver.received.lock().unwrap().push(Received { path: req.uri().path().to_owned(), headers, body });
            let code = receiver.answers.lock().unwrap().pop_front().unwrap_or(200);
            let mut response = Response::builder().status(StatusCode::from_u16(code).unwrap());
            if code == 302 {
                response = response.header("Location", "/landing");
            }
            response.finish()
        }
    });
    let acceptor = TcpListener::bind(format!("127.0.0.1:{port}")).into_acceptor().await.unwrap();
    let addr = *acceptor.local_addr()[0].as_socket_addr().unwrap();
    let server = tokio::spawn(async move {
        let _ = Server::new_with_acceptor(acceptor).run(app).await;
    });
    Running { receiver, url: format!("http://{addr}/hooks/scribe"), server }
}

/// A loopback port nobody listens on (for now).
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    addr.port()
}

/// Checks a delivery the way a receiver would: HMAC-SHA256 over `id.timestamp.body` with the
/// base64-decoded secret, compared in constant time against each `v1,` signature.
fn signature_is_valid(secret: &str, delivery: &Received) -> bool {
    let key = BASE64.decode(secret.strip_prefix("whsec_").expect("a whsec_ secret")).unwrap();
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{}.{}.", delivery.header("webhook-id"), delivery.header("webhook-timestamp")).as_bytes());
    mac.update(&delivery.body);
    delivery
        .header("webhook-signature")
        .split(' ')
        .filter_map(|s| s.strip_prefix("v1,"))
        .filter_map(|s| BASE64.decode(s).ok())
        .any(|tag| mac.clone().verify_slice(&tag).is_ok())
}

// --- The write side: job actors, the callback actor, and a stand-in for the pipeline that
// --- records what the callback actor reports.

struct ReportProbe;

impl Actor for ReportProbe {
    type Msg = StageReport;
    type State = Arc<Mutex<Vec<(JobId, Stage)>>>;
    type Arguments = Arc<Mutex<Vec<(JobId, Stage)>>>;

    async fn pre_start(
        &self,
        _: ActorRef<StageReport>,
        reports: Self::State,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(reports)
    }

    async fn handle(
        &self,
        _: ActorRef<StageReport>,
        msg: StageReport,
        reports: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        if let StageReport::Done(job_id, stage) = msg {
            reports.lock().unwrap().push((job_id, stage));
        }
        Ok(())
    }
}

struct World {
    store: Arc<dyn EventStore>,
    jobs: Jobs,
    callbacks: ActorRef<CallbackMsg>,
    pipeline: ActorRef<StageReport>,
    reports: Arc<Mutex<Vec<(JobId, Stage)>>>,
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Retries after at most 20 ms, then 50 ms, for five minutes.
fn quick() -> CallbackSettings {
    CallbackSettings {
        schedule: vec![ms(20), ms(50)],
        max_age: Duration::from_secs(300),
        timeout: Duration::from_secs(5),
        max_concurrent: 4,
    }
}

impl World {
    /// Starts on the event store in `dir` (created or reopened). Loopback receivers need
    /// `allow_private`.
    async fn start(dir: &Path, settings: CallbackSettings, allow_private: bool) -> World {
        let store: Arc<dyn EventStore> = Arc::new(SqliteEventStore::open_in(dir).unwrap());
        World::node(store, settings, allow_private, None).await
    }

    /// One node of a cluster on `store` (its own job actors and callback actor), or the only
    /// node when `cluster` is `None`.
    async fn node(
        store: Arc<dyn EventStore>,
        settings: CallbackSettings,
        allow_private: bool,
        cluster: Option<ClusterSettings>,
    ) -> World {
        let jobs = Jobs::start(store.clone(), Duration::from_secs(60)).await.unwrap();
        let args = CallbackArgs {
            jobs: jobs.clone(),
            store: store.clone(),
            guard: AddressGuard::new(allow_private),
            settings,
            cluster,
        };
        let (callbacks, _) = Actor::spawn(None, CallbackActor, args).await.unwrap();
        let reports = Arc::new(Mutex::new(vec![]));
        let (pipeline, _) = Actor::spawn(None, ReportProbe, reports.clone()).await.unwrap();
        World { store, jobs, callbacks, pipeline, reports }
    }

    /// Opens an account with a fresh webhook secret, which it returns.
    async fn account(&self, name: &str) -> String {
        let secret = WebhookSecret::generate();
        let open = AccountCommand::Open {
            user_name: user(name),
            webhook_secret: secret.clone(),
            role: Default::default(),
            languages: Vec::new(),
            at_ms: 1_763_769_600_000,
        };
        command::execute::<AccountAggregate>(self.store.as_ref(), &account_stream(&user(name)), open).await.unwrap();
        secret
    }

    /// A job of `owner` with `callback_url` that is `DONE` (or `ERROR` when `fail` is given).
    async fn finished_job(&self, owner: &str, callback_url: &str, fail: Option<&str>) -> JobId {
        let job_id = JobId::parse(&uuid::Uuid::now_v7().to_string()).unwrap();
        let request =
            JobParams { language: Some("en".into()), callback_url: Some(callback_url.into()), ..Default::default() }
                .validate()
                .unwrap();
        let now = scribe_actors::clock::now_ms();
        let mut commands = vec![JobCommand::Submit {
            job_id: job_id.clone(),
            owner: user(owner),
            at_ms: now,
            request,
            source: NewMedia::Upload {
                filename: "en_jfk.wav".into(),
                media: StoredMedia { path: format!("media/{job_id}/en_jfk.wav"), bytes: 352_078 },
            },
        }];
        match fail {
            Some(error_msg) => commands.push(JobCommand::Fail { error_msg: error_msg.into(), at_ms: now + 1 }),
            None => commands.extend([
                JobCommand::RecordMediaProbed { duration_ms: 11_000, fails_with: None, at_ms: now + 1 },
                JobCommand::StartTranscription { at_ms: now + 2 },
                JobCommand::RecordTranscript {
                    path: format!("transcripts/{job_id}.json"),
                    detected_language: None,
                    words: 22,
                    at_ms: now + 3,
                },
                JobCommand::Complete { at_ms: now + 4 },
            ]),
        }
        for command in commands {
            self.jobs.execute(&job_id, command).await.unwrap();
        }
        job_id
    }

    /// What the pipeline does for a job at stage `DeliverCallback`.
    fn deliver(&self, job_id: &JobId) {
        let done = StageDone::new(self.pipeline.get_derived(), job_id.clone(), Stage::DeliverCallback);
        self.callbacks.cast(CallbackMsg::Deliver { job_id: job_id.clone(), done }).unwrap();
    }

    async fn state(&self, job_id: &JobId) -> JobState {
        self.jobs.state(job_id).await.unwrap().0
    }

    /// Waits until the job's callback is delivered or abandoned and the actor has reported it.
    async fn settled(&self, job_id: &JobId) -> JobState {
        eventually("the callback to be settled and reported", async || {
            let state = self.state(job_id).await;
            let reported = self.reports.lock().unwrap().contains(&(job_id.clone(), Stage::DeliverCallback));
            (state.callback.is_settled() && reported).then_some(state)
        })
        .await
    }

    /// The callback events of the job, in order.
    async fn callback_events(&self, job_id: &JobId) -> Vec<JobEvent> {
        let recorded = self.store.read_stream(&job_stream(job_id), 0).await.unwrap();
        recorded
            .iter()
            .map(|r| JobEvent::decode(&r.data).unwrap())
            .filter(|e| {
                matches!(
                    e,
                    JobEvent::CallbackAttempted { .. }
                        | JobEvent::CallbackDelivered { .. }
                        | JobEvent::CallbackAbandoned { .. }
                )
            })
            .collect()
    }

    async fn pending(&self) -> usize {
        match self.callbacks.call(CallbackMsg::Pending, None).await.unwrap() {
            ractor::rpc::CallResult::Success(n) => n,
            _ => panic!("the callback actor did not answer"),
        }
    }

    /// Stops the actors; once this returns no delivery task of this world runs any more.
    async fn stop(&self) {
        self.callbacks.stop_and_wait(None, None).await.unwrap();
        self.pipeline.stop(None);
        self.jobs.stop();
    }
}

fn user(name: &str) -> UserName {
    UserName::parse(name).unwrap()
}

/// Polls `probe` until it gives a value; fails the test after 30 s (a hang, not a slow run).
async fn eventually<T>(what: &str, mut probe: impl AsyncFnMut() -> Option<T>) -> T {
    let give_up = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(value) = probe().await {
            return value;
        }
        assert!(Instant::now() < give_up, "gave up waiting for {what}");
        tokio::time::sleep(ms(10)).await;
    }
}

fn outcomes(events: &[JobEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| match e {
            JobEvent::CallbackAttempted { outcome, .. } => format!("attempted: {outcome}"),
            JobEvent::CallbackDelivered { status_code, .. } => format!("delivered: {status_code}"),
            JobEvent::CallbackAbandoned { reason, .. } => format!("abandoned: {reason}"),
            other => panic!("not a callback event: {other:?}"),
        })
        .collect()
}

// --- Tests

/// Two nodes of a cluster handed the same delivery at once (a lease that lapsed while a node was
/// slow, a job actor whose view is behind the other node's claim) send it once between them:
/// each claims the attempt before it sends, and only one claim wins.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_nodes_handed_the_same_callback_send_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn EventStore> = Arc::new(SqliteEventStore::open_in(dir.path()).unwrap());
    let node = |name: &str| ClusterSettings { node: name.into(), lease: Duration::from_secs(30), asr_slots: 1 };
    let receiver = receiver_on(0, &[]).await;
    for round in 0..10 {
        let a = World::node(store.clone(), quick(), true, Some(node("node-a"))).await;
        let b = World::node(store.clone(), quick(), true, Some(node("node-b"))).await;
        let owner = format!("ann{round}");
        a.account(&owner).await;
        let job_id = a.finished_job(&owner, &receiver.url, None).await;
        // Node b's job actor reads the job now, as its pipeline would have.
        assert_eq!(b.state(&job_id).await.stage(), Stage::DeliverCallback);
        a.deliver(&job_id);
        b.deliver(&job_id);
        for world in [&a, &b] {
            let reports = world.reports.clone();
            eventually("both nodes to report the stage", async || {
                reports.lock().unwrap().contains(&(job_id.clone(), Stage::DeliverCallback)).then_some(())
            })
            .await;
        }
        let sent: Vec<_> = receiver
            .receiver
            .received()
            .into_iter()
            .filter(|r| r.header("webhook-id").contains(job_id.as_str()))
            .collect();
        assert_eq!(sent.len(), 1, "round {round}: one POST between the two nodes: {sent:?}");
        let events = outcomes(&a.callback_events(&job_id).await);
        assert_eq!(events, ["delivered: 200"], "round {round}");
        a.stop().await;
        b.stop().await;
    }
}

#[tokio::test]
async fn a_finished_job_is_delivered_once_with_a_signature_the_receiver_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let world = World::start(dir.path(), quick(), true).await;
    let receiver = receiver_on(0, &[]).await;
    let secret = world.account("ann").await;
    let job_id = world.finished_job("ann", &receiver.url, None).await;

    // Handed over twice (as after a pipeline hiccup): still one delivery.
    world.deliver(&job_id);
    world.deliver(&job_id);
    let state = world.settled(&job_id).await;

    assert!(state.callback.delivered);
    assert_eq!(outcomes(&world.callback_events(&job_id).await), ["delivered: 200"]);
    let received = receiver.receiver.received();
    assert_eq!(received.len(), 1, "exactly one POST: {received:?}");
    let delivery = &received[0];
    assert_eq!(delivery.path, "/hooks/scribe");
    assert_eq!(delivery.header("content-type"), "application/json");
    assert_eq!(delivery.header("webhook-id"), format!("msg_{job_id}_DONE"));
    let sent_at: u64 = delivery.header("webhook-timestamp").parse().expect("unix seconds");
    let now = scribe_actors::clock::now_ms() / 1000;
    assert!(sent_at.abs_diff(now) < 300, "timestamp {sent_at} is not current (now {now})");
    assert!(
        signature_is_valid(&secret, delivery),
        "signature {:?} does not verify",
        delivery.header("webhook-signature")
    );
    let forged = Received { body: delivery.body.replace_first(b"DONE", b"ERROR"), ..delivery.clone() };
    assert!(!signature_is_valid(&secret, &forged), "a changed body must not verify");
    let other_secret = WebhookSecret::generate();
    assert!(!signature_is_valid(&other_secret, delivery), "another account's secret must not verify");

    // The body is the spec's callback payload: the Job without notes, status DONE.
    let body = delivery.json();
    assert_eq!(body, serde_json::to_value(state.callback_payload().unwrap()).unwrap());
    assert_eq!(body["jobId"], job_id.as_str());
    assert_eq!(body["status"], "DONE");
    assert_eq!(body["filename"], "en_jfk.wav");
    assert_eq!(body["nrAudioSeconds"], 11);
    assert!(body.get("notes").is_none() && body.get("errorMsg").is_none(), "{body}");

    eventually("no delivery to be under way", async || (world.pending().await == 0).then_some(())).await;
    assert_eq!(receiver.receiver.received().len(), 1);
    world.stop().await;
}

#[tokio::test]
async fn a_receiver_that_is_down_gets_the_callback_once_it_is_up() {
    let dir = tempfile::tempdir().unwrap();
    let world = World::start(dir.path(), quick(), true).await;
    let secret = world.account("bob").await;
    let port = closed_port();
    let job_id =
        world.finished_job("bob", &format!("http://127.0.0.1:{port}/hooks/scribe"), Some("No speech found")).await;

    world.deliver(&job_id);
    eventually("two failed attempts", async || (world.callback_events(&job_id).await.len() >= 2).then_some(())).await;
    assert!(!world.state(&job_id).await.callback.is_settled());
    let receiver = receiver_on(port, &[]).await;
    let state = world.settled(&job_id).await;

    assert!(state.callback.delivered);
    let events = outcomes(&world.callback_events(&job_id).await);
    let (last, failed) = events.split_last().unwrap();
    assert_eq!(last, "delivered: 200");
    assert!(failed.len() >= 2);
    for outcome in failed {
        assert!(outcome.starts_with("attempted: could not connect to 127.0.0.1"), "{outcome}");
    }
    let received = receiver.receiver.received();
    assert_eq!(received.len(), 1);
    assert!(signature_is_valid(&secret, &received[0]));
    let body = received[0].json();
    assert_eq!((body["status"].as_str(), body["errorMsg"].as_str()), (Some("ERROR"), Some("No speech found")));
    assert_eq!(received[0].header("webhook-id"), format!("msg_{job_id}_ERROR"));
    world.stop().await;
}

#[tokio::test]
async fn a_500_then_a_200_records_exactly_one_delivery() {
    let dir = tempfile::tempdir().unwrap();
    let world = World::start(dir.path(), quick(), true).await;
    let receiver = receiver_on(0, &[500]).await;
    let secret = world.account("cy").await;
    let job_id = world.finished_job("cy", &receiver.url, None).await;

    world.deliver(&job_id);
    let state = world.settled(&job_id).await;

    assert!(state.callback.delivered);
    assert_eq!(state.callback.attempts, 2);
    assert_eq!(outcomes(&world.callback_events(&job_id).await), ["attempted: HTTP 500", "delivered: 200"]);
    eventually("no delivery to be under way", async || (world.pending().await == 0).then_some(())).await;
    let received = receiver.receiver.received();
    assert_eq!(received.len(), 2);
    // A retry is the same message: same id and body, signed afresh.
    assert_eq!(received[0].header("webhook-id"), received[1].header("webhook-id"));
    assert_eq!(received[0].body, received[1].body);
    assert!(received.iter().all(|r| signature_is_valid(&secret, r)));
    world.stop().await;
}

#[tokio::test]
async fn a_410_gone_stops_the_retries() {
    let dir = tempfile::tempdir().unwrap();
    let world = World::start(dir.path(), quick(), true).await;
    let receiver = receiver_on(0, &[410]).await;
    world.account("dee").await;
    let job_id = world.finished_job("dee", &receiver.url, Some("The media has no audio track")).await;

    world.deliver(&job_id);
    let state = world.settled(&job_id).await;

    assert!(!state.callback.delivered);
    assert_eq!(state.callback.abandoned.as_deref(), Some("the receiver answered 410 Gone"));
    assert_eq!(
        outcomes(&world.callback_events(&job_id).await),
        ["attempted: HTTP 410", "abandoned: the receiver answered 410 Gone"]
    );
    eventually("no delivery to be under way", async || (world.pending().await == 0).then_some(())).await;
    assert_eq!(receiver.receiver.received().len(), 1, "nothing is sent after a 410");
    world.stop().await;
}

#[tokio::test]
async fn a_redirect_is_a_failed_attempt_and_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let world = World::start(dir.path(), quick(), true).await;
    let receiver = receiver_on(0, &[302]).await;
    world.account("eve").await;
    let job_id = world.finished_job("eve", &receiver.url, None).await;

    world.deliver(&job_id);
    let state = world.settled(&job_id).await;

    assert!(state.callback.delivered);
    assert_eq!(outcomes(&world.callback_events(&job_id).await), ["attempted: HTTP 302", "delivered: 200"]);
    let paths: Vec<String> = receiver.receiver.received().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/hooks/scribe", "/hooks/scribe"], "the redirect target /landing is never requested");
    world.stop().await;
}

#[tokio::test]
async fn a_private_callback_address_is_refused_and_never_contacted() {
    let dir = tempfile::tempdir().unwrap();
    // No retries, so the first refusal abandons.
    let settings = CallbackSettings { schedule: vec![], ..quick() };
    let world = World::start(dir.path(), settings, false).await;
    let receiver = receiver_on(0, &[]).await;
    world.account("fay").await;
    let job_id = world.finished_job("fay", &receiver.url, None).await;

    world.deliver(&job_id);
    let state = world.settled(&job_id).await;

    assert!(!state.callback.delivered);
    let events = outcomes(&world.callback_events(&job_id).await);
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(
        events[0].starts_with("attempted: not sent, the callbackUrl is refused:")
            && events[0].contains("non-public address 127.0.0.1"),
        "{}",
        events[0]
    );
    assert!(events[1].starts_with("abandoned: gave up after 1 attempts"), "{}", events[1]);
    assert!(receiver.receiver.received().is_empty());
    world.stop().await;
}

#[tokio::test]
async fn an_account_without_a_usable_secret_gets_no_unsigned_callback() {
    let dir = tempfile::tempdir().unwrap();
    let settings = CallbackSettings { schedule: vec![], ..quick() };
    let world = World::start(dir.path(), settings, true).await;
    let receiver = receiver_on(0, &[]).await;
    let open = AccountCommand::Open {
        user_name: user("gus"),
        webhook_secret: "hunter2".into(),
        role: Default::default(),
        languages: Vec::new(),
        at_ms: 1,
    };
    command::execute::<AccountAggregate>(world.store.as_ref(), &account_stream(&user("gus")), open).await.unwrap();
    let job_id = world.finished_job("gus", &receiver.url, None).await;

    world.deliver(&job_id);
    world.settled(&job_id).await;

    let events = outcomes(&world.callback_events(&job_id).await);
    assert!(
        events[0].starts_with("attempted: not sent, it cannot be signed: the account's webhook secret"),
        "{events:?}"
    );
    assert!(receiver.receiver.received().is_empty());
    world.stop().await;
}

#[tokio::test]
async fn a_pending_callback_is_delivered_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let port = closed_port();
    // Retries within a second, for long enough to span the restart.
    let settings = CallbackSettings { schedule: vec![ms(1000)], ..quick() };
    let (secret, job_id, attempts_before) = {
        let world = World::start(dir.path(), settings.clone(), true).await;
        let secret = world.account("hal").await;
        let job_id = world.finished_job("hal", &format!("http://127.0.0.1:{port}/hooks/scribe"), None).await;
        world.deliver(&job_id);
        eventually("a failed attempt", async || (!world.callback_events(&job_id).await.is_empty()).then_some(())).await;
        world.stop().await;
        let state = world.state_after_stop(&job_id).await;
        assert_eq!(state.stage(), Stage::DeliverCallback, "the callback is still pending at the restart");
        (secret, job_id, state.callback.attempts)
    };

    let receiver = receiver_on(port, &[]).await;
    let world = World::start(dir.path(), settings, true).await;
    // The pipeline, once it has read the log, hands over every job still at DeliverCallback.
    assert_eq!(world.state(&job_id).await.stage(), Stage::DeliverCallback);
    world.deliver(&job_id);
    let state = world.settled(&job_id).await;

    assert!(state.callback.delivered);
    let events = world.callback_events(&job_id).await;
    assert!(
        matches!(events.last(), Some(JobEvent::CallbackDelivered { attempt, status_code: 200, .. }) if *attempt > attempts_before),
        "{events:?}"
    );
    assert_eq!(events.iter().filter(|e| matches!(e, JobEvent::CallbackDelivered { .. })).count(), 1);
    let received = receiver.receiver.received();
    assert_eq!(received.len(), 1);
    assert!(signature_is_valid(&secret, &received[0]));
    receiver.server.abort();
    world.stop().await;
}

impl World {
    /// The job as its stream says, read straight from the store (the actors are stopped).
    async fn state_after_stop(&self, job_id: &JobId) -> JobState {
        let loaded =
            command::load::<scribe_domain::job::JobAggregate>(self.store.as_ref(), &job_stream(job_id)).await.unwrap();
        loaded.state
    }
}

trait ReplaceFirst {
    fn replace_first(&self, from: &[u8], to: &[u8]) -> Vec<u8>;
}

impl ReplaceFirst for Vec<u8> {
    fn replace_first(&self, from: &[u8], to: &[u8]) -> Vec<u8> {
        let at = self.windows(from.len()).position(|w| w == from).expect("the pattern occurs");
        [&self[..at], to, &self[at + from.len()..]].concat()
    }
}
