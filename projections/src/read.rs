//! The query side: a cloneable [`ReadModels`] handle that the HTTP edge answers status, list,
//! glossary and authentication requests from, and the read-your-writes wait.
//!
//! # Calling queries from async code
//!
//! Every query is one indexed lookup (or one page of an index) in an SQLite file that is in the
//! OS page cache: tens of microseconds, comparable to taking a contended lock. Calling them
//! directly from a request handler is fine. Work that may scan more (a far `page` of a long
//! job list, `dump`) can go through [`ReadModels::run`], which moves it to the blocking pool.
//!
//! Queries use a small pool of read connections; the single writer is the projection
//! (`crate::runner`). In WAL mode readers never wait for it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params_from_iter};
use scribe_domain::glossary::Glossary;
use scribe_domain::ids::{GlossaryId, JobId, UserName};
use scribe_domain::job::{Job, TaskView};
use scribe_domain::kinds::{JobSortField, JobStatus, Role, SortDirection, TaskKind};
use scribe_domain::requests::{GlossarySort, JobFilter};
use serde::de::DeserializeOwned;
use tokio::sync::watch;

use crate::cache::{Changes, ReadCache};
use crate::db::{self, DirLock, from_sql_int, to_sql_int};
use crate::error::{ProjectionError, db};

/// Idle read connections kept open.
const MAX_IDLE_READERS: usize = 8;

/// A job as the read model holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRecord {
    pub owner: UserName,
    /// Deleted jobs are kept as tombstones, so that the API can answer 410 rather than 404.
    pub deleted: bool,
    /// The reason given when the job ended in `ERROR`.
    pub error_msg: Option<String>,
    /// The spec's Job object.
    pub job: Job,
    /// The document the job delivers (its transcript, or its translation for translated
    /// subtitles), relative to the data directory, as the job's events name it; `None` until
    /// there is one.
    pub document: Option<String>,
}

/// A glossary as the read model holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct GlossaryRecord {
    pub owner: UserName,
    /// Deleted glossaries are kept, so that the API can tell "deleted" from "never existed".
    pub deleted: bool,
    /// The spec's Glossary object.
    pub glossary: Glossary,
}

/// An account, as authentication and billing need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub user_name: UserName,
    pub balance_cents: u64,
    /// Signs the account's callbacks.
    pub webhook_secret: String,
    /// When the account was opened, in milliseconds since the Unix epoch.
    pub created_ms: u64,
    pub role: Role,
    /// Languages a staff member works in (empty: all).
    pub languages: Vec<String>,
}

/// How many open tasks there are, and how many are held or overdue (for `/metrics`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskCounts {
    pub open: u64,
    pub claimed: u64,
    pub overdue: u64,
}

/// The read models of one data directory. Cheap to clone; all clones share one connection pool
/// and one applied-position channel. Holding any clone keeps the directory's read-model lock.
#[derive(Clone)]
pub struct ReadModels {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    readers: Mutex<Vec<Connection>>,
    /// Global position of the last event the projection has applied.
    applied: watch::Sender<u64>,
    /// Jobs and accounts as last read, until the projection changes them.
    cache: ReadCache,
    /// `None` for a read-only view beside the process that owns the read models.
    _lock: Option<DirLock>,
}

impl ReadModels {
    /// Opens (creating if needed) `<data_dir>/readmodels.sqlite3`, whose checkpoint becomes the
    /// starting [`position`](Self::position). Fails with [`ProjectionError::InUse`] if another
    /// process (or another `ReadModels` in this one) has them open. Blocks briefly (file I/O):
    /// call it at start-up.
    pub fn open(data_dir: &Path) -> Result<ReadModels, ProjectionError> {
        let lock = DirLock::acquire(data_dir)?;
        let path = db::path_in(data_dir);
        let conn = db::open_writer(&path)?;
        let checkpoint = db::read_checkpoint(&conn)?;
        drop(conn);
        Ok(ReadModels {
            inner: Arc::new(Inner {
                path,
                readers: Mutex::new(Vec::new()),
                applied: watch::Sender::new(checkpoint),
                cache: ReadCache::default(),
                _lock: Some(lock),
            }),
        })
    }

    /// Opens existing read models for queries only, beside the process that owns them (an
    /// operator's command next to a running server). Nothing is written, and the answers are as
    /// fresh as the owner made them.
    pub fn open_read_only(data_dir: &Path) -> Result<ReadModels, ProjectionError> {
        let path = db::path_in(data_dir);
        if !path.exists() {
            return Err(ProjectionError::Missing { path: path.display().to_string() });
        }
        let conn = db::open_reader(&path)?;
        let checkpoint = db::read_checkpoint(&conn)?;
        Ok(ReadModels {
            inner: Arc::new(Inner {
                path,
                readers: Mutex::new(vec![conn]),
                applied: watch::Sender::new(checkpoint),
                cache: ReadCache::default(),
                _lock: None,
            }),
        })
    }

    /// The SQLite file behind these read models.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Global position of the last event the read models reflect.
    pub fn position(&self) -> u64 {
        *self.inner.applied.borrow()
    }

    /// Follows [`position`](Self::position) as the projection advances.
    pub fn watch_position(&self) -> watch::Receiver<u64> {
        self.inner.applied.subscribe()
    }

    /// Waits until the read models reflect the event at global `position` (for example
    /// `Appended::position` of a write just made), at most `timeout`. Returns whether they do.
    /// This is read-your-writes: after `true`, status and list queries show that write.
    pub async fn wait_for(&self, position: u64, timeout: Duration) -> bool {
        let mut applied = self.inner.applied.subscribe();
        let reached = async { applied.wait_for(|p| *p >= position).await.is_ok() };
        tokio::time::timeout(timeout, reached).await.unwrap_or(false)
    }

    /// Records that the projection has applied everything up to `position`.
    pub(crate) fn publish(&self, position: u64) {
        self.inner.applied.send_if_modified(|p| {
            let moved = position > *p;
            *p = (*p).max(position);
            moved
        });
    }

    /// Runs `query` on the blocking thread pool (for scans; see the module documentation).
    pub async fn run<T, F>(&self, query: F) -> Result<T, ProjectionError>
    where
        T: Send + 'static,
        F: FnOnce(&ReadModels) -> Result<T, ProjectionError> + Send + 'static,
    {
        let this = self.clone();
        tokio::task::spawn_blocking(move || query(&this))
            .await
            .unwrap_or_else(|e| Err(ProjectionError::Task(e.to_string())))
    }

    // ---- jobs ----

    /// The job `job_id`, deleted or not; `None` if no such job was ever submitted.
    pub fn job(&self, job_id: &JobId) -> Result<Option<JobRecord>, ProjectionError> {
        if let Some(record) = self.inner.cache.job(job_id.as_str()) {
            return Ok(Some(record));
        }
        let generation = self.inner.cache.generation();
        let found = self.job_from_file(job_id)?;
        if let Some(record) = &found {
            self.inner.cache.keep_job(generation, job_id.as_str(), record);
        }
        Ok(found)
    }

    fn job_from_file(&self, job_id: &JobId) -> Result<Option<JobRecord>, ProjectionError> {
        self.with_reader(|conn| {
            let row = conn
                .prepare_cached("SELECT owner, deleted, error_msg, job, document FROM jobs WHERE job_id = ?1")
                .and_then(|mut stmt| {
                    stmt.query_row([job_id.as_str()], |r| {
                        Ok((
                            r.get::<_, String>(0)?,
                            r.get::<_, bool>(1)?,
                            r.get::<_, Option<String>>(2)?,
                            r.get::<_, String>(3)?,
                            r.get::<_, Option<String>>(4)?,
                        ))
                    })
                    .optional()
                })
                .map_err(db("looking up a job"))?;
            let Some((owner, deleted, error_msg, job, document)) = row else { return Ok(None) };
            let key = || format!("jobs/{job_id}");
            Ok(Some(JobRecord {
                owner: parse_user(&owner, key)?,
                deleted,
                error_msg,
                job: parse_json(&job, key)?,
                document,
            }))
        })
    }

    /// One page of `owner`'s jobs that pass `filter`, in its order (by default newest first:
    /// `created` descending, then `jobId` descending; ties are always broken by `jobId` in the
    /// sort's direction, so pages never overlap). Deleted jobs are left out.
    pub fn list_jobs(&self, owner: &UserName, filter: &JobFilter) -> Result<Vec<Job>, ProjectionError> {
        let (conditions, mut args) = job_conditions(owner, filter);
        let direction = match filter.sort_direction {
            SortDirection::Asc => "ASC",
            SortDirection::Desc => "DESC",
        };
        // Name and length live in the job's JSON (no column of their own): a scan of the owner's jobs.
        let by = match filter.sort_by {
            JobSortField::Created => "created",
            JobSortField::Filename => "json_extract(job, '$.filename') COLLATE NOCASE",
            JobSortField::NrAudioSeconds => "json_extract(job, '$.nrAudioSeconds')",
        };
        let sql = format!(
            "SELECT job_id, job FROM jobs WHERE {conditions} ORDER BY {by} {direction}, job_id {direction} LIMIT ? OFFSET ?"
        );
        args.push(i64::from(filter.page_size).into());
        args.push(to_sql_int(filter.offset()).into());

        self.with_reader(|conn| {
            let mut stmt = conn.prepare_cached(&sql).map_err(db("listing jobs"))?;
            let rows = stmt
                .query_map(params_from_iter(args), |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
                .map_err(db("listing jobs"))?;
            let mut jobs = Vec::new();
            for row in rows {
                let (job_id, job) = row.map_err(db("listing jobs"))?;
                jobs.push(parse_json(&job, || format!("jobs/{job_id}"))?);
            }
            Ok(jobs)
        })
    }

    /// How many of `owner`'s jobs pass `filter`, all pages together (deleted jobs left out).
    pub fn count_jobs(&self, owner: &UserName, filter: &JobFilter) -> Result<u64, ProjectionError> {
        let (conditions, args) = job_conditions(owner, filter);
        let sql = format!("SELECT COUNT(*) FROM jobs WHERE {conditions}");
        self.with_reader(|conn| {
            let mut stmt = conn.prepare_cached(&sql).map_err(db("counting listed jobs"))?;
            let count =
                stmt.query_row(params_from_iter(args), |r| r.get::<_, i64>(0)).map_err(db("counting listed jobs"))?;
            Ok(from_sql_int(count))
        })
    }

    /// How many jobs (not deleted) are in each status, for metrics. Scans the jobs table.
    pub fn job_counts(&self) -> Result<Vec<(JobStatus, u64)>, ProjectionError> {
        self.with_reader(|conn| {
            let mut stmt = conn
                .prepare_cached("SELECT status, COUNT(*) FROM jobs WHERE deleted = 0 GROUP BY status ORDER BY status")
                .map_err(db("counting jobs"))?;
            let rows = stmt
                .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
                .map_err(db("counting jobs"))?;
            let mut counts = Vec::new();
            for row in rows {
                let (status, count) = row.map_err(db("counting jobs"))?;
                let status = JobStatus::parse(&status).map_err(|e| ProjectionError::CorruptRow {
                    key: format!("jobs with status {status:?}"),
                    reason: e.to_string(),
                })?;
                counts.push((status, from_sql_int(count)));
            }
            Ok(counts)
        })
    }

    // ---- glossaries ----

    /// The glossary `id`, deleted or not; `None` if it never existed.
    pub fn glossary(&self, id: &GlossaryId) -> Result<Option<GlossaryRecord>, ProjectionError> {
        self.with_reader(|conn| {
            let row = conn
                .prepare_cached("SELECT owner, deleted, glossary FROM glossaries WHERE id = ?1")
                .and_then(|mut stmt| {
                    stmt.query_row([id.as_str()], |r| {
                        Ok((r.get::<_, String>(0)?, r.get::<_, bool>(1)?, r.get::<_, String>(2)?))
                    })
                    .optional()
                })
                .map_err(db("looking up a glossary"))?;
            let Some((owner, deleted, glossary)) = row else { return Ok(None) };
            let key = || format!("glossaries/{id}");
            Ok(Some(GlossaryRecord { owner: parse_user(&owner, key)?, deleted, glossary: parse_json(&glossary, key)? }))
        })
    }

    /// `owner`'s glossaries (deleted ones left out), ordered by `sort` with ties broken by id.
    pub fn list_glossaries(&self, owner: &UserName, sort: &GlossarySort) -> Result<Vec<Glossary>, ProjectionError> {
        let mut glossaries = self.with_reader(|conn| {
            let mut stmt = conn
                .prepare_cached("SELECT id, glossary FROM glossaries WHERE owner = ?1 AND deleted = 0")
                .map_err(db("listing glossaries"))?;
            let rows = stmt
                .query_map([owner.as_str()], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
                .map_err(db("listing glossaries"))?;
            let mut glossaries = Vec::new();
            for row in rows {
                let (id, glossary) = row.map_err(db("listing glossaries"))?;
                glossaries.push(parse_json::<Glossary>(&glossary, || format!("glossaries/{id}"))?);
            }
            Ok(glossaries)
        })?;
        glossaries.sort_by(|a, b| sort.compare(a, b));
        Ok(glossaries)
    }

    // ---- accounts ----

    /// The account of `user_name`, if it was opened.
    pub fn account(&self, user_name: &UserName) -> Result<Option<Account>, ProjectionError> {
        self.account_where("a.user_name = ?1", user_name.as_str())
    }

    /// The account whose unrevoked API key has this hash (as computed by the caller when the
    /// key was issued); `None` for an unknown or revoked key.
    pub fn account_by_key_hash(&self, key_hash: &str) -> Result<Option<Account>, ProjectionError> {
        if let Some(account) = self.inner.cache.account(key_hash) {
            return Ok(Some(account));
        }
        let generation = self.inner.cache.generation();
        let found = self.account_where(
            "a.user_name = (SELECT user_name FROM api_keys WHERE key_hash = ?1 AND revoked IS NULL)",
            key_hash,
        )?;
        if let Some(account) = &found {
            self.inner.cache.keep_account(generation, key_hash, account);
        }
        Ok(found)
    }

    /// Called by the projection after committing a batch, before publishing its position.
    pub(crate) fn invalidate(&self, changes: &Changes) {
        self.inner.cache.invalidate(changes);
    }

    fn account_where(&self, condition: &str, arg: &str) -> Result<Option<Account>, ProjectionError> {
        let sql = format!(
            "SELECT a.user_name, a.balance_cents, a.webhook_secret, a.created, a.role, a.languages FROM accounts a WHERE {condition}"
        );
        self.with_reader(|conn| {
            let row = conn
                .prepare_cached(&sql)
                .and_then(|mut stmt| {
                    stmt.query_row([arg], |r| {
                        Ok((
                            r.get::<_, String>(0)?,
                            r.get::<_, i64>(1)?,
                            r.get::<_, String>(2)?,
                            r.get::<_, i64>(3)?,
                            r.get::<_, String>(4)?,
                            r.get::<_, String>(5)?,
                        ))
                    })
                    .optional()
                })
                .map_err(db("looking up an account"))?;
            let Some((user_name, balance, webhook_secret, created, role, languages)) = row else { return Ok(None) };
            let key = || format!("accounts/{user_name}");
            Ok(Some(Account {
                user_name: parse_user(&user_name, key)?,
                balance_cents: from_sql_int(balance),
                webhook_secret,
                created_ms: from_sql_int(created),
                role: Role::parse(&role)
                    .map_err(|e| ProjectionError::CorruptRow { key: key(), reason: e.to_string() })?,
                languages: parse_json(&languages, key)?,
            }))
        })
    }

    // ---- the work queue ----

    /// The open tasks of `kind`, soonest deadline first (ties by task id).
    pub fn open_tasks(&self, kind: TaskKind) -> Result<Vec<TaskView>, ProjectionError> {
        self.with_reader(|conn| {
            let mut stmt = conn
                .prepare_cached("SELECT task_id, task FROM tasks WHERE kind = ?1 ORDER BY deadline, task_id")
                .map_err(db("listing tasks"))?;
            let rows = stmt
                .query_map([kind.as_str()], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
                .map_err(db("listing tasks"))?;
            let mut tasks = Vec::new();
            for row in rows {
                let (task_id, task) = row.map_err(db("listing tasks"))?;
                tasks.push(parse_json(&task, || format!("tasks/{task_id}"))?);
            }
            Ok(tasks)
        })
    }

    /// The open task `task_id`; `None` once submitted, or when its job ended or was deleted.
    pub fn task(&self, task_id: &str) -> Result<Option<TaskView>, ProjectionError> {
        self.with_reader(|conn| {
            let task = conn
                .prepare_cached("SELECT task FROM tasks WHERE task_id = ?1")
                .and_then(|mut stmt| stmt.query_row([task_id], |r| r.get::<_, String>(0)).optional())
                .map_err(db("looking up a task"))?;
            task.map(|t| parse_json(&t, || format!("tasks/{task_id}"))).transpose()
        })
    }

    /// Open tasks, and how many of them are held or overdue at `now_ms`.
    pub fn task_counts(&self, now_ms: u64) -> Result<TaskCounts, ProjectionError> {
        self.with_reader(|conn| {
            conn.query_row(
                "SELECT COUNT(*),
                        COALESCE(SUM(lease_until IS NOT NULL AND lease_until > ?1), 0),
                        COALESCE(SUM(deadline <= ?1), 0)
                 FROM tasks",
                [to_sql_int(now_ms)],
                |r| {
                    Ok(TaskCounts {
                        open: from_sql_int(r.get(0)?),
                        claimed: from_sql_int(r.get(1)?),
                        overdue: from_sql_int(r.get(2)?),
                    })
                },
            )
            .map_err(db("counting tasks"))
        })
    }

    // ---- the whole content ----

    /// Every row of every read model, one JSON array per line, in a fixed order (checkpoint,
    /// then jobs, glossaries, accounts and API keys, each by primary key). Two read-model files
    /// with equal dumps answer every query alike: this is how a rebuild is checked.
    pub fn dump(&self) -> Result<String, ProjectionError> {
        const QUERIES: &[&str] = &[
            "SELECT 'checkpoint', position FROM checkpoint",
            "SELECT 'job', job_id, owner, created, status, job_type, transcription_type, deleted, error_msg, job,
             document FROM jobs ORDER BY job_id",
            "SELECT 'glossary', id, owner, created, name, deleted, glossary FROM glossaries ORDER BY id",
            "SELECT 'account', user_name, balance_cents, webhook_secret, created, role, languages FROM accounts ORDER BY user_name",
            "SELECT 'api_key', key_hash, key_id, user_name, issued, revoked FROM api_keys ORDER BY key_hash",
            "SELECT 'task', task_id, job_id, kind, deadline, holder, lease_until, task FROM tasks ORDER BY task_id",
        ];
        self.with_reader(|conn| {
            let mut out = String::new();
            // One read transaction, so the dump is a consistent snapshot.
            conn.execute_batch("BEGIN").map_err(db("dumping the read models"))?;
            let result = QUERIES.iter().try_for_each(|sql| dump_query(conn, sql, &mut out));
            conn.execute_batch("COMMIT").map_err(db("dumping the read models"))?;
            result.map(|()| out)
        })
    }

    /// Runs `query` on a pooled read connection.
    fn with_reader<T>(
        &self,
        query: impl FnOnce(&Connection) -> Result<T, ProjectionError>,
    ) -> Result<T, ProjectionError> {
        let pooled = self.inner.readers.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let conn = match pooled {
            Some(conn) => conn,
            None => db::open_reader(&self.inner.path)?,
        };
        let result = query(&conn);
        let mut idle = self.inner.readers.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < MAX_IDLE_READERS {
            idle.push(conn);
        }
        result
    }
}

/// The WHERE clause of `GET /jobs` (the owner's jobs, not deleted, passing the filters) and its
/// arguments.
fn job_conditions(owner: &UserName, filter: &JobFilter) -> (String, Vec<rusqlite::types::Value>) {
    let mut sql = String::from("owner = ? AND deleted = 0");
    let mut args: Vec<rusqlite::types::Value> = vec![owner.as_str().to_owned().into()];
    let mut filter_on = |column: &str, value: Option<&str>| {
        if let Some(value) = value {
            sql.push_str(&format!(" AND {column} = ?"));
            args.push(value.to_owned().into());
        }
    };
    filter_on("job_id", filter.job_id.as_ref().map(JobId::as_str));
    filter_on("status", filter.status.map(JobStatus::as_str));
    filter_on("job_type", filter.job_type.map(|t| t.as_str()));
    filter_on("transcription_type", filter.transcription_type.map(|t| t.as_str()));
    (sql, args)
}

fn dump_query(conn: &Connection, sql: &str, out: &mut String) -> Result<(), ProjectionError> {
    use rusqlite::types::ValueRef;
    let mut stmt = conn.prepare(sql).map_err(db("dumping the read models"))?;
    let columns = stmt.column_count();
    let mut rows = stmt.query([]).map_err(db("dumping the read models"))?;
    while let Some(row) = rows.next().map_err(db("dumping the read models"))? {
        let mut line = Vec::with_capacity(columns);
        for i in 0..columns {
            let value = match row.get_ref(i).map_err(db("dumping the read models"))? {
                ValueRef::Null => serde_json::Value::Null,
                ValueRef::Integer(n) => n.into(),
                ValueRef::Real(x) => x.into(),
                ValueRef::Text(t) | ValueRef::Blob(t) => String::from_utf8_lossy(t).into_owned().into(),
            };
            line.push(value);
        }
        out.push_str(&serde_json::Value::Array(line).to_string());
        out.push('\n');
    }
    Ok(())
}

fn parse_json<T: DeserializeOwned>(text: &str, key: impl FnOnce() -> String) -> Result<T, ProjectionError> {
    serde_json::from_str(text).map_err(|e| ProjectionError::CorruptRow { key: key(), reason: e.to_string() })
}

fn parse_user(text: &str, key: impl FnOnce() -> String) -> Result<UserName, ProjectionError> {
    UserName::parse(text).map_err(|e| ProjectionError::CorruptRow { key: key(), reason: e.to_string() })
}
