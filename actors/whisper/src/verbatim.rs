//! Prompts that make Whisper write what was said, hesitations included.
//!
//! Whisper was trained mostly on cleaned-up subtitles, so by default it leaves out "um", "uh",
//! false starts and repetitions. Conditioning the decoder on text that has them (as the previous
//! text of the recording) makes it continue in that style: the known way to get verbatim output
//! from Whisper without retraining. One short prompt per language, written for this purpose;
//! a language without one is decoded without a prompt.

/// The disfluent prompt for a Whisper language code.
pub fn prompt(whisper_language: &str) -> Option<&'static str> {
    Some(match whisper_language {
        "en" => {
            "Um, so, uh, I- I was thinking, like, we could, um, maybe try it, uh, again. Hmm. Yeah, yeah, I mean, it's- it's fine."
        }
        "fr" => {
            "Euh, alors, euh, je- je pensais que, bah, on pourrait, hum, essayer encore. Hein, oui, oui, c'est- c'est bon."
        }
        "de" => {
            "Äh, also, ähm, ich- ich dachte, äh, wir könnten, hm, es nochmal versuchen. Ja, ja, das ist- das ist gut."
        }
        "nl" => {
            "Eh, nou, uhm, ik- ik dacht dat, eh, we het, hm, nog eens konden proberen. Ja, ja, dat is- dat is goed."
        }
        "it" => "Ehm, allora, eh, io- io pensavo che, ehm, potremmo, mh, riprovare. Sì, sì, va- va bene.",
        "es" => "Eh, bueno, este, yo- yo pensaba que, eh, podríamos, mm, intentarlo otra vez. Sí, sí, está- está bien.",
        "pt" => {
            "Hum, então, é, eu- eu estava pensando que, hã, a gente podia, hum, tentar de novo. Sim, sim, tá- tá bom."
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn english_has_fillers_and_false_starts() {
        let p = super::prompt("en").unwrap();
        assert!(p.contains("um") && p.contains("uh") && p.contains("I- I"));
        assert!(super::prompt("ja").is_none());
    }
}
