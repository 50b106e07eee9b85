//! Partial results that do not flicker: LocalAgreement-2 (Macháček et al., 2023, as in
//! `whisper_streaming`). The open utterance is decoded again every half second or so; the words
//! two hypotheses in a row agree on from the start are *confirmed* and never change again in
//! this utterance's partials. A partial shows the confirmed words, then the newest hypothesis's
//! guess for the rest.

/// The hypotheses of one utterance.
#[derive(Debug, Default, Clone)]
pub struct Agreement {
    confirmed: Vec<String>,
    previous: Vec<String>,
}

impl Agreement {
    /// Takes the newest hypothesis (the whole utterance so far) and returns the words to show.
    pub fn update(&mut self, hypothesis: Vec<String>) -> Vec<String> {
        let agreed = self.previous.iter().zip(&hypothesis).take_while(|(a, b)| comparable(a) == comparable(b)).count();
        if agreed > self.confirmed.len() {
            self.confirmed = hypothesis[..agreed].to_vec();
        }
        let mut shown = self.confirmed.clone();
        // The newest guess goes on where it stops agreeing with what is confirmed.
        let same_start =
            self.confirmed.iter().zip(&hypothesis).take_while(|(a, b)| comparable(a) == comparable(b)).count();
        if same_start == self.confirmed.len() {
            shown.extend(hypothesis[same_start..].iter().cloned());
        }
        self.previous = hypothesis;
        shown
    }

    /// The words no later hypothesis will change.
    #[cfg(test)]
    pub fn confirmed(&self) -> &[String] {
        &self.confirmed
    }
}

/// Words compare without case and surrounding punctuation ("Hello," agrees with "hello").
fn comparable(word: &str) -> String {
    word.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn given_two_hypotheses_when_they_share_a_prefix_then_it_is_confirmed() {
        let mut a = Agreement::default();
        assert_eq!(a.update(words("and so my")), words("and so my"));
        assert!(a.confirmed().is_empty(), "one hypothesis confirms nothing");
        assert_eq!(a.update(words("and so my fellow")), words("and so my fellow"));
        assert_eq!(a.confirmed(), words("and so my").as_slice());
    }

    #[test]
    fn given_confirmed_words_when_a_later_hypothesis_disagrees_then_they_stay() {
        let mut a = Agreement::default();
        a.update(words("ask not what"));
        a.update(words("ask not what your"));
        let shown = a.update(words("ask knot what your country"));
        assert_eq!(&shown[..3], words("ask not what").as_slice(), "confirmed words never change");
        assert_eq!(a.confirmed(), words("ask not what").as_slice());
    }

    #[test]
    fn given_case_and_punctuation_changes_when_compared_then_words_still_agree() {
        let mut a = Agreement::default();
        a.update(words("hello world"));
        a.update(words("Hello, world."));
        assert_eq!(a.confirmed().len(), 2);
    }
}
