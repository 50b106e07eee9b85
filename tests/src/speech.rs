//! Speech the corpus has no clip of, spoken by espeak-ng (installed by `ops/setup.sh`): a
//! language it lacks, or a dialogue of two voices in one. Synthetic speech: good for which
//! language it is and who speaks when, not for accuracy claims.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Speaks `text` with espeak-ng's `voice` (`es`, `fr+f3`, ...) into `dir/name` (WAV, 22.05 kHz).
pub fn spoken(dir: &Path, name: &str, voice: &str, text: &str) -> PathBuf {
    let wav = dir.join(name);
    let status = Command::new("espeak-ng")
        .args(["-v", voice, "-s", "150", "-w"])
        .arg(&wav)
        .arg(text)
        .status()
        .expect("espeak-ng runs (ops/setup.sh installs it)");
    assert!(status.success(), "espeak-ng failed on {voice}: {status}");
    wav
}

/// The `turns` (voice, text) one after the other with `pause_s` of silence after each, as one
/// 16 kHz mono WAV `dir/name` (joined by ffmpeg).
pub fn dialogue(dir: &Path, name: &str, turns: &[(&str, &str)], pause_s: f64) -> PathBuf {
    let mut ffmpeg = Command::new("ffmpeg");
    ffmpeg.args(["-hide_banner", "-loglevel", "error", "-y"]);
    let mut graph = String::new();
    for (i, (voice, text)) in turns.iter().enumerate() {
        ffmpeg.arg("-i").arg(spoken(dir, &format!("turn{i}.wav"), voice, text));
        graph.push_str(&format!("[{i}:a]apad=pad_dur={pause_s}[t{i}];"));
    }
    for i in 0..turns.len() {
        graph.push_str(&format!("[t{i}]"));
    }
    graph.push_str(&format!("concat=n={}:v=0:a=1[out]", turns.len()));
    let wav = dir.join(name);
    let status = ffmpeg
        .args(["-filter_complex", &graph, "-map", "[out]", "-ar", "16000", "-ac", "1"])
        .arg(&wav)
        .status()
        .expect("ffmpeg runs (ops/setup.sh installs it)");
    assert!(status.success(), "ffmpeg could not join the turns: {status}");
    wav
}
