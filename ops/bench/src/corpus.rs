//! The speech corpus's manifest (`manifest.tsv`): which clips are English speech to transcribe,
//! their references, and the rows a scoring manifest repeats.

use std::path::Path;

use anyhow::Context;

/// One manifest row of English speech.
#[derive(Clone, Debug)]
pub struct Clip {
    /// The manifest path, e.g. `audio/en_jfk.wav`.
    pub file: String,
    pub duration_s: f64,
    /// The reference transcript.
    pub transcript: String,
    /// The manifest row as written, for a scoring manifest.
    pub line: String,
    /// A long-form recording (task `longform`: the 13-minute reading, Gettysburg), not a clip.
    pub long_form: bool,
    /// The manifest's `sidecars`: a file beside the clip (speaker turns, the takes of a reading).
    pub sidecar: Option<String>,
}

impl Clip {
    /// Real speech (not the synthetic `en_synth_*` clips).
    pub fn is_real(&self) -> bool {
        !Path::new(&self.file).file_name().is_some_and(|n| n.to_string_lossy().starts_with("en_synth_"))
    }
}

/// The English speech clips of the corpus, long-form ones included (not the format variants of
/// jfk), in manifest order, with the manifest's header line.
pub fn english_clips(corpus: &Path) -> anyhow::Result<(String, Vec<Clip>)> {
    let (header, clips) = speech_clips(corpus)?;
    Ok((header, clips.into_iter().filter(|(l, _)| l == "en").map(|(_, c)| c).collect()))
}

/// The corpus's speech clips in languages other than English, by language in manifest order.
pub fn other_languages(corpus: &Path) -> anyhow::Result<Vec<(String, Vec<Clip>)>> {
    let mut out: Vec<(String, Vec<Clip>)> = Vec::new();
    for (language, clip) in speech_clips(corpus)?.1.into_iter().filter(|(l, _)| l != "en") {
        match out.iter_mut().find(|(l, _)| *l == language) {
            Some((_, clips)) => clips.push(clip),
            None => out.push((language, vec![clip])),
        }
    }
    Ok(out)
}

/// The corpus's speech clips with a reference (not the format variants), each with its
/// language, in manifest order, with the manifest's header line.
fn speech_clips(corpus: &Path) -> anyhow::Result<(String, Vec<(String, Clip)>)> {
    let manifest = corpus.join("manifest.tsv");
    let text = std::fs::read_to_string(&manifest)
        .with_context(|| format!("cannot read {} (pass --corpus or set SCRIBE_CORPUS_DIR)", manifest.display()))?;
    let mut lines = text.lines();
    let header = lines.next().context("empty manifest")?.to_string();
    let cols: Vec<&str> = header.split('\t').collect();
    let col =
        |name: &str| cols.iter().position(|c| *c == name).with_context(|| format!("manifest has no `{name}` column"));
    let (file, lang, dur, task, transcript) =
        (col("file")?, col("language")?, col("duration_s")?, col("task")?, col("transcript")?);
    let sidecars = col("sidecars").ok();
    let mut clips = Vec::new();
    for line in lines {
        let f: Vec<&str> = line.split('\t').collect();
        let field = |i: usize| f.get(i).copied().unwrap_or_default();
        // "asr", "asr+longform+...": speech to transcribe; the variants repeat jfk in other formats.
        let is_asr = field(task).split('+').any(|t| t == "asr");
        if !is_asr || field(transcript).is_empty() || field(file).starts_with("audio/variants/") {
            continue;
        }
        clips.push((
            field(lang).to_string(),
            Clip {
                file: field(file).to_string(),
                duration_s: field(dur).parse().unwrap_or(0.0),
                transcript: field(transcript).to_string(),
                line: line.to_string(),
                long_form: field(task).split('+').any(|t| t == "longform"),
                sidecar: sidecars.and_then(|i| f.get(i)).filter(|s| !s.is_empty()).map(|s| s.to_string()),
            },
        ));
    }
    Ok((header, clips))
}

/// The real English clips (not `en_synth_*`, not the variants, not the long-form recordings):
/// what long recordings are made of.
pub fn real_english_clips(corpus: &Path) -> anyhow::Result<(String, Vec<Clip>)> {
    let (header, clips) = english_clips(corpus)?;
    Ok((header, clips.into_iter().filter(|c| c.is_real() && !c.long_form).collect()))
}

/// A manifest row under `header` for a file the manifest does not list (a long recording built
/// from its clips): the named columns filled, the others empty.
pub fn manifest_row(header: &str, file: &str, duration_s: f64, transcript: &str) -> String {
    header
        .split('\t')
        .map(|col| match col {
            "file" => file.to_string(),
            "language" => "en".to_string(),
            "duration_s" => format!("{duration_s:.3}"),
            "transcript" => transcript.replace(['\t', '\n'], " "),
            "task" => "asr".to_string(),
            _ => String::new(),
        })
        .collect::<Vec<_>>()
        .join("\t")
}
