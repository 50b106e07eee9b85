//! Whisper's byte-level BPE vocabulary and special tokens, from the model's `tokenizer.json`.
//!
//! Special-token ids differ between English-only and multilingual models (tiny.en's
//! `<|notimestamps|>` is 50362, base's is 50363), so every id is looked up by name here and
//! never hard-coded elsewhere.

use std::path::Path;

/// Why a tokenizer could not be loaded.
#[derive(Debug, thiserror::Error)]
#[error("tokenizer {path}: {reason}")]
pub struct TokenizerError {
    pub path: String,
    pub reason: String,
}

/// The ids of Whisper's special tokens in one vocabulary.
#[derive(Clone, Debug)]
pub struct Specials {
    pub eot: u32,
    pub sot: u32,
    pub sot_prev: u32,
    pub sot_lm: Option<u32>,
    pub no_speech: u32,
    pub no_timestamps: u32,
    /// `<|0.00|>`; timestamp k (in 20 ms steps) is `timestamp_begin + k`.
    pub timestamp_begin: u32,
    pub transcribe: Option<u32>,
    pub translate: Option<u32>,
}

const ASCII_PUNCTUATION: &str = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

pub struct WhisperTokenizer {
    inner: tokenizers::Tokenizer,
    pub specials: Specials,
}

impl WhisperTokenizer {
    pub fn load(path: &Path) -> Result<WhisperTokenizer, TokenizerError> {
        let err = |reason: String| TokenizerError { path: path.display().to_string(), reason };
        if !path.is_file() {
            return Err(err("not found (install the models with `bash ops/setup.sh`)".into()));
        }
        let inner = tokenizers::Tokenizer::from_file(path).map_err(|e| err(format!("cannot be parsed: {e}")))?;
        let id = |name: &str| inner.token_to_id(name);
        let need = |name: &str| id(name).ok_or_else(|| err(format!("has no {name} token; not a Whisper tokenizer")));
        let no_timestamps = need("<|notimestamps|>")?;
        let specials = Specials {
            eot: need("<|endoftext|>")?,
            sot: need("<|startoftranscript|>")?,
            sot_prev: need("<|startofprev|>")?,
            sot_lm: id("<|startoflm|>"),
            no_speech: id("<|nospeech|>")
                .or_else(|| id("<|nocaptions|>"))
                .ok_or_else(|| err("has neither <|nospeech|> nor <|nocaptions|>".into()))?,
            no_timestamps,
            timestamp_begin: no_timestamps + 1,
            transcribe: id("<|transcribe|>"),
            translate: id("<|translate|>"),
        };
        // Some tokenizer.json files leave the timestamp tokens out (they are never decoded to
        // text); when present, they must follow <|notimestamps|>.
        if id("<|0.00|>").is_some_and(|t| t != specials.timestamp_begin) {
            return Err(err("<|0.00|> does not follow <|notimestamps|>".into()));
        }
        Ok(WhisperTokenizer { inner, specials })
    }

    pub fn token_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    pub fn vocab_size(&self) -> usize {
        self.inner.get_vocab_size(true)
    }

    /// Text tokens for `text` (no special tokens added).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        self.inner.encode(text, false).map(|e| e.get_ids().to_vec()).unwrap_or_default()
    }

    /// Text of the text tokens among `tokens` (timestamps and specials are dropped).
    pub fn decode(&self, tokens: &[u32]) -> String {
        let text: Vec<u32> = tokens.iter().copied().filter(|&t| t < self.specials.eot).collect();
        self.inner.decode(&text, false).unwrap_or_default()
    }

    pub fn is_timestamp(&self, token: u32) -> bool {
        token >= self.specials.timestamp_begin
    }

    /// Splits text tokens into words as Whisper does: first into pieces that decode to whole
    /// characters, then joining pieces that do not start with a space or punctuation to the
    /// previous word. Languages written without spaces keep the character pieces.
    pub fn split_words(&self, tokens: &[u32], language: &str) -> Vec<(String, Vec<u32>)> {
        let mut pieces: Vec<(String, Vec<u32>)> = Vec::new();
        let mut current = Vec::new();
        for &t in tokens {
            current.push(t);
            let text = self.decode(&current);
            if !text.contains('\u{fffd}') {
                pieces.push((text, std::mem::take(&mut current)));
            }
        }
        if !current.is_empty() {
            pieces.push((self.decode(&current), current));
        }
        if matches!(language, "zh" | "ja" | "th" | "lo" | "my" | "yue") {
            return pieces;
        }
        let mut words: Vec<(String, Vec<u32>)> = Vec::new();
        for (text, toks) in pieces {
            let special = toks[0] >= self.specials.eot;
            let trimmed = text.trim();
            // Python's `s in string.punctuation` is a substring test (true for "" too).
            let punctuation = ASCII_PUNCTUATION.contains(trimmed);
            if special || text.starts_with(' ') || punctuation || words.is_empty() {
                words.push((text, toks));
            } else {
                let last = words.last_mut().expect("non-empty");
                last.0.push_str(&text);
                last.1.extend(toks);
            }
        }
        words
    }
}
