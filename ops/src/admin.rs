//! The operator's offline tools: issue keys, credit balances, replay a job's history for audit,
//! rebuild the read models. Each opens the event store the service uses (`--event-store`, else
//! the data directory's SQLite file, which SQLite allows beside a running server); a running
//! server picks new keys up from the log.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use anyhow::Context;
use scribe_actors::accounts;
use scribe_actors::eventstore::{EventStore, RecordedEvent, StoreLocation};

use crate::config::StoreArgs;

/// Opens the event store the settings name.
async fn open(location: &StoreLocation) -> anyhow::Result<Arc<dyn EventStore>> {
    location.open().await.with_context(|| format!("cannot open the event store {location}"))
}
use scribe_domain::ids::{JobId, UserName, job_stream};
use serde_json::Value;

pub async fn create_key(settings: &StoreArgs, user: &str, initial_credit_cents: u64) -> anyhow::Result<()> {
    let user = UserName::parse(user).map_err(|e| anyhow::anyhow!("{}", e.message))?;
    let (_, location) = settings.resolve()?;
    let store = open(&location).await?;
    let key = accounts::create_key(store.as_ref(), &user, initial_credit_cents).await?;
    if key.opened {
        eprintln!("opened account '{}' with {} cents of credit", key.user_name, initial_credit_cents);
    }
    eprintln!("key id {} for '{}'; callback signing secret: {}", key.key_id, key.user_name, key.webhook_secret);
    println!("{}", key.api_key);
    Ok(())
}

pub async fn credit(settings: &StoreArgs, user: &str, cents: u64) -> anyhow::Result<()> {
    let user = UserName::parse(user).map_err(|e| anyhow::anyhow!("{}", e.message))?;
    let (_, location) = settings.resolve()?;
    let store = open(&location).await?;
    let balance = accounts::credit(store.as_ref(), &user, cents, "credited by the operator").await?;
    println!("balance of '{user}': {balance} cents");
    Ok(())
}

pub async fn replay(settings: &StoreArgs, job_id: &str, json: bool) -> anyhow::Result<()> {
    let job_id = JobId::parse(job_id).map_err(|e| anyhow::anyhow!("{}", e.message))?;
    let (_, location) = settings.resolve()?;
    if !location.may_exist() {
        anyhow::bail!("no event store at {location}");
    }
    let store = open(&location).await?;
    let events = store.read_stream(&job_stream(&job_id), 0).await?;
    if events.is_empty() {
        anyhow::bail!("no job {job_id} in {location}");
    }
    for event in &events {
        if json {
            let line = serde_json::json!({
                "position": event.position,
                "version": event.version,
                "recordedAt": event.recorded_at_ms,
                "type": event.event_type,
                "data": event.data,
            });
            println!("{line}");
        } else {
            println!("{}", describe(event));
        }
    }
    Ok(())
}

/// One audit line: version, UTC time, type, then the event's scalar fields as `key=value`.
fn describe(event: &RecordedEvent) -> String {
    let time = humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(event.recorded_at_ms.max(0) as u64));
    let mut line = format!("#{:<3} {time}  {:<22}", event.version, event.event_type);
    if let Value::Object(fields) = &event.data {
        for (key, value) in fields {
            if key == "type" || key == "v" {
                continue;
            }
            if let Some(text) = scalar(value) {
                line.push_str(&format!(" {key}={text}"));
            } else if let Value::Object(inner) = value {
                for (k, v) in inner {
                    if let Some(text) = scalar(v) {
                        line.push_str(&format!(" {key}.{k}={text}"));
                    }
                }
            }
        }
    }
    line
}

fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(if s.contains(' ') { format!("{s:?}") } else { s.clone() }),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

pub async fn rebuild(settings: &StoreArgs) -> anyhow::Result<()> {
    let (data_dir, location) = settings.resolve()?;
    rebuild_from(&data_dir, &location).await
}

/// Rebuilds the read models in `data_dir` from the store at `location`.
pub async fn rebuild_from(data_dir: &std::path::Path, location: &StoreLocation) -> anyhow::Result<()> {
    let store = open(location).await?;
    let report = scribe_projections::rebuild(store, data_dir).await.context("rebuilding the read models")?;
    println!("rebuilt the read models from {} events (checkpoint {})", report.events, report.position);
    Ok(())
}
