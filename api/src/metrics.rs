//! `GET /metrics` in the Prometheus (OpenMetrics) text format: request latency by route, method
//! and status; jobs by status (from the read model, at scrape time); ASR tasks waiting; the
//! pipeline's dispatches by stage.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use poem::http::StatusCode;
use poem::{IntoResponse, Response, handler, web::Data};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use scribe_actors::live::DecodeCounts;
use scribe_actors::pipeline::DispatchCounts;
use scribe_domain::kinds::JobStatus;

use crate::state::ApiState;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    /// The route template (`/api/glossary/{glossaryId}`), or `other` for unknown paths.
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabels {
    status: String,
}

/// The service's metrics. Cheap to share (`Arc`).
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Histogram>,
    jobs: Family<StatusLabels, Gauge>,
    asr_queue: Gauge,
    tasks: Family<TaskLabels, Gauge>,
}

fn latency_histogram() -> Histogram {
    // 1 ms to about 33 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 16))
}

impl Metrics {
    /// The service's metrics, with the pipeline's `dispatches` and the live sessions'
    /// `decodes` read at each scrape.
    pub fn new(dispatches: DispatchCounts, decodes: DecodeCounts) -> Self {
        let mut registry = Registry::with_prefix("scribe");
        let requests = Family::<RequestLabels, Histogram>::new_with_constructor(latency_histogram as fn() -> Histogram);
        let jobs = Family::<StatusLabels, Gauge>::default();
        let asr_queue = Gauge::default();
        let tasks = Family::<TaskLabels, Gauge>::default();
        registry.register("http_request_duration_seconds", "Time to answer an HTTP request", requests.clone());
        registry.register("jobs", "Jobs by status (deleted jobs excluded)", jobs.clone());
        registry.register("asr_queue_length", "Recognition tasks waiting for a worker", asr_queue.clone());
        registry.register(
            "tasks",
            "Open tasks of manual jobs: all open ones, those claimed, those overdue",
            tasks.clone(),
        );
        registry.register_collector(Box::new(PipelineDispatches(dispatches)));
        registry.register_collector(Box::new(LiveDecodes(decodes)));
        Metrics { registry, requests, jobs, asr_queue, tasks }
    }

    /// Records one answered request.
    pub fn observe(&self, method: &str, route: &str, status: StatusCode, elapsed: Duration) {
        let labels = RequestLabels { method: method.to_owned(), route: route.to_owned(), status: status.as_u16() };
        self.requests.get_or_create(&labels).observe(elapsed.as_secs_f64());
    }

    /// The text exposition, after refreshing the gauges from `state`.
    pub fn render(&self, state: &ApiState) -> Result<String, String> {
        let counts = state.read.job_counts().map_err(|e| e.to_string())?;
        for status in JobStatus::ALL {
            let n = counts.iter().find(|(s, _)| s == status).map_or(0, |(_, n)| *n);
            self.jobs.get_or_create(&StatusLabels { status: status.as_str().to_owned() }).set(n as i64);
        }
        self.asr_queue.set(state.asr_queue.load(Ordering::Relaxed) as i64);
        let tasks = state.read.task_counts(scribe_actors::clock::now_ms()).map_err(|e| e.to_string())?;
        for (state, n) in [("open", tasks.open), ("claimed", tasks.claimed), ("overdue", tasks.overdue)] {
            self.tasks.get_or_create(&TaskLabels { state }).set(n as i64);
        }
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry).map_err(|e| e.to_string())?;
        Ok(text)
    }
}

/// `scribe_pipeline_dispatches_total{stage="StoreMedia"|…}`: counters kept by the pipeline,
/// read when scraped.
#[derive(Debug)]
struct PipelineDispatches(DispatchCounts);

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StageLabels {
    stage: String,
}

impl Collector for PipelineDispatches {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let mut family = encoder.encode_descriptor(
            "pipeline_dispatches",
            "Stages of jobs the pipeline handed to their work, by stage",
            None,
            prometheus_client::metrics::MetricType::Counter,
        )?;
        for (stage, n) in self.0.by_stage() {
            ConstCounter::new(n).encode(family.encode_family(&StageLabels { stage })?)?;
        }
        Ok(())
    }
}

/// `scribe_live_decodes_total{kind="final"|"early"|"early_kept"|"partial"|"partial_cancelled"|"shared"|
/// "revision"|"revision_cancelled"|"revised"}`: the live sessions' decodings; `early − early_kept`
/// were wasted (the speaker went on); `shared` of them shared the decoder's steps with another
/// session's; `revised` of the `revision`s (finals read again) were sent.
#[derive(Debug)]
struct LiveDecodes(DecodeCounts);

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DecodeLabels {
    kind: &'static str,
}

impl Collector for LiveDecodes {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let mut family = encoder.encode_descriptor(
            "live_decodes",
            "Live sessions' decodings by kind: final, early (a final begun when a pause began), early_kept \
             (early ones that became the final), partial, partial_cancelled (stopped for a final), shared \
             (decoded in one batch with another session's), revision (a final read again with its \
             neighbours), revision_cancelled (stopped for a final or a partial, read again later), revised (revisions sent)",
            None,
            prometheus_client::metrics::MetricType::Counter,
        )?;
        for (kind, n) in self.0.by_kind() {
            ConstCounter::new(n).encode(family.encode_family(&DecodeLabels { kind })?)?;
        }
        Ok(())
    }
}

/// `scribe_tasks{state="open"|"claimed"|"overdue"}`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, prometheus_client::encoding::EncodeLabelSet)]
struct TaskLabels {
    state: &'static str,
}

#[handler]
pub async fn metrics(metrics: Data<&Arc<Metrics>>, state: Data<&Arc<ApiState>>) -> Response {
    match metrics.render(&state) {
        Ok(text) => {
            Response::builder().content_type("application/openmetrics-text; version=1.0.0; charset=utf-8").body(text)
        }
        Err(e) => crate::error::ApiError::internal("Rendering metrics", &e).into_response(),
    }
}
