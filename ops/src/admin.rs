//! The operator's offline tools: issue keys, credit balances, replay a job's history for audit,
//! rebuild the read models. Each opens the event store the service uses (`--event-store`, else
//! the data directory's SQLite file, which SQLite allows beside a running server); a running
//! server picks new keys up from the log.

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use anyhow::Context;
use scribe_actors::accounts;
use scribe_eventstore::{EventStore, RecordedEvent, StoreLocation};

use crate::config::StoreArgs;

/// Opens the event store the settings name.
async fn open(location: &StoreLocation) -> anyhow::Result<Arc<dyn EventStore>> {
    location.open().await.with_context(|| format!("cannot open the event store {location}"))
}
use scribe_domain::ids::{JobId, UserName, job_stream};
use scribe_domain::kinds::{JobType, Role, TaskKind};
use scribe_domain::languages::{Language, target_languages};
use serde_json::Value;

pub async fn create_key(
    settings: &StoreArgs,
    user: &str,
    role: Role,
    languages: Vec<String>,
    initial_credit_cents: u64,
) -> anyhow::Result<()> {
    let user = UserName::parse(user).map_err(|e| anyhow::anyhow!("{}", e.message))?;
    if !role.is_staff() && !languages.is_empty() {
        anyhow::bail!("--languages is for staff accounts (--role transcriber or translator)");
    }
    for code in &languages {
        let known = Language::parse(code).is_ok()
            || target_languages(JobType::Perfect).iter().any(|t| t.eq_ignore_ascii_case(code));
        if !known {
            anyhow::bail!("--languages: {code:?} is not a language code of the API");
        }
    }
    let (_, location) = settings.resolve()?;
    let store = open(&location).await?;
    let kind = accounts::AccountKind { role, languages };
    let key = accounts::create_key(store.as_ref(), &user, &kind, initial_credit_cents).await?;
    if key.opened {
        eprintln!("opened account '{}' ({role}) with {} cents of credit", key.user_name, initial_credit_cents);
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
    // Written by hand rather than with `println!`, which panics when the reader has gone away
    // (`scribe replay ID | head`): a closed pipe simply ends the listing.
    let mut out = std::io::stdout().lock();
    for event in &events {
        let line = if json {
            serde_json::json!({
                "position": event.position,
                "version": event.version,
                "recordedAt": event.recorded_at_ms,
                "type": event.event_type,
                "data": event.data,
            })
            .to_string()
        } else {
            describe(event)
        };
        match writeln!(out, "{line}") {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
            Err(e) => return Err(anyhow::Error::new(e).context("writing the job's history")),
        }
    }
    match out.flush() {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(e).context("writing the job's history"))
        }
        _ => Ok(()),
    }
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

/// Prints the overdue tasks, most overdue first, as the server's read models know them (read
/// beside a running server without disturbing it).
pub fn overdue(data_dir: &std::path::Path) -> anyhow::Result<()> {
    let read = scribe_projections::ReadModels::open_read_only(data_dir).context("opening the read models")?;
    let now = scribe_actors::clock::now_ms();
    let mut late = Vec::new();
    for kind in TaskKind::ALL {
        late.extend(read.open_tasks(*kind)?.into_iter().filter(|t| t.deadline_ms <= now));
    }
    late.sort_by_key(|t| (t.deadline_ms, t.task_id.clone()));
    if late.is_empty() {
        println!("no overdue tasks");
    }
    for t in late {
        let due = humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_millis(t.deadline_ms));
        let late_by = humantime::format_duration(Duration::from_secs((now - t.deadline_ms) / 1000));
        let holder = t.holder_at(now).map_or("unclaimed".to_owned(), |h| format!("held by {h}"));
        println!(
            "{}  {:<10} {:<6} due {due} (late by {late_by})  {}  job {} of {}, {} s",
            t.task_id,
            t.kind,
            t.work_language(),
            holder,
            t.job_id,
            t.owner,
            t.nr_audio_seconds
        );
    }
    Ok(())
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
