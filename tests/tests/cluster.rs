//! Several nodes on one production event store: the short version of `scribe-bench cluster`.
//! It starts a throwaway PostgreSQL cluster (`initdb`/`pg_ctl` in a temp directory, unix socket
//! only) and three real `scribe serve` nodes on loopback ports that share it and one media
//! directory; jobs (uploads, URL jobs, a file that cannot be decoded; all with a callbackUrl) are
//! submitted to every node in turn, and the node that first runs a transcription is SIGKILLed in
//! the middle of it. The command fails unless the other nodes take its work over and every job
//! ends `DONE` or `ERROR` as its media says, with one terminal event, one callback POST (one
//! `webhook-id`) per job, one refund per failed job, and read models that agree across the
//! survivors and equal a rebuild from the log.

use scribe_tests::bench;

#[test]
fn three_nodes_share_the_work_and_a_killed_nodes_job_finishes_elsewhere_once() {
    let run = bench::run(&["cluster", "--nodes", "3", "--jobs", "6", "--settle-timeout", "8m"]);
    let stdout = &run.stdout;
    assert!(run.status.success(), "the cluster check failed\n{}", run.report());
    assert!(stdout.contains("lost 0, doubled 0, unexpected outcome 0"), "unexpected tally:\n{}", run.report());
    assert!(stdout.contains("callbacks 6 received for 6 jobs (not exactly once: 0), refunds wrong 0"), "{stdout}");
    assert!(stdout.contains("survivors agree, read models equal a rebuild"), "{stdout}");
    assert!(!stdout.contains("taken over 0"), "the killed node's work was not taken over:\n{stdout}");
}
