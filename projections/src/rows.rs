//! The rows an aggregate state becomes, and the one transaction that writes a batch of them
//! together with the checkpoint.
//!
//! Rows are computed from whole states (not patched per event), so writing the same state twice
//! gives the same row, and a rebuild gives byte-identical rows.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use rusqlite::{Connection, params};
use scribe_domain::account::{AccountEvent, AccountState, ApiKey};
use scribe_domain::glossary::GlossaryState;
use scribe_domain::job::JobState;

use crate::cache::Changes;
use crate::db::to_sql_int;
use crate::error::{ProjectionError, db};

/// A row to write, from the state of one stream after one event.
#[derive(Debug)]
pub(crate) enum Row {
    Job(JobRow),
    Glossary(GlossaryRow),
    Account(AccountRow),
}

#[derive(Debug)]
pub(crate) struct JobRow {
    job_id: String,
    owner: String,
    created: u64,
    status: &'static str,
    job_type: &'static str,
    transcription_type: &'static str,
    deleted: bool,
    error_msg: Option<String>,
    /// The spec's Job object, as `JobState::view` makes it.
    job: String,
    /// The document the job delivers, as its events name it (`JobState::delivered_document`).
    document: Option<String>,
    /// The job's open tasks (the rows of `tasks` for this job are replaced by these).
    tasks: Vec<TaskRow>,
}

#[derive(Debug)]
pub(crate) struct TaskRow {
    task_id: String,
    kind: &'static str,
    deadline: u64,
    holder: Option<String>,
    lease_until: Option<u64>,
    /// `TaskView` as JSON.
    task: String,
}

impl JobRow {
    /// `None` before the job was submitted (a stream that starts with another event).
    pub(crate) fn from_state(state: &JobState) -> Option<JobRow> {
        let view = state.view()?;
        let owner = state.owner()?.to_string();
        Some(JobRow {
            job_id: view.job_id.to_string(),
            owner,
            created: view.created,
            status: view.status.as_str(),
            job_type: view.job_type.as_str(),
            transcription_type: view.transcription_type.as_str(),
            deleted: state.deleted,
            error_msg: state.error_msg.clone(),
            job: serde_json::to_string(&view).expect("a Job serializes to JSON"),
            document: state.delivered_document().map(str::to_owned),
            tasks: state
                .task_views()
                .into_iter()
                .map(|t| TaskRow {
                    task_id: t.task_id.clone(),
                    kind: t.kind.as_str(),
                    deadline: t.deadline_ms,
                    holder: t.holder.as_ref().map(ToString::to_string),
                    lease_until: t.lease_until_ms,
                    task: serde_json::to_string(&t).expect("a TaskView serializes to JSON"),
                })
                .collect(),
        })
    }
}

#[derive(Debug)]
pub(crate) struct GlossaryRow {
    id: String,
    owner: String,
    created: u64,
    name: String,
    deleted: bool,
    /// The spec's Glossary object.
    glossary: String,
}

impl GlossaryRow {
    /// `None` before the glossary was created.
    pub(crate) fn from_state(state: &GlossaryState) -> Option<GlossaryRow> {
        let g = state.glossary.as_ref()?;
        Some(GlossaryRow {
            id: g.id.to_string(),
            owner: g.user_name.to_string(),
            created: g.created,
            name: g.name.clone(),
            deleted: state.deleted,
            glossary: serde_json::to_string(g).expect("a Glossary serializes to JSON"),
        })
    }
}

#[derive(Debug)]
pub(crate) struct AccountRow {
    user_name: String,
    balance_cents: u64,
    webhook_secret: String,
    role: &'static str,
    /// JSON array of language codes.
    languages: String,
    /// Set by the `AccountOpened` event only; other events keep the stored value.
    opened_ms: Option<u64>,
    keys: Vec<ApiKey>,
}

impl AccountRow {
    /// `None` before the account was opened.
    pub(crate) fn from_state(event: &AccountEvent, state: &AccountState) -> Option<AccountRow> {
        let user_name = state.user_name.as_ref()?.to_string();
        let opened_ms = match event {
            AccountEvent::AccountOpened { at_ms, .. } => Some(*at_ms),
            _ => None,
        };
        let keys = match event {
            AccountEvent::AccountOpened { .. } | AccountEvent::KeyIssued { .. } | AccountEvent::KeyRevoked { .. } => {
                state.keys.clone()
            }
            _ => Vec::new(),
        };
        Some(AccountRow {
            user_name,
            balance_cents: state.balance_cents,
            webhook_secret: state.webhook_secret.clone(),
            role: state.role.as_str(),
            languages: serde_json::to_string(&state.languages).expect("strings serialize to JSON"),
            opened_ms,
            keys,
        })
    }
}

/// The rows of one batch of events, one per job, glossary or account: when a batch touches a
/// stream several times (a job's whole pipeline during catch-up), only its last row is written.
#[derive(Debug, Default)]
pub(crate) struct RowBatch {
    rows: Vec<Row>,
    index: HashMap<(u8, String), usize>,
}

impl RowBatch {
    /// The jobs and accounts among the rows.
    pub(crate) fn changes(&self) -> Changes {
        let mut changes = Changes::default();
        for row in &self.rows {
            match row {
                Row::Job(r) => changes.job_ids.push(r.job_id.clone()),
                Row::Account(r) => changes.user_names.push(r.user_name.clone()),
                Row::Glossary(_) => {}
            }
        }
        changes
    }

    /// Adds the row of a later event; it replaces an earlier row of the same record.
    pub(crate) fn push(&mut self, row: Row) {
        let key = match &row {
            Row::Job(r) => (0, r.job_id.clone()),
            Row::Glossary(r) => (1, r.id.clone()),
            Row::Account(r) => (2, r.user_name.clone()),
        };
        match self.index.entry(key) {
            Entry::Occupied(slot) => {
                let earlier = &mut self.rows[*slot.get()];
                *earlier = match (&*earlier, row) {
                    // Account rows carry the opening time and the keys only when they change.
                    (Row::Account(old), Row::Account(mut new)) => {
                        new.opened_ms = new.opened_ms.or(old.opened_ms);
                        if new.keys.is_empty() {
                            new.keys = old.keys.clone();
                        }
                        Row::Account(new)
                    }
                    (_, newer) => newer,
                };
            }
            Entry::Vacant(slot) => {
                slot.insert(self.rows.len());
                self.rows.push(row);
            }
        }
    }
}

/// Writes the rows and moves the checkpoint to `through`, in one transaction.
pub(crate) fn write_batch(conn: &mut Connection, batch: &RowBatch, through: u64) -> Result<(), ProjectionError> {
    let rows = &batch.rows;
    const ACTION: &str = "applying events to the read models";
    let tx = conn.transaction().map_err(db(ACTION))?;
    {
        let mut job = tx
            .prepare_cached(
                "INSERT OR REPLACE INTO jobs
                 (job_id, owner, created, status, job_type, transcription_type, deleted, error_msg, job, document)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )
            .map_err(db(ACTION))?;
        let mut glossary = tx
            .prepare_cached(
                "INSERT OR REPLACE INTO glossaries (id, owner, created, name, deleted, glossary)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .map_err(db(ACTION))?;
        let mut account = tx
            .prepare_cached(
                "INSERT INTO accounts (user_name, balance_cents, webhook_secret, created, role, languages)
                 VALUES (?1, ?2, ?3, COALESCE(?4, 0), ?5, ?6)
                 ON CONFLICT (user_name) DO UPDATE SET
                     balance_cents = excluded.balance_cents,
                     webhook_secret = excluded.webhook_secret,
                     created = COALESCE(?4, accounts.created),
                     role = excluded.role,
                     languages = excluded.languages",
            )
            .map_err(db(ACTION))?;
        let mut forget_tasks = tx.prepare_cached("DELETE FROM tasks WHERE job_id = ?1").map_err(db(ACTION))?;
        let mut task = tx
            .prepare_cached(
                "INSERT INTO tasks (task_id, job_id, kind, deadline, holder, lease_until, task)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )
            .map_err(db(ACTION))?;
        let mut key = tx
            .prepare_cached(
                "INSERT OR REPLACE INTO api_keys (key_hash, key_id, user_name, issued, revoked)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .map_err(db(ACTION))?;
        for row in rows {
            match row {
                Row::Job(r) => {
                    job.execute(params![
                        r.job_id,
                        r.owner,
                        to_sql_int(r.created),
                        r.status,
                        r.job_type,
                        r.transcription_type,
                        r.deleted,
                        r.error_msg,
                        r.job,
                        r.document
                    ])
                    .map_err(db(ACTION))?;
                    forget_tasks.execute([&r.job_id]).map_err(db(ACTION))?;
                    for t in &r.tasks {
                        task.execute(params![
                            t.task_id,
                            r.job_id,
                            t.kind,
                            to_sql_int(t.deadline),
                            t.holder,
                            t.lease_until.map(to_sql_int),
                            t.task
                        ])
                        .map_err(db(ACTION))?;
                    }
                    Ok(1)
                }
                Row::Glossary(r) => {
                    glossary.execute(params![r.id, r.owner, to_sql_int(r.created), r.name, r.deleted, r.glossary])
                }
                Row::Account(r) => {
                    account
                        .execute(params![
                            r.user_name,
                            to_sql_int(r.balance_cents),
                            r.webhook_secret,
                            r.opened_ms.map(to_sql_int),
                            r.role,
                            r.languages
                        ])
                        .map_err(db(ACTION))?;
                    for k in &r.keys {
                        key.execute(params![
                            k.key_hash,
                            k.key_id,
                            r.user_name,
                            to_sql_int(k.issued_ms),
                            k.revoked_ms.map(to_sql_int)
                        ])
                        .map_err(db(ACTION))?;
                    }
                    Ok(1)
                }
            }
            .map_err(db(ACTION))?;
        }
        tx.execute("UPDATE checkpoint SET position = ?1 WHERE id = 0", [to_sql_int(through)]).map_err(db(ACTION))?;
    }
    tx.commit().map_err(db(ACTION))
}
