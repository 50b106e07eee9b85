// A transcriber's or translator's hold on one task, around the editor. It shows the lease and
// notices the moment it runs out (a timer against the lease end the API returns, checked with
// the server), then offers to claim the task again keeping the edits on screen, or says that
// someone else holds it. It auto-saves the document to the server (a revision, through the same
// save as the Save button) 20 s after the last change and when the page is hidden, so a closed
// laptop loses nothing. It asks before releasing with unsaved edits (dialog.js) and warns
// before submitting a translation with empty cues. The lease line and its notices live in the
// editor's fixed bar (where the eyes are); the countdown ticks every second, and a notice takes
// the focus and is scrolled into view.
"use strict";

(function () {
  const { el } = window.ScribeEditor;
  const { choose, settleUnsaved } = window.ScribeDialog;
  /// Quiet time after the last change before the draft is saved to the server.
  const AUTOSAVE_DELAY_MS = 20000;

  const time = (ms) => new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  /// Time left as `h:mm:ss` or `m:ss`, counted down every second.
  const left = (ms) => {
    const s = Math.max(0, Math.floor(ms / 1000));
    const two = (n) => String(n).padStart(2, "0");
    return s >= 3600 ? `${Math.floor(s / 3600)}:${two(Math.floor(s / 60) % 60)}:${two(s % 60)}` : `${Math.floor(s / 60)}:${two(s % 60)}`;
  };

  class TaskSession {
    // { api, path, task, leaseLine: element showing the lease, dueLine: element showing the
    //   deadline, when: ms -> date text, leave(notice) }
    constructor(opts) {
      this.opts = opts;
      this.task = opts.task;
      this.expired = false;
      this.banner = el("div", { id: "lease-state", tabindex: "-1" });
      opts.leaseLine.after(this.banner);
      this.onVisibility = () => {
        if (document.visibilityState === "hidden") this.autosave();
        else if (this.until && Date.now() >= this.until) this.leaseEnded();
      };
      this.onPageHide = () => {
        this.leaving = true;
        if (this.editor) this.editor.storeDraft();
        this.autosave();
      };
      document.addEventListener("visibilitychange", this.onVisibility);
      window.addEventListener("pagehide", this.onPageHide);
      this.tick = setInterval(() => this.showLease(), 1000);
      if (!this.task.claimedByYou) {
        // Opened without holding it (a hold that ran out while the page was closed, a link).
        this.expired = true;
        if (this.task.heldByOther) this.showBanner("warn", "Someone else holds this task now: you can read it, but your edits cannot be saved to it.");
        else this.showBanner("warn", "You do not hold this task: claim it to save your work.", this.reclaimButton("Claim this task"));
      }
      this.setLease(this.task.claimedByYou ? this.task.leaseUntil : null);
    }

    reclaimButton(label) {
      return el("button", { id: "reclaim", class: "primary", onclick: () => this.reclaim() }, label);
    }

    /// The editor is built: the lease line and its notices move into its fixed bar.
    attach(editor) {
      this.editor = editor;
      if (editor.leaseSlot) {
        editor.leaseSlot.replaceChildren(this.opts.leaseLine);
        editor.noticeSlot.replaceChildren(this.banner);
      }
    }

    destroy() {
      this.closed = true;
      clearTimeout(this.leaseTimer);
      clearTimeout(this.autosaveTimer);
      clearInterval(this.tick);
      document.removeEventListener("visibilitychange", this.onVisibility);
      window.removeEventListener("pagehide", this.onPageHide);
    }

    // ---- the lease -------------------------------------------------------------------------

    /// The lease now ends at `until` (ms since the epoch; null: not held).
    setLease(until) {
      this.until = until || null;
      clearTimeout(this.leaseTimer);
      if (this.until) {
        // One timer to the end (browsers cap a delay at 2^31 - 1 ms; a lease is hours).
        const wait = Math.min(this.until - Date.now(), 2 ** 31 - 1);
        this.leaseTimer = setTimeout(() => this.leaseEnded(), Math.max(0, wait) + 200);
      }
      this.showLease();
    }

    showLease() {
      const t = this.task;
      const due = `Due ${this.opts.when(t.deadline)}${t.overdue ? " (overdue)" : ""}.`;
      const line = this.opts.leaseLine;
      let text;
      if (this.until) text = `You hold this task until ${time(this.until)} (${left(this.until - Date.now())} left)`;
      else if (this.task.heldByOther) text = "Someone else holds this task now: you can read it but not save";
      else text = this.expired ? "You do not hold this task" : "";
      if (line.textContent !== text) line.textContent = text;
      line.dataset.state = this.until ? "held" : "not-held";
      if (this.opts.dueLine) {
        const more = `${due}${this.until ? " Every save and auto-save renews your hold." : ""}`;
        if (this.opts.dueLine.textContent !== more) this.opts.dueLine.textContent = more;
      }
    }

    /// The timer ran out (or the page came back after it should have): asks the server, which
    /// knows whether the lease was renewed (another tab) or someone else took the task.
    async leaseEnded() {
      if (this.closed || this.expired) return;
      const ended = this.until;
      let task = null;
      try {
        task = (await this.opts.api("GET", this.opts.path)).task;
      } catch (_) {
        task = null;
      }
      if (this.closed) return;
      if (task && task.claimedByYou && task.leaseUntil && task.leaseUntil > Date.now()) return this.setLease(task.leaseUntil);
      if (task) this.task = task;
      this.expired = true;
      this.until = null;
      clearTimeout(this.autosaveTimer);
      if (this.editor) this.editor.storeDraft();
      this.showLease();
      const at = time(ended || Date.now());
      const kept = this.editor && this.editor.dirty ? "Your unsaved edits are still here and kept in this browser." : "Nothing you did is lost: your last save is on the server.";
      if (task && task.heldByOther) {
        this.showBanner("warn", `Your hold on this task ran out at ${at}, and someone else holds it now. ${kept} They cannot be saved to this task while the other person holds it.`);
      } else {
        this.showBanner("warn", `Your hold on this task ran out at ${at}. Nobody else holds it: claim it again to keep working. ${kept}`,
          this.reclaimButton("Claim again, keeping my edits"));
      }
    }

    /// A notice about the lease in the fixed bar; it takes the focus and comes into view.
    showBanner(kind, text, ...actions) {
      actions = actions.filter(Boolean);
      this.banner.className = kind;
      this.banner.setAttribute("role", kind === "warn" ? "alert" : "status");
      // (replaceChildren would print a null as "null": only nodes go in.)
      this.banner.replaceChildren(...[el("p", { id: "lease-state-text" }, text), actions.length ? el("div", { class: "row" }, actions) : null].filter(Boolean));
      if (this.editor) {
        this.banner.focus({ preventScroll: true });
        this.banner.scrollIntoView({ block: "nearest" });
      }
    }

    async reclaim() {
      try {
        const task = await this.opts.api("POST", `${this.opts.path}/claim`);
        this.expired = false;
        if (this.editor && !this.editor.dirty && task.revision !== (this.editor.opts.revision || 0)) {
          // Someone saved since this page loaded: show their revision, not an old one.
          location.reload();
          return;
        }
        this.task = task;
        this.setLease(task.leaseUntil);
        const dirty = this.editor && this.editor.dirty;
        const base = this.editor ? this.editor.opts.revision || 0 : 0;
        const newer = dirty && task.revision !== base ? ` Someone saved revision ${task.revision} after yours (revision ${base}): saving your edits replaces it.` : "";
        this.showBanner("notice", `You hold this task again, until ${time(task.leaseUntil)}.` + (dirty ? " Your edits are still here: save them (they are auto-saved 20 s after your last change)." : "") + newer);
        if (dirty) this.changed();
      } catch (e) {
        const other = e.status === 409;
        if (other) {
          this.task.heldByOther = true;
          this.showLease();
        }
        this.showBanner("warn", other
          ? "Someone else holds this task now: they claimed it after your hold ran out. " +
            (this.editor && this.editor.dirty ? "Your unsaved edits are kept in this browser as a local draft; they cannot be saved to this task." : "Your last save is on the server.")
          : `The task could not be claimed again: ${e.message}`,
        other ? null : this.reclaimButton("Try again"));
      }
    }

    // ---- saving ----------------------------------------------------------------------------

    /// Stores `doc` as the task's next revision (the editor's save); renews the lease. An
    /// auto-save while the page is hidden or closing asks the browser to finish it even if the
    /// page goes away (keepalive; bodies over its 64 KiB limit are sent the ordinary way).
    async save(doc, { auto = false } = {}) {
      const put = (keepalive) => this.opts.api("PUT", `${this.opts.path}/document`, { json: doc, keepalive });
      const hidden = auto && (this.leaving || document.visibilityState === "hidden");
      let r;
      try {
        r = await put(hidden);
      } catch (e) {
        if (!hidden || e.status !== 0) throw e;
        r = await put(false);
      }
      this.editor.opts.revision = r.revision;
      if (!this.closed) this.setLease(r.leaseUntil);
      return `Saved revision ${r.revision} (${r.words} words).`;
    }

    // ---- auto-save -------------------------------------------------------------------------

    /// The editor changed: auto-save once it has been quiet for a while.
    changed() {
      if (this.expired) return;
      clearTimeout(this.autosaveTimer);
      this.autosaveTimer = setTimeout(() => this.autosave(), AUTOSAVE_DELAY_MS);
    }

    async autosave() {
      clearTimeout(this.autosaveTimer);
      const e = this.editor;
      if (!e || !e.dirty || this.expired || this.closed || !this.until) return;
      // An untouched translation has nothing the server would take.
      if (e.mode === "translate" && e.emptyCues().length === e.doc.cues.length) return;
      await e.save({ auto: true });
    }

    // ---- release and submit ----------------------------------------------------------------

    async release() {
      const e = this.editor;
      const settled = await settleUnsaved(e, "release");
      if (settled === "cancelled") {
        e.setStatus("Not released: you still hold the task, and your edits are still here.");
        return null;
      }
      if (settled === "failed") {
        e.setStatus("Not released: the save failed (see the message above); your edits are kept as a local draft.");
        return null;
      }
      const r = await this.opts.api("POST", `${this.opts.path}/release`);
      e.dirty = false;
      e.dropDraft();
      const revision = e.opts.revision || 0;
      const what = {
        saved: `Your edits were saved as revision ${revision} and the task released.`,
        discarded: `Your unsaved edits were discarded and the task released` + (revision ? ` with revision ${revision}.` : "."),
        clean: `Task released` + (revision ? ` with revision ${revision}.` : "."),
      }[settled];
      this.opts.leave(`${what} It is back in the queue.`);
      return r.message;
    }

    /// Warns about cues with no translation (in the page, naming them); resolves true to go on.
    async checkEmptyCues() {
      const e = this.editor;
      const empty = e.emptyCues();
      if (!empty.length) return true;
      const names = empty.length === 1 ? `Cue ${empty[0]} has` : `Cues ${empty.slice(0, -1).join(", ")} and ${empty[empty.length - 1]} have`;
      const list = el("ul", { class: "empty-cues" }, empty.slice(0, 50).map((n) => el("li", {},
        el("button", { type: "button", class: "link", "data-cue": n, onclick: (ev) => {
          ev.target.closest("dialog").querySelector("#empty-cues-cancel").click();
          e.focusCue(n);
        } }, `Go to cue ${n}`))));
      const choice = await choose({
        id: "empty-cues",
        title: "Cues without a translation",
        message: `${names} no translation. Empty cues are left out of the subtitles. Submit anyway?`,
        body: list,
        choices: [
          { value: "submit", label: "Submit anyway", kind: "danger" },
          { value: "cancel", label: "Cancel" },
        ],
      });
      if (choice !== "submit") {
        e.setStatus(`Not submitted: ${names.toLowerCase()} no translation.`);
        return false;
      }
      return true;
    }

    /// Asks in the page before handing in (unless the empty-cue warning just asked).
    async confirmSubmit() {
      const e = this.editor;
      const choice = await choose({
        id: "submit-confirm",
        title: "Submit this task?",
        message: "Submitting hands in your work: you cannot change it afterwards." + (e.dirty ? " Your unsaved edits are saved first." : ""),
        choices: [
          { value: "submit", label: "Submit", kind: "primary" },
          { value: "cancel", label: "Cancel" },
        ],
      });
      if (choice === "submit") return true;
      e.setStatus("Not submitted: you still hold the task" + (e.dirty ? ", and your edits are still here." : "."));
      return false;
    }

    async submit() {
      const e = this.editor;
      const warned = e.emptyCues().length > 0;
      if (!(await this.checkEmptyCues())) return null;
      if (!warned && !(await this.confirmSubmit())) return null;
      if (e.dirty && !(await e.save())) return null;
      const r = await this.opts.api("POST", `${this.opts.path}/submit`);
      e.dirty = false;
      e.dropDraft();
      this.opts.leave(r.message);
      return r.message;
    }
  }

  window.ScribeTask = { TaskSession, AUTOSAVE_DELAY_MS };
})();
