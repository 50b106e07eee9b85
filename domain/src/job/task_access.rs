//! Who may work on a job's task now, as queries on the job's state. The job aggregate decides
//! the task commands with them, and the work API asks them before it writes a document or shows a
//! task, so each rule is written, and worded (the [`JobRefusal`]), once.

use crate::ids::UserName;
use crate::kinds::TaskKind;

use super::task::{TaskState, Worker};
use super::{JobRefusal, JobState};

impl JobState {
    /// The open task `task_id`: [`JobRefusal::NoSuchTask`] when the job has none by that id (or
    /// there is no job), [`JobRefusal::TaskClosed`] once it was submitted.
    pub fn open_task(&self, task_id: &str) -> Result<&TaskState, JobRefusal> {
        match self.task(task_id) {
            None => Err(JobRefusal::NoSuchTask(task_id.to_owned())),
            Some(t) if !t.is_open() => Err(JobRefusal::TaskClosed(task_id.to_owned())),
            Some(t) => Ok(t),
        }
    }

    /// The open task `task_id` of a job that was not deleted, if `worker` does its kind of work in
    /// its language ([`JobRefusal::TaskNotForYou`] otherwise). Whether someone holds it is not
    /// asked here.
    pub fn task_for(&self, task_id: &str, worker: &Worker) -> Result<&TaskState, JobRefusal> {
        if self.deleted {
            return Err(JobRefusal::Deleted);
        }
        let task = self.open_task(task_id)?;
        let language = self.work_language(task.kind);
        if !worker.can_take(task.kind, &language) {
            return Err(JobRefusal::TaskNotForYou(format!(
                "task {task_id} is {} work in {language}; your account does {} work{}",
                task.kind,
                worker.role,
                if worker.languages.is_empty() {
                    String::new()
                } else {
                    format!(" in {}", worker.languages.join(", "))
                }
            )));
        }
        Ok(task)
    }

    /// The open task `task_id`, if `by` holds its lease at `at_ms` ([`JobRefusal::TaskNotHeld`]
    /// otherwise: never claimed, released, expired or someone else's).
    pub fn task_held_by(&self, task_id: &str, by: &UserName, at_ms: u64) -> Result<&TaskState, JobRefusal> {
        let task = self.open_task(task_id)?;
        match &task.lease {
            Some(lease) if lease.is_held_by(by, at_ms) => Ok(task),
            _ => Err(JobRefusal::TaskNotHeld(task_id.to_owned())),
        }
    }

    /// The language a task's work is in: the target language of a translation, else the job's
    /// (the detected one for `auto` jobs, once known).
    pub fn work_language(&self, kind: TaskKind) -> String {
        let Some(submission) = &self.submission else { return String::new() };
        match (kind, submission.target_language) {
            (TaskKind::Translate, Some(t)) => t.code().to_owned(),
            _ => self.language().map_or_else(|| submission.language.code().to_owned(), |l| l.code().to_owned()),
        }
    }
}
