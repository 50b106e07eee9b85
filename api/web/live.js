// The Live page of Scribe's web app: a customer picks a language (and a glossary), presses
// Start, and the microphone streams over the live protocol (WebSocket `/api/real-time`, see the
// README) while captions appear: partials greyed, replaced in place until their final arrives
// in black. A level meter, a running clock, how long after its last word the latest final came,
// the server's Info and Warning in a status line and its Errors in red; with "save as job", a
// link to the finished job's editor after Stop.
// The microphone's samples become `s16le` frames of about 100 ms in an AudioWorklet
// (`live-worklet.js`) at the AudioContext's rate, which the INIT announces.
"use strict";

(function () {
  const { el } = window.ScribeEditor;
  const FRAME_SECONDS = 0.1;
  const MIN_RATE = 8000;
  const MAX_RATE = 48000;
  // Frames captured before the server confirms the session wait, at most this many (5 s).
  const MAX_QUEUED_FRAMES = 50;
  // After END the server finalizes the last speech and closes; past this, the page closes.
  const END_TIMEOUT_MS = 60000;
  // How long the page waits for a saved session's job to be DONE before it links the job page.
  const JOB_TIMEOUT_MS = 120000;
  // Frames whose capture time the page remembers (60 s), to tell a final's delay.
  const TIMELINE_FRAMES = 600;

  const mmss = (ms) => {
    const s = Math.max(0, Math.floor(ms / 1000));
    return `${String(Math.floor(s / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
  };

  // RMS (0..1) to a meter position (0..1): -60 dBFS and quieter is empty, 0 dBFS full.
  const meterLevel = (rms) => (rms > 0 ? Math.min(1, Math.max(0, (20 * Math.log10(rms) + 60) / 60)) : 0);

  // Where a result's speech ends (seconds since the session's first sample): its last word's end,
  // else its segment's.
  const speechEndOf = (result) => {
    const segments = result.segments || [];
    const words = segments.flatMap((s) => (s.words || []).map((w) => w.end)).filter(Number.isFinite);
    const ends = words.length ? words : segments.map((s) => s.end).filter(Number.isFinite);
    return ends.length ? Math.max(...ends) : null;
  };

  const wordsOf = (result) => (result.segments || []).flatMap((s) => (s.words || []).map((w) => w.word)).join(" ");
  const textOf = (result) => (typeof result.transcript === "string" ? result.transcript : wordsOf(result)).trim();

  // An AudioContext at the device's rate when the protocol allows it (8 to 48 kHz), else 48 kHz.
  // Made synchronously in the Start click, so the browser lets it run.
  function audioContext() {
    const context = new AudioContext();
    if (context.sampleRate >= MIN_RATE && context.sampleRate <= MAX_RATE) return context;
    context.close();
    return new AudioContext({ sampleRate: MAX_RATE });
  }

  // The microphone through the worklet: `onFrame({pcm, rms, last}, rate)` for every frame. Returns
  // the rate and `close()`, which posts the last, shorter frame and releases the microphone.
  async function openMicrophone(context, onFrame) {
    let stream = null;
    try {
      // The speech as it is: the browser's echo cancelling, noise suppression and gain control
      // are made for calls, and clip or smear what the recogniser would hear.
      stream = await navigator.mediaDevices.getUserMedia({
        audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false },
      });
      await context.audioWorklet.addModule("/app/live-worklet.js");
    } catch (e) {
      if (stream) stream.getTracks().forEach((t) => t.stop());
      context.close().catch(() => {});
      throw e;
    }
    const source = context.createMediaStreamSource(stream);
    const node = new AudioWorkletNode(context, "scribe-pcm-frames", {
      numberOfInputs: 1,
      numberOfOutputs: 1,
      outputChannelCount: [1],
      processorOptions: { frameSamples: Math.round(context.sampleRate * FRAME_SECONDS) },
    });
    let flushed = null;
    node.port.onmessage = (e) => {
      onFrame(e.data, context.sampleRate);
      if (e.data.last && flushed) flushed();
    };
    source.connect(node);
    // The node writes silence; it is connected so that the browser runs it.
    node.connect(context.destination);
    if (context.state === "suspended") await context.resume();
    let closing = null;
    return {
      sampleRate: context.sampleRate,
      close() {
        if (!closing) {
          closing = (async () => {
            source.disconnect();
            await new Promise((resolve) => {
              flushed = resolve;
              node.port.postMessage("flush");
              setTimeout(resolve, 500);
            });
            node.port.onmessage = null;
            node.disconnect();
            stream.getTracks().forEach((t) => t.stop());
            await context.close().catch(() => {});
          })();
        }
        return closing;
      },
    };
  }

  function microphoneProblem(e) {
    const name = e && e.name;
    if (name === "NotAllowedError" || name === "SecurityError") return "The browser did not allow the microphone. Allow it for this site and press Start again.";
    if (name === "NotFoundError" || name === "OverconstrainedError") return "No microphone was found.";
    if (name === "NotReadableError") return "The microphone is in use by another program or could not be opened.";
    return `The microphone could not be started (${(e && e.message) || e}).`;
  }

  // app: what the Live page borrows from app.js (page, field, select, errorBox, show, api,
  // apiKey, languageLabel, loadCapabilities). Returns `{ destroy }`, called when the customer
  // leaves the page: a running session is ended (END), its audio released.
  function liveView(app) {
    const { field, select, show } = app;
    const err = app.errorBox("live-error");
    const language = select([["auto", "automatic detection (auto)"]], "auto");
    const glossary = select([["", "none"]], "");
    const saveAsJob = el("input", { type: "checkbox", id: "live-save" });
    const revise = el("input", { type: "checkbox", id: "live-revise" });
    const start = el("button", { class: "primary", id: "live-start", type: "button" }, "Start");
    const stop = el("button", { class: "danger", id: "live-stop", type: "button", disabled: true }, "Stop");
    const clock = el("span", { class: "live-clock", id: "live-clock", role: "timer", "aria-label": "Time since Start" }, "00:00");
    const bar = el("span", { class: "live-level-bar" });
    const level = el("span", { class: "live-level", id: "live-level", role: "meter", "aria-label": "Microphone level",
      "aria-valuemin": 0, "aria-valuemax": 100, "aria-valuenow": 0 }, bar);
    const delay = el("span", { class: "hint live-delay", id: "live-delay",
      title: "How long after the end of its last word the latest caption was final" });
    const status = el("p", { class: "live-status", id: "live-status", role: "status" });
    const captions = el("div", { class: "live-captions", id: "live-captions", role: "log", "aria-live": "polite",
      "aria-labelledby": "live-captions-h", tabindex: "0" });
    const jobBox = el("div", { id: "live-job", role: "status" });
    const controls = [language, glossary, saveAsJob, revise];

    const unsupported = !window.isSecureContext || !navigator.mediaDevices || !window.AudioWorkletNode || !window.WebSocket;
    app.page("Live transcription",
      el("p", {}, "Speak and read the words as they are recognised. A live session is paid like a direct job, per started minute of audio."),
      ...(unsupported ? [el("div", { class: "warn", id: "live-unsupported" }, "This browser cannot stream the microphone from this address: it needs a secure address (https://, or localhost) and a current browser.")] : []),
      el("div", { class: "panel" },
        el("div", { class: "form-grid" },
          field("live-language", "Language", language),
          field("live-glossary", "Glossary", glossary, "optional"),
          el("div", { class: "live-check" },
            el("label", { for: "live-save" }, saveAsJob, " Save as job"),
            el("span", { class: "hint" }, "Keep the audio and the transcript as a job to edit and export")),
          el("div", { class: "live-check" },
            el("label", { for: "live-revise" }, revise, " Revise captions"),
            el("span", { class: "hint" }, "Read each caption again with the next, so sentences read on (a second decoding each)"))),
        el("div", { class: "row live-controls" }, start, stop,
          el("span", { class: "live-meters" }, delay, clock, el("span", { class: "hint", "aria-hidden": "true" }, "Level"), level))),
      status, err,
      el("h2", { id: "live-captions-h" }, "Captions"), captions, jobBox);

    app.loadCapabilities().then((c) => {
      language.append(...c.asrLanguages.map((code) => el("option", { value: code }, app.languageLabel(code))));
      if (c.asrLanguages.includes("en")) language.value = "en";
    }).catch((e) => show(err, e));
    app.api("GET", "/glossary").then((gs) => {
      glossary.append(...gs.map((g) => el("option", { value: g.id }, g.name)));
    }).catch((e) => show(err, e));

    let session = null;

    const say = (text, kind) => {
      status.textContent = text || "";
      status.dataset.kind = kind || "info";
    };

    function setBusy(busy) {
      start.disabled = busy || unsupported;
      stop.disabled = !busy;
      for (const c of controls) c.disabled = busy;
    }
    setBusy(false);

    function setLevel(rms) {
      const value = Math.round(100 * meterLevel(rms));
      bar.style.width = `${value}%`;
      level.setAttribute("aria-valuenow", value);
    }

    // ---- captions ----

    const lineOf = (id) => [...captions.children].find((p) => p.dataset.id === id);
    // Keeps the newest words in view, unless the reader has scrolled back.
    function follow(update) {
      const atEnd = captions.scrollHeight - captions.scrollTop - captions.clientHeight < 40;
      update();
      if (atEnd) captions.scrollTop = captions.scrollHeight;
    }
    function partial(result) {
      follow(() => {
        let line = lineOf(result.id);
        if (line && line.classList.contains("final")) return;
        if (!line) {
          // Hidden from screen readers, which hear each final once instead of every partial.
          line = el("p", { class: "partial", "data-id": result.id, "aria-hidden": "true" });
          captions.append(line);
        }
        line.textContent = textOf(result);
      });
    }
    function final(s, result) {
      follow(() => {
        const text = textOf(result);
        const old = lineOf(result.id);
        const line = el("p", { class: "final", "data-id": result.id }, text);
        // A revision (the final read again with the next one) replaces its line; the delay
        // shown stays the final's.
        const spokenAt = text && !result.revised ? capturedAt(s, speechEndOf(result)) : null;
        if (spokenAt !== null) {
          const seconds = Math.max(0, (performance.now() - spokenAt) / 1000);
          line.dataset.delay = seconds.toFixed(2);
          delay.textContent = `Delay ${seconds.toFixed(1)} s`;
        }
        if (old) old.replaceWith(line);
        else if (text) captions.append(line);
        if (!text) line.remove();
      });
    }

    // ---- the session ----

    function onFrame(s, frame, rate) {
      if (!frame.last) setLevel(frame.rms);
      if (!frame.pcm.byteLength) return;
      if (s.started && s.ws.readyState === WebSocket.OPEN) s.ws.send(frame.pcm);
      else if (!s.started && s.queue.length < MAX_QUEUED_FRAMES) s.queue.push(frame.pcm);
      else return;
      // The stream's clock: where this frame ends in what the server hears, captured now.
      s.streamSeconds += frame.pcm.byteLength / 2 / rate;
      s.timeline.push([s.streamSeconds, performance.now()]);
      if (s.timeline.length > TIMELINE_FRAMES) s.timeline.shift();
    }

    // When the microphone captured the instant `t` of the stream (seconds since its first
    // sample), or null when the page no longer knows.
    function capturedAt(s, t) {
      if (!Number.isFinite(t) || !s.timeline.length) return null;
      const i = s.timeline.findIndex(([end]) => end >= t);
      if (i < 0 || (i === 0 && s.timeline.length === TIMELINE_FRAMES)) return null;
      const [end, at] = s.timeline[i];
      return at - (end - t) * 1000;
    }

    function onMessage(s, e) {
      if (session !== s || typeof e.data !== "string") return;
      let msg;
      try {
        msg = JSON.parse(e.data);
      } catch (_) {
        return;
      }
      const m = msg.message || {};
      switch (msg.type) {
        case "Info":
          if (!s.started && m.sessionId) {
            s.started = true;
            s.jobId = m.jobId || null;
            s.startedAt = performance.now();
            s.ticker = setInterval(() => (clock.textContent = mmss(performance.now() - s.startedAt)), 250);
            for (const pcm of s.queue.splice(0)) s.ws.send(pcm);
            if (!s.stopping) say(m.language && m.language !== "auto" ? `${m.message}: listening (${app.languageLabel(m.language)}).` : `${m.message}: listening.`);
          } else {
            say(m.message);
          }
          break;
        case "Warning":
          say(`Warning: ${m.message}`, "warning");
          break;
        case "Error":
          s.failed = true;
          show(err, new Error(m.message || m.code || "The server refused the session."));
          break;
        case "PartialResult":
          partial(m);
          break;
        case "FinalResult":
          final(s, m);
          break;
        default:
          break;
      }
    }

    function onClose(s, e) {
      clearTimeout(s.endTimer);
      clearInterval(s.ticker);
      if (s.mic) s.mic.close();
      if (session !== s) return;
      session = null;
      setLevel(0);
      // Partials the server never confirmed are not part of the transcript.
      for (const p of captions.querySelectorAll(".partial")) p.remove();
      if (!s.started && !s.failed && !s.stopping && e.code !== 1000) {
        show(err, new Error(`The live transcription service could not be reached (connection closed, code ${e.code}).`));
      } else if (e.code !== 1000 && !s.failed) {
        show(err, new Error(`The connection was lost (close code ${e.code}${e.reason ? `: ${e.reason}` : ""}). The captions above are what was finalized.`));
      }
      say(s.started ? `Session ended after ${clock.textContent}.` : "");
      setBusy(false);
      if (s.saveAsJob && s.jobId) followJob(s.jobId);
    }

    // A saved session's job: wait until it is DONE, then link its editor.
    async function followJob(jobId) {
      const jobLink = el("a", { href: `#/job/${encodeURIComponent(jobId)}`, id: "live-job-page" }, "the job's page");
      jobBox.replaceChildren(el("p", { class: "hint" }, "Saving the session as a job: its recording is read again as one text…"));
      const deadline = Date.now() + JOB_TIMEOUT_MS;
      for (;;) {
        let j = null;
        try {
          j = (await app.api("GET", "/jobs/status", { params: { jobId } })).jobStatus;
        } catch (e) {
          if (e.status !== 404 || Date.now() > deadline) return jobBox.replaceChildren(el("div", { class: "error", role: "alert" }, e.message));
        }
        if (!jobBox.isConnected) return;
        if (j && j.status === "DONE") {
          return jobBox.replaceChildren(el("div", { class: "notice" }, "Saved as a job. ",
            el("a", { href: `#/edit/${encodeURIComponent(jobId)}`, id: "live-job-link" }, "Open the transcript in the editor"),
            " or see ", jobLink, " for its exports."));
        }
        if (j && j.status === "ERROR") {
          return jobBox.replaceChildren(el("div", { class: "error", role: "alert" }, `The job failed${j.errorMsg ? `: ${j.errorMsg}` : ""}. See `, jobLink, "."));
        }
        if (Date.now() > deadline) return jobBox.replaceChildren(el("p", {}, "The job is not finished yet: follow it on ", jobLink, "."));
        await new Promise((r) => setTimeout(r, 1000));
      }
    }

    async function begin() {
      if (session || unsupported) return;
      show(err, null);
      say("Starting the microphone…");
      jobBox.replaceChildren();
      captions.replaceChildren();
      clock.textContent = "00:00";
      delay.textContent = "";
      setBusy(true);
      const s = { saveAsJob: saveAsJob.checked, revisions: revise.checked, jobId: null, queue: [], started: false, stopping: false, failed: false,
        streamSeconds: 0, timeline: [] };
      session = s;
      const init = {
        messageType: "INIT",
        language: language.value,
        apiKey: app.apiKey(),
        audioConfig: { sample_rate: 0, encoding: "s16le" },
        outputConfig: { format: "transcription", partials: true, saveAsJob: s.saveAsJob, revisions: s.revisions },
      };
      if (glossary.value) init.glossaryId = glossary.value;
      try {
        s.mic = await openMicrophone(audioContext(), (frame, rate) => onFrame(s, frame, rate));
      } catch (e) {
        if (session === s) {
          session = null;
          say("");
          show(err, new Error(microphoneProblem(e)));
          setBusy(false);
        }
        return;
      }
      if (session !== s || s.stopping) {
        s.mic.close();
        if (session === s) {
          session = null;
          say("");
          setBusy(false);
        }
        return;
      }
      init.audioConfig.sample_rate = s.mic.sampleRate;
      say("Connecting…");
      const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/api/real-time`);
      ws.binaryType = "arraybuffer";
      s.ws = ws;
      ws.onopen = () => ws.send(JSON.stringify(init));
      ws.onmessage = (e) => onMessage(s, e);
      ws.onclose = (e) => onClose(s, e);
    }

    // Stop: the last frame, then END; the server finalizes the last speech and closes.
    async function end(s) {
      s.stopping = true;
      stop.disabled = true;
      if (!s.ws) return; // still opening the microphone: begin() gives up when it gets there
      say("Finishing the last words…");
      if (s.mic) await s.mic.close();
      clearInterval(s.ticker);
      setLevel(0);
      if (s.ws.readyState === WebSocket.OPEN) {
        s.ws.send(JSON.stringify({ messageType: "END" }));
        s.endTimer = setTimeout(() => s.ws.close(), END_TIMEOUT_MS);
      } else {
        s.ws.close();
      }
    }

    start.addEventListener("click", begin);
    stop.addEventListener("click", () => session && !session.stopping && end(session));

    return {
      destroy() {
        const s = session;
        if (!s) return;
        session = null;
        clearInterval(s.ticker);
        if (s.mic) s.mic.close();
        // The server still finalizes (and saves) what was said; nobody is here to read it.
        if (s.ws && s.ws.readyState === WebSocket.OPEN) s.ws.send(JSON.stringify({ messageType: "END" }));
        else if (s.ws) s.ws.close();
      },
    };
  }

  window.ScribeLive = { liveView };
})();
