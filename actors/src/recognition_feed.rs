//! The text of recognitions in progress, handed from the ASR worker to whoever waits for it on
//! this node (the OpenAI door's streamed answers: `transcript.text.delta`). It is a convenience
//! for watchers, not a record: the transcript itself is recorded as usual, and a job recognised on
//! another node streams nothing here (its watcher gets the whole text at the end).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use scribe_domain::ids::JobId;
use tokio::sync::broadcast;

/// Pieces a slow watcher may fall behind by before it misses some (it then has the final text).
const BACKLOG: usize = 1024;

/// Who watches which job's recognition.
#[derive(Clone, Default)]
pub struct RecognitionFeed {
    watched: Arc<Mutex<HashMap<JobId, broadcast::Sender<String>>>>,
}

/// A watch on one job; ends when dropped.
pub struct Watch {
    feed: RecognitionFeed,
    job_id: JobId,
    pub receiver: broadcast::Receiver<String>,
}

impl RecognitionFeed {
    /// Watches `job_id` (before it is submitted, so nothing is missed).
    pub fn watch(&self, job_id: &JobId) -> Watch {
        let mut watched = self.watched.lock().expect("the feed lock");
        let sender = watched.entry(job_id.clone()).or_insert_with(|| broadcast::channel(BACKLOG).0);
        Watch { feed: self.clone(), job_id: job_id.clone(), receiver: sender.subscribe() }
    }

    /// Whether anyone watches `job_id` (the worker then prepares the text).
    pub fn is_watched(&self, job_id: &JobId) -> bool {
        self.watched.lock().expect("the feed lock").contains_key(job_id)
    }

    /// Hands newly recognised text to the job's watchers, if any.
    pub fn publish(&self, job_id: &JobId, text: String) {
        if let Some(sender) = self.watched.lock().expect("the feed lock").get(job_id) {
            let _ = sender.send(text);
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let mut watched = self.feed.watched.lock().expect("the feed lock");
        if watched.get(&self.job_id).is_some_and(|s| s.receiver_count() <= 1) {
            watched.remove(&self.job_id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_watcher_receives_what_is_published_until_it_stops_watching() {
        let feed = RecognitionFeed::default();
        let job = JobId::parse("j1").unwrap();
        feed.publish(&job, "before".into());
        let mut watch = feed.watch(&job);
        assert!(feed.is_watched(&job));
        feed.publish(&job, " Hello".into());
        assert_eq!(watch.receiver.recv().await.unwrap(), " Hello");
        drop(watch);
        assert!(!feed.is_watched(&job));
    }
}
