// The one editor of Scribe's web app, for customers correcting their finished jobs and for
// transcribers and translators working on tasks. It plays the media with a waveform
// (wavesurfer.js, highlights shown as regions), shows the transcript as words that follow
// playback, edits words in place, splits and joins segments, changes and renames speakers,
// marks highlights (the sentence at the cursor, or any run of words chosen with Shift+click or
// Ctrl+Shift+arrows), previews subtitles with the caption knobs, keeps unsaved changes as a
// local draft, and in translate mode shows the source cues beside the target text. Undo/redo
// (editor-history.js), the timeline of segments or cues on the waveform (editor-timeline.js) and
// find and replace (editor-find.js) live in their own files.
"use strict";

(function () {
  const LOW_CONFIDENCE = 0.6;
  const SENTENCE_END = /[.?!…]["')\]]*$/;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }

  /// Whether the open media lasts an hour or more: every clock then shows hours.
  let longMedia = false;
  const SPEEDS = [0.5, 0.75, 1, 1.25, 1.5, 1.75, 2];

  /// `mm:ss.s`, or `h:mm:ss.s` for media of an hour or more (or a time past an hour). Rounds
  /// once, to tenths, before splitting into units, so 59.96 s is `01:00.0`, never `00:60.0`.
  function clock(seconds, hours = longMedia) {
    if (!Number.isFinite(seconds) || seconds < 0) seconds = 0;
    const tenths = Math.round(seconds * 10);
    const h = Math.floor(tenths / 36000);
    const m = Math.floor(tenths / 600) % 60;
    const s = `${String(Math.floor(tenths / 10) % 60).padStart(2, "0")}.${tenths % 10}`;
    return hours || h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${String(m).padStart(2, "0")}:${s}`;
  }

  // Lays timed words out as captions: a new caption at a change of speaker, a pause, or when
  // the rows are full or the caption would stay on screen too long.
  function captions(words, knobs) {
    const cues = [];
    let cue = null;
    let row = "";
    const flush = () => {
      if (cue) {
        cue.rows.push(row);
        cues.push(cue);
      }
      cue = null;
      row = "";
    };
    for (const w of words) {
      const text = w.text.trim();
      if (!text) continue;
      const tooLong = cue && w.end - cue.start > knobs.rows * knobs.screen;
      if (!cue || cue.speaker !== w.speaker || w.start - cue.end > 1.5 || tooLong) {
        flush();
        cue = { start: w.start, end: w.end, speaker: w.speaker, rows: [] };
        row = text;
        continue;
      }
      if ((row + " " + text).length > knobs.chars) {
        if (cue.rows.length + 1 >= knobs.rows) {
          flush();
          cue = { start: w.start, end: w.end, speaker: w.speaker, rows: [] };
          row = text;
          continue;
        }
        cue.rows.push(row);
        row = text;
      } else {
        row += " " + text;
      }
      cue.end = w.end;
    }
    flush();
    return cues;
  }

  class Editor {
    // opts: { mode: "transcript" | "translate", document, mediaUrl, sourceCues, glossary,
    //         instructions, draftKey, revision, save(doc) -> Promise<message>, actions: [{id,label,run,danger}] }
    constructor(root, opts) {
      this.root = root;
      this.opts = opts;
      this.mode = opts.mode || "transcript";
      this.dirty = false;
      this.focus = null; // {s, w}
      this.range = null; // words chosen for a highlight: {anchor: flat index, end: flat index}
      this.knobs = { chars: 42, rows: 2, screen: 2 };
      this.doc = this.mode === "translate" ? this.translationModel(opts.document, opts.sourceCues || []) : structuredClone(opts.document);
      this.doc.highlights = this.doc.highlights || [];
      const words = this.mode === "translate" ? this.doc.cues : this.doc.segments.flatMap((seg) => seg.words);
      longMedia = words.some((w) => w.end >= 3600);
      this.history = new ScribeHistory.EditorHistory(JSON.stringify(this.doc));
      this.rules = null;
      Promise.resolve(opts.rules).then((rules) => {
        this.rules = rules || null;
        this.renderRegions();
      }).catch(() => {});
      this.onKey = (e) => this.shortcut(e);
      this.onUnload = (e) => {
        if (this.dirty) {
          e.preventDefault();
          e.returnValue = "";
        }
      };
      document.addEventListener("keydown", this.onKey);
      window.addEventListener("beforeunload", this.onUnload);
      this.build();
      this.offerDraft();
    }

    destroy() {
      document.removeEventListener("keydown", this.onKey);
      window.removeEventListener("beforeunload", this.onUnload);
      if (this.wave) this.wave.destroy();
      if (this.audio) this.audio.pause();
    }

    // ---- model -------------------------------------------------------------------------

    translationModel(document, cues) {
      const words = document ? document.segments.flatMap((s) => s.words) : [];
      // Each saved word belongs to the cue it overlaps most (the nearest if none): a cue whose
      // edges were dragged keeps its saved times.
      const overlap = (w, c) => Math.min(w.end, c.end) - Math.max(w.start, c.start);
      const owner = words.map((w) => cues.reduce((best, c, i) => (best < 0 || overlap(w, c) > overlap(w, cues[best]) ? i : best), -1));
      return {
        speakers: document ? document.speakers : [],
        cues: cues.map((c, i) => {
          const mine = words.filter((_, k) => owner[k] === i);
          if (!mine.length) return { ...c, target: "" };
          return { ...c, start: mine[0].start, end: Math.max(...mine.map((w) => w.end)), target: mine.map((w) => w.text).join(" ") };
        }),
        highlights: document ? document.highlights || [] : [],
      };
    }

    /// The document to save (the export-json shape).
    toDocument() {
      if (this.mode === "translate") {
        const ids = [...new Set(this.doc.cues.map((c) => c.speaker))];
        const known = new Map((this.doc.speakers || []).map((s) => [s.spkid, s.name]));
        return {
          speakers: ids.map((id, i) => ({ spkid: id, name: known.get(id) || `Speaker ${i + 1}` })),
          segments: this.doc.cues
            .filter((c) => c.target.trim())
            .map((c) => ({ speaker: c.speaker, words: [{ start: c.start, end: c.end, text: c.target.trim(), conf: 1, pristine: false }] })),
          highlights: this.doc.highlights,
        };
      }
      const segments = this.doc.segments
        .map((s) => ({ speaker: s.speaker, words: s.words.filter((w) => w.text.trim()) }))
        .filter((s) => s.words.length);
      // A highlight's text follows the words it covers, as corrected.
      const highlights = this.doc.highlights.map((h) => ({ ...h, text: this.wordsIn(h.start, h.end).map((w) => w.text.trim()).join(" ") || h.text }));
      return { speakers: this.doc.speakers, segments, highlights };
    }

    flatWords() {
      if (this.mode === "translate") {
        return this.doc.cues.filter((c) => c.target.trim()).map((c) => ({ start: c.start, end: c.end, text: c.target, speaker: c.speaker }));
      }
      return this.doc.segments.flatMap((seg) => seg.words.map((w) => ({ ...w, speaker: seg.speaker })));
    }

    /// After every edit: `label` names a step of its own for undo; without one, the edit is
    /// typing, and keystrokes in the same field make one step.
    changed(label) {
      const active = document.activeElement;
      let key = null;
      if (!label && active && active.classList.contains("w")) {
        key = `word ${active.dataset.s} ${active.dataset.w}`;
        label = `typing “${active.textContent.trim()}”`;
      } else if (!label && active && active.id) {
        key = `field ${active.id}`;
        const name = active.getAttribute("aria-label") || (active.labels && active.labels[0] ? active.labels[0].textContent : active.id);
        label = `editing “${name}”`;
      }
      this.history.record(JSON.stringify(this.doc), label || "an edit", key);
      this.updateUndo();
      this.touched();
    }

    /// The document changed (an edit, an undo or a redo): keep a draft, refresh the preview.
    touched() {
      this.dirty = true;
      this.setStatus("Unsaved changes (kept as a local draft)");
      clearTimeout(this.draftTimer);
      this.draftTimer = setTimeout(() => this.storeDraft(), 400);
      this.cues = null;
      this.renderCaption();
      clearTimeout(this.timelineTimer);
      this.timelineTimer = setTimeout(() => this.renderRegions(), 500);
    }

    // ---- undo, timing, find and replace ------------------------------------------------

    /// Everything drawn from the document, drawn again (after an undo, a redo, a replacement).
    rerender() {
      if (this.mode === "transcript") this.renderSpeakers();
      this.renderBody();
      this.renderRegions();
    }

    undo() {
      this.restore(this.history.undo(), "Undone");
    }

    redo() {
      this.restore(this.history.redo(), "Redone");
    }

    restore(step, verb) {
      if (!step) return this.setStatus(verb === "Undone" ? "Nothing to undo." : "Nothing to redo.");
      const focus = this.focus;
      this.doc = JSON.parse(step.snapshot);
      this.range = null;
      this.rerender();
      this.updateUndo();
      this.touched();
      this.setStatus(`${verb}: ${step.label.replace(/[.]$/, "")}.`);
      if (focus && this.mode === "transcript") this.focusWord(focus.s, focus.w);
    }

    updateUndo() {
      if (!this.undoBtn) return;
      this.undoBtn.disabled = !this.history.canUndo();
      this.redoBtn.disabled = !this.history.canRedo();
    }

    /// A timeline edge was dragged (editor-timeline.js changed the times).
    timingChanged(label) {
      this.cues = null;
      if (this.mode === "translate") this.renderCues();
      else this.renderSegments();
      this.changed(label);
      this.renderRegions();
      this.setStatus(`${label}.`);
    }

    /// The texts find and replace searches: every word, or every cue's translation.
    fields() {
      if (this.mode === "translate") {
        return this.doc.cues.map((c, i) => ({ get: () => c.target, set: (t) => (c.target = t), node: () => this.main.querySelector(`#target-${i}`), start: c.start }));
      }
      return this.doc.segments.flatMap((seg, s) => seg.words.map((w, i) => ({
        get: () => w.text,
        set: (t) => {
          w.text = t;
          w.pristine = false;
        },
        node: () => this.main.querySelector(`.w[data-s="${s}"][data-w="${i}"]`),
        start: w.start,
      })));
    }

    replaced(label) {
      this.rerender();
      this.changed(label);
    }

    setSpeed(rate) {
      const v = SPEEDS.includes(rate) ? rate : 1;
      this.audio.playbackRate = v;
      this.speed.value = String(v);
      this.setStatus(`Playback speed ${v}×.`);
    }

    stepSpeed(step) {
      const i = SPEEDS.indexOf(this.audio.playbackRate);
      this.setSpeed(SPEEDS[Math.max(0, Math.min(SPEEDS.length - 1, (i < 0 ? SPEEDS.indexOf(1) : i) + step))]);
    }

    /// Waveform zoom in pixels per second of media; 0 fits the whole media in the box.
    zoom(factor) {
      if (!this.wave || this.waveBox.dataset.ready !== "true") return this.setStatus("The waveform is still loading.");
      // The waveform is drawn over the decoded audio, which may be shorter than a video.
      const decoded = this.wave.getDecodedData();
      const duration = decoded ? decoded.duration : this.wave.getDuration();
      // Pixels per second as drawn now (the whole media fits the box when not zoomed).
      const drawn = duration > 0 ? this.wave.getWrapper().clientWidth / duration : 1;
      if (!this.zoomLevel) this.fitZoom = drawn;
      const fit = this.fitZoom || drawn;
      const now = this.zoomLevel || fit;
      const next = Math.min(2000, now * factor);
      this.zoomLevel = next <= fit * 1.01 ? 0 : next;
      this.wave.zoom(this.zoomLevel);
      this.waveBox.dataset.zoom = String(Math.round(this.zoomLevel || fit));
      this.zoomOutBtn.disabled = !this.zoomLevel;
      this.setStatus(this.zoomLevel ? `Waveform zoom: ${Math.round(this.zoomLevel)} pixels per second.` : "Waveform zoom: the whole media.");
    }

    /// Words stay plain text: pasted or dropped HTML arrives as its text, and formatting
    /// commands (Ctrl+B/I/U, the context menu) do nothing.
    keepPlain() {
      const insertPlain = (e, data) => {
        if (!e.target.closest || !e.target.closest(".w")) return;
        e.preventDefault();
        const text = (data ? data.getData("text/plain") : "").replace(/\s+/g, " ");
        if (text) document.execCommand("insertText", false, text);
      };
      this.main.addEventListener("paste", (e) => insertPlain(e, e.clipboardData));
      this.main.addEventListener("drop", (e) => insertPlain(e, e.dataTransfer));
      this.main.addEventListener("beforeinput", (e) => {
        if (e.inputType.startsWith("format")) e.preventDefault();
        else if (e.inputType === "historyUndo" || e.inputType === "historyRedo") {
          e.preventDefault();
          if (e.inputType === "historyUndo") this.undo();
          else this.redo();
        }
      });
    }

    // ---- drafts ------------------------------------------------------------------------

    draftStorageKey() {
      return `scribe.draft.${this.opts.draftKey}`;
    }

    storeDraft() {
      if (!this.dirty) return;
      try {
        localStorage.setItem(this.draftStorageKey(), JSON.stringify({ at: Date.now(), revision: this.opts.revision, doc: this.doc }));
      } catch (e) {
        this.showError(`The local draft could not be stored (${e.message}); save soon.`);
      }
    }

    dropDraft() {
      localStorage.removeItem(this.draftStorageKey());
    }

    offerDraft() {
      let draft = null;
      try {
        draft = JSON.parse(localStorage.getItem(this.draftStorageKey()) || "null");
      } catch (_) {
        draft = null;
      }
      if (!draft || !draft.doc) return;
      const when = new Date(draft.at).toLocaleString();
      const stale = draft.revision !== this.opts.revision;
      const box = el("div", { class: "warn", role: "region", "aria-label": "Unsaved draft", id: "draft-offer" },
        el("p", {}, `You have unsaved changes from ${when}` + (stale ? " (made on an older revision)." : ".")),
        el("div", { class: "row" },
          el("button", { class: "primary", id: "restore-draft", onclick: () => {
            this.doc = draft.doc;
            this.dirty = true;
            box.remove();
            this.rerender();
            this.history.record(JSON.stringify(this.doc), "restoring the draft", null);
            this.updateUndo();
            this.setStatus("Draft restored: not saved yet");
          } }, "Restore draft"),
          el("button", { id: "discard-draft", onclick: () => {
            this.dropDraft();
            box.remove();
            this.setStatus("Draft discarded");
          } }, "Discard draft")));
      this.top.after(box);
    }

    // ---- layout ------------------------------------------------------------------------

    build() {
      const o = this.opts;
      this.root.replaceChildren();
      // A <video> plays audio too: it shows the picture of video jobs, and hides for audio.
      this.audio = el("video", { id: "media-video", preload: "auto", playsinline: true, hidden: true, "aria-label": "The job's video" });
      this.audio.src = o.mediaUrl;
      this.audio.addEventListener("loadedmetadata", () => {
        this.audio.hidden = !this.audio.videoWidth;
        if (this.audio.duration >= 3600 && !longMedia) {
          longMedia = true;
          this.renderBody();
        }
      });
      this.timeLabel = el("span", { class: "time", "aria-live": "off", id: "time" }, "00:00.0");
      this.playBtn = el("button", { id: "play", onclick: () => this.playPause(), "aria-keyshortcuts": "Escape" }, "Play");
      const tools = [
        this.playBtn,
        el("button", { id: "back5", onclick: () => this.seek(this.audio.currentTime - 5), "aria-keyshortcuts": "Control+B" }, "Back 5 s"),
        el("button", { id: "fwd5", onclick: () => this.seek(this.audio.currentTime + 5), "aria-keyshortcuts": "Control+F" }, "Forward 5 s"),
        el("label", { class: "inline", for: "speed" }, "Speed",
          (this.speed = el("select", { id: "speed", "aria-keyshortcuts": "Control+, Control+.", onchange: (e) => this.setSpeed(Number(e.target.value)) },
            SPEEDS.map((v) => el("option", { value: String(v), selected: v === 1 }, `${v}×`))))),
        el("button", { id: "prev-seg", onclick: () => this.gotoSegment(-1), "aria-keyshortcuts": "Control+ArrowUp" }, "Previous segment"),
        el("button", { id: "next-seg", onclick: () => this.gotoSegment(1), "aria-keyshortcuts": "Control+ArrowDown" }, "Next segment"),
      ];
      if (this.mode === "transcript") {
        tools.push(
          el("button", { id: "split", onclick: () => this.split(), "aria-keyshortcuts": "Control+Enter" }, "Split at word"),
          el("button", { id: "highlight", onclick: () => this.toggleHighlight(), "aria-keyshortcuts": "Control+M", title: "The chosen words (Shift+click, Ctrl+Shift+→/←), else the sentence at the cursor" }, "Highlight"),
        );
      }
      this.undoBtn = el("button", { id: "undo", disabled: true, onclick: () => this.undo(), "aria-keyshortcuts": "Control+Z" }, "Undo");
      this.redoBtn = el("button", { id: "redo", disabled: true, onclick: () => this.redo(), "aria-keyshortcuts": "Control+Shift+Z Control+Y" }, "Redo");
      this.findButton = el("button", { id: "find-replace", "aria-expanded": "false", "aria-controls": "find-panel", onclick: () => this.finder.toggle(), "aria-keyshortcuts": "Control+H" }, "Find and replace");
      this.zoomOutBtn = el("button", { id: "zoom-out", disabled: true, onclick: () => this.zoom(0.5), "aria-keyshortcuts": "Alt+-" }, "Zoom out");
      tools.push(this.undoBtn, this.redoBtn, this.findButton,
        el("button", { id: "zoom-in", onclick: () => this.zoom(2), "aria-keyshortcuts": "Alt+=" }, "Zoom in"), this.zoomOutBtn);
      tools.push(el("button", { id: "save", class: "primary", onclick: () => this.save(), "aria-keyshortcuts": "Control+S" }, "Save"));
      for (const a of o.actions || []) {
        tools.push(el("button", { id: a.id, class: a.danger ? "danger" : "", onclick: () => this.runAction(a) }, a.label));
      }
      tools.push(this.timeLabel);
      this.status = el("p", { class: "hint", role: "status", id: "editor-status" }, this.mode === "translate" ? "Type the translation of each cue." : "Click a word to hear it; type to correct it.");
      this.error = el("div", { class: "error", role: "alert", id: "editor-error" });
      this.notice = el("div", { class: "notice", role: "status", id: "editor-notice" });
      this.waveBox = el("div", { id: "waveform", role: "img", "aria-label": "Waveform of the media; highlights are shaded" });
      this.caption = el("div", { class: "caption", id: "caption-preview", "aria-live": "off", "aria-label": "Subtitle preview" });
      this.finder = new ScribeFind.FindReplace(this);
      this.timelineSummary = el("p", { class: "hint timeline-summary", id: "timeline-summary" });
      this.timeline = new ScribeTimeline.Timeline(this, this.timelineSummary);
      this.top = el("div", { class: "editor-top" }, el("div", { class: "toolbar", role: "toolbar", "aria-label": "Editor" }, tools), this.finder.panel, this.audio, this.waveBox, this.timelineSummary, this.caption, this.status, this.error, this.notice);
      this.main = el("div", { class: "transcript", id: "transcript" });
      this.side = el("aside", { class: "side", "aria-label": "Speakers, instructions and settings" });
      this.root.append(this.top, el("div", { class: "editor-body" }, this.main, this.side));
      this.renderSide();
      this.renderBody();
      this.keepPlain();
      this.startWave();
      this.audio.addEventListener("timeupdate", () => this.follow());
      this.audio.addEventListener("play", () => (this.playBtn.textContent = "Pause"));
      this.audio.addEventListener("pause", () => (this.playBtn.textContent = "Play"));
      this.audio.addEventListener("error", () => this.showError("The media could not be loaded for playback."));
    }

    startWave() {
      if (!window.WaveSurfer) {
        this.waveBox.textContent = "Waveform unavailable (wavesurfer.js did not load).";
        return;
      }
      this.regions = WaveSurfer.Regions.create();
      this.wave = WaveSurfer.create({
        container: this.waveBox,
        media: this.audio,
        height: 80,
        waveColor: "#5b6b7c",
        progressColor: "#0b5cad",
        cursorColor: "#a4161a",
        cursorWidth: 2,
        normalize: true,
        plugins: [this.regions],
      });
      this.wave.on("ready", () => {
        this.waveBox.dataset.ready = "true";
        this.renderRegions();
      });
      this.regions.on("region-update", () => (this.timeline.dragging = true));
      this.regions.on("region-updated", (region) => this.timeline.dropped(region));
      this.wave.on("error", (e) => {
        this.waveBox.dataset.ready = "error";
        this.setStatus(`Waveform unavailable (${e && e.message ? e.message : e}); playback still works.`);
      });
    }

    renderRegions() {
      clearTimeout(this.timelineTimer);
      if (this.timeline) this.timeline.draw();
    }

    renderSide() {
      const o = this.opts;
      const parts = [];
      if (o.instructions) {
        const i = o.instructions;
        parts.push(el("h2", {}, "Instructions"), el("div", { class: "panel", id: "instructions" },
          el("p", {}, el("strong", {}, "Style: "), i.transcriptionStyle === "verbatim" ? "verbatim (keep fillers, stutters, false starts)" : "clean read (drop fillers, stutters, false starts)"),
          el("p", {}, el("strong", {}, "Speakers announced: "), i.numberOfSpeakers ? String(i.numberOfSpeakers) : "unknown"),
          el("p", {}, el("strong", {}, "Notes: "), i.notes || "none")));
      }
      if (o.glossary) {
        const g = o.glossary;
        parts.push(el("h2", {}, `Glossary: ${g.name}`), el("div", { class: "panel", id: "glossary" },
          g.names && g.names.length ? el("p", {}, el("strong", {}, "Names: "), g.names.join(", ")) : null,
          g.items && g.items.length ? el("dl", {}, g.items.map((it) => [el("dt", {}, it.name), el("dd", {}, it.description || "")])) : null));
      }
      if (this.mode === "transcript") {
        this.speakerBox = el("div", { class: "panel speakers", id: "speakers" });
        parts.push(el("h2", {}, "Speakers"), this.speakerBox);
        this.renderSpeakers();
      }
      const knob = (id, label, key, min, max, step) =>
        el("div", {}, el("label", { for: id }, label), el("input", { id, type: "number", min, max, step, value: this.knobs[key], oninput: (e) => {
          const v = Number(e.target.value);
          if (Number.isFinite(v) && v >= min && v <= max) {
            this.knobs[key] = v;
            this.cues = null;
            this.renderCaption();
          }
        } }));
      parts.push(el("h2", {}, "Subtitle preview"), el("div", { class: "panel" },
        knob("knob-chars", "Max characters per row", "chars", 10, 80, 1),
        knob("knob-rows", "Max rows per caption", "rows", 1, 4, 1),
        knob("knob-screen", "Max seconds per row", "screen", 0.5, 10, 0.5)));
      parts.push(el("h2", {}, "Keyboard"), el("dl", { class: "keys panel", id: "shortcuts" },
        [["Esc", "play / pause"], ["Ctrl+B / Ctrl+F", "back / forward 5 seconds"], ["Ctrl+, / Ctrl+.", "slower / faster (0.5× to 2×)"], ["Ctrl+↓ / Ctrl+↑", "next / previous segment"],
          ["Ctrl+Z", "undo"], ["Ctrl+Shift+Z / Ctrl+Y", "redo"], ["Ctrl+H", "find and replace"], ["Alt+= / Alt+-", "zoom the waveform in / out"], ["Alt+[ / Alt+]", "segment or cue starts 0.1 s earlier / later"], ["Alt+Shift+[ / ]", "it ends 0.1 s earlier / later"], ["Ctrl+S", "save"]]
          .concat(this.mode === "transcript" ? [["Ctrl+Enter", "split at the word"], ["Ctrl+Shift+→ / ←", "choose words (or Shift+click)"], ["Ctrl+M", "highlight the chosen words, else the sentence; again to remove"], ["Tab", "next word"]] : [["Tab", "next cue"]])
          .map(([k, v]) => [el("dt", {}, el("kbd", {}, k)), el("dd", {}, v)])));
      if (this.mode === "transcript") {
        parts.push(el("p", { class: "legend hint" }, el("span", { class: "w low" }, "low confidence"), el("span", { class: "w hl" }, "highlight"), el("span", { class: "w sel" }, "chosen"), el("span", { class: "w cur" }, "playing")));
      }
      this.side.replaceChildren(...parts);
    }

    renderSpeakers() {
      const box = this.speakerBox;
      box.replaceChildren(
        ...this.doc.speakers.map((sp, i) => el("div", {},
          el("label", { for: `speaker-${i}` }, `Name of speaker ${i + 1}`, el("span", { class: "hint" }, ` (${sp.spkid})`)),
          el("input", { id: `speaker-${i}`, "data-spkid": sp.spkid, value: sp.name, oninput: (e) => {
            sp.name = e.target.value;
            for (const sel of this.main.querySelectorAll("select.speaker")) {
              const opt = [...sel.options].find((o) => o.value === sp.spkid);
              if (opt) opt.textContent = sp.name || sp.spkid;
            }
            this.changed();
          } }))),
        el("button", { id: "add-speaker", onclick: () => {
          let n = this.doc.speakers.length + 1;
          while (this.doc.speakers.some((s) => s.spkid === `spk${n}`)) n++;
          this.doc.speakers.push({ spkid: `spk${n}`, name: `Speaker ${this.doc.speakers.length + 1}` });
          this.renderSpeakers();
          this.renderBody();
          this.changed("adding a speaker");
        } }, "Add a speaker"));
    }

    renderBody() {
      this.cues = null;
      if (this.mode === "translate") this.renderCues();
      else this.renderSegments();
      this.renderCaption();
    }

    renderSegments() {
      const frag = document.createDocumentFragment();
      frag.append(el("h2", { class: "sr-only" }, "Transcript"));
      let flatIndex = 0;
      const [ra, rb] = this.rangeBounds() || [-1, -2];
      this.doc.segments.forEach((seg, s) => {
        const first = seg.words[0];
        const select = el("select", { class: "speaker", id: `seg-speaker-${s}`, "aria-label": `Speaker of segment ${s + 1}`, onchange: (e) => {
          seg.speaker = e.target.value;
          this.changed();
        } }, this.doc.speakers.map((sp) => el("option", { value: sp.spkid, selected: sp.spkid === seg.speaker }, sp.name || sp.spkid)));
        const head = el("div", { class: "seg-head" },
          el("span", { class: "hint" }, `Segment ${s + 1} · ${clock(first ? first.start : 0)}`), select,
          s > 0 ? el("button", { class: "join", "data-seg": s, onclick: () => this.join(s) }, "Join with previous") : null);
        const words = el("div", { class: "words", "data-seg": s });
        seg.words.forEach((w, i) => {
          const hl = this.inHighlight(w);
          const chosen = ra <= flatIndex && flatIndex <= rb;
          flatIndex++;
          const span = el("span", {
            class: "w" + (w.conf < LOW_CONFIDENCE ? " low" : "") + (hl ? " hl" : "") + (chosen ? " sel" : "") + (w.pristine === false ? " edited" : ""),
            contenteditable: "true", spellcheck: "true", "data-s": s, "data-w": i, "data-start": w.start,
            title: `${clock(w.start)}–${clock(w.end)} · confidence ${Math.round((w.conf ?? 1) * 100)} %`,
            "aria-label": `${w.text}${w.conf < LOW_CONFIDENCE ? ", low confidence" : ""}${hl ? ", highlighted" : ""}`,
          }, w.text);
          span.addEventListener("mousedown", (e) => {
            if (e.shiftKey && this.focus) {
              e.preventDefault();
              this.chooseTo(s, i);
            } else {
              if (this.range) this.clearRange();
              this.seek(w.start);
            }
          });
          span.addEventListener("focus", () => {
            this.focus = { s, w: i };
          });
          span.addEventListener("input", () => {
            w.text = span.textContent;
            w.pristine = false;
            span.classList.add("edited");
            this.changed();
          });
          span.addEventListener("keydown", (e) => {
            if (e.key === "Enter" && !e.ctrlKey) e.preventDefault();
          });
          span.addEventListener("blur", () => {
            if (!w.text.trim()) {
              this.range = null;
              seg.words.splice(seg.words.indexOf(w), 1);
              if (!seg.words.length) this.doc.segments.splice(this.doc.segments.indexOf(seg), 1);
              this.renderSegments();
              this.renderCaption();
            }
          });
          words.append(span, " ");
        });
        frag.append(el("section", { class: "segment", "data-seg": s, "aria-label": `Segment ${s + 1}` }, head, words));
      });
      this.main.replaceChildren(frag);
    }

    renderCues() {
      const rows = this.doc.cues.map((c, i) => el("tr", { "data-cue": i },
        el("td", { class: "cue-time" }, `${clock(c.start)}`, el("br"), `${clock(c.end)}`),
        el("td", { class: "source", lang: this.opts.sourceLanguage || "" }, el("span", { class: "hint" }, c.speaker + ": "), c.text),
        el("td", {}, el("label", { class: "sr-only", for: `target-${i}` }, `Translation of cue ${i + 1}`),
          el("textarea", { id: `target-${i}`, class: "target", lang: this.opts.targetLanguage || "", onfocus: () => {
            this.focus = { s: i, w: 0 };
          }, oninput: (e) => {
            c.target = e.target.value;
            this.changed();
          } }, c.target))));
      this.main.replaceChildren(el("div", { class: "table-wrap" }, el("table", { class: "cues" },
        el("caption", { class: "sr-only" }, "Source cues and their translations"),
        el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Time"), el("th", { scope: "col" }, `Source (${this.opts.sourceLanguage || ""})`), el("th", { scope: "col" }, `Translation (${this.opts.targetLanguage || ""})`))),
        el("tbody", {}, rows))));
    }

    inHighlight(w) {
      const mid = (w.start + w.end) / 2;
      return this.doc.highlights.some((h) => h.start <= mid && mid <= h.end);
    }

    // ---- playback ----------------------------------------------------------------------

    playPause() {
      if (this.audio.paused) {
        this.audio.play().catch((e) => this.showError(`Playback failed: ${e.message}`));
      } else {
        this.audio.pause();
      }
    }

    seek(t) {
      const d = Number.isFinite(this.audio.duration) ? this.audio.duration : Infinity;
      this.audio.currentTime = Math.max(0, Math.min(t, d));
      this.follow();
    }

    follow() {
      const t = this.audio.currentTime;
      this.timeLabel.textContent = clock(t);
      if (this.mode === "translate") {
        this.doc.cues.forEach((c, i) => {
          const row = this.main.querySelector(`tr[data-cue="${i}"]`);
          if (row) row.classList.toggle("current", c.start <= t && t < c.end);
        });
      } else {
        const prev = this.main.querySelector(".w.cur");
        let found = null;
        for (const span of this.main.querySelectorAll(".w")) {
          const w = this.doc.segments[span.dataset.s]?.words[span.dataset.w];
          if (w && w.start <= t && t < w.end) {
            found = span;
            break;
          }
        }
        if (prev !== found) {
          if (prev) prev.classList.remove("cur");
          if (found) found.classList.add("cur");
        }
        const segNow = found ? found.dataset.s : null;
        for (const sec of this.main.querySelectorAll("section.segment")) sec.classList.toggle("current", sec.dataset.seg === segNow);
      }
      this.renderCaption();
    }

    renderCaption() {
      if (!this.cues) this.cues = captions(this.flatWords(), this.knobs);
      const t = this.audio ? this.audio.currentTime : 0;
      const cue = this.cues.find((c) => c.start <= t && t < c.end + 0.05);
      const text = cue ? cue.rows.join("\n") : "";
      if (this.caption.textContent !== text) this.caption.textContent = text;
    }

    gotoSegment(step) {
      const starts = this.mode === "translate" ? this.doc.cues.map((c) => c.start) : this.doc.segments.map((s) => s.words[0]?.start ?? 0);
      const current = this.focus ? this.focus.s : starts.findLastIndex((s) => s <= this.audio.currentTime + 0.01);
      const target = Math.max(0, Math.min(starts.length - 1, (current < 0 ? -1 : current) + step));
      this.seek(starts[target]);
      const node = this.mode === "translate" ? this.main.querySelector(`#target-${target}`) : this.main.querySelector(`.w[data-s="${target}"][data-w="0"]`);
      if (node) node.focus();
      this.focus = { s: target, w: 0 };
    }

    // ---- structure ---------------------------------------------------------------------

    focusWord(s, w) {
      const node = this.main.querySelector(`.w[data-s="${s}"][data-w="${w}"]`);
      if (node) node.focus();
    }

    split() {
      if (!this.focus) return this.setStatus("Put the cursor in the word that should start the new segment, then split.");
      const { s, w } = this.focus;
      const seg = this.doc.segments[s];
      if (!seg || w === 0) return this.setStatus("That word already starts a segment.");
      this.range = null;
      this.doc.segments.splice(s + 1, 0, { speaker: seg.speaker, words: seg.words.splice(w) });
      this.renderSegments();
      this.changed(`splitting segment ${s + 1}`);
      this.focus = { s: s + 1, w: 0 };
      this.focusWord(s + 1, 0);
      this.setStatus(`Segment ${s + 1} split: segment ${s + 2} starts at “${this.doc.segments[s + 1].words[0].text}”.`);
    }

    join(s) {
      this.range = null;
      const [seg] = this.doc.segments.splice(s, 1);
      const prev = this.doc.segments[s - 1];
      const at = prev.words.length;
      prev.words.push(...seg.words);
      this.renderSegments();
      this.changed(`joining segment ${s + 1} to segment ${s}`);
      this.focus = { s: s - 1, w: at };
      this.focusWord(s - 1, at);
      this.setStatus(`Segment ${s + 1} joined to segment ${s}.`);
    }

    // ---- highlights ----------------------------------------------------------------------

    /// The flat index of word `w` of segment `s`.
    flatIndex(s, w) {
      let i = 0;
      for (let k = 0; k < s; k++) i += this.doc.segments[k].words.length;
      return i + Number(w);
    }

    /// The position {s, w} of the word at flat index `i`.
    position(i) {
      for (let s = 0; s < this.doc.segments.length; s++) {
        const n = this.doc.segments[s].words.length;
        if (i < n) return { s, w: i };
        i -= n;
      }
      return null;
    }

    /// The chosen words as [first, last] flat indices, or null.
    rangeBounds() {
      if (!this.range) return null;
      return [Math.min(this.range.anchor, this.range.end), Math.max(this.range.anchor, this.range.end)];
    }

    /// Words whose middle lies in [start, end] (the rule of TXT's highlightsOnly).
    wordsIn(start, end) {
      return this.doc.segments.flatMap((seg) => seg.words).filter((w) => {
        const mid = (w.start + w.end) / 2;
        return start <= mid && mid <= end && w.text.trim();
      });
    }

    /// Extends the chosen words from the cursor (or the current choice's anchor) to word `w` of segment `s`.
    chooseTo(s, w) {
      const anchor = this.range ? this.range.anchor : this.flatIndex(this.focus.s, this.focus.w);
      this.range = { anchor, end: this.flatIndex(s, w) };
      this.showRange();
      this.focusWord(s, w);
      this.focus = { s, w };
    }

    /// Ctrl+Shift+→/←: one word more or less in the choice.
    chooseStep(step) {
      if (!this.focus) return this.setStatus("Put the cursor in a word first, then choose words with Ctrl+Shift+→ / ←.");
      const total = this.doc.segments.reduce((n, seg) => n + seg.words.length, 0);
      const from = this.range ? this.range.end : this.flatIndex(this.focus.s, this.focus.w);
      const anchor = this.range ? this.range.anchor : from;
      const end = Math.max(0, Math.min(total - 1, (this.range ? from + step : from + (step > 0 ? 1 : -1))));
      this.range = { anchor, end };
      const p = this.position(end);
      this.showRange();
      this.focusWord(p.s, p.w);
      this.focus = p;
    }

    clearRange() {
      this.range = null;
      for (const span of this.main.querySelectorAll(".w.sel")) span.classList.remove("sel");
    }

    showRange() {
      const [a, b] = this.rangeBounds();
      let i = 0;
      for (const span of this.main.querySelectorAll(".w")) {
        span.classList.toggle("sel", a <= i && i <= b);
        i++;
      }
      const flat = this.doc.segments.flatMap((seg) => seg.words);
      const text = flat.slice(a, b + 1).map((w) => w.text.trim()).join(" ");
      this.setStatus(`Chosen: “${text}” (${b - a + 1} word${b > a ? "s" : ""}). Ctrl+M highlights it.`);
    }

    /// Ctrl+M: highlights the chosen words, or else the sentence around the cursor; if they are
    /// all highlighted already, removes the highlight from them (splitting a longer highlight).
    toggleHighlight() {
      const flat = this.doc.segments.flatMap((seg) => seg.words);
      let a;
      let b;
      if (this.range) {
        [a, b] = this.rangeBounds();
      } else {
        if (!this.focus) return this.setStatus("Put the cursor in a word of the sentence to highlight, or choose words with Shift+click.");
        const i = this.flatIndex(this.focus.s, this.focus.w);
        if (!flat[i]) return;
        if (this.inHighlight(flat[i])) {
          // The cursor is in a highlight: remove that whole highlight.
          const mid = (flat[i].start + flat[i].end) / 2;
          this.doc.highlights = this.doc.highlights.filter((h) => !(h.start <= mid && mid <= h.end));
          return this.highlightsChanged("Highlight removed.");
        }
        a = i;
        while (a > 0 && !SENTENCE_END.test(flat[a - 1].text.trim())) a--;
        b = i;
        while (b < flat.length - 1 && !SENTENCE_END.test(flat[b].text.trim())) b++;
      }
      const words = flat.slice(a, b + 1);
      const start = words[0].start;
      const end = words[words.length - 1].end;
      let message;
      if (words.every((w) => this.inHighlight(w))) {
        // Take these words out of every highlight they are in, keeping the rest of each.
        const out = [];
        for (const h of this.doc.highlights) {
          if (h.end < start || h.start > end) {
            out.push(h);
            continue;
          }
          const inside = this.wordsIn(h.start, h.end);
          const before = inside.filter((w) => w.end <= start + 1e-6 && flat.indexOf(w) < a);
          const after = inside.filter((w) => w.start >= end - 1e-6 && flat.indexOf(w) > b);
          for (const part of [before, after]) {
            if (part.length) out.push({ start: part[0].start, end: part[part.length - 1].end, text: part.map((w) => w.text.trim()).join(" ") });
          }
        }
        this.doc.highlights = out;
        message = `Highlight removed from “${words.map((w) => w.text.trim()).join(" ")}”.`;
      } else {
        // Add the span, merging the highlights it overlaps.
        let s0 = start;
        let e0 = end;
        const keep = [];
        for (const h of this.doc.highlights) {
          if (h.end < start || h.start > end) keep.push(h);
          else {
            s0 = Math.min(s0, h.start);
            e0 = Math.max(e0, h.end);
          }
        }
        const text = this.wordsIn(s0, e0).map((w) => w.text.trim()).join(" ");
        keep.push({ start: s0, end: e0, text });
        this.doc.highlights = keep;
        message = `Highlighted: “${text}”`;
      }
      this.range = null;
      this.highlightsChanged(message);
    }

    highlightsChanged(message) {
      this.doc.highlights.sort((x, y) => x.start - y.start);
      const focus = this.focus;
      this.renderSegments();
      this.renderRegions();
      this.changed(message.replace(/[.]$/, ""));
      this.setStatus(message);
      if (focus) {
        this.focusWord(focus.s, focus.w);
        this.focus = focus;
      }
    }

    // ---- saving ------------------------------------------------------------------------

    async save() {
      this.showError("");
      this.notice.textContent = "";
      this.setStatus("Saving…");
      try {
        const message = await this.opts.save(this.toDocument());
        this.dirty = false;
        this.dropDraft();
        this.notice.textContent = message;
        this.setStatus("All changes saved.");
        return true;
      } catch (e) {
        this.showError(e.message);
        this.setStatus("Not saved: your changes are kept as a local draft.");
        this.markField(e.field);
        this.storeDraft();
        return false;
      }
    }

    async runAction(action) {
      this.showError("");
      try {
        if (action.saveFirst && this.dirty && !(await this.save())) return;
        const message = await action.run();
        if (message) this.notice.textContent = message;
      } catch (e) {
        this.showError(e.message);
      }
    }

    /// Focuses the word a 400 names (`document.segments[2].words[5].end`).
    markField(field) {
      const m = /segments\[(\d+)\]\.words\[(\d+)\]/.exec(field || "");
      if (m && this.mode === "transcript") this.focusWord(m[1], m[2]);
    }

    shortcut(e) {
      if (!this.root.isConnected) return;
      const ctrl = e.ctrlKey || e.metaKey;
      // The find box keeps its own undo and Escape.
      if (e.target.closest && e.target.closest("#find-panel") && (e.key === "Escape" || (ctrl && /^[zyZY]$/.test(e.key)))) return;
      let handled = true;
      if (e.key === "Escape") this.playPause();
      else if (ctrl && (e.key === "s" || e.key === "S")) this.save();
      else if (ctrl && (e.key === "b" || e.key === "B")) this.seek(this.audio.currentTime - 5);
      else if (ctrl && (e.key === "f" || e.key === "F")) this.seek(this.audio.currentTime + 5);
      else if (ctrl && e.code === "Comma") this.stepSpeed(-1);
      else if (ctrl && e.code === "Period") this.stepSpeed(1);
      else if (ctrl && !e.shiftKey && (e.key === "z" || e.key === "Z")) this.undo();
      else if (ctrl && ((e.shiftKey && (e.key === "z" || e.key === "Z")) || e.key === "y" || e.key === "Y")) this.redo();
      else if (ctrl && (e.key === "h" || e.key === "H")) this.finder.open();
      else if (e.altKey && !ctrl && (e.code === "BracketLeft" || e.code === "BracketRight") && this.focus) this.timeline.nudge(this.focus.s, e.shiftKey ? "end" : "start", e.code === "BracketLeft" ? -0.1 : 0.1);
      else if (e.altKey && !ctrl && (e.code === "Equal" || e.code === "NumpadAdd")) this.zoom(2);
      else if (e.altKey && !ctrl && (e.code === "Minus" || e.code === "NumpadSubtract")) this.zoom(0.5);
      else if (ctrl && e.shiftKey && e.key === "ArrowRight" && this.mode === "transcript") this.chooseStep(1);
      else if (ctrl && e.shiftKey && e.key === "ArrowLeft" && this.mode === "transcript") this.chooseStep(-1);
      else if (ctrl && e.key === "ArrowDown") this.gotoSegment(1);
      else if (ctrl && e.key === "ArrowUp") this.gotoSegment(-1);
      else if (ctrl && e.key === "Enter" && this.mode === "transcript") this.split();
      else if (ctrl && (e.key === "m" || e.key === "M") && this.mode === "transcript") this.toggleHighlight();
      else handled = false;
      if (handled) e.preventDefault();
    }

    setStatus(text) {
      this.status.textContent = text;
    }

    showError(text) {
      this.error.textContent = text;
    }
  }

  window.ScribeEditor = { Editor, captions, clock, el };
})();
