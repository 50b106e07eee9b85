//! Whisper's byte-level BPE vocabulary and special tokens, from the model's `tokenizer.json`,
//! or, when a CTranslate2 directory ships only its token list (`vocabulary.json` or
//! `vocabulary.txt`, one token per id), from that list: Whisper's BPE (tiktoken's) merges the
//! adjacent pair whose concatenation has the lowest id, so the merge list is every split of
//! every token into two tokens, ordered by the id of the token they make.
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

/// The vocabulary files a model directory may hold, in order of preference.
pub const VOCABULARY_FILES: [&str; 3] = ["tokenizer.json", "vocabulary.json", "vocabulary.txt"];

impl WhisperTokenizer {
    /// The tokenizer of a model directory, from the first of [`VOCABULARY_FILES`] it holds,
    /// and that file's path.
    pub fn load_dir(dir: &Path) -> Result<(WhisperTokenizer, std::path::PathBuf), TokenizerError> {
        let Some(path) = VOCABULARY_FILES.iter().map(|f| dir.join(f)).find(|p| p.is_file()) else {
            return Err(TokenizerError {
                path: dir.join("tokenizer.json").display().to_string(),
                reason: "not found, nor vocabulary.json or vocabulary.txt: the model directory has no vocabulary"
                    .into(),
            });
        };
        Ok((WhisperTokenizer::load(&path)?, path))
    }

    /// Loads `tokenizer.json`, or a token list (`*.json` array or `*.txt`, one per line).
    pub fn load(path: &Path) -> Result<WhisperTokenizer, TokenizerError> {
        let err = |reason: String| TokenizerError { path: path.display().to_string(), reason };
        if !path.is_file() {
            return Err(err("not found (install the models with `bash ops/setup.sh`)".into()));
        }
        let is_token_list = path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("vocabulary"));
        let inner = if is_token_list {
            from_token_list(path).map_err(err)?
        } else {
            tokenizers::Tokenizer::from_file(path).map_err(|e| err(format!("cannot be parsed: {e}")))?
        };
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

    /// The token with id `id`, as the vocabulary spells it.
    pub fn id_to_token(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id)
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

/// A byte-level BPE tokenizer from a list of tokens (id = position). Tokens written `<|…|>`
/// are special (never split, never produced from text).
fn from_token_list(path: &Path) -> Result<tokenizers::Tokenizer, String> {
    use tokenizers::models::bpe::{BPE, Vocab};
    use tokenizers::{AddedToken, decoders, pre_tokenizers};

    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot be read: {e}"))?;
    let tokens: Vec<String> = if path.extension().is_some_and(|e| e == "json") {
        serde_json::from_str(&text).map_err(|e| format!("is not a JSON list of tokens: {e}"))?
    } else {
        text.lines().map(str::to_string).collect()
    };
    if tokens.len() < 256 {
        return Err(format!("holds {} tokens; a Whisper vocabulary has over 50,000", tokens.len()));
    }
    let is_special = |t: &str| t.starts_with("<|") && t.ends_with("|>");
    // A token may repeat (or be empty) in a list; the first id wins, as in a lookup table.
    let mut vocab = Vocab::default();
    for (id, t) in tokens.iter().enumerate() {
        if !t.is_empty() {
            vocab.entry(t.clone()).or_insert(id as u32);
        }
    }
    let mut merges = Vec::new();
    for (id, t) in tokens.iter().enumerate() {
        if is_special(t) || vocab.get(t) != Some(&(id as u32)) {
            continue;
        }
        for (split, _) in t.char_indices().skip(1) {
            let (a, b) = t.split_at(split);
            if vocab.contains_key(a) && vocab.contains_key(b) {
                merges.push((a.to_string(), b.to_string()));
            }
        }
    }
    let bpe =
        BPE::builder().vocab_and_merges(vocab, merges).build().map_err(|e| format!("is not a BPE vocabulary: {e}"))?;
    let mut tokenizer = tokenizers::Tokenizer::new(bpe);
    tokenizer.with_pre_tokenizer(Some(pre_tokenizers::byte_level::ByteLevel::new(false, true, true)));
    tokenizer.with_decoder(Some(decoders::byte_level::ByteLevel::default()));
    let specials: Vec<AddedToken> =
        tokens.iter().filter(|t| is_special(t)).map(|t| AddedToken::from(t.clone(), true)).collect();
    tokenizer.add_special_tokens(specials).map_err(|e| format!("special tokens: {e}"))?;
    Ok(tokenizer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn models_dir() -> Option<std::path::PathBuf> {
        let dir = std::path::PathBuf::from(std::env::var_os("SCRIBE_MODELS_DIR")?);
        dir.join("whisper-base/vocabulary.txt").is_file().then_some(dir)
    }

    #[test]
    fn a_token_list_tokenizes_like_tokenizer_json() {
        let Some(dir) = models_dir() else { return };
        for model in ["whisper-base", "whisper-tiny.en"] {
            let full = WhisperTokenizer::load(&dir.join(model).join("tokenizer.json")).unwrap();
            let list = WhisperTokenizer::load(&dir.join(model).join("vocabulary.txt")).unwrap();
            let (a, b) = (&full.specials, &list.specials);
            assert_eq!(
                (a.eot, a.sot, a.sot_prev, a.no_speech, a.no_timestamps, a.transcribe, a.translate),
                (b.eot, b.sot, b.sot_prev, b.no_speech, b.no_timestamps, b.transcribe, b.translate),
                "{model}"
            );
            for text in [
                " And so my fellow Americans, ask not what your country can do for you.",
                " Hello world! It's 3:45pm, isn't it? Naïve café, Zürich — 東京, ¿qué tal? <|en|> don't",
                "   spaces   and\ttabs\nnewlines",
            ] {
                let ids = full.encode(text);
                assert_eq!(list.encode(text), ids, "{model}: {text:?}");
                assert_eq!(list.decode(&ids), full.decode(&ids), "{model}: {text:?}");
            }
        }
    }
}
