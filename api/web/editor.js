// The one editor of Scribe's web app, for customers correcting their finished jobs and for
// transcribers and translators working on tasks. It plays the media with a waveform
// (wavesurfer.js, highlights shown as regions), shows the transcript as words that follow
// playback, edits words in place, splits and joins segments, changes and renames speakers,
// marks highlights (the sentence at the cursor, or any run of words chosen with Shift+click or
// Ctrl+Shift+arrows), previews subtitles with the caption knobs, keeps unsaved changes as a
// local draft, and in translate mode shows the source cues beside the target text. Undo/redo
// (editor-history.js), the timeline of segments or cues on the waveform (editor-timeline.js),
// find and replace (editor-find.js) and the glossary's panel (editor-glossary.js) live in their
// own files. The fixed bar is compact (grouped icon buttons named on hover and focus, the
// waveform with the caption beside it, one line for the rules, a task's lease and the status);
// settings kept in the browser give rewind on pause and playback paused while typing.
//
// Long media: the waveform is drawn from the server's peaks (GET /api/work/media/peaks), the
// subtitle preview is the server's export layout of the unsaved document (POST
// /api/subtitles/preview), an edit re-renders only what it changed (renderChanged; the timeline
// and undo likewise touch only the segments it changed), and playback
// moves the "current" mark between two words found by binary search. The word area is one tab
// stop: arrow keys move between words inside it (roving tabindex).
//
// Long documents: only the segments (or cues) near the view are in the DOM, with the one holding
// the focus (renderWindow; the geometry is editor-window.js). `this.views` stays parallel to
// doc.segments but holds only the rendered segments; everything that reaches a segment, word or
// cue by index (playback's mark, the timeline, Next problem, find, undo, keyboard navigation,
// split/join, highlights) goes through viewOf/spanOf, which render it (scrolling to it) first.
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
  /// The waveform's closest zoom (pixels per second), and the window long media open on (s).
  const MAX_ZOOM = 200;
  const WINDOW_SECONDS = 25;

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

  /// The index of the last of `items` (in time order) starting at or before `t`, or -1.
  function lastStartingBy(items, t) {
    let lo = 0;
    let hi = items.length - 1;
    let at = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (items[mid].start <= t) {
        at = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return at;
  }

  /// For reopening a translation: a function giving the index of the cue a saved word belongs to,
  /// the one it overlaps most (the nearest if none; the first such cue on a tie), or -1 without
  /// cues. Cues are visited in order of start, and the search stops once no earlier cue can reach
  /// far enough into the word, so a document costs about one binary search per word.
  function cueOwner(cues) {
    const order = cues.map((_, i) => i).sort((a, b) => cues[a].start - cues[b].start || a - b);
    const sorted = order.map((i) => cues[i]);
    const reach = []; // reach[k]: the latest end among sorted[0..=k]
    sorted.forEach((c, k) => reach.push(k ? Math.max(reach[k - 1], c.end) : c.end));
    const overlap = (w, c) => Math.min(w.end, c.end) - Math.max(w.start, c.start);
    return (w) => {
      let best = -1;
      let most = -Infinity;
      const consider = (k) => {
        const o = overlap(w, sorted[k]);
        if (o > most || (o === most && order[k] < best)) [best, most] = [order[k], o];
      };
      const last = lastStartingBy(sorted, w.end);
      // The cues starting after the word: the first of them is the nearest (ties by index).
      for (let k = last + 1; k < sorted.length && sorted[k].start === sorted[last + 1].start; k++) consider(k);
      for (let k = last; k >= 0 && reach[k] - w.start >= most; k--) consider(k);
      return best;
    };
  }

  const DRAFT_PREFIX = "scribe.draft.";
  /// The editor's settings, kept in this browser (no transcript text in them).
  const SETTINGS_KEY = "scribe.editor.settings";
  const DEFAULT_SETTINGS = { rewind: 1, playWhileTyping: true, resumeAfter: 1, keys: {} };
  /// The shortcuts a user can change (Keyboard panel): action, what it does, default key, the
  /// button whose `aria-keyshortcuts` names it, and the mode it works in (both if absent). Undo,
  /// redo, timing nudges, choosing words and moving in the text keep their keys (RESERVED).
  const KEYABLE = [
    ["playPause", "play / pause", "Escape", "play"],
    ["back", "back 5 seconds", "Ctrl+B", "back5"],
    ["forward", "forward 5 seconds", "Ctrl+F", "fwd5"],
    ["slower", "slower (down to 0.5×)", "Ctrl+,", null],
    ["faster", "faster (up to 2×)", "Ctrl+.", null],
    ["prevSegment", "previous segment", "Ctrl+ArrowUp", "prev-seg"],
    ["nextSegment", "next segment", "Ctrl+ArrowDown", "next-seg"],
    ["split", "split at the word", "Ctrl+Enter", "split", "transcript"],
    ["highlight", "highlight the chosen words, else the sentence; again to remove", "Ctrl+M", "highlight", "transcript"],
    ["find", "find and replace", "Ctrl+H", "find-replace"],
    ["zoomIn", "zoom the waveform in", "Alt+=", "zoom-in"],
    ["zoomOut", "zoom the waveform out", "Alt+-", "zoom-out"],
    ["nextProblem", "next subtitle problem", "Alt+N", "next-problem"],
    ["save", "save", "Ctrl+S", "save"],
  ];
  /// Keys that keep their meaning: a changeable shortcut may not take them.
  const RESERVED = {
    "Ctrl+Z": "undo", "Ctrl+Y": "redo", "Ctrl+Shift+Z": "redo",
    "Ctrl+C": "copy", "Ctrl+X": "cut", "Ctrl+V": "paste", "Ctrl+A": "select all",
    "Ctrl+Shift+ArrowLeft": "choosing words", "Ctrl+Shift+ArrowRight": "choosing words",
    "Alt+[": "moving a start", "Alt+]": "moving a start", "Alt+Shift+[": "moving an end", "Alt+Shift+]": "moving an end",
  };
  /// Keys that type or move in the text when pressed without Ctrl or Alt.
  const TEXT_KEYS = new Set(["Tab", "Enter", "Backspace", "Delete", "ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End", "PageUp", "PageDown", "Space"]);
  /// With Alt, keys named by their place on the keyboard (macOS's Option turns `=` into `≠`).
  const CODE_KEYS = { Equal: "=", Minus: "-", BracketLeft: "[", BracketRight: "]", Comma: ",", Period: ".", Slash: "/", Semicolon: ";", Quote: "'", Backquote: "`", Backslash: "\\" };

  /// A key press as the Keyboard panel writes it: `Ctrl+Alt+Shift+K`, `F2`, `Escape`.
  function keyName(e) {
    if (["Control", "Alt", "Shift", "Meta"].includes(e.key)) return null;
    let key = e.key.length === 1 ? e.key.toUpperCase() : e.key;
    let byPlace = false;
    if (e.altKey && e.code) {
      const m = /^(?:Key([A-Z])|Digit(\d))$/.exec(e.code);
      if (m) key = m[1] || m[2];
      else if (CODE_KEYS[e.code]) key = CODE_KEYS[e.code];
      byPlace = Boolean(m || CODE_KEYS[e.code]);
    }
    // Shift shows where it does not change the character: letters, named keys, keys by place.
    const shift = e.shiftKey && (key.length > 1 || /[A-Z]/.test(key) || byPlace);
    return `${e.ctrlKey || e.metaKey ? "Ctrl+" : ""}${e.altKey ? "Alt+" : ""}${shift ? "Shift+" : ""}${key === " " ? "Space" : key}`;
  }

  /// Why `name` cannot be a changeable shortcut, or null if it can.
  function reservedFor(name) {
    if (RESERVED[name]) return `${name} is kept for ${RESERVED[name]}`;
    const plain = name.replace(/^Shift\+/, "");
    if (!/^(Ctrl|Alt)\+/.test(name) && (plain.length === 1 || TEXT_KEYS.has(plain))) return `${name} types or moves in the text`;
    return null;
  }

  function loadSettings() {
    try {
      return { ...DEFAULT_SETTINGS, ...JSON.parse(localStorage.getItem(SETTINGS_KEY) || "{}") };
    } catch (_) {
      return { ...DEFAULT_SETTINGS };
    }
  }

  /// Removes every local draft (all accounts, and drafts kept before drafts had owners): sign-out
  /// leaves no transcript text in this browser.
  function dropAllDrafts() {
    for (const k of Object.keys(localStorage)) if (k.startsWith(DRAFT_PREFIX)) localStorage.removeItem(k);
  }

  class Editor {
    // opts: { mode: "transcript" | "translate", document, mediaUrl, sourceCues, glossary,
    //         instructions, account, draftKey, revision, save(doc) -> Promise<message>,
    //         onChange(), onDestroy(), actions: [{id,label,run,danger}],
    //         api(method, path, {params, json}) -> Promise (the app's API call: the subtitle preview),
    //         rules: Promise of the exports' subtitleRules (GET /capabilities) for the timeline }
    constructor(root, opts) {
      this.root = root;
      this.opts = opts;
      this.mode = opts.mode || "transcript";
      this.dirty = false;
      this.focus = null; // {s, w}
      this.range = null; // words chosen for a highlight: {anchor: flat index, end: flat index}
      this.knobs = { chars: 42, rows: 2, screen: 2 }; // the SRT export's defaults
      this.settings = loadSettings();
      this.cues = []; // the server's layout of the document (POST /subtitles/preview)
      this.doc = this.mode === "translate" ? this.translationModel(opts.document, opts.sourceCues || []) : structuredClone(opts.document);
      this.doc.highlights = this.doc.highlights || [];
      const words = this.mode === "translate" ? this.doc.cues : this.doc.segments.flatMap((seg) => seg.words);
      longMedia = words.some((w) => w.end >= 3600);
      this.history = new ScribeHistory.EditorHistory(this.doc);
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
      if (this.opts.onDestroy) this.opts.onDestroy();
      if (this.glossaryBox) this.glossaryBox.stop();
      clearTimeout(this.draftTimer);
      this.destroyed = true;
      clearTimeout(this.previewTimer);
      document.removeEventListener("keydown", this.onKey);
      window.removeEventListener("beforeunload", this.onUnload);
      window.removeEventListener("scroll", this.onScroll);
      window.removeEventListener("resize", this.onScroll);
      if (this.wave) this.wave.destroy();
      if (this.audio) this.audio.pause();
    }

    // ---- model -------------------------------------------------------------------------

    translationModel(document, cues) {
      const words = document ? document.segments.flatMap((s) => s.words) : [];
      // Each saved word belongs to the cue it overlaps most (the nearest if none): a cue whose
      // edges were dragged keeps its saved times.
      const mineOf = cues.map(() => []);
      const ownerOf = cueOwner(cues);
      for (const w of words) {
        const owner = ownerOf(w);
        if (owner >= 0) mineOf[owner].push(w);
      }
      return {
        speakers: document ? document.speakers : [],
        cues: cues.map((c, i) => {
          const mine = mineOf[i];
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
        const sourceNames = new Map(this.doc.cues.map((c) => [c.speaker, c.speakerName]));
        return {
          speakers: ids.map((id, i) => ({ spkid: id, name: known.get(id) || sourceNames.get(id) || `Speaker ${i + 1}` })),
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

    /// After every edit: `label` names a step of its own for undo; without one, the edit is
    /// typing, and keystrokes in the same field make one step. `units`: the segments (or cues)
    /// the edit changed, when only those (undo then compares nothing else).
    changed(label, units) {
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
      this.history.record(this.doc, label || "an edit", key, units);
      this.updateUndo();
      this.touched();
    }

    /// The document changed (an edit, an undo or a redo): keep a draft, refresh the preview.
    touched() {
      this.dirty = true;
      this.edits = (this.edits || 0) + 1;
      this.setStatus("Unsaved changes (kept as a local draft)");
      clearTimeout(this.draftTimer);
      this.draftTimer = setTimeout(() => this.storeDraft(), 400);
      this.schedulePreview();
      clearTimeout(this.timelineTimer);
      this.timelineTimer = setTimeout(() => this.renderRegions(), 500);
      if (this.opts.onChange) this.opts.onChange();
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
      // Only the segments (or cues) the step changes are new objects: only they are drawn anew.
      this.doc = this.history.document(step.state, this.doc);
      this.range = null;
      if (this.mode === "transcript") this.renderSpeakers();
      this.renderChanged();
      this.schedulePreview(0);
      this.renderCaption();
      this.renderRegions();
      this.updateUndo();
      this.touched();
      // The matches found before are gone or moved: find them again in what is shown now.
      if (this.finder && !this.finder.panel.hidden) this.finder.refresh();
      this.setStatus(`${verb}: ${step.label.replace(/[.]$/, "")}.`);
      if (focus && this.mode === "transcript") this.focusWord(focus.s, focus.w);
      else if (focus && this.win.views[focus.s] && !this.main.contains(document.activeElement)) this.win.views[focus.s].textarea.focus();
    }

    updateUndo() {
      if (!this.undoBtn) return;
      this.undoBtn.disabled = !this.history.canUndo();
      this.redoBtn.disabled = !this.history.canRedo();
    }

    /// A timeline edge was dragged (editor-timeline.js changed the times).
    timingChanged(label) {
      this.renderChanged();
      this.changed(label);
      this.renderRegions();
      this.setStatus(`${label}.`);
    }

    /// The texts find and replace searches: every word, or every cue's translation.
    fields() {
      if (this.mode === "translate") {
        return this.doc.cues.map((c, i) => ({ get: () => c.target, set: (t) => (c.target = t), node: () => this.targetOf(i), start: c.start }));
      }
      return this.doc.segments.flatMap((seg, s) => seg.words.map((w, i) => ({
        get: () => w.text,
        set: (t) => {
          w.text = t;
          w.pristine = false;
        },
        node: () => this.spanOf(s, i),
        start: w.start,
      })));
    }

    replaced(label) {
      this.renderChanged();
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

    /// Waveform zoom in pixels per second of media, from the whole media in the box (0) to
    /// MAX_ZOOM; `factor` multiplies the zoom now (buttons and Alt+=/- double or halve it,
    /// Ctrl+wheel over the waveform steps by a quarter).
    zoom(factor) {
      if (!this.wave || this.waveBox.dataset.ready !== "true") return this.setStatus("The waveform is still loading.");
      const fit = this.fitPixels();
      this.setZoom((this.zoomLevel || fit) * factor, fit);
      this.setStatus(this.zoomLevel ? `Waveform zoom: ${Math.round(this.zoomLevel)} pixels per second.` : "Waveform zoom: the whole media.");
    }

    /// Pixels per second with the whole media in the box.
    fitPixels() {
      // The waveform is drawn over the decoded audio, which may be shorter than a video.
      const decoded = this.wave.getDecodedData();
      const duration = decoded ? decoded.duration : this.wave.getDuration();
      // Pixels per second as drawn now (the whole media fits the box when not zoomed).
      const drawn = duration > 0 ? this.wave.getWrapper().clientWidth / duration : 1;
      if (!this.zoomLevel) this.fitZoom = drawn;
      return this.fitZoom || drawn;
    }

    setZoom(pps, fit) {
      const next = Math.min(MAX_ZOOM, pps);
      this.zoomLevel = next <= fit * 1.01 ? 0 : next;
      this.wave.zoom(this.zoomLevel);
      this.waveBox.dataset.zoom = String(Math.round(this.zoomLevel || fit));
      this.zoomOutBtn.disabled = !this.zoomLevel;
      this.scrollArea();
    }

    /// Long media open on a window of WINDOW_SECONDS that follows playback (wavesurfer.js keeps
    /// the cursor in view), not on the whole file, where hundreds of segments would blur.
    startWindow() {
      const duration = this.wave.getDuration();
      if (!(duration > 3 * WINDOW_SECONDS) || this.zoomLevel) return;
      const fit = this.fitPixels();
      this.setZoom(this.waveBox.clientWidth / WINDOW_SECONDS, fit);
    }

    /// The overview strip under the waveform: the whole media, with the part the waveform
    /// shows (a box), the part of the transcript on screen (a band) and the playback position (a
    /// line). It is a slider over the media's position: a click, or the arrow keys (5 s),
    /// Page Up/Down (a tenth of the media), Home and End, play from there.
    overview() {
      this.ovView = el("span", { class: "ov-view" });
      this.ovText = el("span", { class: "ov-text" });
      this.ovPlay = el("span", { class: "ov-play" });
      this.ovDesc = el("span", { id: "overview-desc", hidden: true });
      const steps = { ArrowLeft: -5, ArrowDown: -5, ArrowRight: 5, ArrowUp: 5 };
      this.ovBox = el("div", { class: "overview", id: "overview", role: "slider", tabindex: 0, "aria-label": "Position in the media",
        "aria-describedby": "overview-desc", "aria-valuemin": 0, "aria-valuemax": 0, "aria-valuenow": 0, "aria-valuetext": clock(0),
        onclick: (e) => {
          const d = this.mediaDuration();
          const r = this.ovBox.getBoundingClientRect();
          if (d > 0 && r.width > 0) this.seek(((e.clientX - r.left) / r.width) * d);
        },
        onkeydown: (e) => {
          if (e.ctrlKey || e.metaKey || e.altKey) return;
          const d = this.mediaDuration();
          const t = this.audio.currentTime;
          const tenth = Math.max(5, d / 10);
          const to = e.key in steps ? t + steps[e.key] : e.key === "PageUp" ? t + tenth : e.key === "PageDown" ? t - tenth
            : e.key === "Home" ? 0 : e.key === "End" ? d : null;
          if (to === null || !(d > 0)) return;
          e.preventDefault();
          e.stopPropagation();
          this.seek(Math.max(0, Math.min(d, to)));
        } }, this.ovText, this.ovView, this.ovPlay);
      const later = () => {
        if (this.ovFrame) return;
        this.ovFrame = requestAnimationFrame(() => {
          this.ovFrame = null;
          if (this.destroyed) return;
          if (this.win && this.width !== this.main.clientWidth) {
            // A new width: every height measured before is wrong.
            this.win.forgetHeights();
            this.renderWindow();
          } else if (this.win && this.win.stale(this.units().length)) this.renderWindow();
          this.drawOverview();
        });
      };
      this.onScroll = later;
      window.addEventListener("scroll", later, { passive: true });
      window.addEventListener("resize", later, { passive: true });
      return [this.ovBox, this.ovDesc];
    }

    /// The playback position on the overview strip, and the slider's value.
    drawPlayhead() {
      const d = this.mediaDuration();
      if (!(d > 0) || !this.ovBox) return;
      const t = Math.min(this.audio.currentTime, d);
      this.ovPlay.style.left = `${((t / d) * 100).toFixed(3)}%`;
      const now = String(Math.round(t));
      if (this.ovBox.getAttribute("aria-valuenow") === now && this.ovBox.getAttribute("aria-valuemax") === String(Math.round(d))) return;
      this.ovBox.setAttribute("aria-valuemax", String(Math.round(d)));
      this.ovBox.setAttribute("aria-valuenow", now);
      this.ovBox.setAttribute("aria-valuetext", `${clock(t)} of ${clock(d)}`);
    }

    mediaDuration() {
      const d = this.wave ? this.wave.getDuration() : 0;
      return d > 0 ? d : Number.isFinite(this.audio.duration) ? this.audio.duration : 0;
    }

    /// The times of the segments (or cues) on screen, found by binary search over their boxes.
    textOnScreen() {
      if (!this.win) return null;
      const times = this.mode === "translate" ? (v) => [v.row, v.cue.start, v.cue.end]
        : (v) => [v.section, v.seg.words[0] ? v.seg.words[0].start : 0, v.seg.words.length ? v.seg.words[v.seg.words.length - 1].end : 0];
      const items = this.win.views.slice(this.win.lo, this.win.hi).filter(Boolean).map(times);
      if (!items.length) return null;
      const top = this.top.getBoundingClientRect().bottom;
      const bottom = window.innerHeight;
      let lo = 0;
      let hi = items.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (items[mid][0].getBoundingClientRect().bottom < top) lo = mid + 1;
        else hi = mid;
      }
      let last = lo;
      while (last + 1 < items.length && items[last + 1][0].getBoundingClientRect().top < bottom) last++;
      if (items[lo][0].getBoundingClientRect().top > bottom) return null;
      return [items[lo][1], items[last][2]];
    }

    drawOverview() {
      const d = this.mediaDuration();
      if (!(d > 0) || !this.ovBox) return;
      const pct = (t) => `${Math.max(0, Math.min(100, (t / d) * 100)).toFixed(3)}%`;
      const place = (node, a, b) => {
        node.style.left = pct(a);
        node.style.width = `max(2px, calc(${pct(b)} - ${pct(a)}))`;
      };
      const wrapper = this.wave && this.wave.getWrapper();
      const area = wrapper && wrapper.parentElement;
      let view = [0, d];
      if (area && area.scrollWidth > 0) view = [(area.scrollLeft / area.scrollWidth) * d, ((area.scrollLeft + area.clientWidth) / area.scrollWidth) * d];
      place(this.ovView, view[0], view[1]);
      const text = this.textOnScreen();
      this.ovText.hidden = !text;
      if (text) place(this.ovText, text[0], text[1]);
      const label = `The waveform shows ${clock(view[0])} to ${clock(view[1])}` + (text ? `, the text on screen ${clock(text[0])} to ${clock(text[1])}.` : ".");
      if (this.ovDesc.textContent !== label) this.ovDesc.textContent = label;
      this.drawPlayhead();
      this.ovBox.dataset.view = `${view[0].toFixed(1)}-${view[1].toFixed(1)}`;
      this.ovBox.dataset.text = text ? `${text[0].toFixed(1)}-${text[1].toFixed(1)}` : "";
    }

    /// Zoomed in, the waveform scrolls sideways: its scroll area is then a tab stop with a name,
    /// so keyboard users can scroll it with the arrow keys.
    scrollArea() {
      const wrapper = this.wave && this.wave.getWrapper();
      const area = wrapper && wrapper.parentElement;
      if (!area) return;
      if (this.zoomLevel) {
        area.setAttribute("tabindex", "0");
        area.setAttribute("role", "group");
        area.setAttribute("aria-label", "Zoomed waveform: scroll with ← and →");
      } else {
        area.removeAttribute("tabindex");
        area.removeAttribute("role");
        area.removeAttribute("aria-label");
      }
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
    // A draft belongs to the signed-in account, the job or task, and the revision it was made
    // on: `scribe.draft.<account>.<draftKey>.r<revision>`, one per task (a newer one replaces
    // it). Sign-out removes every draft (ScribeEditor.dropAllDrafts).

    draftPrefix() {
      return `${DRAFT_PREFIX}${encodeURIComponent(this.opts.account || "")}.${this.opts.draftKey}.r`;
    }

    draftStorageKey() {
      return `${this.draftPrefix()}${this.opts.revision || 0}`;
    }

    /// The keys of this account's drafts of this job or task (any revision).
    draftKeys() {
      const prefix = this.draftPrefix();
      return Object.keys(localStorage).filter((k) => k.startsWith(prefix));
    }

    storeDraft() {
      if (!this.dirty) return;
      try {
        const key = this.draftStorageKey();
        for (const k of this.draftKeys()) if (k !== key) localStorage.removeItem(k);
        localStorage.setItem(key, JSON.stringify({ at: Date.now(), account: this.opts.account, revision: this.opts.revision || 0, doc: this.doc }));
      } catch (e) {
        this.showError(`The local draft could not be stored (${e.message}); save soon.`);
      }
    }

    /// Forgets the unsaved edits (the page still shows them until it is left).
    discard() {
      this.dirty = false;
      this.dropDraft();
      this.setStatus("Unsaved edits discarded.");
    }

    dropDraft() {
      clearTimeout(this.draftTimer);
      for (const k of this.draftKeys()) localStorage.removeItem(k);
    }

    offerDraft() {
      let draft = null;
      try {
        const keys = this.draftKeys();
        draft = keys.length ? JSON.parse(localStorage.getItem(keys[0]) || "null") : null;
      } catch (_) {
        draft = null;
      }
      if (!draft || !draft.doc || (this.mode === "translate") !== Array.isArray(draft.doc.cues)) return;
      const when = new Date(draft.at).toLocaleString();
      const server = this.opts.revision || 0;
      const made = draft.revision || 0;
      // Say plainly what the draft was based on and what the server has now.
      const base = made === server
        ? `You have unsaved changes from ${when}, made on revision ${made} of this document (the one shown).`
        : `You have unsaved changes from ${when}, made on revision ${made}; the server now has revision ${server}` +
          (made < server ? ", saved after your draft. Restoring the draft replaces what revision " + server + " says with your draft's text." : ".");
      const box = el("div", { class: "warn", role: "region", "aria-label": "Unsaved draft", id: "draft-offer", "data-stale": made !== server ? "true" : null },
        el("p", { id: "draft-offer-text" }, base),
        el("div", { class: "row" },
          el("button", { class: "primary", id: "restore-draft", onclick: () => {
            this.doc = draft.doc;
            box.remove();
            this.rerender();
            this.changed("restoring the draft");
            this.setStatus(made < server ? `Draft of revision ${made} restored over revision ${server}: not saved yet` : "Draft restored: not saved yet");
          } }, made < server ? `Restore my revision ${made} draft` : "Restore draft"),
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
      // A compact bar: icon buttons whose names show on hover and focus (the .tl label), in groups.
      const tool = (id, icon, label, keys, onclick, extra = {}) => el("button", { id, class: "tool", type: "button", onclick, "aria-keyshortcuts": keys, ...extra },
        el("span", { class: "ico", "aria-hidden": "true" }, icon), el("span", { class: "tl" }, label));
      const group = (label, ...items) => el("div", { class: "tool-group", role: "group", "aria-label": label }, items);
      const aria = (action) => this.keyFor(action).replace("Ctrl", "Control");
      this.playBtn = tool("play", "▶", "Play", aria("playPause"), () => this.playPause());
      const playback = group("Playback",
        this.playBtn,
        tool("back5", "«5", "Back 5 s", aria("back"), () => this.seek(this.audio.currentTime - 5)),
        tool("fwd5", "5»", "Forward 5 s", aria("forward"), () => this.seek(this.audio.currentTime + 5)),
        el("label", { class: "inline", for: "speed" }, el("span", { class: "sr-only" }, "Speed"),
          (this.speed = el("select", { id: "speed", title: "Speed", "aria-keyshortcuts": `${aria("slower")} ${aria("faster")}`, onchange: (e) => this.setSpeed(Number(e.target.value)) },
            SPEEDS.map((v) => el("option", { value: String(v), selected: v === 1 }, `${v}×`))))),
        this.timeLabel);
      const moves = group("Segments",
        tool("prev-seg", "⇡", "Previous segment", aria("prevSegment"), () => this.gotoSegment(-1)),
        tool("next-seg", "⇣", "Next segment", aria("nextSegment"), () => this.gotoSegment(1)));
      const edits = [];
      if (this.mode === "transcript") {
        edits.push(
          tool("split", "✂", "Split at word", aria("split"), () => this.split()),
          tool("highlight", "✎", "Highlight", aria("highlight"), () => this.toggleHighlight(), { "aria-describedby": "highlight-hint" }),
          el("span", { id: "highlight-hint", hidden: true }, "The chosen words (Shift+click, Ctrl+Shift+→/←), else the sentence at the cursor"),
        );
      }
      this.undoBtn = tool("undo", "↶", "Undo", "Control+Z", () => this.undo(), { disabled: true });
      this.redoBtn = tool("redo", "↷", "Redo", "Control+Shift+Z Control+Y", () => this.redo(), { disabled: true });
      this.findButton = tool("find-replace", "⌕", "Find and replace", aria("find"), () => this.finder.toggle(), { "aria-expanded": "false", "aria-controls": "find-panel" });
      edits.push(this.undoBtn, this.redoBtn, this.findButton);
      this.zoomOutBtn = tool("zoom-out", "−", "Zoom out", aria("zoomOut"), () => this.zoom(0.5), { disabled: true });
      const view = group("Waveform", tool("zoom-in", "+", "Zoom in", aria("zoomIn"), () => this.zoom(2)), this.zoomOutBtn);
      const work = [el("button", { id: "save", type: "button", class: "primary", onclick: () => this.save(), "aria-keyshortcuts": aria("save") }, "Save")];
      for (const a of o.actions || []) {
        work.push(el("button", { id: a.id, type: "button", class: a.danger ? "danger" : "", onclick: () => this.runAction(a) }, a.label));
      }
      const tools = [playback, moves, group("Edit", edits), view, group("Document", work)];
      this.status = el("p", { class: "hint", role: "status", id: "editor-status" }, this.mode === "translate" ? "Type the translation of each cue." : "Click a word to hear it; type to correct it.");
      this.error = el("div", { class: "error", role: "alert", id: "editor-error" });
      this.notice = el("div", { class: "notice", role: "status", id: "editor-notice" });
      this.waveBox = el("div", { id: "waveform", role: "group", "aria-label": "Waveform of the media; highlights are shaded" });
      this.caption = el("div", { class: "caption", id: "caption-preview", role: "group", "aria-live": "off", "aria-label": "Subtitle preview" });
      this.finder = new ScribeFind.FindReplace(this);
      this.timelineSummary = el("span", { class: "timeline-summary", id: "timeline-summary" });
      this.nextProblemBtn = el("button", { id: "next-problem", type: "button", class: "link", hidden: true, "aria-keyshortcuts": this.keyFor("nextProblem").replace("Ctrl", "Control"), onclick: () => this.timeline.nextProblem() }, "Next problem");
      this.timeline = new ScribeTimeline.Timeline(this, this.timelineSummary);
      // Filled by a task (task-session.js): the lease line, and its notices.
      this.leaseSlot = el("span", { class: "lease-slot" });
      this.noticeSlot = el("div", { class: "notice-slot" });
      const info = el("div", { class: "info-row hint" }, el("span", { class: "rules" }, this.timelineSummary, " ", this.nextProblemBtn), this.leaseSlot, this.status);
      this.top = el("div", { class: "editor-top" },
        el("div", { class: "bar" }, el("div", { class: "toolbar", role: "toolbar", "aria-label": "Editor" }, tools), this.finder.panel),
        this.audio,
        el("div", { class: "wave-row" }, el("div", { class: "wave-col" }, this.waveBox, this.overview()), this.caption),
        info, this.noticeSlot, this.error, this.notice);
      this.main = el("div", { class: "transcript", id: "transcript" });
      this.side = el("aside", { class: "side", "aria-label": "Speakers, instructions and settings" });
      this.body = el("div", { class: "editor-body" }, this.main, this.side);
      this.root.append(this.top, this.body);
      this.renderSide();
      if (this.glossaryBox) this.glossaryBox.follow(this.body, this.main);
      this.renderBody();
      this.keepPlain();
      this.startWave();
      this.audio.addEventListener("timeupdate", () => {
        this.follow();
        this.drawPlayhead();
      });
      const showPlay = (playing) => {
        this.playBtn.querySelector(".ico").textContent = playing ? "❚❚" : "▶";
        this.playBtn.querySelector(".tl").textContent = playing ? "Pause" : "Play";
      };
      this.audio.addEventListener("play", () => showPlay(true));
      this.audio.addEventListener("pause", () => showPlay(false));
      this.audio.addEventListener("error", () => this.showError("The media could not be loaded for playback."));
    }

    startWave() {
      if (!window.WaveSurfer) {
        this.waveBox.textContent = "Waveform unavailable (wavesurfer.js did not load).";
        return;
      }
      this.regions = WaveSurfer.Regions.create();
      // The server's peaks draw the waveform at once; without them wavesurfer.js downloads and
      // decodes the whole file (tens of seconds for an hour).
      this.loadPeaks().then((peaks) => this.createWave(peaks), () => this.createWave(null));
    }

    /// The media's waveform peaks from the server, beside the signed media link.
    async loadPeaks() {
      const url = new URL(this.opts.mediaUrl, location.href);
      url.pathname += "/peaks";
      const response = await fetch(url);
      if (!response.ok) throw new Error(`peaks: HTTP ${response.status}`);
      return response.json();
    }

    createWave(peaks) {
      if (this.destroyed) return;
      this.waveBox.dataset.source = peaks ? "peaks" : "media";
      this.wave = WaveSurfer.create({
        container: this.waveBox,
        media: this.audio,
        height: 56,
        waveColor: "#5b6b7c",
        progressColor: "#0b5cad",
        cursorColor: "#a4161a",
        cursorWidth: 2,
        normalize: true,
        plugins: [this.regions],
        ...(peaks ? { peaks: [peaks.max, peaks.min], duration: peaks.duration } : {}),
      });
      this.wave.on("ready", () => {
        this.waveBox.dataset.ready = "true";
        this.startWindow();
        this.renderRegions();
        this.onScroll();
      });
      this.waveBox.addEventListener("wheel", (e) => {
        if (!e.ctrlKey || this.waveBox.dataset.ready !== "true") return;
        e.preventDefault();
        this.zoom(e.deltaY < 0 ? 1.25 : 0.8);
      }, { passive: false });
      this.wave.on("zoom", () => {
        this.timeline.fit();
        this.onScroll();
      });
      this.wave.on("scroll", () => this.onScroll());
      this.wave.on("redrawcomplete", () => this.timeline.fit());
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
        const panel = el("div", { class: "panel", id: "glossary" },
          g.names && g.names.length ? el("p", {}, el("strong", {}, "Names: "), g.names.join(", ")) : null,
          g.items && g.items.length ? el("dl", {}, g.items.map((it) => [el("dt", {}, it.name), el("dd", {}, it.description || "")])) : null);
        this.glossaryBox = ScribeGlossaryBox.create(g, panel);
        parts.push(this.glossaryBox.anchor, this.glossaryBox.box);
      }
      if (this.mode === "transcript") {
        this.speakerBox = el("div", { class: "panel speakers", id: "speakers" });
        parts.push(el("h2", {}, "Speakers"), this.speakerBox);
        this.renderSpeakers();
      }
      // The SRT export's parameters and bounds: the preview is the export's layout.
      this.previewError = el("p", { class: "error", role: "alert", id: "preview-error" });
      const knob = (id, label, key, min, max, step) =>
        el("div", {}, el("label", { for: id }, label, el("span", { class: "hint" }, ` (${min} to ${max})`)), el("input", { id, type: "number", min, max, step, value: this.knobs[key], oninput: (e) => {
          const v = Number(e.target.value);
          const ok = e.target.value !== "" && Number.isFinite(v) && v >= min && v <= max && (step !== 1 || Number.isInteger(v));
          e.target.setAttribute("aria-invalid", ok ? "false" : "true");
          if (!ok) {
            this.previewError.textContent = `${label}: enter a number from ${min} to ${max}.`;
            return;
          }
          this.knobs[key] = v;
          this.schedulePreview();
        } }));
      parts.push(el("h2", {}, "Subtitle preview"), el("div", { class: "panel", id: "preview-knobs" },
        knob("knob-chars", "Max characters per row", "chars", 30, 45, 1),
        knob("knob-rows", "Max rows per caption", "rows", 1, 2, 1),
        knob("knob-screen", "Max seconds per row", "screen", 1, 10, 0.5),
        this.previewError));
      parts.push(el("h2", {}, "Settings"), this.settingsPanel());
      parts.push(el("h2", {}, "Keyboard"), el("dl", { class: "keys panel", id: "shortcuts" },
        this.keyable().map(([action, label]) => {
          const chip = el("kbd", { id: `key-${action}` }, this.keyFor(action));
          const change = el("button", { type: "button", class: "link key-change", id: `change-key-${action}`, "aria-label": `Change the key for ${label}`,
            onclick: () => this.changeKey(action, change) }, "Change");
          return [el("dt", {}, chip), el("dd", {}, `${label} `, change)];
        }).concat([["Ctrl+Z", "undo"], ["Ctrl+Shift+Z / Ctrl+Y", "redo"], ["Alt+[ / Alt+]", "segment or cue starts 0.1 s earlier / later"], ["Alt+Shift+[ / ]", "it ends 0.1 s earlier / later"]]
          .concat(this.mode === "transcript" ? [["← / →", "previous / next word (at the word's edge)"], ["↑ / ↓", "previous / next segment"], ["Home / End", "first / last word of the segment"], ["Shift+Tab", "the segment's speaker and join"], ["Tab", "leave the transcript"], ["Ctrl+Shift+→ / ←", "choose words (or Shift+click)"]] : [["Tab", "next cue"]])
          .map(([k, v]) => [el("dt", {}, el("kbd", {}, k)), el("dd", {}, v)]))),
        el("p", { class: "hint" }, "A foot pedal that sends keys (F-keys, say) works once its keys are set here. ",
          el("button", { type: "button", class: "link", id: "reset-keys", onclick: () => this.resetKeys() }, "Default keys")));
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
            this.renderChanged();
            this.changed();
          } }))),
        el("button", { id: "add-speaker", onclick: () => {
          let n = this.doc.speakers.length + 1;
          while (this.doc.speakers.some((s) => s.spkid === `spk${n}`)) n++;
          this.doc.speakers.push({ spkid: `spk${n}`, name: `Speaker ${this.doc.speakers.length + 1}` });
          this.renderSpeakers();
          this.renderChanged();
          this.changed("adding a speaker");
        } }, "Add a speaker"));
    }

    renderBody() {
      this.timeIndex = null;
      if (this.mode === "translate") this.renderCues();
      else this.renderSegments();
      this.schedulePreview(0);
      this.renderCaption();
    }

    /// The whole transcript anew (a new document, or a restored draft).
    renderSegments() {
      this.activeSpan = null;
      this.activeView = null;
      this.curSpan = null;
      this.curSection = null;
      this.heading = el("h2", { class: "sr-only" }, "Transcript");
      this.listWindow({ head: 40, perUnit: 3.2 }, () => el("div", { class: "seg-pad" }),
        (v) => v.seg, (v) => v.section, (seg) => seg.words.length, (v) => v.box.offsetHeight);
      this.main.replaceChildren(this.heading, ...this.win.pads());
      if (!this.wordEvents) this.listenToWords();
      this.renderChanged();
    }

    /// The window over the list of segments or cues (editor-window.js), made once per editor
    /// (the heights it measured stay for the next document of the same width), emptied here.
    listWindow(estimate, pad, itemOf, nodeOf, sizeOf, sizePx) {
      if (!this.win) {
        this.win = new ScribeWindow.ListWindow({ estimate, pad, itemOf, nodeOf, sizeOf, sizePx,
          barBottom: () => this.top.getBoundingClientRect().bottom });
        // Focus leaving the item kept for it lets the item go at the next frame.
        this.main.addEventListener("focusout", () => {
          if (this.win.pin >= 0 && this.onScroll) this.onScroll();
        });
      }
      this.win.reset();
    }

    /// The rendered segments' views, at their segments' indices (transcripts only).
    get views() {
      return this.mode === "transcript" && this.win ? this.win.views : [];
    }

    /// The list the window runs over: the segments, or the cues of a translation.
    units() {
      return this.mode === "translate" ? this.doc.cues : this.doc.segments;
    }

    /// The view of segment (or cue) `s`, rendered first if it is out of the window (the page
    /// then scrolls to where it is): everything reaching a segment, word or cue by its index
    /// goes through here.
    viewOf(s) {
      s = Number(s);
      const units = this.units();
      if (!this.win || !units[s]) return null;
      if (this.win.views[s]) return this.win.views[s];
      window.scrollBy(0, this.win.scrollTo(units, s));
      this.renderWindow(s);
      return this.win.views[s] || null;
    }

    /// The word element of word `w` of segment `s`, rendered first if need be.
    spanOf(s, w) {
      const view = this.mode === "transcript" ? this.viewOf(s) : null;
      return view ? view.spans[Number(w)] || null : null;
    }

    /// The translation field of cue `i`, rendered first if need be.
    targetOf(i) {
      const view = this.mode === "translate" ? this.viewOf(i) : null;
      return view ? view.textarea : null;
    }

    /// Brings the text on screen up to date with `this.doc`, touching only what changed: in a
    /// transcript, a segment whose words were added or removed gets or loses those words'
    /// elements, a word whose text, times or marks (highlight, chosen, edited) changed is
    /// updated in place, and segments that moved get their new numbers; a cue likewise. Every
    /// change to the document outside typing (split, join, highlights, speakers, deletions,
    /// undo, timing, replacements) ends with this one call; typing updates its own word as it
    /// goes.
    renderChanged() {
      this.timeIndex = null;
      this.renderWindow(null, true);
    }

    /// Renders the segments (or cues) near the view, segment `must` if given and the one
    /// holding the focus, and nothing else (editor-window.js). Segments kept from the last
    /// window keep their elements (patched as renderChanged says).
    renderWindow(must = null, refocus = false) {
      if (!this.win) return;
      if (this.mode === "translate") return this.renderCueWindow(must);
      const focused = this.main.contains(document.activeElement) ? document.activeElement : null;
      const segs = this.doc.segments;
      const speakersKey = this.doc.speakers.map((sp) => `${sp.spkid}\u0001${sp.name}`).join("\u0002");
      const highlighted = this.highlightTest();
      const [ra, rb] = this.rangeBounds() || [-1, -2];
      // The words before segment `before`, counted as the rendered segments come in order.
      let before = 0;
      let flat = 0;
      const order = this.win.render(segs, must, (seg, kept) => kept || this.segmentView(seg), (view, s) => {
        for (; before < s; before++) flat += segs[before].words.length;
        const seg = view.seg;
        if (view.index !== s) this.numberSegment(view, s);
        if (view.speakersKey !== speakersKey) this.speakerOptions(view, speakersKey);
        if (view.select.value !== seg.speaker) view.select.value = seg.speaker;
        let at = flat;
        this.patchWords(view, (w) => {
          const marks = { hl: highlighted(w), sel: ra <= at && at <= rb };
          at++;
          return marks;
        });
        const head = `Segment ${s + 1} · ${clock(seg.words[0] ? seg.words[0].start : 0)}`;
        if (view.headText !== head) view.label.textContent = view.headText = head;
      });
      this.width = this.main.clientWidth;
      // The one tab stop of the word area: the word with the cursor, else the first word shown.
      if (!this.activeSpan || !this.activeSpan.isConnected) {
        const view = this.focus ? this.views[Number(this.focus.s)] : null;
        const at = view ? view.spans[Math.min(Number(this.focus.w), view.spans.length - 1)] : null;
        const first = this.views[this.win.lo] || this.views[order[0]];
        this.setActive(at || (first && first.spans[0]) || null);
      }
      if (refocus && focused && !focused.isConnected && this.activeSpan) this.activeSpan.focus();
      this.markCurrent();
      if (this.finder && !this.finder.panel.hidden) this.finder.remark();
    }

    /// A function telling whether a word lies in a highlight (its middle inside one), in
    /// O(log highlights) per word.
    highlightTest() {
      const spans = this.doc.highlights.map((h) => [h.start, h.end]).sort((a, b) => a[0] - b[0]);
      const reach = [];
      let far = -Infinity;
      for (const [, end] of spans) reach.push((far = Math.max(far, end)));
      return (w) => {
        const mid = (w.start + w.end) / 2;
        let lo = 0;
        let hi = spans.length - 1;
        let at = -1;
        while (lo <= hi) {
          const m = (lo + hi) >> 1;
          if (spans[m][0] <= mid) {
            at = m;
            lo = m + 1;
          } else hi = m - 1;
        }
        return at >= 0 && reach[at] >= mid;
      };
    }

    /// The elements of a new segment (its words are added by patchWords).
    segmentView(seg) {
      const view = { seg, index: -1, words: [], spans: [], shown: [], speakersKey: null, headText: "" };
      view.label = el("span", { class: "hint" });
      view.select = el("select", { class: "speaker", tabindex: "-1", onchange: (e) => {
        view.seg.speaker = e.target.value;
        this.changed();
      } });
      view.join = el("button", { class: "join", tabindex: "-1", onclick: () => this.join(view.index) }, "Join with previous");
      view.box = el("div", { class: "words" });
      view.section = el("section", { class: "segment" }, el("div", { class: "seg-head" }, view.label, view.select, view.join), view.box);
      return view;
    }

    /// Gives a segment's elements its number `s` (0-based).
    numberSegment(view, s) {
      view.index = s;
      view.section.dataset.seg = s;
      view.section.setAttribute("aria-label", `Segment ${s + 1}`);
      view.select.id = `seg-speaker-${s}`;
      view.select.setAttribute("aria-label", `Speaker of segment ${s + 1}`);
      view.join.dataset.seg = s;
      view.join.hidden = s === 0;
      view.box.dataset.seg = s;
      for (const span of view.spans) span.dataset.s = s;
    }

    speakerOptions(view, key) {
      view.speakersKey = key;
      view.select.replaceChildren(...this.doc.speakers.map((sp) => el("option", { value: sp.spkid }, sp.name || sp.spkid)));
      view.select.value = view.seg.speaker;
    }

    /// Brings a segment's word elements up to date with its words: removed words lose their
    /// element, new ones get one, kept ones stay (with the caret) and change only what differs.
    patchWords(view, marksOf) {
      const seg = view.seg;
      if (view.words.length === seg.words.length && seg.words.every((w, i) => w === view.words[i])) {
        seg.words.forEach((w, i) => this.showWord(view.spans[i], w, view.shown[i], marksOf(w)));
        return;
      }
      const byWord = new Map(view.words.map((w, i) => [w, i]));
      const keep = new Set(seg.words);
      view.words.forEach((w, i) => {
        if (!keep.has(w)) {
          const span = view.spans[i];
          if (span.nextSibling && span.nextSibling.nodeType === Node.TEXT_NODE) span.nextSibling.remove();
          span.remove();
        }
      });
      const spans = [];
      const shown = [];
      let cursor = view.box.firstChild;
      seg.words.forEach((w, i) => {
        const was = byWord.get(w);
        let span;
        let state;
        if (was !== undefined) {
          span = view.spans[was];
          state = view.shown[was];
        } else {
          span = el("span", { class: "w", contenteditable: "true", spellcheck: "true", role: "textbox", tabindex: "-1" });
          state = {};
        }
        if (cursor === span) {
          cursor = span.nextSibling;
          if (cursor && cursor.nodeType === Node.TEXT_NODE) cursor = cursor.nextSibling;
          else span.after(" ");
        } else {
          view.box.insertBefore(span, cursor);
          view.box.insertBefore(document.createTextNode(" "), cursor);
        }
        if (span.dataset.w !== String(i)) span.dataset.w = i;
        if (span.dataset.s !== String(view.index)) span.dataset.s = view.index;
        this.showWord(span, w, state, marksOf(w));
        spans.push(span);
        shown.push(state);
      });
      while (cursor) {
        const next = cursor.nextSibling;
        cursor.remove();
        cursor = next;
      }
      view.words = seg.words.slice();
      view.spans = spans;
      view.shown = shown;
    }

    /// Updates one word's element where it differs from what `state` says is shown.
    showWord(span, w, state, marks) {
      const low = w.conf < LOW_CONFIDENCE;
      const edited = w.pristine === false;
      if (state.text !== w.text) {
        if (span.textContent !== w.text) span.textContent = w.text;
        state.text = w.text;
        state.label = null;
      }
      if (state.start !== w.start || state.end !== w.end || state.conf !== w.conf) {
        span.dataset.start = w.start;
        span.title = `${clock(w.start)}–${clock(w.end)} · confidence ${Math.round((w.conf ?? 1) * 100)} %`;
        Object.assign(state, { start: w.start, end: w.end, conf: w.conf });
      }
      const mark = (name, on) => {
        if (state[name] === on) return false;
        span.classList.toggle(name, on);
        state[name] = on;
        return true;
      };
      if (mark("low", low) | mark("hl", marks.hl)) state.label = null;
      mark("sel", marks.sel);
      mark("edited", edited);
      if (state.label === null || state.label === undefined) this.labelWord(span, w.text, state);
    }

    /// A word's accessible name: its text as it is now, and its marks.
    labelWord(span, text, state) {
      state.label = `${text}${state.low ? ", low confidence" : ""}${state.hl ? ", highlighted" : ""}`;
      span.setAttribute("aria-label", state.label);
    }

    /// The word element that is the word area's one tab stop; its segment's speaker and join
    /// controls are in the tab order with it (Shift+Tab), the other segments' are not.
    setActive(span) {
      if (this.activeSpan === span) return;
      if (this.activeSpan) this.activeSpan.tabIndex = -1;
      this.activeSpan = span;
      if (span) span.tabIndex = 0;
      const view = span ? this.views[Number(span.dataset.s)] : null;
      if (this.activeView !== view) {
        for (const v of [this.activeView, view]) {
          if (!v || !v.section.isConnected) continue;
          const tab = v === view ? 0 : -1;
          v.select.tabIndex = tab;
          v.join.tabIndex = tab;
        }
        this.activeView = view;
      }
    }

    /// The word of an element of the transcript, or null.
    wordOf(span) {
      const view = this.views[Number(span.dataset.s)];
      return view ? view.seg.words[Number(span.dataset.w)] : null;
    }

    /// One set of listeners on the transcript serves every word.
    listenToWords() {
      this.wordEvents = true;
      const wordAt = (e) => (e.target instanceof Element && e.target.classList.contains("w") && this.main.contains(e.target) ? e.target : null);
      this.main.addEventListener("mousedown", (e) => {
        const span = wordAt(e);
        if (!span) return;
        const w = this.wordOf(span);
        if (!w) return;
        // A click places the caret where it lands (focusin must not choose the whole word).
        this.pointerFocus = true;
        setTimeout(() => (this.pointerFocus = false), 0);
        if (e.shiftKey && this.focus) {
          e.preventDefault();
          this.chooseTo(Number(span.dataset.s), Number(span.dataset.w));
        } else {
          if (this.range) this.clearRange();
          this.seek(w.start);
        }
      });
      this.main.addEventListener("focusin", (e) => {
        const span = wordAt(e);
        if (!span) return;
        this.focus = { s: Number(span.dataset.s), w: Number(span.dataset.w) };
        this.setActive(span);
        // Reached by keyboard: the whole word is chosen, so typing replaces it and arrows move on.
        if (!this.pointerFocus) this.selectWord(span);
        this.pointerFocus = false;
      });
      this.main.addEventListener("input", (e) => {
        const span = wordAt(e);
        const w = span && this.wordOf(span);
        if (!w) return;
        const view = this.views[Number(span.dataset.s)];
        const state = view.shown[Number(span.dataset.w)];
        w.text = span.textContent;
        w.pristine = false;
        state.text = w.text;
        state.edited = true;
        span.classList.add("edited");
        this.labelWord(span, w.text, state);
        this.changed(undefined, [view.seg]);
        this.typing();
      });
      this.main.addEventListener("keydown", (e) => {
        const span = wordAt(e);
        if (!span) return;
        // A word holds no line break (Ctrl+Enter splits the segment while that is its key).
        if (e.key === "Enter") e.preventDefault();
        else this.arrowKey(e, span);
      });
      this.main.addEventListener("focusout", (e) => {
        const span = wordAt(e);
        const w = span && span.isConnected && this.wordOf(span);
        if (!w || w.text.trim()) return;
        // An emptied word is removed when the cursor leaves it (not when its segment leaves the
        // window: saving drops empty words anyway).
        const seg = this.views[Number(span.dataset.s)].seg;
        this.range = null;
        seg.words.splice(seg.words.indexOf(w), 1);
        if (!seg.words.length) this.doc.segments.splice(this.doc.segments.indexOf(seg), 1);
        this.history.unrecorded();
        this.renderChanged();
        this.schedulePreview();
      });
    }

    /// Chooses all of a word's text (typing replaces it).
    selectWord(span) {
      const range = document.createRange();
      range.selectNodeContents(span);
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
    }

    /// Where the caret is in a word: "all" (its whole text chosen), "start", "end", "both"
    /// (an empty word) or "inside".
    caretIn(span) {
      const sel = window.getSelection();
      if (!sel.rangeCount) return "all";
      const r = sel.getRangeAt(0);
      const text = span.textContent;
      const before = document.createRange();
      before.selectNodeContents(span);
      before.setEnd(r.startContainer, r.startOffset);
      const from = before.toString().length;
      if (!r.collapsed) return from === 0 && r.toString() === text ? "all" : "inside";
      if (!text.length) return "both";
      return from === 0 ? "start" : from === text.length ? "end" : "inside";
    }

    /// Arrow keys in the word area: ←/→ move to the previous/next word once the caret is at the
    /// word's edge (or the whole word is chosen), ↑/↓ to the previous/next segment, Home/End
    /// to the first/last word of the segment, Ctrl+Home/End of the transcript.
    arrowKey(e, span) {
      if (e.altKey || e.metaKey || e.shiftKey) return;
      const s = Number(span.dataset.s);
      const w = Number(span.dataset.w);
      const at = e.ctrlKey ? null : this.caretIn(span);
      const edge = (side) => at === "all" || at === "both" || at === side;
      let to = null;
      if (e.ctrlKey) {
        if (e.key === "Home") to = [0, 0];
        else if (e.key === "End") {
          const last = this.doc.segments.length - 1;
          to = [last, this.doc.segments[last].words.length - 1];
        } else return;
      } else if (e.key === "ArrowLeft" && edge("start")) {
        to = w > 0 ? [s, w - 1] : s > 0 ? [s - 1, this.doc.segments[s - 1].words.length - 1] : [s, w];
      } else if (e.key === "ArrowRight" && edge("end")) {
        to = w < this.doc.segments[s].words.length - 1 ? [s, w + 1] : s < this.doc.segments.length - 1 ? [s + 1, 0] : [s, w];
      } else if (e.key === "ArrowUp") to = [Math.max(0, s - 1), 0];
      else if (e.key === "ArrowDown") to = [Math.min(this.doc.segments.length - 1, s + 1), 0];
      else if (e.key === "Home" && edge("start")) to = [s, 0];
      else if (e.key === "End" && edge("end")) to = [s, this.doc.segments[s].words.length - 1];
      else return;
      e.preventDefault();
      const target = this.spanOf(to[0], to[1]);
      if (!target) return;
      if (target === span) this.selectWord(span);
      else target.focus();
    }

    /// A translation's cue table anew: the source cues with a field for each translation, only
    /// the rows near the view rendered (renderCueWindow).
    renderCues() {
      this.curRow = null;
      this.listWindow({ head: 90, perUnit: 0 }, () => el("tr", { class: "cue-pad" }, el("td", { colspan: 3 })),
        (v) => v.cue, (v) => v.row, () => 0, () => 0);
      this.main.replaceChildren(el("div", { class: "table-wrap" }, el("table", { class: "cues" },
        el("caption", { class: "sr-only" }, "Source cues and their translations"),
        el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Cue"), el("th", { scope: "col" }, `Source (${this.opts.sourceLanguage || ""})`), el("th", { scope: "col" }, `Translation (${this.opts.targetLanguage || ""})`))),
        el("tbody", {}, ...this.win.pads()))));
      this.renderChanged();
    }

    /// The rows of the cues near the view (and cue `must`, and the one holding the focus).
    renderCueWindow(must) {
      this.win.render(this.doc.cues, must, (cue, kept) => kept || this.cueView(cue), (view, i) => this.showCue(view, i));
      this.width = this.main.clientWidth;
      this.markCurrentCue();
      if (this.finder && !this.finder.panel.hidden) this.finder.remark();
    }

    /// The elements of a cue's row (numbered and filled by showCue).
    cueView(cue) {
      const view = { cue, index: -1, shown: {} };
      view.number = el("span", { class: "cue-number" });
      view.start = document.createTextNode("");
      view.end = document.createTextNode("");
      view.speaker = el("span", { class: "cue-speaker" });
      view.source = document.createTextNode("");
      view.label = el("label", { class: "sr-only" });
      view.textarea = el("textarea", { class: "target", lang: this.opts.targetLanguage || "", onfocus: () => {
        this.focus = { s: view.index, w: 0 };
      }, oninput: (e) => {
        view.cue.target = e.target.value;
        this.changed(undefined, [view.cue]);
        this.typing();
      } });
      view.row = el("tr", {},
        el("td", { class: "cue-time" }, view.number, el("br"), view.start, el("br"), view.end),
        el("td", { class: "source", lang: this.opts.sourceLanguage || "" }, view.speaker, view.source),
        el("td", {}, view.label, view.textarea));
      return view;
    }

    /// Brings a cue's row up to date as cue `i`, changing only what differs.
    showCue(view, i) {
      const c = view.cue;
      const shown = view.shown;
      if (view.index !== i) {
        view.index = i;
        view.row.dataset.cue = i;
        view.number.textContent = `${i + 1}`;
        view.textarea.id = `target-${i}`;
        view.label.htmlFor = `target-${i}`;
        view.label.textContent = `Translation of cue ${i + 1}`;
      }
      if (shown.start !== c.start) view.start.data = clock((shown.start = c.start));
      if (shown.end !== c.end) view.end.data = clock((shown.end = c.end));
      const speaker = `${c.speakerName || c.speaker}: `;
      if (shown.speaker !== speaker) view.speaker.textContent = shown.speaker = speaker;
      if (shown.text !== c.text) view.source.data = shown.text = c.text;
      if (view.textarea.value !== c.target) view.textarea.value = c.target;
    }

    /// Marks the cue playing if its row is rendered; rendering its row later marks it then.
    markCurrentCue() {
      const view = this.playingCue >= 0 && this.win ? this.win.views[this.playingCue] : null;
      const row = view ? view.row : null;
      if (row !== this.curRow) {
        if (this.curRow) this.curRow.classList.remove("current");
        if (row) row.classList.add("current");
        this.curRow = row;
      }
    }

    /// The numbers (1-based) of the cues with no translation yet.
    emptyCues() {
      return this.mode === "translate" ? this.doc.cues.flatMap((c, i) => (c.target.trim() ? [] : [i + 1])) : [];
    }

    /// Moves the cursor to the translation of cue `n` (1-based).
    focusCue(n) {
      const node = this.targetOf(n - 1);
      if (node) {
        node.focus();
        node.scrollIntoView({ block: "center" });
      }
    }

    inHighlight(w) {
      const mid = (w.start + w.end) / 2;
      return this.doc.highlights.some((h) => h.start <= mid && mid <= h.end);
    }

    // ---- playback ----------------------------------------------------------------------

    playPause() {
      clearTimeout(this.resumeTimer);
      this.typingPaused = false;
      if (this.audio.paused) {
        this.audio.play().catch((e) => this.showError(`Playback failed: ${e.message}`));
      } else {
        this.audio.pause();
        this.rewindOnPause();
      }
    }

    /// Rewind on pause (a setting): a pause steps back, so playing again repeats the last words.
    rewindOnPause() {
      const back = Number(this.settings.rewind) || 0;
      if (back > 0) this.seek(this.audio.currentTime - back);
    }

    /// A key typed into the transcript. Unless "keep playing while I type" is on, playback
    /// pauses (stepping back as a pause does) and plays on once the typing has stopped.
    typing() {
      if (this.settings.playWhileTyping) return;
      if (!this.audio.paused) {
        this.audio.pause();
        this.rewindOnPause();
        this.typingPaused = true;
      }
      if (!this.typingPaused) return;
      clearTimeout(this.resumeTimer);
      this.resumeTimer = setTimeout(() => {
        if (!this.typingPaused || this.destroyed) return;
        this.typingPaused = false;
        this.audio.play().catch(() => {});
      }, (Number(this.settings.resumeAfter) || 1) * 1000);
    }

    setSetting(name, value) {
      this.settings[name] = value;
      try {
        localStorage.setItem(SETTINGS_KEY, JSON.stringify(this.settings));
      } catch (_) {
        // Private browsing may refuse: the setting holds for this page.
      }
    }

    /// The key of a changeable shortcut (the user's, else the default).
    keyFor(action) {
      const found = KEYABLE.find(([a]) => a === action);
      return (this.settings.keys || {})[action] || found[2];
    }

    /// The changeable shortcuts of this editor's mode.
    keyable() {
      return KEYABLE.filter(([, , , , mode]) => !mode || mode === this.mode);
    }

    /// The changeable shortcut a key press stands for, or null.
    keyAction(e) {
      const name = keyName(e);
      if (!name) return null;
      const found = this.keyable().find(([a]) => this.keyFor(a) === name);
      return found ? found[0] : null;
    }

    runKey(action) {
      const run = {
        playPause: () => this.playPause(),
        back: () => this.seek(this.audio.currentTime - 5),
        forward: () => this.seek(this.audio.currentTime + 5),
        slower: () => this.stepSpeed(-1),
        faster: () => this.stepSpeed(1),
        prevSegment: () => this.gotoSegment(-1),
        nextSegment: () => this.gotoSegment(1),
        split: () => this.split(),
        highlight: () => this.toggleHighlight(),
        find: () => this.finder.open(),
        zoomIn: () => this.zoom(2),
        zoomOut: () => this.zoom(0.5),
        nextProblem: () => this.timeline.nextProblem(),
        save: () => this.save(),
      };
      run[action]();
    }

    /// Names each changeable shortcut on its button (`aria-keyshortcuts`), after a change.
    showKeys() {
      const aria = (action) => this.keyFor(action).replace("Ctrl", "Control");
      for (const [action, , , id] of this.keyable()) {
        const button = id && document.getElementById(id);
        if (button) button.setAttribute("aria-keyshortcuts", aria(action));
        const chip = document.getElementById(`key-${action}`);
        if (chip) chip.textContent = this.keyFor(action);
      }
      if (this.speed) this.speed.setAttribute("aria-keyshortcuts", `${aria("slower")} ${aria("faster")}`);
    }

    /// "Change" beside a shortcut: the next key pressed becomes its key (Tab leaves it as it was).
    changeKey(action, button) {
      const label = KEYABLE.find(([a]) => a === action)[1];
      button.textContent = "Press a key…";
      this.capturing = true;
      const done = (message) => {
        this.capturing = false;
        button.removeEventListener("keydown", onKey);
        button.removeEventListener("blur", onBlur);
        button.textContent = "Change";
        this.showKeys();
        this.setStatus(message);
      };
      const onBlur = () => done(`The key for ${label} is still ${this.keyFor(action)}.`);
      const onKey = (e) => {
        if (e.key === "Tab") return;
        const name = keyName(e);
        if (!name) return;
        e.preventDefault();
        e.stopPropagation();
        const still = `the key for ${label} is still ${this.keyFor(action)}`;
        const reserved = reservedFor(name);
        if (reserved) return done(`${reserved}: ${still}. Choose a key with Ctrl or Alt, or a function key.`);
        const taken = this.keyable().find(([a]) => a !== action && this.keyFor(a) === name);
        if (taken) return done(`${name} already does ${taken[1]}: ${still}.`);
        this.setSetting("keys", { ...(this.settings.keys || {}), [action]: name });
        done(`${label[0].toUpperCase()}${label.slice(1)}: ${name}.`);
      };
      button.addEventListener("keydown", onKey);
      button.addEventListener("blur", onBlur);
    }

    /// Every changeable shortcut back to its default key.
    resetKeys() {
      this.setSetting("keys", {});
      this.showKeys();
      this.setStatus("Every shortcut has its default key again.");
    }

    /// The settings panel: rewind on pause, and playback while typing.
    settingsPanel() {
      const rewind = el("input", { id: "set-rewind", type: "number", min: 0, max: 5, step: 0.5, value: this.settings.rewind, oninput: (e) => {
        const v = Number(e.target.value);
        const ok = e.target.value !== "" && v >= 0 && v <= 5;
        e.target.setAttribute("aria-invalid", ok ? "false" : "true");
        if (ok) this.setSetting("rewind", v);
      } });
      const play = el("input", { id: "set-play-typing", type: "checkbox", checked: this.settings.playWhileTyping, onchange: (e) => this.setSetting("playWhileTyping", e.target.checked) });
      return el("div", { class: "panel settings", id: "editor-settings" },
        el("div", {}, el("label", { for: "set-rewind" }, "Rewind on pause", el("span", { class: "hint" }, " (seconds, 0 to 5; 0: off)")), rewind),
        el("label", { class: "check", for: "set-play-typing" }, play, " Keep playing while I type"),
        el("p", { class: "hint", id: "set-play-typing-hint" }, "Off: typing pauses playback, which plays on a second after you stop."));
    }

    seek(t) {
      const d = Number.isFinite(this.audio.duration) ? this.audio.duration : Infinity;
      this.audio.currentTime = Math.max(0, Math.min(t, d));
      this.follow();
      this.drawPlayhead();
    }

    /// Moves the "current" marks to what plays at the media's position: only the previous and
    /// the new word (and segment, or cue) are touched, found by binary search.
    follow() {
      const t = this.audio.currentTime;
      this.timeLabel.textContent = clock(t);
      if (this.mode === "translate") {
        const i = lastStartingBy(this.doc.cues, t);
        this.playingCue = i >= 0 && t < this.doc.cues[i].end ? i : -1;
        this.markCurrentCue();
      } else {
        if (!this.timeIndex) this.timeIndex = this.doc.segments.flatMap((seg, s) => seg.words.map((w, i) => ({ start: w.start, end: w.end, s, w: i })));
        const i = lastStartingBy(this.timeIndex, t);
        this.playing = i >= 0 && t < this.timeIndex[i].end ? this.timeIndex[i] : null;
        this.markCurrent();
      }
      this.renderCaption();
    }

    /// Marks the word playing (and its segment) if it is rendered; rendering its segment later
    /// marks it then.
    markCurrent() {
      const at = this.playing;
      const view = at ? this.views[at.s] : null;
      const span = view ? view.spans[at.w] || null : null;
      if (span !== this.curSpan) {
        if (this.curSpan) this.curSpan.classList.remove("cur");
        if (span) span.classList.add("cur");
        this.curSpan = span;
      }
      const section = view ? view.section : null;
      if (section !== this.curSection) {
        if (this.curSection) this.curSection.classList.remove("current");
        if (section) section.classList.add("current");
        this.curSection = section;
      }
    }

    /// Shows the preview's cue at the media's position (the server's layout, see refreshPreview).
    renderCaption() {
      const t = this.audio ? this.audio.currentTime : 0;
      const i = lastStartingBy(this.cues, t);
      const cue = i >= 0 && t < this.cues[i].end ? this.cues[i] : null;
      const text = cue ? cue.lines.join("\n") : "";
      if (this.caption.textContent !== text) this.caption.textContent = text;
      if (cue) {
        this.caption.dataset.start = cue.start;
        this.caption.dataset.end = cue.end;
      } else {
        delete this.caption.dataset.start;
        delete this.caption.dataset.end;
      }
    }

    /// Asks for the preview again `delay` ms after the last change (typing waits for a pause).
    schedulePreview(delay = 400) {
      clearTimeout(this.previewTimer);
      this.caption.dataset.preview = "pending";
      this.previewTimer = setTimeout(() => this.refreshPreview(), delay);
    }

    /// The subtitle cues of the unsaved document as the SRT export lays them out, from the
    /// server (POST /api/subtitles/preview with the knobs); an older answer never replaces a newer.
    async refreshPreview() {
      if (this.destroyed) return;
      if (!this.opts.api) {
        this.caption.dataset.preview = "off";
        return;
      }
      const asked = (this.previewAsked = (this.previewAsked || 0) + 1);
      const params = { maxCharsPerRow: this.knobs.chars, maxNumberOfRows: this.knobs.rows, maxScreenTimePerRowSeconds: this.knobs.screen };
      const json = this.toDocument();
      try {
        // A document with every word deleted has no cues (the server refuses an empty one).
        const answer = json.segments.length ? await this.opts.api("POST", "/subtitles/preview", { params, json }) : { cues: [] };
        if (asked !== this.previewAsked || this.destroyed) return;
        this.cues = answer.cues;
        this.previewError.textContent = "";
        this.caption.dataset.preview = "ready";
        this.renderCaption();
      } catch (e) {
        if (asked !== this.previewAsked || this.destroyed) return;
        this.caption.dataset.preview = "error";
        this.previewError.textContent = `The subtitle preview is not up to date: ${e.message}`;
      }
    }

    gotoSegment(step) {
      const starts = this.mode === "translate" ? this.doc.cues.map((c) => c.start) : this.doc.segments.map((s) => s.words[0]?.start ?? 0);
      const current = this.focus ? this.focus.s : starts.findLastIndex((s) => s <= this.audio.currentTime + 0.01);
      const target = Math.max(0, Math.min(starts.length - 1, (current < 0 ? -1 : current) + step));
      this.seek(starts[target]);
      if (this.mode === "translate") {
        const node = this.targetOf(target);
        if (node) node.focus();
      } else this.focusWord(target, 0);
      this.focus = { s: target, w: 0 };
    }

    // ---- structure ---------------------------------------------------------------------

    focusWord(s, w) {
      const node = this.spanOf(s, w);
      if (node) node.focus();
    }

    split() {
      if (!this.focus) return this.setStatus("Put the cursor in the word that should start the new segment, then split.");
      const { s, w } = this.focus;
      const seg = this.doc.segments[s];
      if (!seg || w === 0) return this.setStatus("That word already starts a segment.");
      this.range = null;
      this.doc.segments.splice(s + 1, 0, { speaker: seg.speaker, words: seg.words.splice(w) });
      this.renderChanged();
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
      this.renderChanged();
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
      this.renderChanged();
    }

    showRange() {
      const [a, b] = this.rangeBounds();
      this.renderChanged();
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
      this.renderChanged();
      this.renderRegions();
      this.changed(message.replace(/[.]$/, ""));
      this.setStatus(message);
      if (focus) {
        this.focusWord(focus.s, focus.w);
        this.focus = focus;
      }
    }

    // ---- saving ------------------------------------------------------------------------

    /// Saves the document. `auto`: an auto-save (tasks), reported in the status line only.
    async save({ auto = false } = {}) {
      if (this.saving) return this.saving;
      if (!auto) {
        this.showError("");
        this.notice.textContent = "";
      }
      this.setStatus(auto ? "Auto-saving…" : "Saving…");
      const edits = this.edits || 0;
      this.saving = (async () => {
        try {
          const message = await this.opts.save(this.toDocument(), { auto });
          // Edits made while the save was on its way stay unsaved.
          if ((this.edits || 0) === edits) {
            this.dirty = false;
            this.dropDraft();
          } else {
            this.storeDraft();
          }
          if (auto) this.setStatus(`${message} (auto-saved at ${new Date().toLocaleTimeString()})`);
          else {
            this.notice.textContent = message;
            this.setStatus(this.dirty ? "Saved; newer changes are not saved yet." : "All changes saved.");
          }
          return true;
        } catch (e) {
          if (auto) this.setStatus(`Auto-save failed (${e.message}); your changes are kept as a local draft.`);
          else {
            this.showError(e.message);
            this.setStatus("Not saved: your changes are kept as a local draft.");
            this.markField(e.field);
          }
          this.storeDraft();
          return false;
        }
      })();
      try {
        return await this.saving;
      } finally {
        this.saving = null;
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
      if (!this.root.isConnected || document.querySelector("dialog[open]")) return;
      const ctrl = e.ctrlKey || e.metaKey;
      // The find box keeps its own undo and Escape.
      if (e.target.closest && e.target.closest("#find-panel") && (e.key === "Escape" || (ctrl && /^[zyZY]$/.test(e.key)))) return;
      if (this.capturing) return;
      let handled = true;
      const action = this.keyAction(e);
      if (action) this.runKey(action);
      else if (ctrl && !e.shiftKey && (e.key === "z" || e.key === "Z")) this.undo();
      else if (ctrl && ((e.shiftKey && (e.key === "z" || e.key === "Z")) || e.key === "y" || e.key === "Y")) this.redo();
      else if (e.altKey && !ctrl && (e.code === "BracketLeft" || e.code === "BracketRight") && this.focus) this.timeline.nudge(this.focus.s, e.shiftKey ? "end" : "start", e.code === "BracketLeft" ? -0.1 : 0.1);
      else if (e.altKey && !ctrl && e.code === "NumpadAdd") this.zoom(2);
      else if (e.altKey && !ctrl && e.code === "NumpadSubtract") this.zoom(0.5);
      else if (ctrl && e.shiftKey && e.key === "ArrowRight" && this.mode === "transcript") this.chooseStep(1);
      else if (ctrl && e.shiftKey && e.key === "ArrowLeft" && this.mode === "transcript") this.chooseStep(-1);
      else handled = false;
      if (handled) e.preventDefault();
    }

    setStatus(text) {
      this.status.textContent = text;
      // Cut to one line in the fixed bar on wide screens: the whole text on hover.
      this.status.title = text;
    }

    showError(text) {
      this.error.textContent = text;
    }
  }

  window.ScribeEditor = { Editor, clock, el, dropAllDrafts };
})();
