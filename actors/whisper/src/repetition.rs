//! Text the decoder invented by repeating itself, told apart from what a speaker repeats.
//!
//! Whisper's own check for a looping decoder is the gzip compression ratio of a window's text
//! (above 2.4: retry at a higher temperature). A short loop inside a window's worth of text
//! compresses less than that ("… for infection of others to prevent infection of others to
//! prevent infection of others to prevent infection of others.": 2.08), and a stretch decoded
//! again that reads back the sentence before it is no loop at all within its own text. Two
//! word-level checks cover them; both compare words as the corpus scorer does, roughly (lower
//! case, letters and digits only):
//!
//! - [`loops`]: some run of [`N`] words occurs [`LOOP_TIMES`] times in one piece of text (the
//!   decoder applies it to the text between two timestamps). No reference of the corpus does
//!   that within a window's worth of text (every clip, every take of the 13-minute reading, its
//!   80-word stretches and Gettysburg's: 0 of 191), while twice does happen in real speech
//!   (CHILDES: "give me a kiss").
//! - [`repeated_share`]: how much of a piece decoded again is text already emitted around it.
//!
//! [`repeated_insertions`] is the tests' and the benchmark's measure of the failure itself: runs
//! of [`N`] words a transcript repeats where its reference has no words at all.

use std::collections::HashMap;

/// The length of the word runs compared (a 4-gram): shorter runs repeat in ordinary speech
/// ("we can not …, we can not …, we can not …" in the Gettysburg Address).
pub const N: usize = 4;

/// How often one run of [`N`] words must occur in one decoding to be a loop.
pub const LOOP_TIMES: usize = 3;

/// The words of `text` as the checks compare them: lower case, runs of letters and digits
/// (apostrophes dropped inside words, so "debtors'" and "debtors" match).
pub fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .replace(['\'', '’'], "")
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// How often each run of [`N`] words occurs in `words`.
fn ngram_counts(words: &[String]) -> HashMap<&[String], usize> {
    let mut counts = HashMap::new();
    for g in words.windows(N) {
        *counts.entry(g).or_insert(0) += 1;
    }
    counts
}

/// True when some run of [`N`] words occurs [`LOOP_TIMES`] times or more in `words`.
pub fn loops(words: &[String]) -> bool {
    ngram_counts(words).values().any(|&c| c >= LOOP_TIMES)
}

/// How much of `items` says something before it starts repeating itself: up to the end of the
/// first occurrence of the earliest run that follows itself [`LOOP_TIMES`] times in a row
/// ("how do do do do" keeps "how do"); all of it when no run does.
pub fn before_loop<T: PartialEq>(items: &[T]) -> usize {
    let n = items.len();
    for start in 0..n {
        for period in 1..=(n - start) / LOOP_TIMES {
            let unit = &items[start..start + period];
            if (1..LOOP_TIMES).all(|k| &items[start + k * period..start + (k + 1) * period] == unit) {
                return start + period;
            }
        }
    }
    n
}

/// The share (0..=1) of `piece`'s words that lie inside a run of [`N`] words also found in
/// `before`; 0 for a piece of fewer than [`N`] words.
pub fn repeated_share(piece: &[String], before: &[String]) -> f32 {
    if piece.len() < N {
        return 0.0;
    }
    let seen = ngram_counts(before);
    let mut covered = vec![false; piece.len()];
    for (i, g) in piece.windows(N).enumerate() {
        if seen.contains_key(g) {
            covered[i..i + N].fill(true);
        }
    }
    covered.iter().filter(|&&c| c).count() as f32 / piece.len() as f32
}

/// Which of `hyp`'s words a minimal word alignment with `reference` (Levenshtein, every edit
/// costing one; a substitution preferred to an insertion at equal cost) leaves without a
/// reference word: the insertions.
pub fn insertions(hyp: &[String], reference: &[String]) -> Vec<bool> {
    let (n, m) = (hyp.len(), reference.len());
    // cost[i][j]: the edits between hyp[..i] and reference[..j].
    let mut cost = vec![vec![0u32; m + 1]; n + 1];
    for (i, row) in cost.iter_mut().enumerate() {
        row[0] = i as u32;
    }
    for j in 0..=m {
        cost[0][j] = j as u32;
    }
    for i in 1..=n {
        for j in 1..=m {
            let diagonal = cost[i - 1][j - 1] + u32::from(hyp[i - 1] != reference[j - 1]);
            cost[i][j] = diagonal.min(cost[i - 1][j] + 1).min(cost[i][j - 1] + 1);
        }
    }
    let mut inserted = vec![false; n];
    let (mut i, mut j) = (n, m);
    while i > 0 {
        if j > 0 && cost[i][j] == cost[i - 1][j - 1] + u32::from(hyp[i - 1] != reference[j - 1]) {
            (i, j) = (i - 1, j - 1);
        } else if j > 0 && cost[i][j] == cost[i][j - 1] + 1 {
            j -= 1;
        } else {
            inserted[i - 1] = true;
            i -= 1;
        }
    }
    inserted
}

/// The runs of [`N`] words that `hypothesis` holds at least twice and more often than
/// `reference` does, at a place where none of the run's words aligns with a word of the
/// reference ([`insertions`]): text written again where nothing was said. A run repeated
/// where the speaker said something else twice (Whisper mishearing a father's "give me a kiss"
/// twice as "You want to make it?") is a misheard word, not an invention. Each run once, with
/// its counts in the hypothesis and the reference, in the order they occur.
pub fn repeated_insertions(hypothesis: &str, reference: &str) -> Vec<(String, usize, usize)> {
    let (hyp, refw) = (words(hypothesis), words(reference));
    let inserted = insertions(&hyp, &refw);
    let (h, r) = (ngram_counts(&hyp), ngram_counts(&refw));
    let mut out: Vec<(String, usize, usize)> = Vec::new();
    for (i, g) in hyp.windows(N).enumerate() {
        let (in_hyp, in_ref) = (h[g], r.get(g).copied().unwrap_or(0));
        let text = g.join(" ");
        if in_hyp >= 2 && in_hyp > in_ref && inserted[i..i + N].iter().all(|&x| x) && !out.iter().any(|o| o.0 == text) {
            out.push((text, in_hyp, in_ref));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOOPED: &str = "The hospital has followed protocol for infection of others to prevent infection of \
                          others to prevent infection of others to prevent infection of others.";

    #[test]
    fn words_are_compared_without_case_punctuation_or_apostrophes() {
        assert_eq!(words("The debtors' side, Mr. Bennet's—ward!"), ["the", "debtors", "side", "mr", "bennets", "ward"]);
        assert!(words(" ... ").is_empty());
    }

    #[test]
    fn a_run_of_four_words_three_times_is_a_loop_and_twice_is_speech() {
        // given a looping decoding, and a father asking twice for a kiss
        let looped = words(LOOPED);
        let childes = words("wanna give me a kiss? come on give me a kiss. give your daddy a kiss.");
        // then the first loops and the second does not
        assert!(loops(&looped));
        assert!(!loops(&childes));
        // nor does the Gettysburg Address's threefold "we can not" (three words)
        assert!(!loops(&words("we can not dedicate, we can not consecrate, we can not hallow this ground")));
    }

    #[test]
    fn a_decoding_is_kept_up_to_where_it_starts_repeating_itself() {
        let kept = |text: &str| {
            let w: Vec<&str> = text.split_whitespace().collect();
            w[..before_loop(&w)].join(" ")
        };
        // given decodings that loop on one word, on a phrase, and after some speech
        assert_eq!(kept("people people people people people"), "people");
        assert_eq!(kept("Mr. Quilter is Mr. Quilter is Mr. Quilter is Mr. Mr."), "Mr. Quilter is");
        assert_eq!(kept("The person who is the one who is the one who is the one who"), "The person who is the one");
        assert_eq!(kept("How do do do do do"), "How do");
        // then each keeps its first saying; and speech repeated twice, or nothing, is all kept
        assert_eq!(kept("give me a kiss give me a kiss come on"), "give me a kiss give me a kiss come on");
        assert_eq!(before_loop::<u32>(&[]), 0);
        // as is a run of LOOP_TIMES that does not follow itself
        assert_eq!(
            kept("we can not dedicate we can not consecrate we can not hallow"),
            "we can not dedicate we can not consecrate we can not hallow"
        );
    }

    #[test]
    fn the_share_of_a_piece_already_said_counts_the_words_inside_repeated_runs() {
        let before = words("Returns laid before the House of Commons showed that six thousand persons");
        // given a piece that reads back the sentence's second half
        let again = words("the House of Commons showed that six thousand persons");
        assert_eq!(repeated_share(&again, &before), 1.0);
        // a piece that shares one run of four words with it, out of eight
        let partly = words("before the House of lords met in May");
        assert_eq!(repeated_share(&partly, &before), 0.5);
        // and new words, or fewer than four, share nothing
        assert_eq!(repeated_share(&words("had been committed to Newgate"), &before), 0.0);
        assert_eq!(repeated_share(&words("the House of"), &before), 0.0);
    }

    #[test]
    fn insertions_are_the_words_the_reference_has_nothing_for() {
        // given a hypothesis with one word substituted and two inserted
        let hyp = words("and so my fellow fellow Americans ask not what your county can do");
        let reference = words("and so my fellow Americans ask not what your country can do");
        // then only one of the two "fellow"s and nothing else is an insertion
        let inserted = insertions(&hyp, &reference);
        assert_eq!(inserted.iter().filter(|&&x| x).count(), 1);
        assert!(inserted[3] ^ inserted[4]);
        // and a hypothesis with nothing to align to is all insertions
        assert_eq!(insertions(&hyp[..2], &[]), vec![true, true]);
    }

    #[test]
    fn repeated_insertions_name_text_written_again_where_nothing_was_said() {
        // given a decoding that loops after the sentence it heard
        let reference = "The hospital has followed protocol for infection of others.";
        let found = repeated_insertions(LOOPED, reference);
        // then the loop's runs are named, with their counts, and the sentence's own are not
        assert!(found.iter().any(|(g, h, r)| g == "prevent infection of others" && *h == 3 && *r == 0), "{found:?}");
        assert!(!found.iter().any(|(g, _, _)| g == "the hospital has followed"));
        // given a sentence read back after itself
        let sentence = "Returns laid before the House of Commons showed that six thousand persons";
        let found = repeated_insertions(&format!("{sentence} the House of Commons showed that"), sentence);
        assert_eq!(found.first().map(|f| f.0.as_str()), Some("the house of commons"));
        // and a transcript repeating what its speaker repeats, or mishearing a repeated
        // phrase as another repeated phrase, has none
        let kiss = "wanna give me a kiss? come on give me a kiss.";
        assert!(repeated_insertions(kiss, kiss).is_empty());
        assert!(repeated_insertions("You want to make it? You want to make it?", kiss).is_empty());
    }
}
