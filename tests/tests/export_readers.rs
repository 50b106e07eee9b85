//! Our subtitle files read back by independent readers: SRT through the PyPI `srt` package, WebVTT
//! through `webvtt-py`, both through `ffmpeg -i x.srt y.ass`, EBU-STL through ttconv (`tt convert`)
//! back to SRT, and the JSON document through Python's `json`. Texts and times must come back as
//! we segmented them. The transcript is written by hand (JFK's corpus clip with plausible word
//! times, then a French speaker with accents), so no speech engine is needed.
//!
//! Needs the tools venv (`$SCRIBE_VENV`, default `<repo>/.venv`) and ffmpeg: `bash ops/setup.sh`.

use std::path::{Path, PathBuf};
use std::process::Command;

use scribe_domain::export::json::render_json;
use scribe_domain::export::params::SubtitleParams;
use scribe_domain::export::srt::render_srt;
use scribe_domain::export::stl::{StlDate, StlInfo, render_stl};
use scribe_domain::export::vtt::{VTT_HEADER, render_vtt};
use scribe_domain::subtitles::{Cue, segment};
use scribe_domain::transcript::{Highlight, Segment, Speaker, Transcript, Word};
use serde_json::Value;

/// Reads a subtitle or JSON file with a Python package and prints what it understood as JSON.
const READER: &str = r#"
import json, sys
mode, path = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8").read() if mode != "json" else None
if mode == "srt":
    import srt
    cues = [{"start": s.start.total_seconds(), "end": s.end.total_seconds(), "text": s.content}
            for s in srt.parse(text, ignore_errors=False)]
    print(json.dumps(cues))
elif mode == "vtt":
    import webvtt
    def secs(t):
        h, m, s = t.split(":")
        return int(h) * 3600 + int(m) * 60 + float(s)
    v = webvtt.read(path)
    print(json.dumps([{"start": secs(c.start), "end": secs(c.end), "text": c.text} for c in v.captions]))
elif mode == "json":
    doc = json.load(open(path, encoding="utf-8"))
    print(json.dumps(doc))
"#;

fn repo() -> PathBuf {
    Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn venv_bin(tool: &str) -> PathBuf {
    let venv = std::env::var_os("SCRIBE_VENV").map(PathBuf::from).unwrap_or_else(|| repo().join(".venv"));
    let path = venv.join("bin").join(tool);
    assert!(
        path.exists(),
        "{} is missing: run `bash ops/setup.sh` (or set SCRIBE_VENV to the tools venv)",
        path.display()
    );
    path
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e} (is it installed? `bash ops/setup.sh`)"));
    assert!(out.status.success(), "{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Cues as a Python reader reported them: (start, end, text).
fn read_with_python(mode: &str, file: &Path) -> Vec<(f64, f64, String)> {
    let out = run(Command::new(venv_bin("python")).arg("-c").arg(READER).arg(mode).arg(file));
    let cues: Vec<Value> = serde_json::from_str(&out).unwrap();
    cues.iter()
        .map(|c| (c["start"].as_f64().unwrap(), c["end"].as_f64().unwrap(), c["text"].as_str().unwrap().to_owned()))
        .collect()
}

/// Asserts the reader saw our cues: same count, same rows, times within `tolerance` seconds.
fn assert_same(reader: &str, got: &[(f64, f64, String)], want: &[Cue], tolerance: f64) {
    assert_eq!(got.len(), want.len(), "{reader}: cue count");
    for (k, ((start, end, text), cue)) in got.iter().zip(want).enumerate() {
        assert_eq!(text, &cue.lines.join("\n"), "{reader}: text of cue {k}");
        assert!((start - cue.start).abs() <= tolerance, "{reader}: cue {k} starts {start}, we wrote {}", cue.start);
        assert!((end - cue.end).abs() <= tolerance, "{reader}: cue {k} ends {end}, we wrote {}", cue.end);
    }
}

/// ffmpeg's ASS conversion: (start, end, text) of every Dialogue line, `\N` read as a new row.
fn through_ffmpeg(input: &Path) -> Vec<(f64, f64, String)> {
    let ass = input.with_extension(format!("{}.ass", input.extension().unwrap().to_str().unwrap()));
    run(Command::new("ffmpeg").args(["-v", "error", "-y", "-i"]).arg(input).arg(&ass));
    let clock = |t: &str| {
        let p: Vec<f64> = t.split(':').map(|x| x.parse().unwrap()).collect();
        p[0] * 3600.0 + p[1] * 60.0 + p[2]
    };
    std::fs::read_to_string(&ass)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("Dialogue: "))
        .map(|l| {
            let f: Vec<&str> = l.splitn(10, ',').collect();
            (clock(f[1]), clock(f[2]), f[9].replace("\\N", "\n"))
        })
        .collect()
}

fn word(start: f64, end: f64, text: &str) -> Word {
    Word { start, end, text: text.into(), conf: 0.93, pristine: true }
}

/// JFK's sentence from corpus/audio/en_jfk.wav with plausible word times, then a French reply.
fn transcript() -> Transcript {
    let jfk = [
        (0.30, 0.52, "And"),
        (0.52, 0.80, "so"),
        (0.80, 1.10, "my"),
        (1.10, 1.50, "fellow"),
        (1.50, 2.30, "Americans,"),
        (3.30, 3.70, "ask"),
        (3.70, 4.30, "not"),
        (5.40, 5.70, "what"),
        (5.70, 5.95, "your"),
        (5.95, 6.45, "country"),
        (6.45, 6.75, "can"),
        (6.75, 7.05, "do"),
        (7.05, 7.30, "for"),
        (7.30, 7.80, "you,"),
        (8.20, 8.50, "ask"),
        (8.50, 8.75, "what"),
        (8.75, 8.95, "you"),
        (8.95, 9.20, "can"),
        (9.20, 9.45, "do"),
        (9.45, 9.70, "for"),
        (9.70, 9.95, "your"),
        (9.95, 10.55, "country."),
    ];
    let french = "Ça, c'est déjà très célèbre à Paris. Où est l'hôtel près de la fenêtre, garçon ? \
                  Noël arrive, même pour les naïfs qui aiment l'été et les crêpes à Besançon.";
    let mut t = 11.4;
    let fr: Vec<Word> = french
        .split(' ')
        .map(|w| {
            let d = 0.12 + 0.06 * w.chars().count() as f64;
            let x = word(t, t + d, w);
            t += d + if w.ends_with([',', '.', '?']) { 0.35 } else { 0.05 };
            x
        })
        .collect();
    Transcript {
        id: "job-1".into(),
        record_id: "job-1".into(),
        filename: "en_jfk.wav".into(),
        start_time_offset: 0.0,
        speakers: vec![
            Speaker { spkid: "S1".into(), name: "Speaker 1".into() },
            Speaker { spkid: "S2".into(), name: "Speaker 2".into() },
        ],
        segments: vec![
            Segment { speaker: "S1".into(), words: jfk.iter().map(|&(s, e, w)| word(s, e, w)).collect() },
            Segment { speaker: "S2".into(), words: fr },
            // Dense accents: two rows of these need more than one TTI block's 112 bytes.
            Segment {
                speaker: "S1".into(),
                words: (0..12).map(|k| word(t + 1.0 + 0.5 * k as f64, t + 1.45 + 0.5 * k as f64, "dégénéré")).collect(),
            },
        ],
        highlights: vec![Highlight { start: 3.3, end: 4.3, text: "ask not".into() }],
    }
}

fn profiles() -> Vec<(&'static str, SubtitleParams)> {
    vec![
        ("default", SubtitleParams::default()),
        ("narrow", SubtitleParams::new(Some(30), Some(1), Some(1.0)).unwrap()),
        ("wide", SubtitleParams::new(Some(45), Some(2), Some(10.0)).unwrap()),
    ]
}

#[test]
fn srt_reads_back_through_srt_package_and_ffmpeg() {
    let dir = tempfile::tempdir().unwrap();
    let t = transcript();
    for (name, p) in profiles() {
        let cues = segment(&t.timed_words(), &p);
        let file = dir.path().join(format!("{name}.srt"));
        std::fs::write(&file, render_srt(&t, &p)).unwrap();
        assert_same(&format!("srt package, {name}"), &read_with_python("srt", &file), &cues, 0.0006);
        assert_same(&format!("ffmpeg srt→ass, {name}"), &through_ffmpeg(&file), &cues, 0.0106);
    }
}

#[test]
fn vtt_reads_back_through_webvtt_py_and_ffmpeg() {
    let dir = tempfile::tempdir().unwrap();
    let t = transcript();
    for (name, p) in profiles() {
        let cues = segment(&t.timed_words(), &p);
        let file = dir.path().join(format!("{name}.vtt"));
        let vtt = render_vtt(&t, &p);
        assert_eq!(vtt.lines().next(), Some(VTT_HEADER));
        std::fs::write(&file, vtt).unwrap();
        assert_same(&format!("webvtt-py, {name}"), &read_with_python("vtt", &file), &cues, 0.0006);
        assert_same(&format!("ffmpeg vtt→ass, {name}"), &through_ffmpeg(&file), &cues, 0.0106);
    }
}

#[test]
fn stl_reads_back_through_ttconv() {
    let dir = tempfile::tempdir().unwrap();
    let t = transcript();
    let info = StlInfo {
        programme_title: &t.filename,
        language: "en-us",
        created: StlDate { year: 2026, month: 11, day: 22 },
        revised: StlDate { year: 2026, month: 11, day: 22 },
    };
    for (rows, secs) in [(None, None), (Some(1), Some(1.0)), (Some(2), Some(10.0))] {
        let p = SubtitleParams::stl(rows, secs).unwrap();
        let cues = segment(&t.timed_words(), &p);
        let stl = dir.path().join("x.stl");
        let srt = dir.path().join("x.srt");
        let bytes = render_stl(&t, &p, &info).unwrap();
        if rows != Some(1) {
            let ebns = bytes[1024..].chunks(128).map(|b| b[3]);
            assert!(ebns.clone().any(|e| e == 0x00), "no extension block to read back");
        }
        std::fs::write(&stl, bytes).unwrap();
        run(Command::new(venv_bin("tt")).args(["convert", "-i"]).arg(&stl).arg("-o").arg(&srt));
        // Frames are 40 ms: times come back within half a frame (plus the reader's millisecond).
        assert_same(
            &format!("ttconv stl→srt, rows {rows:?}, {secs:?} s"),
            &read_with_python("srt", &srt),
            &cues,
            0.021,
        );
    }
}

#[test]
fn json_reads_back_in_the_spec_shape() {
    let dir = tempfile::tempdir().unwrap();
    let t = transcript();
    let file = dir.path().join("x.json");
    std::fs::write(&file, render_json(&t)).unwrap();
    let out = run(Command::new(venv_bin("python")).arg("-c").arg(READER).arg("json").arg(&file));
    let doc: Value = serde_json::from_str(&out).unwrap();
    let mut keys: Vec<&str> = doc.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["filename", "highlights", "id", "recordId", "segments", "speakers", "startTimeOffset"]);
    let first = &doc["segments"][0]["words"][0];
    assert_eq!(first["text"], "And");
    assert!((first["duration"].as_f64().unwrap() - 0.22).abs() < 1e-9);
    assert_eq!(doc["segments"][1]["words"][0]["text"], "Ça,");
    assert_eq!(doc["speakers"][1]["spkid"], "S2");
}
