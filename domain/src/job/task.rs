//! The human tasks of a manual (`perfect`) job: what each one is, who holds it, until when, and
//! the rules of claiming, saving, releasing and submitting. The job aggregate (`job::decide`)
//! applies these rules; the events they produce live on the job's own stream, so a replay of a
//! job tells who did what and when.
//!
//! A task is *open* from `TaskOpened` until `TaskSubmitted`. While open it is either free or
//! held under a lease by one staff member. A lease ends when its holder releases it, when it
//! expires (anyone eligible may then claim the task, and the saved draft stays with it), or
//! when the task is submitted. Every save renews the lease.

use crate::account::works_in;
use crate::ids::{JobId, UserName};
use crate::kinds::{Role, TaskKind};

/// Calendar days to milliseconds, for deadlines.
pub const DAY_MS: u64 = 86_400_000;

/// The id of a job's task of `kind`: `<jobId>-transcribe` or `<jobId>-translate` (a job has at
/// most one task of each kind). Clients treat it as opaque.
pub fn task_id(job_id: &JobId, kind: TaskKind) -> String {
    format!("{job_id}-{kind}")
}

/// The job and kind a task id names; `None` when it is not a task id.
pub fn parse_task_id(task_id: &str) -> Option<(JobId, TaskKind)> {
    let (job, kind) = task_id.rsplit_once('-')?;
    let kind = TaskKind::parse(kind).ok()?;
    Some((JobId::parse(job).ok()?, kind))
}

/// A staff member asking for work, as their account says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worker {
    pub user: UserName,
    pub role: Role,
    /// Languages they work in; empty means every language.
    pub languages: Vec<String>,
}

impl Worker {
    /// Whether this worker may take a task of `kind` whose work is in `language` (the source
    /// language for transcription, the target language for translation).
    pub fn can_take(&self, kind: TaskKind, language: &str) -> bool {
        self.role == kind.role() && works_in(&self.languages, language)
    }
}

/// Who holds a task, and until when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub holder: UserName,
    pub until_ms: u64,
}

impl Lease {
    /// Whether `user` holds this lease at `now_ms`.
    pub fn is_held_by(&self, user: &UserName, now_ms: u64) -> bool {
        self.holder == *user && now_ms < self.until_ms
    }

    pub fn is_expired(&self, now_ms: u64) -> bool {
        now_ms >= self.until_ms
    }
}

/// A saved revision of a task's document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    /// 1, 2, ... per task.
    pub number: u32,
    /// The document file, relative to the data directory.
    pub path: String,
    pub by: UserName,
    pub at_ms: u64,
}

/// One task of a job, as its events made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskState {
    pub task_id: String,
    pub kind: TaskKind,
    pub opened_ms: u64,
    pub deadline_ms: u64,
    /// The current lease, if someone holds (or held, until it is recorded as expired) it.
    pub lease: Option<Lease>,
    /// The last saved revision.
    pub revision: Option<Revision>,
    /// Someone claimed it at least once (a deleted job is then no longer refunded).
    pub ever_claimed: bool,
    /// Who submitted it and when; a submitted task is closed.
    pub submitted: Option<(UserName, u64)>,
}

impl TaskState {
    pub fn is_open(&self) -> bool {
        self.submitted.is_none()
    }

    /// Past its deadline and still open.
    pub fn is_overdue(&self, now_ms: u64) -> bool {
        self.is_open() && now_ms >= self.deadline_ms
    }

    /// The holder of a lease that has not expired at `now_ms`.
    pub fn holder_at(&self, now_ms: u64) -> Option<&UserName> {
        self.lease.as_ref().filter(|l| !l.is_expired(now_ms)).map(|l| &l.holder)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_name_their_job_and_kind() {
        let job = JobId::parse("0192f6a4-7c1e-7d2a").unwrap();
        let id = task_id(&job, TaskKind::Translate);
        assert_eq!(id, "0192f6a4-7c1e-7d2a-translate");
        assert_eq!(parse_task_id(&id), Some((job, TaskKind::Translate)));
        assert_eq!(parse_task_id("abc-review"), None);
        assert_eq!(parse_task_id("transcribe"), None);
    }

    #[test]
    fn a_worker_takes_tasks_of_their_role_and_languages() {
        let ann =
            Worker { user: UserName::parse("ann").unwrap(), role: Role::Transcriber, languages: vec!["en".into()] };
        assert!(ann.can_take(TaskKind::Transcribe, "en-us"));
        assert!(!ann.can_take(TaskKind::Transcribe, "nl"));
        assert!(!ann.can_take(TaskKind::Translate, "en"));
        let customer = Worker { role: Role::Customer, languages: vec![], ..ann };
        assert!(!customer.can_take(TaskKind::Transcribe, "en"));
    }
}
