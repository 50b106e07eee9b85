//! Where a long recording's word errors lie, clip by clip: its text aligned word by word with
//! the joined reference (the corpus scorer's own normalisation, imported from `score_wer.py`),
//! each error counted to the clip whose reference word it touches, an inserted word to the
//! clip whose reference words follow it. Set beside the same count for the clips decoded one
//! by one, it tells which clips the joining made worse.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

/// Reads `{"corpus", "reference": [[clip, text], ...], "texts": [...]}` on stdin and prints,
/// for each text, `{clip: errors}` as one JSON list.
const SCRIPT: &str = r#"
import json, sys
cfg = json.loads(sys.stdin.read())
sys.path.insert(0, cfg["corpus"])
from score_wer import tokens
ref, owner = [], []
for clip, text in cfg["reference"]:
    words = tokens(text, "en")
    ref += words
    owner += [clip] * len(words)
def errors(hyp):
    n, m = len(ref), len(hyp)
    d = [list(range(m + 1))] + [[i] + [0] * m for i in range(1, n + 1)]
    for i in range(1, n + 1):
        row, up, r = d[i], d[i - 1], ref[i - 1]
        for j in range(1, m + 1):
            row[j] = min(up[j - 1] + (r != hyp[j - 1]), up[j] + 1, row[j - 1] + 1)
    count, i, j = {}, n, m
    def add(k):
        clip = owner[min(k, n - 1)] if n else ""
        count[clip] = count.get(clip, 0) + 1
    while i > 0 or j > 0:
        if i > 0 and j > 0 and d[i][j] == d[i - 1][j - 1] + (ref[i - 1] != hyp[j - 1]):
            if ref[i - 1] != hyp[j - 1]:
                add(i - 1)
            i, j = i - 1, j - 1
        elif i > 0 and d[i][j] == d[i - 1][j] + 1:
            add(i - 1)
            i -= 1
        else:
            add(i)
            j -= 1
    return count
print(json.dumps([errors(tokens(t, "en")) for t in cfg["texts"]]))
"#;

/// The word errors of each of `texts` against `reference` (each clip's manifest path and
/// reference, in the recording's order), per clip path.
pub fn count(
    python: &Path,
    corpus: &Path,
    reference: &[(&str, &str)],
    texts: &[&str],
) -> anyhow::Result<Vec<Vec<(String, u64)>>> {
    let cfg = serde_json::json!({ "corpus": corpus, "reference": reference, "texts": texts });
    let mut child = Command::new(python)
        .arg("-c")
        .arg(SCRIPT)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot run the venv's Python")?;
    child.stdin.take().context("no stdin")?.write_all(cfg.to_string().as_bytes())?;
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!("aligning the texts failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let v: Vec<serde_json::Map<String, serde_json::Value>> = serde_json::from_slice(&out.stdout)?;
    Ok(v.into_iter().map(|m| m.into_iter().map(|(k, n)| (k, n.as_u64().unwrap_or(0))).collect()).collect())
}

/// Errors in the recording's text minus errors of the clips one by one, per clip file name,
/// most changed first, the unchanged left out: "en_childes….wav +23, en_jfk.wav +4".
pub fn describe(long: &[(String, u64)], alone: &[(String, u64)]) -> String {
    let mut clips: Vec<&str> = long.iter().chain(alone).map(|(c, _)| c.as_str()).collect();
    clips.sort_unstable();
    clips.dedup();
    let of = |list: &[(String, u64)], clip: &str| list.iter().find(|(c, _)| c == clip).map_or(0, |(_, n)| *n as i64);
    let mut diffs: Vec<(&str, i64)> =
        clips.into_iter().map(|c| (c, of(long, c) - of(alone, c))).filter(|(_, d)| *d != 0).collect();
    diffs.sort_by(|a, b| b.1.abs().cmp(&a.1.abs()).then_with(|| a.0.cmp(b.0)));
    if diffs.is_empty() {
        return "the same errors in every clip".into();
    }
    diffs.iter().map(|(c, d)| format!("{} {d:+}", c.rsplit('/').next().unwrap_or(c))).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn a_substitution_counts_to_its_clip_and_an_insertion_to_the_clip_after_it() {
        // the corpus (`SCRIBE_CORPUS_DIR`, else beside the clone, as the README's commands have it)
        let corpus = std::env::var_os("SCRIBE_CORPUS_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
        let reference = [("audio/a.wav", "one two three"), ("audio/b.wav", "four five")];
        let texts = ["One, two, three. Four five.", "one too three extra four five"];
        let counts = count(Path::new("python3"), &corpus, &reference, &texts).unwrap();
        assert!(counts[0].is_empty());
        let mut second = counts[1].clone();
        second.sort();
        assert_eq!(second, vec![("audio/a.wav".to_string(), 1), ("audio/b.wav".to_string(), 1)]);
    }

    #[test]
    fn the_changed_clips_are_told_most_changed_first() {
        let long = [("audio/a.wav".to_string(), 30), ("audio/b.wav".to_string(), 4), ("audio/c.wav".to_string(), 2)];
        let alone = [("audio/a.wav".to_string(), 7), ("audio/b.wav".to_string(), 4), ("audio/c.wav".to_string(), 5)];
        assert_eq!(describe(&long, &alone), "a.wav +23, c.wav -3");
        assert_eq!(describe(&alone, &alone), "the same errors in every clip");
    }
}
