//! `scribe-bench upload`: how the server's memory and speed hold up while a large upload streams
//! to disk. Writes a WAV file of N GB of noise (real bytes, not a sparse file: the server checks
//! the content), then, for each round, starts `scribe serve` (this same binary) on a fresh data
//! directory, has `dd` write the file's bytes to the same disk, then uploads the file through
//! `POST /api/jobs/upload-media` as a streamed multipart body while sampling the server's resident
//! memory from `/proc/<pid>/status`, and stops the server. Prints each round, the peak resident memory
//! (goal: under 150 MB) and the ratio of the median upload's throughput to the fastest dd's
//! (goal: at least half). The server runs with `--model-keep-alive 1s`, so the figure is that of a server with no
//! transcription to do; the speech model's own resident size is printed beside it.
//!
//! Fairness on a virtual machine: writing through the page cache into memory the guest has not
//! touched lately is several times slower than into memory it has just freed (the host must
//! fault each page in, and the balloon driver hands idle free pages back to the host within
//! seconds): dd after an idle pause measured 200-400 MB/s here, right after deleting a large file
//! 1.3 GB/s. dd is given the fast case: an untimed dd of the same size, deleted, right before the
//! timed one. (The server writes media with direct I/O, so it does not depend on this.)

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::env::{bench_key, in_scratch_dir};
use crate::server_process::ServerProcess;

/// Goals of the design document.
const RSS_GOAL_MB: f64 = 150.0;
const THROUGHPUT_GOAL: f64 = 0.5;
/// Write and read block size, for the file and for dd.
const BLOCK: usize = 4 << 20;
/// 16 kHz mono 16-bit PCM.
const SAMPLE_RATE: u32 = 16_000;

#[derive(clap::Args, Debug)]
pub struct BenchUploadArgs {
    /// Size of the uploaded file in GB (10^9 bytes).
    #[arg(long, default_value_t = 2.0)]
    pub size_gb: f64,
    /// Rounds of dd and upload.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Directory for the file, the server's data and dd's output (all on one disk). Default: the
    /// system temp directory.
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
    /// Directory holding the models the server loads (as for `scribe serve`).
    #[arg(long, env = "SCRIBE_MODELS_DIR")]
    pub models_dir: Option<PathBuf>,
    /// How often the server's memory is sampled, in milliseconds.
    #[arg(long, default_value_t = 20)]
    pub sample_ms: u64,
}

pub fn run(args: BenchUploadArgs) -> anyhow::Result<()> {
    if !args.size_gb.is_finite() || args.size_gb <= 0.0 {
        bail!("--size-gb must be positive");
    }
    if args.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    in_scratch_dir(args.work_dir.clone(), "upload", |work| bench(&args, work))
}

/// What one round measured.
struct Round {
    upload: Duration,
    dd: Duration,
    /// Resident memory of the idle server before the upload, and its peak during it, in kB.
    baseline_kb: u64,
    peak_kb: u64,
    /// What the speech model added while it was loaded, in kB.
    model_kb: u64,
}

fn bench(args: &BenchUploadArgs, work: &Path) -> anyhow::Result<()> {
    let pcm_bytes = ((args.size_gb * 1e9) as u64 / 2) * 2;
    let media = work.join("bench.wav");
    eprintln!("writing {} of WAV noise to {} ...", human(pcm_bytes + 44), media.display());
    write_wav(&media, pcm_bytes)?;
    let total = std::fs::metadata(&media)?.len();
    let models_dir = args.models_dir.clone().unwrap_or_else(crate::default_models_dir);

    let mut rounds = Vec::with_capacity(args.rounds);
    for index in 1..=args.rounds {
        let round = round(args, work, &media, &models_dir)?;
        println!(
            "round {index}: upload {:.2} s ({:.0} MB/s), dd {:.2} s ({:.0} MB/s); server resident {:.0} MB idle, peak {:.0} MB",
            round.upload.as_secs_f64(),
            mbs(total, round.upload),
            round.dd.as_secs_f64(),
            mbs(total, round.dd),
            mb(round.baseline_kb),
            mb(round.peak_kb),
        );
        rounds.push(round);
    }

    // Conservative: the typical upload against dd at its best.
    let mut uploads: Vec<f64> = rounds.iter().map(|r| mbs(total, r.upload)).collect();
    uploads.sort_by(f64::total_cmp);
    let upload_mbs = uploads[uploads.len() / 2];
    let dd_mbs = rounds.iter().map(|r| mbs(total, r.dd)).fold(0.0, f64::max);
    let ratio = upload_mbs / dd_mbs;
    let peak_mb = mb(rounds.iter().map(|r| r.peak_kb).max().unwrap_or(0));
    let model_mb = mb(rounds.iter().map(|r| r.model_kb).max().unwrap_or(0));
    println!("upload of {} (multipart over loopback, fsynced), dd bs=4M conv=fsync of the same file", human(total));
    println!(
        "peak RSS {peak_mb:.0} MB (goal < {RSS_GOAL_MB:.0} MB): {}; the speech model adds {model_mb:.0} MB while a transcription runs",
        if peak_mb < RSS_GOAL_MB { "met" } else { "NOT met" },
    );
    println!(
        "throughput vs dd {ratio:.2}: median upload {upload_mbs:.0} MB/s against dd's fastest round {dd_mbs:.0} MB/s (goal >= {THROUGHPUT_GOAL}): {}",
        if ratio >= THROUGHPUT_GOAL { "met" } else { "NOT met" }
    );
    Ok(())
}

/// One fresh server, one timed dd (after its warm-up), then one timed upload.
fn round(args: &BenchUploadArgs, work: &Path, media: &Path, models_dir: &Path) -> anyhow::Result<Round> {
    let data_dir = work.join("data");
    // A 2 GB WAV is over 17 hours of audio: the account needs the credit to pay for it.
    let key = bench_key(&data_dir)?;
    // The server releases the speech model after --model-keep-alive with nothing to transcribe
    // (it is stopped right after the upload, before a perfect job's draft transcription starts).
    let keep_alive = ["--model-keep-alive".to_string(), "1s".to_string()];
    let mut server = ServerProcess::start(&data_dir, models_dir, &keep_alive, &work.join("serve.stderr"))?;
    let with_model = rss_kb(server.pid()).context("reading the server's memory")?;
    std::thread::sleep(Duration::from_secs(3));
    let baseline_kb = rss_kb(server.pid()).context("reading the server's memory")?;

    let dd_out = work.join("dd.out");
    dd(media, &dd_out)?; // warm-up, see the module documentation
    std::fs::remove_file(&dd_out).ok();
    let dd_time = dd(media, &dd_out)?;
    std::fs::remove_file(&dd_out).ok();

    let peak = Arc::new(AtomicU64::new(baseline_kb));
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, stop, pid, every) =
            (peak.clone(), stop.clone(), server.pid(), Duration::from_millis(args.sample_ms.max(1)));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if let Some(kb) = rss_kb(pid) {
                    peak.fetch_max(kb, Ordering::Relaxed);
                }
                std::thread::sleep(every);
            }
        })
    };
    let started = Instant::now();
    let answer = upload(&server.addr, &key, media);
    let upload = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    let _ = sampler.join();
    server.kill();
    let (status, body) = answer?;
    if status != 200 {
        bail!("the upload answered {status}: {body}");
    }
    std::fs::remove_dir_all(&data_dir).ok();
    Ok(Round {
        upload,
        dd: dd_time,
        baseline_kb,
        peak_kb: peak.load(Ordering::Relaxed),
        model_kb: with_model.saturating_sub(baseline_kb),
    })
}

/// A 16 kHz mono 16-bit WAV with `pcm_bytes` of low-level noise (xorshift), written in blocks.
fn write_wav(path: &Path, pcm_bytes: u64) -> anyhow::Result<()> {
    if pcm_bytes > u64::from(u32::MAX) - 36 {
        // RIFF sizes are 32-bit; past 4 GB the header says "unknown" (0xFFFFFFFF), which
        // readers treat as "until the end of the file".
        eprintln!("note: over 4 GB, the WAV header's sizes are set to 0xFFFFFFFF");
    }
    let riff_size = u32::try_from(pcm_bytes + 36).unwrap_or(u32::MAX);
    let data_size = u32::try_from(pcm_bytes).unwrap_or(u32::MAX);
    let mut file = std::io::BufWriter::with_capacity(
        BLOCK,
        File::create(path).with_context(|| format!("cannot create {}", path.display()))?,
    );
    let mut header = Vec::with_capacity(44);
    header.extend_from_slice(b"RIFF");
    header.extend_from_slice(&riff_size.to_le_bytes());
    header.extend_from_slice(b"WAVEfmt ");
    header.extend_from_slice(&16u32.to_le_bytes());
    header.extend_from_slice(&1u16.to_le_bytes()); // PCM
    header.extend_from_slice(&1u16.to_le_bytes()); // mono
    header.extend_from_slice(&SAMPLE_RATE.to_le_bytes());
    header.extend_from_slice(&(SAMPLE_RATE * 2).to_le_bytes());
    header.extend_from_slice(&2u16.to_le_bytes());
    header.extend_from_slice(&16u16.to_le_bytes());
    header.extend_from_slice(b"data");
    header.extend_from_slice(&data_size.to_le_bytes());
    file.write_all(&header)?;

    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut block = vec![0u8; BLOCK];
    let mut left = pcm_bytes;
    while left > 0 {
        let n = left.min(BLOCK as u64) as usize;
        for sample in block[..n].chunks_exact_mut(8) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Four quiet samples (about -40 dBFS) per draw: noise, but valid, non-zero audio.
            let quiet = state & 0x00FF_00FF_00FF_00FF;
            sample.copy_from_slice(&quiet.to_le_bytes());
        }
        file.write_all(&block[..n])?;
        left -= n as u64;
    }
    file.flush()?;
    file.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    Ok(())
}

/// Streams `media` as the multipart part `file`; returns the status and body.
fn upload(addr: &str, key: &str, media: &Path) -> anyhow::Result<(u16, String)> {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    runtime.block_on(async {
        let file = tokio::fs::File::open(media).await?;
        let len = file.metadata().await?.len();
        let stream = tokio_util::io::ReaderStream::with_capacity(file, 1 << 20);
        let part = reqwest::multipart::Part::stream_with_length(reqwest::Body::wrap_stream(stream), len)
            .file_name("bench.wav")
            .mime_str("audio/wav")?;
        let form = reqwest::multipart::Form::new().part("file", part);
        let url = reqwest::Url::parse_with_params(
            &format!("http://{addr}/api/jobs/upload-media"),
            [("apiKey", key), ("jobType", "perfect")],
        )?;
        let response = reqwest::Client::new().post(url).multipart(form).send().await.context("uploading")?;
        let status = response.status().as_u16();
        Ok((status, response.text().await.unwrap_or_default()))
    })
}

/// Runs `dd if=src of=dst bs=4M conv=fsync` and returns its wall time.
fn dd(src: &Path, dst: &Path) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let status = Command::new("dd")
        .arg(format!("if={}", src.display()))
        .arg(format!("of={}", dst.display()))
        .args(["bs=4M", "conv=fsync", "status=none"])
        .status()
        .context("running dd")?;
    if !status.success() {
        bail!("dd failed: {status}");
    }
    Ok(started.elapsed())
}

/// A field of `/proc/<pid>/status`, in kB.
fn proc_status_kb(pid: u32, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    line[field.len()..].trim().trim_end_matches("kB").trim().parse().ok()
}

fn rss_kb(pid: u32) -> Option<u64> {
    proc_status_kb(pid, "VmRSS:")
}

fn mbs(bytes: u64, time: Duration) -> f64 {
    bytes as f64 / 1e6 / time.as_secs_f64()
}

fn mb(kb: u64) -> f64 {
    kb as f64 / 1024.0
}

fn human(bytes: u64) -> String {
    format!("{:.2} GB", bytes as f64 / 1e9)
}
