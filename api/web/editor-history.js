// Undo and redo for the editor: every edit (typing in a word, split, join, speakers, highlights,
// timing drags, replacements) leaves a state of the document here, so undoing any kind of edit
// is the same step back. A state is cheap: each segment (or cue) is kept as a JSON string that
// the states share while it is unchanged, so an edit stores only the units it changed (a
// 9,000-word transcript's highlight stores the highlights, not 9,000 words). The units an edit
// changed are found by comparing each with its copy as last stored (no allocation). Undo hands
// back a document that reuses the editor's own objects for every unit it does not change, so the
// editor re-renders only what differs. Keystrokes in the same field are one step.
"use strict";

(function () {
  /// Whether two JSON-like values are equal (objects by their own keys, arrays in order).
  function same(a, b) {
    if (a === b) return true;
    if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
    if (Array.isArray(a)) {
      if (!Array.isArray(b) || a.length !== b.length) return false;
      for (let i = 0; i < a.length; i++) if (!same(a[i], b[i])) return false;
      return true;
    }
    let n = 0;
    for (const k in a) {
      if (a[k] === undefined) continue;
      n++;
      if (!same(a[k], b[k])) return false;
    }
    for (const k in b) if (b[k] !== undefined) n--;
    return n === 0;
  }

  /// Whether a segment is as stored: its speaker and every word's text, times, confidence and
  /// edited mark (what the editor changes), compared field by field, which is fast on 9,000
  /// words. Other units (cues) are compared whole.
  function sameUnit(unit, copy) {
    if (!Array.isArray(unit.words)) return same(unit, copy);
    if (unit.speaker !== copy.speaker || !Array.isArray(copy.words) || unit.words.length !== copy.words.length) return false;
    for (let i = 0; i < unit.words.length; i++) {
      const a = unit.words[i];
      const b = copy.words[i];
      if (a.text !== b.text || a.start !== b.start || a.end !== b.end || a.conf !== b.conf || a.pristine !== b.pristine) return false;
    }
    return true;
  }

  class EditorHistory {
    /// `doc`: the document as loaded (segments, or cues for translations, plus speakers and
    /// highlights). At most `limit` steps are kept.
    constructor(doc, limit = 200) {
      /// Each unit object of the editor's document → {json, copy} as last stored.
      this.stored = new WeakMap();
      this.states = [{ state: this.capture(doc), label: "the document as opened" }];
      this.index = 0;
      this.openKey = null;
      this.limit = limit;
    }

    /// The units of a document, and the name of their list.
    static unitsOf(doc) {
      return Array.isArray(doc.segments) ? ["segments", doc.segments] : ["cues", doc.cues || []];
    }

    /// The document's state: {list, units: [JSON string of each unit], rest: JSON string of
    /// everything else}. A unit unchanged since it was last stored keeps its string. `changed`:
    /// the units the edit changed, when the editor knows (typing): the others are not compared.
    capture(doc, changed) {
      const [list, units] = EditorHistory.unitsOf(doc);
      const rest = {};
      for (const k of Object.keys(doc)) if (k !== list) rest[k] = doc[k];
      const only = changed && !this.unsure ? new Set(changed) : null;
      this.unsure = false;
      const frozen = units.map((u) => {
        const known = only && !only.has(u) ? this.stored.get(u) : null;
        return known ? known.json : this.freeze(u);
      });
      return { list, units: frozen, rest: JSON.stringify(rest) };
    }

    /// The document changed outside a recorded edit (an emptied word removed): the next
    /// record compares every unit.
    unrecorded() {
      this.unsure = true;
    }

    freeze(unit) {
      const known = this.stored.get(unit);
      if (known && sameUnit(unit, known.copy)) return known.json;
      const json = JSON.stringify(unit);
      this.stored.set(unit, { json, copy: JSON.parse(json) });
      return json;
    }

    /// The document of `state`, reusing the units of `current` (the editor's document now)
    /// that are the same as the state's: only what differs is new.
    document(state, current) {
      const [, live] = EditorHistory.unitsOf(current);
      const spare = new Map();
      for (const u of live) {
        const json = this.freeze(u);
        if (!spare.has(json)) spare.set(json, []);
        spare.get(json).push(u);
      }
      const units = state.units.map((json) => {
        const reuse = spare.get(json);
        if (reuse && reuse.length) return reuse.shift();
        const unit = JSON.parse(json);
        this.stored.set(unit, { json, copy: JSON.parse(json) });
        return unit;
      });
      return { ...JSON.parse(state.rest), [state.list]: units };
    }

    /// The document after an edit. `key` names the field being typed in: a step with the
    /// same key as the one before extends it (one step per word typed, not per key);
    /// `null` always makes a new step. `changed`: see `capture`.
    record(doc, label, key, changed) {
      const state = this.capture(doc, changed);
      this.states.length = this.index + 1;
      if (key && key === this.openKey && this.index > 0) {
        this.states[this.index] = { state, label };
      } else {
        this.states.push({ state, label });
        this.index++;
        if (this.states.length > this.limit) {
          this.states.shift();
          this.index--;
        }
      }
      this.openKey = key || null;
    }

    canUndo() {
      return this.index > 0;
    }

    canRedo() {
      return this.index < this.states.length - 1;
    }

    /// One step back: `{state, label}` with the state to show (see `document`) and the label
    /// of the edit undone, or null.
    undo() {
      if (!this.canUndo()) return null;
      const undone = this.states[this.index];
      this.index--;
      this.openKey = null;
      return { state: this.states[this.index].state, label: undone.label };
    }

    /// One step forward again: `{state, label}` or null.
    redo() {
      if (!this.canRedo()) return null;
      this.index++;
      this.openKey = null;
      const redone = this.states[this.index];
      return { state: redone.state, label: redone.label };
    }
  }

  window.ScribeHistory = { EditorHistory, same };
})();
