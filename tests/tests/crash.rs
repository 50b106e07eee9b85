//! No accepted job lost to a crash: the short version of `scribe-bench crash`. It runs the real
//! binary's crash check: a few rounds of submitting uploads and URL jobs (with and without
//! callbacks) and SIGKILLing the server at random moments, then one run until everything settles;
//! the command fails unless no job is lost, none has two terminal events, every callback was
//! acknowledged, and the read models equal a rebuild. The long soak is `scribe-bench crash`.

use scribe_tests::bench;

#[test]
fn jobs_survive_random_kills_with_no_loss_no_double_and_every_callback() {
    let run =
        bench::run(&["crash", "--rounds", "3", "--clients", "2", "--max-uptime", "5s", "--settle-timeout", "10m"]);
    assert!(run.status.success(), "the crash check failed\n{}", run.report());
    assert!(run.stdout.contains("lost 0, doubled 0, undelivered 0"), "unexpected tally:\n{}", run.report());
    assert!(!run.stdout.contains("jobs 0 "), "no job was accepted, so nothing was checked:\n{}", run.report());
}
