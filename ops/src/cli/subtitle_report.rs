//! `scribe subtitle-report JOBID`: how good a job's subtitles are, in figures. Reads the job's
//! transcript from the data directory (`<data_dir>/transcripts/<jobId>.json`), or any transcript
//! in the export-json shape with `--file`, cuts it into cues exactly as the SRT/VTT exports do
//! with the same parameters, and prints the domain's quality report: cues, violations of each
//! hard limit (goal 0), share of cues read at most 20 characters per second (goal ≥ 95 %), and
//! the median and minimum cue durations.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use scribe_domain::export::SubtitleParams;
use scribe_domain::ids::JobId;
use scribe_domain::subtitles::{report, segment};
use scribe_domain::transcript::Transcript;

#[derive(clap::Args, Debug, Clone)]
pub struct SubtitleReportArgs {
    /// The job whose transcript to measure (it must have finished: `DONE`).
    #[arg(required_unless_present = "file", conflicts_with = "file")]
    pub job_id: Option<String>,
    /// Measure this transcript file instead (the export-json document, e.g. saved from
    /// /jobs/export-json).
    #[arg(long)]
    pub file: Option<PathBuf>,
    #[arg(long, env = "SCRIBE_DATA_DIR", default_value = "data")]
    pub data_dir: PathBuf,
    /// Characters per row, 30 to 45 (as the SRT/VTT exports' maxCharsPerRow).
    #[arg(long, default_value_t = 42)]
    pub max_chars_per_row: i64,
    /// Rows per cue, 1 or 2.
    #[arg(long, default_value_t = 2)]
    pub max_number_of_rows: i64,
    /// Seconds on screen per row, 1 to 10.
    #[arg(long, default_value_t = 2.0)]
    pub max_screen_time_per_row_seconds: f64,
}

pub fn run(args: SubtitleReportArgs) -> anyhow::Result<()> {
    let params = SubtitleParams::new(
        Some(args.max_chars_per_row),
        Some(args.max_number_of_rows),
        Some(args.max_screen_time_per_row_seconds),
    )
    .map_err(|e| anyhow::anyhow!("--{}: {}", flag(&e.field), e.message))?;
    let path = match (&args.file, &args.job_id) {
        (Some(file), _) => file.clone(),
        (None, Some(job_id)) => transcript_path(&args.data_dir, job_id)?,
        (None, None) => bail!("give a job id or --file"),
    };
    let transcript = read_transcript(&path)?;
    let words = transcript.timed_words();
    let cues = segment(&words, &params);
    println!("transcript                   {}", path.display());
    println!(
        "parameters                   maxCharsPerRow {}, maxNumberOfRows {}, maxScreenTimePerRowSeconds {}",
        params.max_chars_per_row(),
        params.max_rows(),
        params.max_screen_time_per_row()
    );
    println!("words                        {}", words.len());
    println!("{}", report(&cues, &params));
    Ok(())
}

/// `<data_dir>/transcripts/<jobId>.json`, with the job id checked so it cannot leave the directory.
fn transcript_path(data_dir: &Path, job_id: &str) -> anyhow::Result<PathBuf> {
    let job_id = JobId::parse(job_id.trim()).map_err(|e| anyhow::anyhow!("{}", e.message))?;
    Ok(data_dir.join("transcripts").join(format!("{job_id}.json")))
}

fn read_transcript(path: &Path) -> anyhow::Result<Transcript> {
    let bytes = std::fs::read(path).with_context(|| {
        format!(
            "reading {} (the job must exist in this data directory and be DONE; use --data-dir or --file)",
            path.display()
        )
    })?;
    serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not a transcript in the export-json shape", path.display()))
}

/// `maxCharsPerRow` → `max-chars-per-row`, the flag a user typed.
fn flag(field: &str) -> String {
    field
        .chars()
        .flat_map(|c| if c.is_ascii_uppercase() { vec!['-', c.to_ascii_lowercase()] } else { vec![c] })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_ids_cannot_escape_the_data_directory() {
        assert!(transcript_path(Path::new("data"), "../etc/passwd").is_err());
        assert_eq!(transcript_path(Path::new("data"), "abc-1").unwrap(), Path::new("data/transcripts/abc-1.json"));
    }

    #[test]
    fn errors_name_the_flag() {
        assert_eq!(flag("maxScreenTimePerRowSeconds"), "max-screen-time-per-row-seconds");
        let args = SubtitleReportArgs {
            job_id: Some("x".into()),
            file: None,
            data_dir: PathBuf::from("data"),
            max_chars_per_row: 50,
            max_number_of_rows: 2,
            max_screen_time_per_row_seconds: 2.0,
        };
        let err = run(args).unwrap_err().to_string();
        assert!(err.starts_with("--max-chars-per-row: maxCharsPerRow must be between 30 and 45"), "{err}");
    }

    #[test]
    fn a_missing_transcript_says_where_it_looked() {
        let dir = tempfile::tempdir().unwrap();
        let args = SubtitleReportArgs {
            job_id: Some("nope".into()),
            file: None,
            data_dir: dir.path().to_owned(),
            max_chars_per_row: 42,
            max_number_of_rows: 2,
            max_screen_time_per_row_seconds: 2.0,
        };
        let err = format!("{:#}", run(args).unwrap_err());
        assert!(err.contains("transcripts/nope.json") && err.contains("DONE"), "{err}");
    }
}
