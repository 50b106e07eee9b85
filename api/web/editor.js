// The one editor of Scribe's web app, for customers correcting their finished jobs and for
// transcribers and translators working on tasks. It plays the media with a waveform
// (wavesurfer.js, highlights shown as regions), shows the transcript as words that follow
// playback, edits words in place, splits and joins segments, changes and renames speakers,
// marks highlights (the sentence at the cursor, or any run of words chosen with Shift+click or
// Ctrl+Shift+arrows), previews subtitles with the caption knobs, keeps unsaved changes as a
// local draft, and in translate mode shows the source cues beside the target text.
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

  function clock(seconds) {
    if (!Number.isFinite(seconds)) seconds = 0;
    const m = Math.floor(seconds / 60);
    const s = seconds - m * 60;
    return `${String(m).padStart(2, "0")}:${s.toFixed(1).padStart(4, "0")}`;
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

  const DRAFT_PREFIX = "scribe.draft.";

  /// Removes every local draft (all accounts, and drafts kept before drafts had owners): sign-out
  /// leaves no transcript text in this browser.
  function dropAllDrafts() {
    for (const k of Object.keys(localStorage)) if (k.startsWith(DRAFT_PREFIX)) localStorage.removeItem(k);
  }

  class Editor {
    // opts: { mode: "transcript" | "translate", document, mediaUrl, sourceCues, glossary,
    //         instructions, account, draftKey, revision, save(doc) -> Promise<message>,
    //         onChange(), actions: [{id,label,run,danger}] }
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
      clearTimeout(this.draftTimer);
      document.removeEventListener("keydown", this.onKey);
      window.removeEventListener("beforeunload", this.onUnload);
      if (this.wave) this.wave.destroy();
      if (this.audio) this.audio.pause();
    }

    // ---- model -------------------------------------------------------------------------

    translationModel(document, cues) {
      const words = document ? document.segments.flatMap((s) => s.words) : [];
      return {
        speakers: document ? document.speakers : [],
        cues: cues.map((c) => ({
          ...c,
          target: words.filter((w) => w.start >= c.start - 0.001 && w.start < c.end - 0.001).map((w) => w.text).join(" "),
        })),
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

    flatWords() {
      if (this.mode === "translate") {
        return this.doc.cues.filter((c) => c.target.trim()).map((c) => ({ start: c.start, end: c.end, text: c.target, speaker: c.speaker }));
      }
      return this.doc.segments.flatMap((seg) => seg.words.map((w) => ({ ...w, speaker: seg.speaker })));
    }

    changed() {
      this.dirty = true;
      this.edits = (this.edits || 0) + 1;
      this.setStatus("Unsaved changes (kept as a local draft)");
      clearTimeout(this.draftTimer);
      this.draftTimer = setTimeout(() => this.storeDraft(), 400);
      this.cues = null;
      this.renderCaption();
      if (this.opts.onChange) this.opts.onChange();
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
            if (this.mode === "transcript") this.renderSpeakers();
            this.renderBody();
            this.renderRegions();
            this.changed();
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
      this.audio = new Audio();
      this.audio.preload = "auto";
      this.audio.src = o.mediaUrl;
      this.timeLabel = el("span", { class: "time", "aria-live": "off", id: "time" }, "00:00.0");
      this.playBtn = el("button", { id: "play", onclick: () => this.playPause(), "aria-keyshortcuts": "Escape" }, "Play");
      const tools = [
        this.playBtn,
        el("button", { id: "back5", onclick: () => this.seek(this.audio.currentTime - 5), "aria-keyshortcuts": "Control+B" }, "Back 5 s"),
        el("button", { id: "prev-seg", onclick: () => this.gotoSegment(-1), "aria-keyshortcuts": "Control+ArrowUp" }, "Previous segment"),
        el("button", { id: "next-seg", onclick: () => this.gotoSegment(1), "aria-keyshortcuts": "Control+ArrowDown" }, "Next segment"),
      ];
      if (this.mode === "transcript") {
        tools.push(
          el("button", { id: "split", onclick: () => this.split(), "aria-keyshortcuts": "Control+Enter" }, "Split at word"),
          el("button", { id: "highlight", onclick: () => this.toggleHighlight(), "aria-keyshortcuts": "Control+M", title: "The chosen words (Shift+click, Ctrl+Shift+→/←), else the sentence at the cursor" }, "Highlight"),
        );
      }
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
      this.top = el("div", { class: "editor-top" }, el("div", { class: "toolbar", role: "toolbar", "aria-label": "Editor" }, tools), this.waveBox, this.caption, this.status, this.error, this.notice);
      this.main = el("div", { class: "transcript", id: "transcript" });
      this.side = el("aside", { class: "side", "aria-label": "Speakers, instructions and settings" });
      this.root.append(this.top, el("div", { class: "editor-body" }, this.main, this.side));
      this.renderSide();
      this.renderBody();
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
      this.wave.on("error", (e) => {
        this.waveBox.dataset.ready = "error";
        this.setStatus(`Waveform unavailable (${e && e.message ? e.message : e}); playback still works.`);
      });
    }

    renderRegions() {
      if (!this.regions || this.waveBox.dataset.ready !== "true") return;
      this.regions.clearRegions();
      for (const h of this.doc.highlights) {
        this.regions.addRegion({ start: h.start, end: Math.max(h.end, h.start + 0.05), color: "rgba(255, 214, 0, 0.35)", drag: false, resize: false });
      }
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
        [["Esc", "play / pause"], ["Ctrl+B", "back 5 seconds"], ["Ctrl+↓ / Ctrl+↑", "next / previous segment"], ["Ctrl+S", "save"]]
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
          this.changed();
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
        el("td", { class: "cue-time" }, el("span", { class: "cue-number" }, `${i + 1}`), el("br"), `${clock(c.start)}`, el("br"), `${clock(c.end)}`),
        el("td", { class: "source", lang: this.opts.sourceLanguage || "" }, el("span", { class: "cue-speaker" }, `${c.speakerName || c.speaker}: `), c.text),
        el("td", {}, el("label", { class: "sr-only", for: `target-${i}` }, `Translation of cue ${i + 1}`),
          el("textarea", { id: `target-${i}`, class: "target", lang: this.opts.targetLanguage || "", onfocus: () => {
            this.focus = { s: i, w: 0 };
          }, oninput: (e) => {
            c.target = e.target.value;
            this.changed();
          } }, c.target))));
      this.main.replaceChildren(el("div", { class: "table-wrap" }, el("table", { class: "cues" },
        el("caption", { class: "sr-only" }, "Source cues and their translations"),
        el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Cue"), el("th", { scope: "col" }, `Source (${this.opts.sourceLanguage || ""})`), el("th", { scope: "col" }, `Translation (${this.opts.targetLanguage || ""})`))),
        el("tbody", {}, rows))));
    }

    /// The numbers (1-based) of the cues with no translation yet.
    emptyCues() {
      return this.mode === "translate" ? this.doc.cues.flatMap((c, i) => (c.target.trim() ? [] : [i + 1])) : [];
    }

    /// Moves the cursor to the translation of cue `n` (1-based).
    focusCue(n) {
      const node = this.main.querySelector(`#target-${n - 1}`);
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
      this.changed();
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
      this.changed();
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
      this.changed();
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
      let handled = true;
      if (e.key === "Escape") this.playPause();
      else if (ctrl && (e.key === "s" || e.key === "S")) this.save();
      else if (ctrl && (e.key === "b" || e.key === "B")) this.seek(this.audio.currentTime - 5);
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

  window.ScribeEditor = { Editor, captions, clock, el, dropAllDrafts };
})();
