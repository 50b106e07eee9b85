// Find and replace across the editor's document: next and previous match, replace one, replace
// all (a misheard name everywhere), with or without matching case, and the job's glossary terms
// offered as suggestions for the replacement. In a transcript a phrase matches words in a row
// ("john smith" finds "John Smith,"), and its replacement's words take the matched words' time
// span ("new york" → "New York", "jon smyth" → "Jonathan P. Smyth"); a single word matches
// inside words too. In a translation matches lie in one cue's text. Replacing (one, or all) is one
// edit the editor can undo.
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

    /// Every match in document order. Transcripts: {s, w, k, at, len}: `k` words of segment
    /// `s` from word `w`; a one-word search matches inside a word (the text from `at`, `len`
    /// characters), a phrase matches words in a row whose letters (without the punctuation
    /// attached to them) are the phrase's words. Translations: {field, at} in a cue's text.
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
      this.editor.doc.segments.forEach((seg, s) => {
        const words = seg.words;
        if (phrase.length < 2) {
          const want = norm(needle);
          words.forEach((w, i) => {
            const text = norm(w.text);
            for (let at = text.indexOf(want); at >= 0; at = text.indexOf(want, at + want.length)) out.push({ s, w: i, k: 1, at, len: want.length });
          });
          return;
        }
        for (let i = 0; i + phrase.length <= words.length; i++) {
          if (phrase.every((p, j) => norm(core(words[i + j].text).text) === p)) {
            out.push({ s, w: i, k: phrase.length });
            i += phrase.length - 1;
          }
        }
      });
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
        const view = this.editor.views[m.s];
        nodes = view ? view.spans.slice(m.w, m.w + m.k) : [];
        start = this.editor.doc.segments[m.s].words[m.w].start;
      }
      nodes = nodes.filter(Boolean);
      for (const node of nodes) node.classList.add("found");
      if (nodes.length) nodes[0].scrollIntoView({ block: "nearest" });
      if (start !== undefined) this.editor.seek(start);
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

  /// Puts the words of `by` over the `k` words of match `m` in segment `m.s` of `doc`. The
  /// punctuation around the match stays (a one-word match keeps the rest of its word). The
  /// same number of words keep their own times; another number of words share the matched
  /// words' time span evenly (the first keeps its start, the last its end). No words at all
  /// remove the matched words.
  function replaceWords(doc, m, by) {
    const seg = doc.segments[m.s];
    const old = seg.words.slice(m.w, m.w + m.k);
    let lead;
    let trail;
    if (m.k === 1 && m.at !== undefined) {
      lead = old[0].text.slice(0, m.at);
      trail = old[0].text.slice(m.at + m.len);
    } else {
      lead = core(old[0].text).lead;
      trail = core(old[old.length - 1].text).trail;
    }
    const texts = by.trim().split(/\s+/).filter(Boolean);
    if (!texts.length) {
      // Nothing in place of a whole word: the words go; part of a word: the rest stays.
      if (/[\p{L}\p{N}]/u.test(lead + trail)) texts.push("");
      else {
        seg.words.splice(m.w, m.k);
        if (!seg.words.length) doc.segments.splice(m.s, 1);
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
    seg.words.splice(m.w, m.k, ...words);
  }

  window.ScribeFind = { FindReplace, replaceWords, core };
})();
