// Undo and redo for the editor: every edit (typing in a word, split, join, speakers, highlights,
// timing drags, replacements) leaves a snapshot of the whole document here, so undoing any kind
// of edit is the same step back. Snapshots are JSON strings: compact, immutable, and a 9,000-word
// transcript takes a few milliseconds to write. Keystrokes in the same field are one step.
"use strict";

(function () {
  class EditorHistory {
    /// `snapshot`: the document as loaded (a JSON string). At most `limit` steps are kept.
    constructor(snapshot, limit = 200) {
      this.states = [{ snapshot, label: "the document as opened" }];
      this.index = 0;
      this.openKey = null;
      this.limit = limit;
    }

    /// The document after an edit. `key` names the field being typed in: a step with the
    /// same key as the one before extends it (one step per word typed, not per key);
    /// `null` always makes a new step.
    record(snapshot, label, key) {
      this.states.length = this.index + 1;
      if (key && key === this.openKey && this.index > 0) {
        this.states[this.index] = { snapshot, label };
      } else {
        this.states.push({ snapshot, label });
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

    /// One step back: `{snapshot, label}` with the snapshot to show and the label of the edit
    /// undone, or null.
    undo() {
      if (!this.canUndo()) return null;
      const undone = this.states[this.index];
      this.index--;
      this.openKey = null;
      return { snapshot: this.states[this.index].snapshot, label: undone.label };
    }

    /// One step forward again: `{snapshot, label}` or null.
    redo() {
      if (!this.canRedo()) return null;
      this.index++;
      this.openKey = null;
      const redone = this.states[this.index];
      return { snapshot: redone.snapshot, label: redone.label };
    }
  }

  window.ScribeHistory = { EditorHistory };
})();
