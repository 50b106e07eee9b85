//! The decisions on a manual job's tasks (the task types themselves are in `task`): opening the
//! first one, claiming, saving, releasing, a lease running out, and handing in, which completes
//! the job or opens its translation.

use crate::ids::UserName;
use crate::kinds::{TaskKind, TranscriptionType, TurnaroundTime};

use super::task::{self, DAY_MS, Worker};
use super::{JobEvent, JobRefusal, JobState, Submission};

/// `TaskOpened` for the job's task of `kind`, due `turnaroundTime` calendar days after the job
/// was created.
pub(super) fn open_task(submission: &Submission, kind: TaskKind, at_ms: u64) -> JobEvent {
    let turnaround =
        submission.turnaround_time.unwrap_or_else(|| TurnaroundTime::default_for(submission.transcription_type));
    JobEvent::TaskOpened {
        task_id: task::task_id(&submission.job_id, kind),
        kind,
        deadline_ms: submission.created_ms.saturating_add(u64::from(turnaround.days()) * DAY_MS),
        at_ms,
    }
}

/// Opens the first task of a manual job whose draft exists but whose task was never opened.
pub(super) fn open_first(state: &JobState, submission: &Submission, at_ms: u64) -> Result<Vec<JobEvent>, JobRefusal> {
    if !state.tasks.is_empty() || state.transcript.as_ref().is_none_or(|t| !t.draft) {
        return Err(JobRefusal::OutOfOrder("only a manual job's draft waits for its first task"));
    }
    Ok(vec![open_task(submission, TaskKind::Transcribe, at_ms)])
}

/// `worker` takes the task for `lease_ms` (or renews a lease they hold); an expired lease of
/// someone else is released first.
pub(super) fn claim(
    state: &JobState,
    task_id: String,
    worker: Worker,
    lease_ms: u64,
    at_ms: u64,
) -> Result<Vec<JobEvent>, JobRefusal> {
    let task = state.task_for(&task_id, &worker)?;
    let mut events = Vec::new();
    if let Some(lease) = &task.lease {
        if lease.holder != worker.user && !lease.is_expired(at_ms) {
            return Err(JobRefusal::TaskHeldByOther { task_id, until_ms: lease.until_ms });
        }
        if lease.holder != worker.user {
            events.push(JobEvent::TaskReleased { task_id: task_id.clone(), by: None, expired: true, at_ms });
        }
    }
    events.push(JobEvent::TaskClaimed {
        task_id,
        by: worker.user,
        lease_until_ms: at_ms.saturating_add(lease_ms),
        at_ms,
    });
    Ok(events)
}

/// The holder saved a revision of the document, already written to `path`; the lease is renewed.
pub(super) fn save_draft(
    state: &JobState,
    task_id: String,
    by: UserName,
    path: String,
    words: u64,
    lease_ms: u64,
    at_ms: u64,
) -> Result<Vec<JobEvent>, JobRefusal> {
    let task = state.task_held_by(&task_id, &by, at_ms)?;
    let revision = task.revision.as_ref().map_or(1, |r| r.number + 1);
    Ok(vec![JobEvent::DraftSaved {
        task_id,
        by,
        revision,
        path,
        words,
        lease_until_ms: at_ms.saturating_add(lease_ms),
        at_ms,
    }])
}

/// The holder gives the task back.
pub(super) fn release(
    state: &JobState,
    task_id: String,
    by: UserName,
    at_ms: u64,
) -> Result<Vec<JobEvent>, JobRefusal> {
    let task = state.open_task(&task_id)?;
    match &task.lease {
        Some(lease) if lease.holder == by => {
            Ok(vec![JobEvent::TaskReleased { task_id, by: Some(by), expired: false, at_ms }])
        }
        _ => Err(JobRefusal::TaskNotHeld(task_id)),
    }
}

/// Records that the lease on the task ran out.
pub(super) fn expire_lease(state: &JobState, task_id: String, at_ms: u64) -> Result<Vec<JobEvent>, JobRefusal> {
    let task = state.open_task(&task_id)?;
    match &task.lease {
        Some(lease) if lease.is_expired(at_ms) => {
            Ok(vec![JobEvent::TaskReleased { task_id, by: None, expired: true, at_ms }])
        }
        _ => Err(JobRefusal::OutOfOrder("the task has no expired lease")),
    }
}

/// The holder hands in the last saved revision (or the untouched machine draft): a transcription
/// completes the job or opens its translation; a translation completes the job.
pub(super) fn hand_in(
    state: &JobState,
    submission: &Submission,
    task_id: String,
    by: UserName,
    at_ms: u64,
) -> Result<Vec<JobEvent>, JobRefusal> {
    let task = state.task_held_by(&task_id, &by, at_ms)?;
    let (revision, path) = match (&task.revision, task.kind) {
        (Some(r), _) => (r.number, r.path.clone()),
        (None, TaskKind::Transcribe) => match &state.transcript {
            Some(t) => (0, t.path.clone()),
            None => return Err(JobRefusal::OutOfOrder("the machine draft is missing")),
        },
        (None, TaskKind::Translate) => return Err(JobRefusal::NothingToSubmit(task_id)),
    };
    let kind = task.kind;
    let mut events = vec![JobEvent::TaskSubmitted { task_id, by, revision, path: path.clone(), at_ms }];
    let translated = submission.transcription_type == TranscriptionType::TranslatedSubtitles;
    match kind {
        TaskKind::Transcribe if translated => events.push(open_task(submission, TaskKind::Translate, at_ms)),
        TaskKind::Transcribe => events.push(JobEvent::JobCompleted { at_ms }),
        TaskKind::Translate => {
            let target_language = submission
                .target_language
                .ok_or(JobRefusal::OutOfOrder("a translation task needs a target language"))?;
            events.push(JobEvent::TranslationProduced { path, target_language, at_ms });
            events.push(JobEvent::JobCompleted { at_ms });
        }
    }
    Ok(events)
}
