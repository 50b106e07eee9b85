// Find and replace across the editor's document: next and previous match, replace one, replace
// all (a misheard name everywhere), with or without matching case, and the job's glossary terms
// offered as suggestions for the replacement. Matches lie inside one word (transcripts) or one
// cue's translation (translations). Replacing is one edit the editor can undo.
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

    /// Every match: {field, at} in document order.
    matches() {
      const needle = this.find.value;
      if (!needle) return [];
      const fold = !this.matchCase.checked;
      const want = fold ? needle.toLocaleLowerCase() : needle;
      const out = [];
      this.editor.fields().forEach((f, field) => {
        const text = fold ? f.get().toLocaleLowerCase() : f.get();
        for (let at = text.indexOf(want); at >= 0; at = text.indexOf(want, at + want.length)) out.push({ field, at });
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

    /// Shows match `i` (or none): marks its word or cue and plays from there.
    mark(i) {
      for (const node of this.editor.main.querySelectorAll(".found")) node.classList.remove("found");
      if (i === null || !this.list || !this.list[i]) return;
      const f = this.editor.fields()[this.list[i].field];
      const node = f.node();
      if (node) {
        node.classList.add("found");
        node.scrollIntoView({ block: "nearest" });
      }
      if (f.start !== undefined) this.editor.seek(f.start);
    }

    step(dir) {
      if (!this.list) this.refresh();
      const n = this.list.length;
      if (!n) return this.say();
      this.current = this.current < 0 ? (dir > 0 ? 0 : n - 1) : (this.current + dir + n) % n;
      this.mark(this.current);
      this.say();
    }

    replaceOne() {
      if (!this.list) this.refresh();
      if (this.current < 0) return this.step(1);
      const m = this.list[this.current];
      const f = this.editor.fields()[m.field];
      const text = f.get();
      const needle = this.find.value;
      f.set(text.slice(0, m.at) + this.replace.value + text.slice(m.at + needle.length));
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
      const needle = this.find.value;
      if (!list.length) return this.say();
      const fields = this.editor.fields();
      // From the last match back, so earlier offsets stay right.
      for (const m of [...list].reverse()) {
        const f = fields[m.field];
        const text = f.get();
        f.set(text.slice(0, m.at) + this.replace.value + text.slice(m.at + needle.length));
      }
      const done = `Replaced ${list.length} × “${needle}” with “${this.replace.value}”.`;
      this.editor.replaced(done);
      this.refresh();
      this.say(done);
    }
  }

  window.ScribeFind = { FindReplace };
})();
