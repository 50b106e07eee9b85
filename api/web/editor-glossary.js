// The job's glossary in the editor, where the person at work can reach it: beside the transcript
// or cues on wide screens, and on narrow ones (under 60rem, where the side column goes below
// everything) a collapsible panel above the cues that stays at the top of the screen while they
// scroll, closed until asked for so it never hides the work. Its heading is a disclosure button.
"use strict";

(function () {
  const { el } = window.ScribeEditor;
  const NARROW = "(max-width: 60rem)";

  /// `glossary`: {name, names, items}; `panel`: its terms. Returns {anchor, box, follow, stop}:
  /// put `anchor` and `box` in the side column, then `follow(body, main)` moves the box above
  /// `main` on narrow screens and back on wide ones.
  function create(glossary, panel) {
    const count = (glossary.names || []).length + (glossary.items || []).length;
    const toggle = el("button", { type: "button", class: "glossary-toggle", id: "glossary-toggle", "aria-expanded": "true", "aria-controls": "glossary" },
      `Glossary: ${glossary.name}`, el("span", { class: "hint" }, ` (${count} term${count === 1 ? "" : "s"})`));
    const box = el("section", { class: "glossary-box", id: "glossary-box", "aria-labelledby": "glossary-toggle" }, el("h2", {}, toggle), panel);
    const anchor = document.createComment("the glossary's place in the side column");
    let chosen = false; // the person opened or closed it: keep that
    const show = (open) => {
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
      panel.hidden = !open;
    };
    toggle.addEventListener("click", () => {
      chosen = true;
      show(panel.hidden);
    });
    const query = window.matchMedia(NARROW);
    let place = null;
    const follow = (body, main) => {
      place = () => {
        const narrow = query.matches;
        box.classList.toggle("pinned", narrow);
        if (narrow && box.nextSibling !== main) body.insertBefore(box, main);
        else if (!narrow && anchor.parentNode && anchor.nextSibling !== box) anchor.after(box);
        if (!chosen) show(!narrow);
      };
      query.addEventListener("change", place);
      place();
    };
    const stop = () => {
      if (place) query.removeEventListener("change", place);
    };
    return { anchor, box, follow, stop };
  }

  window.ScribeGlossaryBox = { create };
})();
