// In-page confirmation for the web app: a modal <dialog> (focus moves into it and stays there,
// Escape cancels, focus goes back where it was), instead of window.confirm, which offers only
// two choices and cannot say what each does. settleUnsaved asks what to do with an editor's
// unsaved edits before leaving it (release a task, sign out) and does it.
"use strict";

(function () {
  const { el } = window.ScribeEditor;

  /// Shows a dialog and resolves with the value of the chosen button ("cancel" on Escape).
  /// choices: [{ value, label, kind: "primary" | "danger" | undefined }]; `body`: more nodes.
  function choose({ id, title, message, body, choices }) {
    return new Promise((resolve) => {
      const back = document.activeElement;
      const titleId = `${id}-title`;
      const textId = `${id}-text`;
      const dialog = el("dialog", { id, class: "dialog", "aria-labelledby": titleId, "aria-describedby": textId },
        el("h2", { id: titleId }, title),
        el("p", { id: textId }, message),
        body || null,
        el("div", { class: "row" }, choices.map((c) => el("button", {
          id: `${id}-${c.value}`, class: c.kind || "", type: "button", onclick: () => finish(c.value),
        }, c.label))));
      let done = false;
      const finish = (value) => {
        if (done) return;
        done = true;
        dialog.close();
        dialog.remove();
        if (back && back.isConnected) back.focus();
        resolve(value);
      };
      dialog.addEventListener("cancel", (e) => {
        e.preventDefault();
        finish("cancel");
      });
      document.body.append(dialog);
      dialog.showModal();
      dialog.querySelector("button").focus();
    });
  }

  /// Before `verb` ("release", "sign out"): when `editor` has unsaved edits, asks whether to
  /// save them, discard them or stay; does what was chosen. Resolves with "clean" (nothing
  /// unsaved), "saved", "discarded", "failed" (the save failed: the editor shows why) or
  /// "cancelled".
  async function settleUnsaved(editor, verb) {
    if (!editor || !editor.dirty) return "clean";
    const choice = await choose({
      id: "unsaved",
      title: "Unsaved edits",
      message: `Your latest edits are not saved yet. Save them before you ${verb}, or discard them?`,
      choices: [
        { value: "save", label: `Save and ${verb}`, kind: "primary" },
        { value: "discard", label: `Discard and ${verb}`, kind: "danger" },
        { value: "cancel", label: "Cancel" },
      ],
    });
    if (choice === "save") return (await editor.save()) ? "saved" : "failed";
    if (choice === "discard") {
      editor.discard();
      return "discarded";
    }
    return "cancelled";
  }

  window.ScribeDialog = { choose, settleUnsaved };
})();
