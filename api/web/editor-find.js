// Find and replace across the editor's document: next and previous match, replace one, replace
// all (a misheard name everywhere), with or without matching case, and the job's glossary terms
// offered as suggestions for the replacement. In a transcript a phrase matches words in a row
// ("john smith" finds "John Smith,"), also when they run on from one segment into the next, and
// its replacement's words take the matched words' time span ("new york" → "New York", "jon
// smyth" → "Jonathan P. Smyth"), every segment staying where it was; a single word matches inside
// words too. In a translation matches lie in one cue's text. Replacing (one, or all) is one edit
// the editor can undo.
"use strict";

(function () {
  const { el } = window.ScribeEditor || {};

  class FindReplace {
    /// editor: the Editor; it provides fields() (the editable texts), findFocus(field),
    /// replaced(label) (re-render, record the edit) and its glossary (opts.glossary).
    constructor(editor) {
      this.editor = editor;
      this.current = -1;
      const g = editor.opts.glossary;
      const terms = g ? [...new Set([...(g.names || []), ...(g.items || []).map((it) => it.name)])].sort((a, b) => a.localeCompare(b)) : [];
      this.find = el("input", { id: "find-text", type: "search", autocomplete: "off", oninput: () => this.refresh(), onkeydown: (e) => this.keys(e) });
      this.replace = el("input", { id: "replace-text", type: "text", autocomplete: "off", list: terms.length ? "glossary-terms" : null, onkeydown: (e) => this.keys(e) });
      this.matchCase = el("input", { id: "find-case", type: "checkbox", onchange: () => this.refresh() });
      this.status = el("p", { class: "hint", role: "status", id: "find-status" });
      const field = (id, label, input, hint) => el("div", {}, el("label", { for: id }, label, hint ? el("span", { class: "hint" }, ` (${hint})`) : null), input);
      this.panel = el("div", { class: "panel find", id: "find-panel", role: "search", "aria-label": "Find and replace", hidden: true },
        el("div", { class: "find-fields" },
          field("find-text", "Find", this.find),
          field("replace-text", "Replace with", this.replace, terms.length ? "glossary terms suggested" : null),
          terms.length ? el("datalist", { id: "glossary-terms" }, terms.map((t) => el("option", { value: t }))) : null),
        el("div", { class: "row" },
          el("label", { class: "check" }, this.matchCase, " Match case"),
          el("button", { id: "find-prev", type: "button", onclick: () => this.step(-1) }, "Previous"),
          el("button", { id: "find-next", type: "button", onclick: () => this.step(1) }, "Next"),
          el("button", { id: "replace-one", type: "button", onclick: () => this.replaceOne() }, "Replace"),
          el("button", { id: "replace-all", type: "button", onclick: () => this.replaceAll() }, "Replace all"),
          el("button", { id: "find-close", type: "button", onclick: () => this.close() }, "Close")),
        this.status);
    }

    open() {
      this.panel.hidden = false;
      this.editor.findButton.setAttribute("aria-expanded", "true");
      this.find.focus();
      this.find.select();
      this.refresh();
    }

    close() {
      this.panel.hidden = true;
      this.editor.findButton.setAttribute("aria-expanded", "false");
      this.mark(null);
      this.editor.findButton.focus();
    }

    toggle() {
      if (this.panel.hidden) this.open();
      else this.close();
    }

    keys(e) {
      if (e.key === "Enter") {
        e.preventDefault();
        if (e.target === this.replace && !e.shiftKey) this.replaceOne();
        else this.step(e.shiftKey ? -1 : 1);
      } else if (e.key === "Escape") {
        e.preventDefault();
        e.stopPropagation();
        this.close();
      }
    }

    /// Every match in document order. Transcripts: {parts: [{s, w, k}]}: `k` words of segment
    /// `s` from word `w`, one part per segment the match lies in; a one-word search matches
    /// inside a word (one part, and the text from `at`, `len` characters), a phrase matches words
    /// in a row whose letters (without the punctuation attached to them) are the phrase's words,
    /// also when they run on from one segment into the next. Translations: {field, at} in a
    /// cue's text.
    matches() {
      const needle = this.find.value.trim();
      if (!needle) return [];
      const fold = !this.matchCase.checked;
      const norm = (t) => (fold ? t.toLocaleLowerCase() : t);
      const out = [];
      if (this.editor.mode === "translate") {
        const want = norm(needle);
        this.editor.fields().forEach((f, field) => {
          const text = norm(f.get());
          for (let at = text.indexOf(want); at >= 0; at = text.indexOf(want, at + want.length)) out.push({ field, at });
        });
        return out;
      }
      const phrase = needle.split(/\s+/).map((t) => norm(core(t).text)).filter(Boolean);
      const segments = this.editor.doc.segments;
      if (phrase.length < 2) {
        const want = norm(needle);
        segments.forEach((seg, s) => seg.words.forEach((w, i) => {
          const text = norm(w.text);
          for (let at = text.indexOf(want); at >= 0; at = text.indexOf(want, at + want.length)) out.push({ parts: [{ s, w: i, k: 1 }], at, len: want.length });
        }));
        return out;
      }
      // The transcript's words in one row: a phrase may start in one segment and end in the next.
      const row = [];
      segments.forEach((seg, s) => seg.words.forEach((w, i) => row.push({ s, w: i, text: norm(core(w.text).text) })));
      for (let i = 0; i + phrase.length <= row.length; i++) {
        if (!phrase.every((p, j) => row[i + j].text === p)) continue;
        const parts = [];
        for (const { s, w } of row.slice(i, i + phrase.length)) {
          const last = parts[parts.length - 1];
          if (last && last.s === s) last.k++;
          else parts.push({ s, w, k: 1 });
        }
        out.push({ parts });
        i += phrase.length - 1;
      }
      return out;
    }

    refresh() {
      this.list = this.matches();
      this.current = -1;
      this.mark(null);
      this.say();
    }

    say(prefix) {
      const n = this.list ? this.list.length : 0;
      const what = this.find.value ? `“${this.find.value}”` : "";
      const where = this.current >= 0 ? `Match ${this.current + 1} of ${n}` : `${n} match${n === 1 ? "" : "es"}`;
      this.status.textContent = (prefix ? prefix + " " : "") + (!what ? "Type what to find." : n ? `${where} for ${what}.` : `No matches for ${what}.`);
    }

    /// Shows match `i` (or none): marks its words or cue and plays from there.
    mark(i) {
      for (const node of this.editor.main.querySelectorAll(".found")) node.classList.remove("found");
      if (i === null || !this.list || !this.list[i]) return;
      const m = this.list[i];
      let nodes;
      let start;
      if (this.editor.mode === "translate") {
        const f = this.editor.fields()[m.field];
        nodes = [f.node()];
        start = f.start;
      } else {
        // A match out of the window is rendered first (editor.viewOf scrolls to it).
        nodes = m.parts.flatMap(({ s, w, k }) => {
          const view = this.editor.viewOf(s);
          return view ? view.spans.slice(w, w + k) : [];
        });
        const first = m.parts[0];
        start = this.editor.doc.segments[first.s].words[first.w].start;
      }
      nodes = nodes.filter(Boolean);
      for (const node of nodes) node.classList.add("found");
      if (nodes.length) nodes[0].scrollIntoView({ block: "nearest" });
      if (start !== undefined) this.editor.seek(start);
    }

    /// Marks the shown match's words again where they are rendered: a segment that left the
    /// window and came back is drawn anew (editor.renderWindow calls this).
    remark() {
      const m = this.list && this.current >= 0 ? this.list[this.current] : null;
      if (!m) return;
      if (this.editor.mode === "translate") {
        const view = this.editor.win.views[m.field];
        if (view) view.textarea.classList.add("found");
        return;
      }
      for (const { s, w, k } of m.parts) {
        const view = this.editor.views[s];
        if (view) for (const span of view.spans.slice(w, w + k)) span.classList.add("found");
      }
    }

    step(dir) {
      if (!this.list) this.refresh();
      const n = this.list.length;
      if (!n) return this.say();
      this.current = this.current < 0 ? (dir > 0 ? 0 : n - 1) : (this.current + dir + n) % n;
      this.mark(this.current);
      this.say();
    }

    /// Puts the replacement over match `m` (see `replaceWords` for transcripts).
    apply(m) {
      const needle = this.find.value.trim();
      const by = this.replace.value;
      if (this.editor.mode === "translate") {
        const f = this.editor.fields()[m.field];
        const text = f.get();
        f.set(text.slice(0, m.at) + by + text.slice(m.at + needle.length));
      } else replaceWords(this.editor.doc, m, by);
    }

    replaceOne() {
      if (!this.list) this.refresh();
      if (this.current < 0) return this.step(1);
      const needle = this.find.value.trim();
      this.apply(this.list[this.current]);
      const done = `Replaced “${needle}” with “${this.replace.value}”.`;
      this.editor.replaced(done);
      const next = this.current;
      this.list = this.matches();
      this.current = this.list.length ? Math.min(next, this.list.length - 1) : -1;
      this.mark(this.current >= 0 ? this.current : null);
      this.say(done);
    }

    replaceAll() {
      const list = this.matches();
      const needle = this.find.value.trim();
      if (!list.length) return this.say();
      // From the last match back, so earlier positions stay right.
      for (const m of [...list].reverse()) this.apply(m);
      const done = `Replaced ${list.length} × “${needle}” with “${this.replace.value}”.`;
      this.editor.replaced(done);
      this.refresh();
      this.say(done);
    }
  }

  const EDGE_PUNCTUATION = /^([\p{P}\p{S}]*)(.*?)([\p{P}\p{S}]*)$/su;

  /// A word's text without the punctuation attached to it: {lead, text, trail}.
  function core(word) {
    const m = EDGE_PUNCTUATION.exec(word);
    return m[2] ? { lead: m[1], text: m[2], trail: m[3] } : { lead: "", text: m[1] + m[3], trail: "" };
  }

  const round3 = (t) => Math.round(t * 1000) / 1000;

  /// Puts the words of `by` over the words of match `m` in `doc` (see `matches`). Within one
  /// segment the punctuation around the match stays (a one-word match keeps the rest of its
  /// word); the same number of words keep their own times; another number of words share the
  /// matched words' time span evenly (the first keeps its start, the last its end). No words at
  /// all remove the matched words.
  ///
  /// A match over several segments leaves every segment and speaker boundary where it was: the
  /// replacement's words are shared among the segments in the proportion of the matched words
  /// each holds, in order, each segment getting at least one while there are enough (the same
  /// number of words: each takes its matched word's place and times), and within a segment they
  /// take that segment's part of the match as above. So the first replacement word starts where
  /// the match started and the last ends where it ended. With fewer words than segments, a
  /// segment the match fills whole gets a word first (it would otherwise vanish), the others
  /// lose their matched words; only a replacement with no words at all (or fewer words than
  /// such segments) leaves a segment empty, and an empty segment goes, as when its words are
  /// deleted, because the document has no segment without words.
  function replaceWords(doc, m, by) {
    const texts = by.trim().split(/\s+/).filter(Boolean);
    if (m.parts.length === 1) return replaceIn(doc, m.parts[0], texts, m.at, m.len);
    const counts = shares(m.parts.map((p) => p.k), m.parts.map((p) => p.k === doc.segments[p.s].words.length), texts.length);
    const pieces = [];
    counts.forEach((n) => pieces.push(texts.splice(0, n)));
    // A segment left without words hands the punctuation after its matched words to the last
    // word placed before it ("fellow | Americans," → "friends,"), unless that has its own.
    const trailOf = (p) => core(doc.segments[p.s].words[p.w + p.k - 1].text).trail;
    pieces.forEach((piece, i) => {
      const j = pieces.slice(0, i).findLastIndex((q) => q.length);
      if (piece.length || j < 0 || !trailOf(m.parts[i]) || trailOf(m.parts[j])) return;
      pieces[j][pieces[j].length - 1] += trailOf(m.parts[i]);
    });
    // From the last segment back, so an emptied segment's removal moves no part still to do.
    for (let i = m.parts.length - 1; i >= 0; i--) replaceIn(doc, m.parts[i], pieces[i]);
  }

  /// How many of `n` words each part of a match gets: `sizes` its matched words, `whole` whether
  /// it is all of its segment (see `replaceWords`).
  function shares(sizes, whole, n) {
    const p = sizes.length;
    if (n < p) {
      const order = [...sizes.keys()].sort((a, b) => Number(whole[b]) - Number(whole[a]) || a - b);
      const counts = sizes.map(() => 0);
      for (const i of order.slice(0, n)) counts[i] = 1;
      return counts;
    }
    // Cumulative boundaries in proportion to the matched words, each part at least one word.
    const total = sizes.reduce((a, b) => a + b, 0);
    const counts = [];
    let done = 0;
    let before = 0;
    sizes.forEach((k, i) => {
      before += k;
      const upTo = i === p - 1 ? n : Math.min(n - (p - 1 - i), Math.max(done + 1, Math.round((n * before) / total)));
      counts.push(upTo - done);
      done = upTo;
    });
    return counts;
  }

  /// Puts the words `texts` over the `k` words of `part` in segment `part.s` of `doc` (see
  /// `replaceWords`); `at`, `len`: the matched text inside a one-word match.
  function replaceIn(doc, part, texts, at, len) {
    const seg = doc.segments[part.s];
    const old = seg.words.slice(part.w, part.w + part.k);
    let lead;
    let trail;
    if (part.k === 1 && at !== undefined) {
      lead = old[0].text.slice(0, at);
      trail = old[0].text.slice(at + len);
    } else {
      lead = core(old[0].text).lead;
      trail = core(old[old.length - 1].text).trail;
    }
    texts = [...texts];
    if (!texts.length) {
      // Nothing in place of a whole word: the words go; part of a word: the rest stays.
      if (/[\p{L}\p{N}]/u.test(lead + trail)) texts.push("");
      else {
        seg.words.splice(part.w, part.k);
        if (!seg.words.length) doc.segments.splice(part.s, 1);
        return;
      }
    }
    texts[0] = lead + texts[0];
    texts[texts.length - 1] += trail;
    if (texts.length === old.length) {
      old.forEach((w, i) => {
        w.text = texts[i];
        w.pristine = false;
      });
      return;
    }
    const start = old[0].start;
    const end = Math.max(start, ...old.map((w) => w.end));
    const step = (end - start) / texts.length;
    const words = texts.map((text, i) => ({
      start: i === 0 ? start : round3(start + step * i),
      end: i === texts.length - 1 ? end : round3(start + step * (i + 1)),
      text,
      conf: 1,
      pristine: false,
    }));
    seg.words.splice(part.w, part.k, ...words);
  }

  window.ScribeFind = { FindReplace, replaceWords, core };
})();
