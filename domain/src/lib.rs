//! Scribe's rules, free of I/O and async: identifiers, requests and their validation,
//! languages, glossaries, the job state machine (`decide`/`evolve`) and its versioned events,
//! the transcript model, subtitle segmentation and the export renderers.
