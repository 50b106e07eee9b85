//! The read models against a real SQLite event store on a temporary directory: events are made
//! by the domain's own `decide` (jobs for the real clips of the corpus manifest, glossaries,
//! accounts), appended, and projected; then every query is checked, as are checkpoint resume,
//! rebuild, read-your-writes, and events the projection cannot read.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use scribe_domain::account::{AccountAggregate, AccountCommand};
use scribe_domain::glossary::{GlossaryAggregate, GlossaryCommand};
use scribe_domain::ids::{GlossaryId, JobId, UserName, account_stream, glossary_stream, job_stream};
use scribe_domain::job::{Job, JobAggregate, JobCommand, NewMedia, StoredMedia};
use scribe_domain::kinds::JobStatus;
use scribe_domain::requests::{GlossaryParams, JobParams, ListGlossariesParams, ListJobsParams, TranslationParams};
use scribe_domain::{Aggregate, VersionedEvent};
use scribe_eventstore::{Appended, EventStore, ExpectedVersion, NewEvent, SqliteEventStore};
use scribe_projections::{Projection, ProjectionError, ReadModels, rebuild};
use serde_json::json;

/// Generous bound for the projection to catch up; never reached unless something is broken.
const CATCH_UP: Duration = Duration::from_secs(30);

// ---- a small world of real events ----

struct World {
    dir: tempfile::TempDir,
    store: Arc<dyn EventStore>,
    clock: u64,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(SqliteEventStore::open_in(dir.path()).unwrap());
        World { dir, store, clock: 1_763_000_000_000 }
    }

    fn data_dir(&self) -> &Path {
        self.dir.path()
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1000;
        self.clock
    }

    /// Decides `command` on the stream's current state and appends the events, as an actor does.
    async fn execute<A: Aggregate>(&self, stream: &str, command: A::Command) -> Appended
    where
        A::Refusal: std::fmt::Debug,
    {
        let history = self.store.read_stream(stream, 0).await.unwrap();
        let events: Vec<A::Event> = history.iter().map(|r| A::Event::decode(&r.data).unwrap()).collect();
        let state = A::replay(&events);
        let new = A::decide(&state, command).unwrap();
        let new = new.iter().map(|e| NewEvent::new(e.event_type(), e.encode())).collect();
        let expected = ExpectedVersion::after(history.last().map(|r| r.version));
        self.store.append(stream, expected, new).await.unwrap()
    }

    async fn job(&mut self, id: &str, command: impl FnOnce(u64) -> JobCommand) -> Appended {
        let at = self.tick();
        self.execute::<JobAggregate>(&job_stream(&job_id(id)), command(at)).await
    }

    async fn submit(&mut self, id: &str, owner: &str, filename: &str, params: JobParams) -> Appended {
        let (job_id, owner, filename) = (job_id(id), user(owner), filename.to_owned());
        let media = StoredMedia { path: format!("media/{job_id}"), bytes: 4096 };
        let request = params.validate().unwrap();
        self.job(id, |at_ms| JobCommand::Submit {
            job_id,
            owner,
            at_ms,
            request,
            source: NewMedia::Upload { filename, media },
        })
        .await
    }

    /// Probes, transcribes and (for direct jobs) completes a job.
    async fn transcribe(&mut self, id: &str, duration_ms: u64, complete: bool) -> Appended {
        self.job(id, |at_ms| JobCommand::RecordMediaProbed { duration_ms, fails_with: None, at_ms }).await;
        self.job(id, |at_ms| JobCommand::StartTranscription { at_ms }).await;
        let path = format!("transcripts/{id}.json");
        let last = self
            .job(id, |at_ms| JobCommand::RecordTranscript { path, detected_language: None, words: 20, at_ms })
            .await;
        if complete { self.job(id, |at_ms| JobCommand::Complete { at_ms }).await } else { last }
    }

    async fn fail(&mut self, id: &str, why: &str) -> Appended {
        let error_msg = why.to_owned();
        self.job(id, |at_ms| JobCommand::Fail { error_msg, at_ms }).await
    }

    async fn delete_job(&mut self, id: &str, by: &str) -> Appended {
        let by = user(by);
        self.job(id, |at_ms| JobCommand::Delete { by, at_ms }).await
    }

    async fn account(&mut self, name: &str, command: impl FnOnce(u64) -> AccountCommand) -> Appended {
        let at = self.tick();
        self.execute::<AccountAggregate>(&account_stream(&user(name)), command(at)).await
    }

    async fn glossary(&mut self, id: &str, command: impl FnOnce(u64) -> GlossaryCommand) -> Appended {
        let at = self.tick();
        self.execute::<GlossaryAggregate>(&glossary_stream(&glossary_id(id)), command(at)).await
    }

    /// The Job view of a job, straight from its stream with the domain's replay.
    async fn replayed_view(&self, id: &str) -> Job {
        let history = self.store.read_stream(&job_stream(&job_id(id)), 0).await.unwrap();
        let events: Vec<_> =
            history.iter().map(|r| <JobAggregate as Aggregate>::Event::decode(&r.data).unwrap()).collect();
        JobAggregate::replay(&events).view().unwrap()
    }

    async fn head(&self) -> u64 {
        self.store.head_position().await.unwrap()
    }

    /// Opens the read models and runs the projection until it has applied the whole log.
    async fn project(&self) -> (ReadModels, Projection) {
        let read_models = ReadModels::open(self.data_dir()).unwrap();
        let projection = Projection::start(self.store.clone(), read_models.clone()).await.unwrap();
        let head = self.head().await;
        assert!(read_models.wait_for(head, CATCH_UP).await, "the projection did not reach position {head}");
        (read_models, projection)
    }
}

fn job_id(id: &str) -> JobId {
    JobId::parse(id).unwrap()
}

fn user(name: &str) -> UserName {
    UserName::parse(name).unwrap()
}

fn glossary_id(id: &str) -> GlossaryId {
    GlossaryId::parse(id).unwrap()
}

fn params(pairs: &[(&str, &str)]) -> JobParams {
    let mut p = JobParams::default();
    for (key, value) in pairs {
        let value = Some((*value).to_owned());
        match *key {
            "language" => p.language = value,
            "jobType" => p.job_type = value,
            "transcriptionType" => p.transcription_type = value,
            "targetLanguage" => p.target_language = value,
            "transcriptionStyle" => p.transcription_style = value,
            other => panic!("unknown parameter {other}"),
        }
    }
    p
}

fn filter(pairs: &[(&str, &str)]) -> scribe_domain::requests::JobFilter {
    let mut p = ListJobsParams::default();
    for (key, value) in pairs {
        let text = Some((*value).to_owned());
        match *key {
            "jobId" => p.job_id = text,
            "jobType" => p.job_type = text,
            "status" => p.status = text,
            "transcriptionType" => p.transcription_type = text,
            "page" => p.page = Some(value.parse().unwrap()),
            "pageSize" => p.page_size = Some(value.parse().unwrap()),
            "sortBy" => p.sort_by = text,
            "sortDirection" => p.sort_direction = text,
            other => panic!("unknown filter {other}"),
        }
    }
    p.validate().unwrap()
}

fn ids(jobs: &[Job]) -> Vec<String> {
    jobs.iter().map(|j| j.job_id.to_string()).collect()
}

/// A clip of the corpus: file name, language code, duration in milliseconds.
struct Clip {
    filename: String,
    language: String,
    duration_ms: u64,
}

fn corpus_dir() -> PathBuf {
    std::env::var_os("SCRIBE_CORPUS_DIR").map(PathBuf::from).unwrap_or_else(|| {
        Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()))
            .join("../../shared/corpus")
    })
}

/// The clips of the corpus manifest, in its order.
fn corpus_clips() -> Vec<Clip> {
    let manifest = corpus_dir().join("manifest.tsv");
    let text = std::fs::read_to_string(&manifest).unwrap_or_else(|e| {
        panic!("cannot read the corpus manifest {} ({e}); set SCRIBE_CORPUS_DIR", manifest.display())
    });
    let clips: Vec<Clip> = text
        .lines()
        .skip(1)
        .filter(|line| !line.trim().is_empty())
        .filter_map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            let filename = Path::new(cols[0]).file_name().unwrap().to_string_lossy().into_owned();
            // Corrupt files have no duration: they never get as far as a probe.
            let seconds: f64 = cols[2].parse().ok()?;
            Some(Clip { filename, language: cols[1].to_owned(), duration_ms: (seconds * 1000.0).round() as u64 })
        })
        .collect();
    assert!(clips.len() >= 8, "the corpus manifest lists too few clips");
    clips
}

/// A language code of the spec for a corpus language (`auto` when it is not one).
fn spec_language(code: &str) -> String {
    match scribe_domain::languages::Language::parse(code) {
        Ok(_) => code.to_owned(),
        Err(_) => "auto".to_owned(),
    }
}

/// The shared scenario: ann has one job per corpus clip in various states, bob has one job,
/// both have accounts, keys and glossaries. Returns ann's job ids in submission order.
async fn populate(world: &mut World) -> Vec<String> {
    for name in ["ann", "bob"] {
        world
            .account(name, |at_ms| AccountCommand::Open {
                user_name: user(name),
                webhook_secret: format!("whsec-{name}"),
                role: Default::default(),
                languages: Vec::new(),
                at_ms,
            })
            .await;
        world.account(name, |at_ms| AccountCommand::Credit { cents: 10_000, reason: "welcome".into(), at_ms }).await;
        world
            .account(name, |at_ms| AccountCommand::IssueKey {
                key_id: format!("{name}-k1"),
                key_hash: format!("hash-{name}-1"),
                at_ms,
            })
            .await;
    }

    let mut ann_jobs = Vec::new();
    for (i, clip) in corpus_clips().iter().enumerate() {
        let id = format!("ann-{i:02}");
        let language = spec_language(&clip.language);
        let shape: Vec<(&str, &str)> = match i % 4 {
            0 => vec![("language", language.as_str())],
            1 => vec![("language", language.as_str()), ("jobType", "perfect"), ("transcriptionType", "captions")],
            2 => vec![("language", language.as_str()), ("transcriptionType", "captions")],
            _ => vec![("language", language.as_str()), ("transcriptionStyle", "verbatim")],
        };
        world.submit(&id, "ann", &clip.filename, params(&shape)).await;
        match i % 5 {
            0 | 2 => {
                let perfect = i % 4 == 1;
                world.transcribe(&id, clip.duration_ms, !perfect).await;
            }
            1 => {
                world.fail(&id, "No speech found in the media").await;
            }
            _ => {}
        }
        let cents = 10 * clip.duration_ms.div_ceil(60_000).max(1);
        let charged = job_id(&id);
        world.account("ann", |at_ms| AccountCommand::Charge { job_id: charged, cents, at_ms }).await;
        ann_jobs.push(id);
    }
    // A translation (BUSY) of a manual captions job that its transcriber finished, and a
    // deleted job.
    let source = ann_jobs[5].clone();
    let task = scribe_domain::job::task::task_id(&job_id(&source), scribe_domain::kinds::TaskKind::Transcribe);
    let worker = scribe_domain::job::task::Worker {
        user: user("tina"),
        role: scribe_domain::kinds::Role::Transcriber,
        languages: vec![],
    };
    let claim_task = task.clone();
    world.job(&source, |at_ms| JobCommand::ClaimTask { task_id: claim_task, worker, lease_ms: 3_600_000, at_ms }).await;
    world.job(&source, |at_ms| JobCommand::SubmitTask { task_id: task, by: user("tina"), at_ms }).await;
    let facts = {
        let history = world.store.read_stream(&job_stream(&job_id(&source)), 0).await.unwrap();
        let events: Vec<_> =
            history.iter().map(|r| <JobAggregate as Aggregate>::Event::decode(&r.data).unwrap()).collect();
        JobAggregate::replay(&events).source_facts().unwrap()
    };
    let request = TranslationParams {
        source_job_id: Some(source.clone()),
        target_language: Some("de".into()),
        notes: Some("names as in the glossary".into()),
        ..Default::default()
    }
    .validate()
    .unwrap();
    world
        .job("ann-tr", |at_ms| JobCommand::RequestTranslation {
            job_id: job_id("ann-tr"),
            owner: user("ann"),
            at_ms,
            request,
            source: facts,
        })
        .await;
    ann_jobs.push("ann-tr".to_owned());
    world.delete_job(&ann_jobs[3], "ann").await;

    world.submit("bob-00", "bob", "meeting.mp3", params(&[])).await;

    let content = |name: &str, names: &[&str]| {
        GlossaryParams {
            name: Some(name.into()),
            names: Some(names.iter().map(|n| n.to_string()).collect()),
            items: None,
        }
        .validate()
        .unwrap()
    };
    for (id, name) in [("g-team", "Team"), ("g-places", "Places"), ("g-brands", "Brands")] {
        let c = content(name, &["Ada", "Grace"]);
        world
            .glossary(id, |at_ms| GlossaryCommand::Create {
                id: glossary_id(id),
                owner: user("ann"),
                content: c,
                at_ms,
            })
            .await;
    }
    let renamed = content("Athletes", &["Usain"]);
    world.glossary("g-team", |at_ms| GlossaryCommand::Update { by: user("ann"), content: renamed, at_ms }).await;
    world.glossary("g-brands", |at_ms| GlossaryCommand::Delete { by: user("ann"), at_ms }).await;
    let c = content("Bob's", &[]);
    world
        .glossary("g-bob", |at_ms| GlossaryCommand::Create {
            id: glossary_id("g-bob"),
            owner: user("bob"),
            content: c,
            at_ms,
        })
        .await;
    ann_jobs
}

// ---- the tests ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_shows_what_the_domain_replay_shows() {
    let mut world = World::new();
    let ann_jobs = populate(&mut world).await;
    let (read_models, projection) = world.project().await;

    let mut every_job = ann_jobs.clone();
    every_job.push("bob-00".to_owned());
    for id in &every_job {
        let record = read_models.job(&job_id(id)).unwrap().unwrap();
        assert_eq!(record.job, world.replayed_view(id).await, "job {id}");
    }
    let deleted = read_models.job(&job_id(&ann_jobs[3])).unwrap().unwrap();
    assert!(deleted.deleted, "a deleted job is kept as a tombstone");
    let failed = read_models.job(&job_id(&ann_jobs[1])).unwrap().unwrap();
    assert_eq!(
        (failed.job.status, failed.error_msg.as_deref()),
        (JobStatus::Error, Some("No speech found in the media"))
    );
    let done = read_models.job(&job_id(&ann_jobs[0])).unwrap().unwrap();
    assert_eq!(
        (done.job.status, done.job.nr_audio_seconds),
        (JobStatus::Done, world.replayed_view(&ann_jobs[0]).await.nr_audio_seconds)
    );
    assert!(done.job.nr_audio_seconds > 0);
    let busy = read_models.job(&job_id("ann-tr")).unwrap().unwrap();
    assert_eq!(busy.job.status, JobStatus::Busy);
    assert_eq!(busy.owner, user("ann"));
    assert_eq!(read_models.job(&job_id("nobody")).unwrap(), None);
    projection.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_filters_pages_and_orders_newest_first() {
    let mut world = World::new();
    let ann_jobs = populate(&mut world).await;
    // Two jobs created in the same millisecond: the larger jobId comes first.
    let same_ms = world.tick();
    for id in ["ann-tie-a", "ann-tie-b"] {
        let request = params(&[]).validate().unwrap();
        world
            .execute::<JobAggregate>(
                &job_stream(&job_id(id)),
                JobCommand::Submit {
                    job_id: job_id(id),
                    owner: user("ann"),
                    at_ms: same_ms,
                    request,
                    source: NewMedia::Upload {
                        filename: "tie.wav".into(),
                        media: StoredMedia { path: format!("media/{id}/tie.wav"), bytes: 4096 },
                    },
                },
            )
            .await;
    }
    let (read_models, projection) = world.project().await;
    let ann = user("ann");

    let all = read_models.list_jobs(&ann, &filter(&[("pageSize", "100")])).unwrap();
    let mut expected: Vec<String> = ann_jobs.iter().filter(|id| **id != ann_jobs[3]).cloned().collect();
    expected.reverse();
    expected.insert(0, "ann-tie-a".into());
    expected.insert(0, "ann-tie-b".into());
    assert_eq!(ids(&all), expected, "newest first, deleted and other owners' jobs absent");
    assert!(all.windows(2).all(|w| w[0].created >= w[1].created));
    assert_eq!(read_models.count_jobs(&ann, &filter(&[("pageSize", "3")])).unwrap(), all.len() as u64, "all pages");

    // Sorted by name and by length, both ways; ties by jobId in the same direction.
    let by_name = read_models
        .list_jobs(&ann, &filter(&[("pageSize", "100"), ("sortBy", "filename"), ("sortDirection", "ASC")]))
        .unwrap();
    let key = |j: &Job| (j.filename.to_lowercase(), j.job_id.to_string());
    assert!(by_name.windows(2).all(|w| key(&w[0]) <= key(&w[1])), "{:?}", ids(&by_name));
    assert_eq!(by_name.len(), all.len());
    let longest = read_models.list_jobs(&ann, &filter(&[("pageSize", "100"), ("sortBy", "nrAudioSeconds")])).unwrap();
    let key = |j: &Job| (j.nr_audio_seconds, j.job_id.to_string());
    assert!(longest.windows(2).all(|w| key(&w[0]) >= key(&w[1])), "{:?}", ids(&longest));

    let default_page = read_models.list_jobs(&ann, &filter(&[])).unwrap();
    assert_eq!(default_page.len(), expected.len().min(20));

    let mut paged = Vec::new();
    for page in 0.. {
        let page = page.to_string();
        let page = read_models.list_jobs(&ann, &filter(&[("page", page.as_str()), ("pageSize", "3")])).unwrap();
        if page.is_empty() {
            break;
        }
        assert!(page.len() <= 3);
        paged.extend(ids(&page));
    }
    assert_eq!(paged, expected, "pages concatenate to the whole list");
    assert!(read_models.list_jobs(&ann, &filter(&[("page", "1000000"), ("pageSize", "100")])).unwrap().is_empty());

    for (status, wanted) in [("DONE", JobStatus::Done), ("ERROR", JobStatus::Error), ("OPEN", JobStatus::Open)] {
        let listed = read_models.list_jobs(&ann, &filter(&[("status", status), ("pageSize", "100")])).unwrap();
        let expected: Vec<String> = all.iter().filter(|j| j.status == wanted).map(|j| j.job_id.to_string()).collect();
        assert!(!expected.is_empty(), "the scenario has {status} jobs");
        assert_eq!(ids(&listed), expected, "status={status}");
        assert_eq!(read_models.count_jobs(&ann, &filter(&[("status", status)])).unwrap(), expected.len() as u64);
    }
    let perfect = read_models.list_jobs(&ann, &filter(&[("jobType", "perfect"), ("pageSize", "100")])).unwrap();
    assert!(!perfect.is_empty() && perfect.iter().all(|j| j.job_type.as_str() == "perfect"));
    assert_eq!(perfect.len(), all.iter().filter(|j| j.job_type.as_str() == "perfect").count());
    let captions = read_models
        .list_jobs(&ann, &filter(&[("transcriptionType", "captions"), ("jobType", "direct"), ("pageSize", "100")]))
        .unwrap();
    let expected: Vec<String> = all
        .iter()
        .filter(|j| j.transcription_type.as_str() == "captions" && j.job_type.as_str() == "direct")
        .map(|j| j.job_id.to_string())
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(ids(&captions), expected);

    let one = read_models.list_jobs(&ann, &filter(&[("jobId", ann_jobs[0].as_str())])).unwrap();
    assert_eq!(ids(&one), [ann_jobs[0].clone()]);
    assert!(read_models.list_jobs(&ann, &filter(&[("jobId", ann_jobs[3].as_str())])).unwrap().is_empty(), "deleted");
    assert!(read_models.list_jobs(&ann, &filter(&[("jobId", "bob-00")])).unwrap().is_empty(), "not ann's");
    assert_eq!(ids(&read_models.list_jobs(&user("bob"), &filter(&[])).unwrap()), ["bob-00"]);
    assert!(read_models.list_jobs(&user("carol"), &filter(&[])).unwrap().is_empty());

    let counts = read_models.job_counts().unwrap();
    let total: u64 = counts.iter().map(|(_, n)| n).sum();
    assert_eq!(total as usize, all.len() + 1, "ann's listed jobs and bob's");
    projection.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn glossaries_sort_and_keep_deleted_ones_out_of_lists() {
    let mut world = World::new();
    populate(&mut world).await;
    let (read_models, projection) = world.project().await;
    let ann = user("ann");
    let sort = |by: Option<&str>, direction: Option<&str>| {
        ListGlossariesParams { sort_by: by.map(Into::into), sort_direction: direction.map(Into::into) }
            .validate()
            .unwrap()
    };
    let names = |list: Vec<scribe_domain::glossary::Glossary>| list.into_iter().map(|g| g.name).collect::<Vec<_>>();

    // Default: created, newest first. g-team was created first and renamed to "Athletes".
    assert_eq!(names(read_models.list_glossaries(&ann, &sort(None, None)).unwrap()), ["Places", "Athletes"]);
    assert_eq!(
        names(read_models.list_glossaries(&ann, &sort(Some("created"), Some("ASC"))).unwrap()),
        ["Athletes", "Places"]
    );
    assert_eq!(
        names(read_models.list_glossaries(&ann, &sort(Some("name"), Some("DESC"))).unwrap()),
        ["Places", "Athletes"]
    );
    assert_eq!(
        names(read_models.list_glossaries(&ann, &sort(Some("name"), Some("ASC"))).unwrap()),
        ["Athletes", "Places"]
    );
    assert_eq!(names(read_models.list_glossaries(&user("bob"), &sort(None, None)).unwrap()), ["Bob's"]);

    let team = read_models.glossary(&glossary_id("g-team")).unwrap().unwrap();
    assert_eq!(
        (team.owner.as_str(), team.deleted, team.glossary.names.as_slice()),
        ("ann", false, &["Usain".to_owned()][..])
    );
    let json = serde_json::to_value(&team.glossary).unwrap();
    assert_eq!(json["userName"], "ann");
    assert_eq!(json["id"], "g-team");
    let brands = read_models.glossary(&glossary_id("g-brands")).unwrap().unwrap();
    assert!(brands.deleted);
    assert_eq!(read_models.glossary(&glossary_id("g-none")).unwrap(), None);
    projection.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_find_their_account_until_revoked() {
    let mut world = World::new();
    populate(&mut world).await;
    let opened_at = world.tick();
    world
        .account("carol", |_| AccountCommand::Open {
            user_name: user("carol"),
            webhook_secret: "whsec-c".into(),
            role: Default::default(),
            languages: Vec::new(),
            at_ms: opened_at,
        })
        .await;
    world
        .account("carol", |at_ms| AccountCommand::IssueKey { key_id: "c1".into(), key_hash: "hash-c1".into(), at_ms })
        .await;
    world
        .account("carol", |at_ms| AccountCommand::IssueKey { key_id: "c2".into(), key_hash: "hash-c2".into(), at_ms })
        .await;
    world.account("carol", |at_ms| AccountCommand::RevokeKey { key_id: "c1".into(), at_ms }).await;
    world.account("carol", |at_ms| AccountCommand::Credit { cents: 250, reason: "top-up".into(), at_ms }).await;
    let (read_models, projection) = world.project().await;

    let carol = read_models.account_by_key_hash("hash-c2").unwrap().expect("an active key finds its account");
    assert_eq!(carol.user_name, user("carol"));
    assert_eq!((carol.balance_cents, carol.webhook_secret.as_str(), carol.created_ms), (250, "whsec-c", opened_at));
    assert_eq!(read_models.account_by_key_hash("hash-c1").unwrap(), None, "a revoked key opens nothing");
    assert_eq!(read_models.account_by_key_hash("hash-unknown").unwrap(), None);
    assert_eq!(read_models.account(&user("carol")).unwrap(), Some(carol));

    let ann = read_models.account_by_key_hash("hash-ann-1").unwrap().unwrap();
    let charged: u64 = corpus_clips().iter().map(|c| 10 * c.duration_ms.div_ceil(60_000).max(1)).sum();
    assert_eq!(ann.balance_cents, 10_000 - charged);
    assert_eq!(read_models.account(&user("nobody")).unwrap(), None);
    projection.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_continues_from_the_checkpoint_without_applying_twice() {
    let mut world = World::new();
    let ann_jobs = populate(&mut world).await;
    let (read_models, projection) = world.project().await;
    let first_checkpoint = read_models.position();
    projection.stop().await;
    drop(read_models);

    // Mark a row behind the projection's back: replaying old events would overwrite the mark.
    let file = world.data_dir().join(scribe_projections::FILE_NAME);
    let conn = rusqlite::Connection::open(&file).unwrap();
    conn.execute("UPDATE jobs SET error_msg = 'marked' WHERE job_id = ?1", [&ann_jobs[0]]).unwrap();
    drop(conn);

    // More history while the projection is stopped.
    world.account("ann", |at_ms| AccountCommand::Credit { cents: 500, reason: "refill".into(), at_ms }).await;
    world.submit("ann-late", "ann", "late.wav", params(&[])).await;
    world.transcribe("ann-late", 2_990, true).await;
    world.delete_job(&ann_jobs[0], "ann").await;
    let before_restart = world.head().await;
    assert!(before_restart > first_checkpoint);

    let (read_models, projection) = world.project().await;
    assert_eq!(read_models.position(), before_restart);
    let other = read_models.job(&job_id(&ann_jobs[2])).unwrap().unwrap();
    assert_eq!(other.job, world.replayed_view(&ann_jobs[2]).await);
    let late = read_models.job(&job_id("ann-late")).unwrap().unwrap();
    assert_eq!((late.job.status, late.job.nr_audio_seconds), (JobStatus::Done, 3));
    let deleted = read_models.job(&job_id(&ann_jobs[0])).unwrap().unwrap();
    assert!(deleted.deleted, "the deletion after the checkpoint was applied");
    assert_eq!(deleted.error_msg, None, "the row was rewritten from its state, not patched");
    let untouched_conn = rusqlite::Connection::open(&file).unwrap();
    let marks: i64 =
        untouched_conn.query_row("SELECT COUNT(*) FROM jobs WHERE error_msg = 'marked'", [], |r| r.get(0)).unwrap();
    assert_eq!(marks, 0, "only the job touched after the checkpoint was rewritten");
    let ann = read_models.account(&user("ann")).unwrap().unwrap();
    let charged: u64 = corpus_clips().iter().map(|c| 10 * c.duration_ms.div_ceil(60_000).max(1)).sum();
    assert_eq!(ann.balance_cents, 10_000 - charged + 500, "each credit counted once");
    projection.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_events_after_the_checkpoint_are_applied_on_restart() {
    let mut world = World::new();
    let ann_jobs = populate(&mut world).await;
    let (read_models, projection) = world.project().await;
    projection.stop().await;
    drop(read_models);

    let file = world.data_dir().join(scribe_projections::FILE_NAME);
    let conn = rusqlite::Connection::open(&file).unwrap();
    conn.execute("UPDATE jobs SET error_msg = 'marked' WHERE job_id = ?1", [&ann_jobs[2]]).unwrap();
    drop(conn);
    world.submit("ann-late", "ann", "late.wav", params(&[])).await;

    let (read_models, projection) = world.project().await;
    let marked = read_models.job(&job_id(&ann_jobs[2])).unwrap().unwrap();
    assert_eq!(marked.error_msg.as_deref(), Some("marked"), "an event before the checkpoint was applied again");
    assert!(read_models.job(&job_id("ann-late")).unwrap().is_some());
    projection.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rebuild_yields_the_live_read_models() {
    let mut world = World::new();
    populate(&mut world).await;
    let (read_models, projection) = world.project().await;
    let live = read_models.dump().unwrap();
    assert!(live.lines().count() > 20, "the dump covers the scenario:\n{live}");

    let refused = rebuild(world.store.clone(), world.data_dir()).await.unwrap_err();
    assert!(matches!(refused, ProjectionError::InUse { .. }), "{refused}");

    projection.stop().await;
    drop(read_models);
    let report = rebuild(world.store.clone(), world.data_dir()).await.unwrap();
    assert_eq!(report.position, world.head().await);
    assert_eq!(report.events, world.head().await);
    let rebuilt = ReadModels::open(world.data_dir()).unwrap();
    assert_eq!(rebuilt.position(), report.position);
    assert_eq!(rebuilt.dump().unwrap(), live);
    assert!(!world.data_dir().join(format!("{}.rebuild", scribe_projections::FILE_NAME)).exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_is_visible_once_wait_for_returns() {
    let mut world = World::new();
    populate(&mut world).await;
    let (read_models, projection) = world.project().await;
    for i in 0..20 {
        let id = format!("ryw-{i}");
        let appended = world.submit(&id, "bob", "fresh.wav", params(&[])).await;
        assert!(read_models.wait_for(appended.position, CATCH_UP).await);
        let record = read_models.job(&job_id(&id)).unwrap().expect("the job is visible right after the wait");
        assert_eq!(record.job.status, JobStatus::Open);
        let listed = read_models.list_jobs(&user("bob"), &filter(&[("pageSize", "1")])).unwrap();
        assert_eq!(ids(&listed), [id], "and first in the list");
    }
    let beyond = world.head().await + 1000;
    assert!(
        !read_models.wait_for(beyond, Duration::from_millis(200)).await,
        "a position not yet written is not reached"
    );
    projection.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_the_store_cannot_read_back_and_foreign_streams_are_stepped_over() {
    let mut world = World::new();
    world.submit("before", "ann", "a.wav", params(&[])).await;
    // A stream no read model follows, and a row that is not JSON.
    world
        .store
        .append("metrics-1", ExpectedVersion::Any, vec![NewEvent::new("Tick", json!({"type": "Tick", "v": 1}))])
        .await
        .unwrap();
    let corrupt_at = world.head().await + 1;
    let events_file = world.data_dir().join(scribe_eventstore::sqlite::FILE_NAME);
    let conn = rusqlite::Connection::open(&events_file).unwrap();
    conn.execute(
        "INSERT INTO events (position, stream, version, type, data, recorded_at) VALUES (?1, 'job-broken', 0, 'JobSubmitted', '{not json', 0)",
        [corrupt_at as i64],
    )
    .unwrap();
    drop(conn);
    world.submit("after", "ann", "b.wav", params(&[])).await;
    world.transcribe("after", 5_855, true).await;

    let (read_models, projection) = world.project().await;
    assert!(read_models.job(&job_id("before")).unwrap().is_some());
    assert_eq!(read_models.job(&job_id("after")).unwrap().unwrap().job.status, JobStatus::Done);
    assert_eq!(read_models.job(&job_id("broken")).unwrap(), None);

    // The projection keeps following the log live after stepping over them.
    let appended = world.submit("live", "ann", "c.wav", params(&[])).await;
    assert!(read_models.wait_for(appended.position, CATCH_UP).await);
    assert!(read_models.job(&job_id("live")).unwrap().is_some());
    projection.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_that_cannot_be_decoded_stops_the_read_models_and_is_named() {
    let mut world = World::new();
    world.submit("before", "ann", "a.wav", params(&[])).await;
    // A job's second event written by a newer Scribe (a version this one does not know).
    world.submit("future", "ann", "f.wav", params(&[])).await;
    let stream = job_stream(&job_id("future"));
    let undecodable = world
        .store
        .append(
            &stream,
            ExpectedVersion::Exact(1),
            vec![NewEvent::new("MediaProbed", json!({"type": "MediaProbed", "v": 99}))],
        )
        .await
        .unwrap();
    world.submit("after", "ann", "b.wav", params(&[])).await;

    // The live projection applies everything before the event, and stops there.
    let read_models = ReadModels::open(world.data_dir()).unwrap();
    let projection = Projection::start(world.store.clone(), read_models.clone()).await.unwrap();
    assert!(read_models.wait_for(undecodable.position - 1, CATCH_UP).await, "the events before it are applied");
    assert!(read_models.job(&job_id("before")).unwrap().is_some());
    assert!(
        !read_models.wait_for(undecodable.position, Duration::from_secs(2)).await,
        "the read models must not pass an event they could not apply"
    );
    assert_eq!(read_models.job(&job_id("after")).unwrap(), None, "nothing after it is shown");
    projection.stop().await;
    drop(read_models);

    // A rebuild says which event it is.
    let error = rebuild(world.store.clone(), world.data_dir()).await.expect_err("a rebuild cannot pass it either");
    assert!(
        matches!(&error, ProjectionError::Undecodable { stream: s, version: 2, event_type, .. } if *s == stream && event_type == "MediaProbed"),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(message.contains(&stream) && message.contains("version 2") && message.contains("MediaProbed"), "{message}");
}
