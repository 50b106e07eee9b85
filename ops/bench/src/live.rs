//! `scribe-bench live`: live transcription against the file path, on the same clips in the same
//! run. A benchmark, not a test: it prints figures next to issue 42's goals and says which are
//! met, but fails only when something does not work.
//!
//! On a `scribe serve` it starts (Whisper base, the default model), it uploads each of the
//! corpus's real English clips (36 of read, spontaneous, non-native and children's speech, each
//! with its human reference) as a direct job (language en) and reads its TXT export: the anchor.
//! Then it streams the same clips, one session each, at real-time pace (100 ms s16le frames at
//! 16 kHz, each sent once its audio has been "spoken", partials on) and measures the finals' WER
//! (both sides scored by the corpus's `score_wer.py`), the final latency (a FinalResult's arrival
//! − when the audio up to its last word's end had been sent; also from the utterance's end, its
//! padding included) and the first-partial latency (an utterance's first PartialResult − when the
//! audio of its start had been sent). Last, the capacity: N = 1, 2, 3, 4, 6, 8, ... sessions at
//! once, each streaming about a minute of the Gettysburg clip looped (each from another point of
//! it, so that utterances do not end in step), with each N's latencies, the slowest session's
//! pace (audio seconds ÷ seconds until its last final) and the finals' WER against direct jobs
//! of the same streams (transcribed once, before the runs); N keeps up when every session ends
//! normally, none says BEHIND_REAL_TIME, and the finals' p95 latency is 2 s or less. The first N
//! that does not keep up ends the search. The same for tiny.en on a second server. A full run
//! starts with `--encoder`'s part (`live_encoder`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::Value;

use crate::asr::{Clip, english_clips, score_per_clip, score_rows_per_file};
use crate::env::{bench_key, in_scratch_dir};
use crate::live_client::{self, SessionLog, TimedFinal};
use crate::server_process::ServerProcess;
use scribe_bench::corpus::real_english_clips;
use scribe_whisper::utterances::UtteranceParams;

/// The clips `--quick` streams, by file-name stem prefix (the others stream the corpus's real
/// English clips, those the README's accuracy table and `--pauses` score).
const QUICK_CLIPS: &[&str] = &["en_jfk", "en_command"];
const CAPACITY_CLIP: &str = "en_synth_gettysburg";
const QUICK_CAPACITY_CLIP: &str = "en_jfk";
/// Sessions at once keep up while the 95th percentile of their finals' latency (from the last
/// word) stays under this.
const KEEP_UP_S: f64 = 2.0;
/// The warm-up: partials, as fast as the socket takes it.
const BURST: live_client::Asks = live_client::Asks { partials: true, revisions: false, burst: true };

#[derive(clap::Args, Debug)]
pub struct BenchLiveArgs {
    /// A smoke test: two short clips, N up to 2 sessions on short audio.
    #[arg(long)]
    pub quick: bool,
    /// Only the encoder's part, in this process: WER and encoder time of finals decoded over
    /// the whole 30 s window and over windows fitted to the utterance (also run first by a
    /// full run).
    #[arg(long, conflicts_with = "quick")]
    pub encoder: bool,
    /// Only the table of utterances decoded together (as sessions share the decoder) against
    /// one after another, in this process (also part of `--encoder`).
    #[arg(long, conflicts_with_all = ["quick", "encoder"])]
    pub together: bool,
    /// Only the tables of finals prompted with the previous final and of finals joined at their
    /// seams, in this process (also part of `--encoder`).
    #[arg(long, conflicts_with_all = ["quick", "encoder", "together"])]
    pub context: bool,
    /// Only the table of utterances' first partials decoded over each encoder window tried, in
    /// this process.
    #[arg(long, conflicts_with_all = ["quick", "encoder", "together", "context"])]
    pub first_partials: bool,
    /// Only the table of the corpus's clips cut at each pause length tried (the pause that ends
    /// an utterance) and decoded as finals, in this process.
    #[arg(long, conflicts_with_all = ["quick", "encoder", "together", "context", "first_partials"])]
    pub pauses: bool,
    /// Only the capacity runs (base, then the small model): no in-process part, no clips.
    #[arg(long, conflicts_with_all = ["quick", "encoder", "together", "context"])]
    pub capacity: bool,
    /// Only the live clips streamed one at a time (latency and WER against direct jobs): no
    /// in-process part, no capacity runs.
    #[arg(long, conflicts_with_all = ["quick", "encoder", "together", "context", "capacity"])]
    pub clips: bool,
    /// The largest number of simultaneous sessions tried.
    #[arg(long, default_value_t = 8)]
    pub max_sessions: usize,
    /// Seconds of audio each session streams in the capacity runs [default: 60; 11 with --quick].
    #[arg(long)]
    pub capacity_seconds: Option<f64>,
    /// The second model of the capacity runs, by name under the models directory.
    #[arg(long, default_value = "whisper-tiny.en")]
    pub small_model: String,
    /// The base server's `--live-partials-model` (e.g. whisper-tiny.en): partials of the live
    /// clips and of base's capacity runs come from it [default: base decodes its own partials].
    #[arg(long)]
    pub partials_model: Option<String>,
    /// The sessions ask for revisions (`outputConfig.revisions`): the live clips' finals as
    /// revised are scored too, with how long after its final each revision came; the capacity
    /// runs' sessions ask too.
    #[arg(long)]
    pub revisions: bool,
    /// Directory holding the models (as for `scribe serve`).
    #[arg(long, env = "SCRIBE_MODELS_DIR")]
    pub models_dir: Option<PathBuf>,
    /// Speech corpus with manifest.tsv and score_wer.py [default: ../shared/corpus].
    #[arg(long, env = "SCRIBE_CORPUS_DIR")]
    pub corpus: Option<PathBuf>,
    /// Directory for the servers' data. Default: the system temp directory.
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
}

pub fn run(args: BenchLiveArgs) -> anyhow::Result<()> {
    if args.max_sessions == 0 {
        bail!("--max-sessions must be positive");
    }
    in_scratch_dir(args.work_dir.clone(), "live", |work| bench(&args, work))
}

/// A clip of the corpus with its audio as PCM.
struct Streamed {
    clip: Clip,
    pcm: Arc<Vec<u8>>,
}

/// The largest N that kept up, and what each N tried looked like.
struct Capacity {
    model: String,
    kept_up: Option<usize>,
    skipped: Option<String>,
    /// Decodings of the capacity runs in all, and those decoded in a batch with another
    /// session's.
    decodings: u64,
    shared: u64,
    /// Revisions asked for, stopped (for a final, or given way to a partial while waiting)
    /// and sent again, when the sessions ask for them.
    revisions: [u64; 3],
}

/// One session's audio in the capacity runs, and its direct job's text.
struct CapacityStream {
    name: String,
    pcm: Arc<Vec<u8>>,
    direct: String,
}

/// What scoring WER takes: the corpus's scorer and its manifest's header.
struct Scoring<'a> {
    python: &'a Path,
    corpus: &'a Path,
    header: &'a str,
}

impl Scoring<'_> {
    /// Pooled WER (%) of each stream's finals (`hyps[i]` for `streams[i]`) against its direct
    /// job's text, and each stream's WER (%) in order.
    fn against_direct(&self, streams: &[CapacityStream], hyps: &[String]) -> anyhow::Result<(f64, Vec<f64>)> {
        let rows: Vec<String> = streams
            .iter()
            .map(|s| format!("{}\ten\t{:.2}\t{}\t\t\tasr\t\t", s.name, live_client::seconds(&s.pcm), s.direct))
            .collect();
        let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
        let hyps: Vec<(String, String)> = streams.iter().zip(hyps).map(|(s, h)| (s.name.clone(), h.clone())).collect();
        let (pooled, per_file) = score_rows_per_file(self.python, self.corpus, self.header, &rows, &hyps)?;
        let each = streams
            .iter()
            .map(|s| per_file.iter().find(|(f, _)| *f == s.name).map(|p| p.1).context("the scorer skipped a stream"))
            .collect::<anyhow::Result<_>>()?;
        Ok((pooled, each))
    }
}

fn bench(args: &BenchLiveArgs, work: &Path) -> anyhow::Result<()> {
    let corpus = args.corpus.clone().unwrap_or_else(|| PathBuf::from("../shared/corpus"));
    let models_dir = args.models_dir.clone().unwrap_or_else(crate::default_models_dir);
    if args.together {
        return crate::live_encoder::run_together(&models_dir, &corpus);
    }
    if args.context {
        return crate::live_encoder::run_context(&models_dir, &corpus, &python());
    }
    if args.first_partials {
        return crate::live_partials::run(&models_dir, &corpus);
    }
    if args.pauses {
        return crate::live_pauses::run(&models_dir, &corpus, &python());
    }
    if !args.quick && !args.capacity && !args.clips {
        crate::live_encoder::run(&models_dir, &corpus, &python())?;
        if args.encoder {
            return Ok(());
        }
        println!();
    }
    let (header, all) = if args.quick { english_clips(&corpus)? } else { real_english_clips(&corpus)? };
    let mut clips = Vec::new();
    for clip in all {
        if !args.quick || QUICK_CLIPS.iter().any(|w| stem(&clip.file).starts_with(w)) {
            let pcm = live_client::pcm(&corpus.join(&clip.file))?;
            clips.push(Streamed { clip, pcm: Arc::new(pcm) });
        }
    }
    if clips.is_empty() {
        bail!("no clip to stream in {}", corpus.join("manifest.tsv").display());
    }
    let capacity_stem = if args.quick { QUICK_CAPACITY_CLIP } else { CAPACITY_CLIP };
    let capacity_pcm = live_client::pcm(&corpus.join(capacity_file(&corpus, capacity_stem)?))?;
    let capacity_s = args.capacity_seconds.unwrap_or(if args.quick { 11.0 } else { 60.0 });
    let levels: Vec<usize> = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32]
        .into_iter()
        .filter(|n| *n <= args.max_sessions && (!args.quick || *n <= 2))
        .collect();
    let audio_s: f64 = clips.iter().map(|c| live_client::seconds(&c.pcm)).sum();
    let python = python();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    eprintln!(
        "{} clips, {audio_s:.1} s of audio; capacity runs of {capacity_s:.0} s each at N in {levels:?}",
        clips.len()
    );

    // Whisper base: the anchor, the live figures, the capacity.
    let base_model = "whisper-base".to_string();
    let data = work.join("data-base");
    let key = bench_key(&data)?;
    let server = start(
        &data,
        &models_dir,
        None,
        args.partials_model.as_deref(),
        args.max_sessions,
        &work.join("serve-base.stderr"),
    )?;
    let base_url = format!("http://{}/api", server.addr);
    let ws_url = format!("ws://{}/api/real-time", server.addr);

    let http = reqwest::Client::new();
    let scoring = Scoring { python: &python, corpus: &corpus, header: &header };
    // One unmeasured session first, so that the live engine's start-up is not billed to a clip.
    runtime.block_on(live_client::stream(&ws_url, &key, Arc::clone(&clips[0].pcm), BURST))?;
    let clip_figures = match args.capacity {
        true => None,
        false => Some(stream_clips(&runtime, &http, &server, &key, &clips, &scoring, args.revisions)?),
    };
    if let (true, Some(figures)) = (args.clips, &clip_figures) {
        println!();
        figures.print(args.partials_model.as_deref().unwrap_or("base"));
        return Ok(());
    }

    // The capacity runs' audio, one stream per session (each from another point of the clip, so
    // that utterances do not end in step), and each transcribed by a direct job: the reference
    // each N's finals are scored against.
    let streams = levels.last().copied().unwrap_or(1);
    let clip_s = live_client::seconds(&capacity_pcm);
    let mut runs = Vec::new();
    for i in 0..streams {
        let pcm = live_client::looped(&capacity_pcm, clip_s * i as f64 / streams as f64, capacity_s);
        let wav = work.join(format!("capacity-{i}.wav"));
        write_wav(&wav, &pcm)?;
        let direct = runtime.block_on(direct_job(&http, &base_url, &key, &wav))?;
        runs.push(CapacityStream { name: format!("capacity-{i}.wav"), pcm: Arc::new(pcm), direct });
    }
    // The capacity runs' sessions: partials at the pace of speech (and revisions when asked).
    let paced = live_client::Asks { partials: true, revisions: args.revisions, burst: false };
    let base_capacity = capacity(&runtime, &ws_url, &key, &base_model, &runs, &scoring, &levels, paced)?;
    drop(server);

    let small_dir = models_dir.join(&args.small_model);
    let small_capacity = if small_dir.join("model.bin").is_file() || small_dir.is_dir() {
        let data = work.join("data-small");
        let key = bench_key(&data)?;
        let server =
            start(&data, &models_dir, Some(&small_dir), None, args.max_sessions, &work.join("serve-small.stderr"))?;
        let ws_url = format!("ws://{}/api/real-time", server.addr);
        runtime.block_on(live_client::stream(&ws_url, &key, Arc::clone(&clips[0].pcm), BURST))?;
        capacity(&runtime, &ws_url, &key, &args.small_model, &runs, &scoring, &levels, paced)?
    } else {
        Capacity {
            model: args.small_model.clone(),
            kept_up: None,
            skipped: Some(format!("no {}", small_dir.display())),
            decodings: 0,
            shared: 0,
            revisions: [0; 3],
        }
    };

    println!();
    if let Some(figures) = &clip_figures {
        figures.print(args.partials_model.as_deref().unwrap_or("base"));
    } else {
        println!("{:<40}{:>10}{:>10}  {:<28}met", "measure", "live", "direct", "goal");
    }
    for c in [&base_capacity, &small_capacity] {
        if c.skipped.is_none() {
            println!(
                "{}'s capacity runs: {} of {} decodings shared the decoder's steps with another session's",
                c.model, c.shared, c.decodings
            );
            let [asked, stopped, sent] = c.revisions;
            if asked > 0 {
                println!("{}'s revisions: {asked} asked for, {stopped} stopped and asked again, {sent} sent", c.model);
            }
        }
    }
    for c in [&base_capacity, &small_capacity] {
        let name = format!("real-time sessions ({})", c.model);
        let value = match (&c.skipped, c.kept_up) {
            (Some(_), _) => "skipped".to_string(),
            (None, Some(n)) => n.to_string(),
            (None, None) => "0".to_string(),
        };
        let (goal, met) = if c.model == base_model {
            let top = levels.last().copied().unwrap_or(0);
            let met = c.kept_up.map(|n| n >= 4);
            // A quick run never tries 4: say so rather than "not met".
            ("at least 4", if top < 4 && c.kept_up == Some(top) { None } else { Some(met.unwrap_or(false)) })
        } else {
            let top = levels.last().copied().unwrap_or(0);
            let met = c.kept_up.map(|n| n >= 8);
            ("at least 8", if top < 8 && c.kept_up == Some(top) { None } else { Some(met.unwrap_or(false)) })
        };
        row(&name, &value, "-", goal, if c.skipped.is_some() { None } else { met });
        if let Some(why) = &c.skipped {
            println!("  ({} skipped: {why})", c.model);
        }
    }
    Ok(())
}

/// The clips' sessions, one after another, against their direct jobs.
struct ClipFigures {
    clips: usize,
    audio_s: f64,
    direct_wall: f64,
    direct_wer: f64,
    live_wer: f64,
    /// Each clip's WER (%) live and direct, where they differ.
    differing: Vec<(String, f64, f64)>,
    finals: usize,
    behind: usize,
    final_latencies: Vec<f64>,
    partial_latencies: Vec<f64>,
    utterance_end_latencies: Vec<f64>,
    end_of_speech_latencies: Vec<f64>,
    /// The finals later than [`SLOW_FINAL_S`] after their last word: clip, final.
    slow: Vec<(String, TimedFinal)>,
    /// The server's decodings by kind, after the clips' sessions (warm-up included).
    decodes: Vec<(String, u64)>,
    /// With `--revisions`: the finals as revised.
    revised: Option<Revised>,
}

/// The clips' finals as revised (`outputConfig.revisions`).
struct Revised {
    /// WER % of the finals as revised.
    wer: f64,
    /// Clips whose reference is cased and punctuated, and the formatted WER % over them of the
    /// finals as revised and as sent.
    cased: usize,
    formatted: f64,
    finals_formatted: f64,
    /// Each revision's arrival after its final's (s).
    delays: Vec<f64>,
}

/// A final this long after its last word is listed with where its utterance ended.
const SLOW_FINAL_S: f64 = 1.0;

/// Transcribes each clip as a direct job, then streams it into a live session at real-time pace.
fn stream_clips(
    runtime: &tokio::runtime::Runtime,
    http: &reqwest::Client,
    server: &ServerProcess,
    key: &str,
    clips: &[Streamed],
    scoring: &Scoring<'_>,
    revisions: bool,
) -> anyhow::Result<ClipFigures> {
    let asks = live_client::Asks { partials: true, revisions, burst: false };
    let base_url = format!("http://{}/api", server.addr);
    let ws_url = format!("ws://{}/api/real-time", server.addr);
    let mut direct_hyps = Vec::new();
    let direct_started = Instant::now();
    for c in clips {
        let text = runtime.block_on(direct_job(http, &base_url, key, &scoring.corpus.join(&c.clip.file)))?;
        eprintln!("  direct {:<50} {text}", c.clip.file);
        direct_hyps.push((c.clip.file.clone(), text));
    }
    let direct_wall = direct_started.elapsed().as_secs_f64();

    let mut live_hyps = Vec::new();
    let (mut final_latencies, mut partial_latencies, mut utterance_end_latencies) =
        (Vec::new(), Vec::new(), Vec::new());
    let (mut end_of_speech_latencies, mut slow) = (Vec::new(), Vec::new());
    // The server's utterances are padded as the engine's defaults say.
    let padding_s = f64::from(UtteranceParams::default().padding_ms) / 1000.0;
    let (mut finals, mut behind) = (0, 0);
    let (mut revised_hyps, mut revision_delays) = (Vec::new(), Vec::new());
    for c in clips {
        let log = runtime.block_on(live_client::stream(&ws_url, key, Arc::clone(&c.pcm), asks))?;
        if !log.ended_normally() {
            bail!(
                "the live session of {} did not end normally: close {:?}, error {:?}",
                c.clip.file,
                log.close,
                log.error()
            );
        }
        let (f, p) = (log.final_latencies(), log.first_partial_latencies());
        eprintln!(
            "  live   {:<50} {}  [{} finals, {} partials, {} utterances with partials; final latency max {:.2} s; \
             first partials after {} s]",
            c.clip.file,
            log.final_text(),
            log.finals(),
            log.partials(),
            p.len(),
            f.iter().copied().fold(0.0, f64::max),
            p.iter().map(|l| format!("{l:.2}")).collect::<Vec<_>>().join(", "),
        );
        finals += log.finals();
        behind += log.behind_warnings();
        final_latencies.extend(f);
        partial_latencies.extend(p);
        utterance_end_latencies.extend(log.final_latencies_from_utterance_end());
        end_of_speech_latencies.extend(log.final_latencies_from_end_of_speech(padding_s));
        slow.extend(
            log.finals_late_after_last_word(SLOW_FINAL_S).into_iter().map(|f| (stem(&c.clip.file).to_string(), f)),
        );
        live_hyps.push((c.clip.file.clone(), log.final_text()));
        if revisions {
            eprintln!("  revised{:<50} {}", "", log.revised_text());
            revised_hyps.push((c.clip.file.clone(), log.revised_text()));
            revision_delays.extend(log.revision_delays());
        }
    }
    let decodes = runtime.block_on(live_decodes(http, &format!("http://{}/metrics", server.addr)))?;
    let plain: Vec<Clip> = clips.iter().map(|c| c.clip.clone()).collect();
    let (python, corpus, header) = (scoring.python, scoring.corpus, scoring.header);
    let (direct_wer, direct_each) = score_per_clip(python, corpus, header, &plain, &direct_hyps)?;
    let (live_wer, live_each) = score_per_clip(python, corpus, header, &plain, &live_hyps)?;
    let revised = if revisions {
        let (wer, _) = score_per_clip(python, corpus, header, &plain, &revised_hyps)?;
        // Scored as written only where the reference is written: cased and punctuated.
        let written_out = |t: &str| {
            t.chars().any(char::is_lowercase) && t.chars().any(char::is_uppercase) && t.contains(['.', ',', '?', '!'])
        };
        let cased = plain.iter().filter(|c| written_out(&c.transcript)).count();
        let written = |hyps: &[(String, String)]| {
            let pairs = plain.iter().zip(hyps).filter(|(c, _)| written_out(&c.transcript));
            let (errors, words) = pairs.fold((0, 0), |(e, w), (clip, (_, text))| {
                let (ce, cw) = crate::live_encoder::formatted_wer(&clip.transcript, text);
                (e + ce, w + cw)
            });
            errors as f64 * 100.0 / words.max(1) as f64
        };
        Some(Revised {
            wer,
            cased,
            formatted: written(&revised_hyps),
            finals_formatted: written(&live_hyps),
            delays: revision_delays,
        })
    } else {
        None
    };
    let differing = plain
        .iter()
        .zip(live_each.iter().zip(&direct_each))
        .filter(|(_, (l, d))| (*l - *d).abs() > 1e-9)
        .map(|(c, (l, d))| (stem(&c.file).to_string(), *l, *d))
        .collect();
    Ok(ClipFigures {
        clips: clips.len(),
        audio_s: clips.iter().map(|c| live_client::seconds(&c.pcm)).sum(),
        direct_wall,
        direct_wer,
        live_wer,
        differing,
        finals,
        behind,
        final_latencies,
        partial_latencies,
        utterance_end_latencies,
        end_of_speech_latencies,
        slow,
        decodes,
        revised,
    })
}

impl ClipFigures {
    /// The table's rows of the clips' sessions, next to the goals, under the table's header.
    fn print(&self, partials_from: &str) {
        let (fp50, fp95) = (percentile(&self.final_latencies, 50.0), percentile(&self.final_latencies, 95.0));
        let (pp50, pp95) = (percentile(&self.partial_latencies, 50.0), percentile(&self.partial_latencies, 95.0));
        println!(
            "live vs direct (the anchor) on {} clips, {:.1} s of audio, Whisper base (partials from {partials_from}); \
             {} finals, {} with partials, {} BEHIND_REAL_TIME warnings; direct jobs took {:.1} s in all",
            self.clips,
            self.audio_s,
            self.finals,
            self.partial_latencies.len(),
            self.behind,
            self.direct_wall,
        );
        println!("{:<40}{:>10}{:>10}  {:<28}met", "measure", "live", "direct", "goal");
        let (live_wer, direct_wer) = (self.live_wer, self.direct_wer);
        let wer_met = live_wer <= direct_wer + 1.0;
        row("WER %", &format!("{live_wer:.2}"), &format!("{direct_wer:.2}"), "within 1 point of direct", Some(wer_met));
        row("final latency p50 s (last word)", &secs(fp50), "-", "<= 0.8", fp50.map(|v| v <= 0.8));
        row("final latency p95 s (last word)", &secs(fp95), "-", "<= 1.0", fp95.map(|v| v <= 1.0));
        let ends = &self.utterance_end_latencies;
        let (up50, up95) = (percentile(ends, 50.0), percentile(ends, 95.0));
        row("final latency p50 s (utterance end)", &secs(up50), "-", "-", None);
        row("final latency p95 s (utterance end)", &secs(up95), "-", "-", None);
        let speech = &self.end_of_speech_latencies;
        let (sp50, sp95) = (percentile(speech, 50.0), percentile(speech, 95.0));
        row("final latency p50 s (VAD end of speech)", &secs(sp50), "-", "<= 0.8", sp50.map(|v| v <= 0.8));
        row("final latency p95 s (VAD end of speech)", &secs(sp95), "-", "<= 1.0", sp95.map(|v| v <= 1.0));
        row("first partial latency p50 s", &secs(pp50), "-", "-", None);
        row("first partial latency p95 s", &secs(pp95), "-", "<= 1.0", pp95.map(|v| v <= 1.0));
        println!(
            "finals over {SLOW_FINAL_S} s after their last word: {} (with where their utterance ended)",
            self.slow.len()
        );
        for (clip, f) in &self.slow {
            println!(
                "  {clip:<44} last word at {:>6.2} s, utterance end at {:>6.2} s: \"{}\"",
                f.last_word_s.unwrap_or_default(),
                f.end_s,
                f.text
            );
        }
        println!("clips whose WER differs, live / direct %: {}", self.differing.len());
        for (clip, live, direct) in &self.differing {
            println!("  {clip:<56}{live:>8.2}{direct:>8.2}");
        }
        if let Some(r) = &self.revised {
            let (p50, p95) = (percentile(&r.delays, 50.0), percentile(&r.delays, 95.0));
            println!(
                "finals as revised (outputConfig.revisions): WER {:.2} % (as sent {:.2} %), formatted WER on the {} \
                 clips with cased, punctuated references {:.2} % (as sent {:.2} %); {} finals sent again, p50 {} s / \
                 p95 {} s after their final",
                r.wer,
                self.live_wer,
                r.cased,
                r.formatted,
                r.finals_formatted,
                r.delays.len(),
                secs(p50),
                secs(p95)
            );
        }
        let n = |kind: &str| decodings_of(&self.decodes, kind);
        println!(
            "decodings of the clips' sessions (warm-up included): {} finals after the pause, {} begun when a pause \
             began ({} became the final, {} wasted: the speaker went on), {} partials ({} stopped for a final)",
            n("final"),
            n("early"),
            n("early_kept"),
            n("early") - n("early_kept"),
            n("partial"),
            n("partial_cancelled")
        );
        if self.revised.is_some() {
            println!(
                "revisions: {} read again ({} stopped for a final or a partial and read again later), {} sent",
                n("revision"),
                n("revision_cancelled"),
                n("revised")
            );
        }
    }
}

fn row(name: &str, live: &str, direct: &str, goal: &str, met: Option<bool>) {
    let met = match met {
        Some(true) => "yes",
        Some(false) => "NO",
        None => "-",
    };
    println!("{name:<40}{live:>10}{direct:>10}  {goal:<28}{met}");
}

fn secs(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.2}"))
}

/// The `p`th percentile (nearest rank) of `values`.
fn percentile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

fn stem(file: &str) -> &str {
    file.rsplit('/').next().unwrap_or(file)
}

/// The manifest path of the clip whose file name starts with `prefix`.
fn capacity_file(corpus: &Path, prefix: &str) -> anyhow::Result<String> {
    let (_, clips) = english_clips(corpus)?;
    clips
        .into_iter()
        .map(|c| c.file)
        .find(|f| stem(f).starts_with(prefix))
        .with_context(|| format!("no clip {prefix}* in the corpus"))
}

/// The Python that runs `score_wer.py` (standard library only): the project venv's, else python3.
fn python() -> PathBuf {
    std::env::var_os("SCRIBE_VENV")
        .map(|v| PathBuf::from(v).join("bin/python"))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("python3"))
}

fn start(
    data: &Path,
    models_dir: &Path,
    model_dir: Option<&Path>,
    partials_model: Option<&str>,
    sessions: usize,
    stderr: &Path,
) -> anyhow::Result<ServerProcess> {
    let mut extra: Vec<String> = [
        "--live-sessions",
        &sessions.to_string(),
        "--live-sessions-per-account",
        &sessions.to_string(),
        "--model-keep-alive",
        "30m",
        "--rate-per-second",
        "1000000",
        "--rate-burst",
        "1000000",
    ]
    .map(String::from)
    .to_vec();
    if let Some(dir) = model_dir {
        extra.push("--model-dir".into());
        extra.push(dir.display().to_string());
    }
    if let Some(name) = partials_model {
        extra.push("--live-partials-model".into());
        extra.push(name.into());
    }
    ServerProcess::start(data, models_dir, &extra, stderr)
}

/// Uploads `file` as a direct job in English, waits for it, and returns its TXT export's words.
async fn direct_job(http: &reqwest::Client, base: &str, key: &str, file: &Path) -> anyhow::Result<String> {
    let bytes = tokio::fs::read(file).await.with_context(|| format!("reading {}", file.display()))?;
    let name = stem(&file.to_string_lossy()).to_string();
    let reply = http
        .post(format!("{base}/jobs/upload-media"))
        .query(&[("apiKey", key), ("language", "en"), ("jobType", "direct"), ("transcriptionType", "transcription")])
        .multipart(reqwest::multipart::Form::new().part("file", reqwest::multipart::Part::bytes(bytes).file_name(name)))
        .send()
        .await?;
    let status = reply.status();
    let body: Value = reply.json().await?;
    let id = match body["jobStatus"]["jobId"].as_str() {
        Some(id) if status.is_success() => id.to_string(),
        _ => bail!("upload of {} refused: HTTP {status}: {body}", file.display()),
    };
    let deadline = Instant::now() + Duration::from_secs(900);
    loop {
        let job: Value = http
            .get(format!("{base}/jobs/status"))
            .query(&[("apiKey", key), ("jobId", &id)])
            .send()
            .await?
            .json()
            .await?;
        match job["jobStatus"]["status"].as_str() {
            Some("DONE") => break,
            Some("ERROR") => bail!("the direct job of {} failed: {job}", file.display()),
            _ if Instant::now() > deadline => bail!("the direct job of {} did not finish: {job}", file.display()),
            _ => tokio::time::sleep(Duration::from_millis(300)).await,
        }
    }
    let txt = http
        .get(format!("{base}/jobs/export-txt"))
        .query(&[("apiKey", key), ("jobId", &id), ("includeTimestamps", "false"), ("includeSpeakers", "false")])
        .send()
        .await?
        .error_for_status()?
        .text()
        .await?;
    Ok(txt.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The server's `scribe_live_decodes_total` counters, by kind.
async fn live_decodes(http: &reqwest::Client, url: &str) -> anyhow::Result<Vec<(String, u64)>> {
    let text = http.get(url).send().await?.error_for_status()?.text().await?;
    Ok(text
        .lines()
        .filter_map(|l| l.strip_prefix("scribe_live_decodes_total{kind=\""))
        .filter_map(|l| {
            let (kind, rest) = l.split_once('"')?;
            Some((kind.to_string(), rest.rsplit(' ').next()?.parse().ok()?))
        })
        .collect())
}

/// The count of `kind` among the server's decodings (0 when it has none of them).
fn decodings_of(decodes: &[(String, u64)], kind: &str) -> u64 {
    decodes.iter().find(|(k, _)| k == kind).map_or(0, |(_, n)| *n)
}

/// Streams `streams[..n]` at once for each N of `levels` until an N falls behind; prints each
/// N's latencies, pace and WER against the direct jobs of the same audio.
#[allow(clippy::too_many_arguments)]
fn capacity(
    runtime: &tokio::runtime::Runtime,
    ws_url: &str,
    key: &str,
    model: &str,
    streams: &[CapacityStream],
    scoring: &Scoring<'_>,
    levels: &[usize],
    asks: live_client::Asks,
) -> anyhow::Result<Capacity> {
    let mut kept_up = None;
    let metrics = ws_url.replace("ws://", "http://").replace("/api/real-time", "/metrics");
    let http = reqwest::Client::new();
    let before = runtime.block_on(live_decodes(&http, &metrics))?;
    for &n in levels {
        let logs: Vec<SessionLog> = runtime.block_on(async {
            let sessions: Vec<_> = streams[..n]
                .iter()
                .map(|stream| {
                    let (ws_url, key, audio) = (ws_url.to_string(), key.to_string(), Arc::clone(&stream.pcm));
                    tokio::spawn(async move { live_client::stream(&ws_url, &key, audio, asks).await })
                })
                .collect();
            let mut logs = Vec::new();
            for s in sessions {
                logs.push(s.await.context("a session task")??);
            }
            Ok::<_, anyhow::Error>(logs)
        })?;
        let latencies: Vec<f64> = logs.iter().flat_map(SessionLog::final_latencies).collect();
        let partials: Vec<f64> = logs.iter().flat_map(SessionLog::first_partial_latencies).collect();
        let worst = latencies.iter().copied().fold(0.0, f64::max);
        let p95 = percentile(&latencies, 95.0);
        let behind: usize = logs.iter().map(SessionLog::behind_warnings).sum();
        let abnormal = logs.iter().filter(|l| !l.ended_normally()).count();
        let finals: usize = logs.iter().map(SessionLog::finals).sum();
        let pace = logs.iter().filter_map(SessionLog::pace).reduce(f64::min);
        let texts: Vec<String> = logs.iter().map(SessionLog::final_text).collect();
        let (wer, each) = scoring.against_direct(&streams[..n], &texts)?;
        let each: Vec<String> = each.iter().map(|w| format!("{w:.1}")).collect();
        let ok = abnormal == 0 && behind == 0 && finals > 0 && p95.is_some_and(|p| p <= KEEP_UP_S);
        println!(
            "  {model}: {n:>2} at once: {finals:>3} finals, final p50 {} p95 {} max {worst:.2} s; first partial p50 {} \
             p95 {} s; slowest pace {}; WER {wer:.2} % against direct jobs (each stream: {}); {behind} \
             BEHIND_REAL_TIME, {abnormal} abnormal: {}",
            secs(percentile(&latencies, 50.0)),
            secs(p95),
            secs(percentile(&partials, 50.0)),
            secs(percentile(&partials, 95.0)),
            pace.map_or("-".into(), |p| format!("{p:.2}")),
            each.join(", "),
            if ok { "keeps up" } else { "falls behind" }
        );
        if !ok {
            break;
        }
        kept_up = Some(n);
    }
    let after = runtime.block_on(live_decodes(&http, &metrics))?;
    let count = |k: &str| decodings_of(&after, k) - decodings_of(&before, k);
    let decodings = ["final", "early", "partial", "revision"].iter().map(|k| count(k)).sum();
    let shared = count("shared");
    let revisions = [count("revision"), count("revision_cancelled"), count("revised")];
    Ok(Capacity { model: model.to_string(), kept_up, skipped: None, decodings, shared, revisions })
}

/// Writes s16le mono PCM at the live door's rate as a WAV file (for a direct job).
fn write_wav(path: &Path, pcm: &[u8]) -> anyhow::Result<()> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: live_client::RATE as u32,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut wav = hound::WavWriter::create(path, spec).with_context(|| format!("cannot create {}", path.display()))?;
    for pair in pcm.chunks_exact(2) {
        wav.write_sample(i16::from_le_bytes([pair[0], pair[1]]))?;
    }
    wav.finalize()?;
    Ok(())
}
