//! Rendered exports kept in memory (moka), keyed by job, document, format and parameters, so that
//! a client downloading the same subtitles again, or a player polling them, costs a lookup
//! instead of a segmentation. Bounded by the bytes held; an entry unused for an hour is dropped.
//! A document file never changes (an edit is a new file, which the job's events name), so
//! entries never go stale: an edited job's exports have a new key. A deleted job is refused (410)
//! before the cache is asked, and its entries are dropped when that happens.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use moka::future::Cache;

/// Entries not read for this long are dropped.
const TIME_TO_IDLE: Duration = Duration::from_secs(3600);

/// One rendered export: the job, the document file rendered (relative to the data directory)
/// and a canonical spelling of format and parameters (`srt/42/2/2`, `txt/true/true/false/-`,
/// `json`, ...).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ExportKey {
    pub job_id: String,
    pub document: String,
    pub variant: String,
}

#[derive(Clone)]
pub struct ExportCache {
    cache: Cache<ExportKey, Arc<Vec<u8>>>,
}

impl ExportCache {
    /// A cache holding at most about `max_bytes` of rendered exports.
    pub fn new(max_bytes: u64) -> ExportCache {
        let cache = Cache::builder()
            .max_capacity(max_bytes)
            .weigher(|k: &ExportKey, v: &Arc<Vec<u8>>| {
                let bytes = v.len() + k.job_id.len() + k.document.len() + k.variant.len();
                u32::try_from(bytes).unwrap_or(u32::MAX)
            })
            .time_to_idle(TIME_TO_IDLE)
            .support_invalidation_closures()
            .build();
        ExportCache { cache }
    }

    /// The cached export, or the result of `render` (stored on success). Concurrent requests for
    /// the same key wait for one render instead of each doing it.
    pub async fn get_or_render<E, F>(&self, key: ExportKey, render: F) -> Result<Arc<Vec<u8>>, Arc<E>>
    where
        F: Future<Output = Result<Vec<u8>, E>>,
        E: Send + Sync + 'static,
    {
        self.cache.try_get_with(key, async move { render.await.map(Arc::new) }).await
    }

    /// Drops every export of `job_id`.
    pub fn forget_job(&self, job_id: &str) {
        let job_id = job_id.to_owned();
        if let Err(e) = self.cache.invalidate_entries_if(move |k, _| k.job_id == job_id) {
            tracing::warn!(error = %e, "dropping the cached exports of a deleted job");
        }
    }

    /// Entries held now (approximate until pending work is run).
    pub async fn entries(&self) -> u64 {
        self.cache.run_pending_tasks().await;
        self.cache.entry_count()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    fn key(job: &str, variant: &str) -> ExportKey {
        ExportKey { job_id: job.into(), document: format!("transcripts/{job}.json"), variant: variant.into() }
    }

    #[tokio::test]
    async fn a_new_document_of_a_job_is_rendered_anew() {
        let cache = ExportCache::new(1 << 20);
        let first = cache.get_or_render(key("j1", "json"), async { Ok::<_, ()>(b"first".to_vec()) }).await.unwrap();
        let edited = ExportKey { document: "media/j1/work/edit-2.json".into(), ..key("j1", "json") };
        let second = cache.get_or_render(edited, async { Ok::<_, ()>(b"edited".to_vec()) }).await.unwrap();
        assert_eq!((first.as_slice(), second.as_slice()), (&b"first"[..], &b"edited"[..]));
    }

    #[tokio::test]
    async fn renders_once_per_key_and_forgets_a_job() {
        let cache = ExportCache::new(1 << 20);
        let renders = AtomicUsize::new(0);
        let render = |text: &'static str| {
            renders.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, String>(text.as_bytes().to_vec()) }
        };
        let a = cache.get_or_render(key("j1", "srt/42/2/2"), render("a")).await.unwrap();
        let again = cache.get_or_render(key("j1", "srt/42/2/2"), render("changed")).await.unwrap();
        assert_eq!((a.as_slice(), again.as_slice()), (&b"a"[..], &b"a"[..]));
        let other = cache.get_or_render(key("j1", "srt/30/2/2"), render("b")).await.unwrap();
        assert_eq!(other.as_slice(), b"b");
        cache.get_or_render(key("j2", "json"), render("c")).await.unwrap();
        assert_eq!(cache.entries().await, 3);

        cache.forget_job("j1");
        let fresh = cache.get_or_render(key("j1", "srt/42/2/2"), render("d")).await.unwrap();
        assert_eq!(fresh.as_slice(), b"d", "a forgotten job is rendered again");
        let kept = cache.get_or_render(key("j2", "json"), render("e")).await.unwrap();
        assert_eq!(kept.as_slice(), b"c", "other jobs stay cached");
    }

    #[tokio::test]
    async fn a_failed_render_is_not_cached() {
        let cache = ExportCache::new(1 << 20);
        let failed = cache.get_or_render(key("j", "json"), async { Err::<Vec<u8>, _>("no transcript") }).await;
        assert_eq!(*failed.unwrap_err(), "no transcript");
        let ok = cache.get_or_render(key("j", "json"), async { Ok::<_, &str>(b"{}".to_vec()) }).await.unwrap();
        assert_eq!(ok.as_slice(), b"{}");
    }

    #[tokio::test]
    async fn the_byte_bound_evicts() {
        let cache = ExportCache::new(10_000);
        for n in 0..20 {
            cache.get_or_render(key("j", &n.to_string()), async { Ok::<_, ()>(vec![0u8; 1_000]) }).await.unwrap();
        }
        assert!(cache.entries().await <= 10, "at most 10 entries of 1000 bytes fit in 10 000 bytes");
    }
}
