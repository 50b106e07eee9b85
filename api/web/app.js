// Scribe's web app: sign in with an API key (kept in sessionStorage only), then the screens of
// the key's role. Customers: job list, upload (file or URL), job page with status, exports
// and delete, the editor, glossaries, live transcription (live.js). Transcribers and translators: the task queue and the
// editor of a task. Every call goes to the API under /api; its errors are shown in place.
"use strict";

(function () {
  const { Editor, clock, el } = window.ScribeEditor;
  const KEY = "scribe.apiKey";
  const main = document.getElementById("main");
  let me = null;
  let editor = null;
  let live = null;
  let poller = null;

  class ApiError extends Error {
    constructor(status, body) {
      super(body && body.message ? body.message : `The server answered ${status}`);
      this.status = status;
      this.field = body && body.field;
    }
  }

  function query(params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) {
      if (v !== undefined && v !== null && v !== "") q.set(k, v);
    }
    return q;
  }

  // The key travels in the Authorization header, not in URLs (which end up in logs and history).
  const authorization = () => `Bearer ${sessionStorage.getItem(KEY) || ""}`;

  async function api(method, path, { params, json, raw, keepalive } = {}) {
    const q = query(params);
    const init = { method, headers: { Authorization: authorization() }, keepalive: !!keepalive };
    if (json !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(json);
    }
    let response;
    try {
      const search = q.toString();
      response = await fetch(search ? `/api${path}?${search}` : `/api${path}`, init);
    } catch (e) {
      throw new ApiError(0, { message: `The server could not be reached (${e.message}).` });
    }
    if (!response.ok) {
      let body = null;
      try {
        body = await response.json();
      } catch (_) {
        body = null;
      }
      throw new ApiError(response.status, body);
    }
    if (raw) return response;
    const type = response.headers.get("Content-Type") || "";
    return type.includes("json") ? response.json() : response.text();
  }

  // An error box can take the focus (tabindex -1), so a person who pressed a button hears and
  // sees what went wrong where it went wrong.
  const errorBox = (id) => el("div", { class: "error", role: "alert", id, tabindex: "-1" });
  // The label a person sees for an input: its <label>'s own text (without the hint), else its
  // aria-label.
  function labelOf(input) {
    const label = input && input.id ? document.querySelector(`label[for="${CSS.escape(input.id)}"]`) : null;
    if (label) {
      const own = [...label.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join("").trim();
      return own || label.textContent.trim();
    }
    return input ? input.getAttribute("aria-label") : null;
  }
  // Names of fields that have no input of their own on the page.
  const FIELD_NAMES = { apiKey: "API key", Authorization: "API key", file: "Media file", jobId: "Job" };
  // Shows an error in place. With `fields` (an API field path such as `maxCharsPerRow` or
  // `items[0].name` -> the input it belongs to, or [input, label]), the message names the
  // field by its label, the field is marked (aria-invalid, aria-describedby the box); with
  // `focus`, the box takes the focus. `show(box, null)` clears the box and the marks.
  const show = (box, e, { fields, focus } = {}) => {
    for (const marked of document.querySelectorAll(`[data-error-of="${box.id}"]`)) {
      marked.removeAttribute("aria-invalid");
      marked.removeAttribute("aria-describedby");
      delete marked.dataset.errorOf;
    }
    let message = e ? e.message || String(e) : "";
    if (e && e.field) {
      const found = fields ? fields(e.field) : null;
      const [input, given] = Array.isArray(found) ? found : [found, null];
      const label = given || labelOf(input);
      const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      // The path as a whole word (`name`, not the "name" in "filename").
      const path = new RegExp(`(^|[^\\w.\\[\\]])${escape(e.field)}(?![\\w\\[.])`, "g");
      // A message that already says the label in words ("Choose a media file first").
      const named = label && new RegExp(`\\b${escape(label)}\\b`, "i").test(message);
      if (!named && path.test(message)) message = message.replace(path, (_, before) => before + (label || FIELD_NAMES[e.field] || e.field));
      else if (label && !named) message = `${message} (${label})`;
      if (input && box.id) {
        input.setAttribute("aria-invalid", "true");
        input.setAttribute("aria-describedby", box.id);
        input.dataset.errorOf = box.id;
      }
    }
    box.textContent = message;
    if (e && focus) box.focus();
  };
  // The fields of a form by API name: `name` -> the element `#<prefix><ids[name] or name>`.
  const byId = (prefix, ids = {}) => (name) => document.getElementById(prefix + (ids[name] || name));
  const when = (ms) => new Date(ms).toLocaleString();
  /// Asks in the page before deleting; resolves "delete" or "cancel" (Cancel has the focus).
  const confirmDelete = (id, title, message) => window.ScribeDialog.choose({
    id, title, message, choices: [{ value: "cancel", label: "Cancel" }, { value: "delete", label: "Delete", kind: "danger" }],
  });
  const duration = (s) => (s >= 3600 ? `${Math.floor(s / 3600)} h ` : "") + `${Math.floor((s % 3600) / 60)} min ${s % 60} s`;

  // A running recognition's progress (the job's `progress`, a Scribe extension): "Transcribing —
  // 42 %, about 1 min left", and a labelled <progress> bar. The percent covers recognition;
  // speakers and the transcript take a little longer after 100 %.
  function timeLeft(s) {
    if (s < 60) return "less than a minute left";
    const min = Math.round(s / 60);
    return min < 60 ? `about ${min} min left` : `about ${Math.floor(min / 60)} h ${min % 60} min left`;
  }
  function progressText(p) {
    if (p.percent >= 100) return "Transcribing — 100 %, finishing the transcript";
    if (p.etaSeconds === undefined) return `Transcribing — ${p.percent} %, estimating the time left`;
    return `Transcribing — ${p.percent} %, ${timeLeft(p.etaSeconds)}`;
  }
  function progressView(p, label, id) {
    return el("span", { class: "job-progress", id },
      el("progress", { max: 100, value: p.percent, "aria-label": label }),
      el("span", { class: "progress-text" }, progressText(p)));
  }

  function field(id, label, input, hint) {
    input.id = id;
    return el("div", {}, el("label", { for: id }, label, hint ? el("span", { class: "hint" }, ` (${hint})`) : null), input);
  }

  function select(options, value) {
    return el("select", {}, options.map(([v, t]) => el("option", { value: v, selected: v === value }, t)));
  }

  function page(title, ...children) {
    document.title = `${title} · Scribe`;
    main.replaceChildren(el("h1", {}, title), ...children.filter((c) => c));
    main.focus({ preventScroll: true });
  }

  // ---- routing -----------------------------------------------------------------------------

  function leave() {
    if (editor) {
      editor.destroy();
      editor = null;
    }
    if (live) {
      live.destroy();
      live = null;
    }
    clearTimeout(poller);
  }

  window.addEventListener("hashchange", route);
  window.addEventListener("load", route);

  async function route() {
    leave();
    // `#/<screen>/<id>?<state>`: a screen's state (the job list's filters, order and page)
    // lives in the address, so the back button and bookmarks return to it.
    const [hash, search] = location.hash.replace(/^#\/?/, "").split("?");
    const [name, id] = hash.split("/").map(decodeURIComponent);
    if (!sessionStorage.getItem(KEY)) return signIn();
    if (!me) {
      try {
        me = await api("GET", "/me");
      } catch (e) {
        sessionStorage.removeItem(KEY);
        return signIn(e);
      }
    }
    renderNav(name);
    const staff = me.role !== "customer";
    const views = staff ? { tasks: tasksView, task: taskView } : { jobs: jobsView, upload: uploadView, job: jobView, edit: editView, glossaries: glossariesView, live: liveView };
    const view = views[name] || (staff ? tasksView : jobsView);
    try {
      await view(id, new URLSearchParams(search || ""));
    } catch (e) {
      page("Something went wrong", el("div", { class: "error", role: "alert" }, e.message));
    }
  }

  // The header's balance after something that charges or refunds (an upload, an order, a delete).
  async function refreshBalance() {
    try {
      me = await api("GET", "/me");
      const who = document.getElementById("who-name");
      if (who) who.textContent = whoText();
    } catch (_) {
      // the next screen asks again
    }
  }
  const whoText = () => `${me.userName} · ${me.role}` + (me.role === "customer" ? ` · balance ${(me.balance / 100).toFixed(2)}` : "");

  function renderNav(current) {
    const nav = document.getElementById("nav");
    const links = me.role === "customer" ? [["jobs", "Jobs"], ["upload", "Upload"], ["live", "Live"], ["glossaries", "Glossaries"]] : [["tasks", "Tasks"]];
    // A job's page and its editor belong to "Jobs", a task's to "Tasks".
    const section = { job: "jobs", edit: "jobs", task: "tasks" }[current] || current || links[0][0];
    nav.replaceChildren(...links.map(([h, t]) => el("a", { href: `#/${h}`, "aria-current": section === h ? "page" : null }, t)));
    const who = document.getElementById("who");
    who.replaceChildren(
      el("span", { id: "who-name" }, whoText()),
      el("button", { id: "sign-out", onclick: async () => {
        // Unsaved edits are saved or discarded first; no draft stays in this browser.
        const settled = await window.ScribeDialog.settleUnsaved(editor, "sign out");
        if (settled === "cancelled" || settled === "failed") return;
        if (editor) editor.dirty = false;
        window.ScribeEditor.dropAllDrafts();
        sessionStorage.removeItem(KEY);
        me = null;
        location.hash = "#/";
        route();
      } }, "Sign out"));
  }

  // ---- sign in -----------------------------------------------------------------------------

  function signIn(error) {
    document.getElementById("nav").replaceChildren();
    document.getElementById("who").replaceChildren();
    const err = errorBox("signin-error");
    if (error) show(err, error);
    const key = el("input", { type: "password", autocomplete: "off", required: true, spellcheck: "false" });
    const form = el("form", { class: "panel", onsubmit: async (e) => {
      e.preventDefault();
      sessionStorage.setItem(KEY, key.value.trim());
      try {
        me = await api("GET", "/me");
        route();
      } catch (x) {
        sessionStorage.removeItem(KEY);
        const refused = x.status === 401 ? new ApiError(401, { message: "This API key is not valid (unknown or revoked). Check it and sign in again.", field: "apiKey" }) : x;
        show(err, refused, { fields: () => key });
        key.focus();
      }
    } },
    field("key", "API key", key, "kept in this browser tab only, until you sign out or close it"),
    el("div", { class: "row" }, el("button", { class: "primary", type: "submit", id: "signin-btn" }, "Sign in")));
    page("Sign in", el("p", {}, "Customers upload media, follow their jobs, correct transcripts and download subtitles. Transcribers and translators work on the tasks of manual jobs."), form, err);
    key.focus();
  }

  // ---- customers: jobs ---------------------------------------------------------------------

  // The job list's order choices: `sortBy` and `sortDirection` of GET /jobs.
  const SORTS = [
    ["created.DESC", "Newest first"], ["created.ASC", "Oldest first"],
    ["filename.ASC", "Name, A to Z"], ["filename.DESC", "Name, Z to A"],
    ["nrAudioSeconds.DESC", "Longest first"], ["nrAudioSeconds.ASC", "Shortest first"],
  ];
  const PAGE_SIZES = ["5", "10", "20", "50", "100"];
  // After paging, the focus goes to the list's heading (set by the pager, used once by the view).
  let focusListHeading = false;

  // The job list: filters, order, page size and page live in the address (#/jobs?status=DONE&page=1).
  async function jobsView(_id, params) {
    const pick = (name, allowed, fallback) => (allowed.includes(params.get(name)) ? params.get(name) : fallback);
    const state = {
      status: pick("status", ["OPEN", "DONE", "ERROR"], ""),
      jobType: pick("jobType", ["direct", "perfect"], ""),
      transcriptionType: pick("transcriptionType", ["transcription", "captions", "translatedSubtitles"], ""),
      pageSize: pick("pageSize", PAGE_SIZES, "20"),
      sort: pick("sort", SORTS.map(([v]) => v), "created.DESC"),
      page: Math.max(0, Math.floor(Number(params.get("page")) || 0)),
    };
    // Goes to the list with `changes`; the address changes, so the back button returns here.
    const go = (changes) => {
      const next = { ...state, ...changes };
      const q = query({
        status: next.status, jobType: next.jobType, transcriptionType: next.transcriptionType,
        pageSize: next.pageSize === "20" ? "" : next.pageSize, sort: next.sort === "created.DESC" ? "" : next.sort,
        page: next.page || "",
      }).toString();
      const hash = q ? `#/jobs?${q}` : "#/jobs";
      focusListHeading = true;
      if (location.hash === hash) route();
      else location.hash = hash;
    };
    const err = errorBox("jobs-error");
    const heading = el("h2", { id: "jobs-h", tabindex: "-1" }, "Jobs");
    const body = el("div", { id: "jobs" });
    const pager = el("nav", { class: "row pager", "aria-label": "Pages" });
    const filters = el("form", { class: "panel form-grid", "aria-label": "Filters and order", onsubmit: (e) => {
      e.preventDefault();
      const v = (id) => filters.querySelector(id).value;
      go({ status: v("#f-status"), jobType: v("#f-jobtype"), transcriptionType: v("#f-ttype"), pageSize: v("#f-size"), sort: v("#f-sort"), page: 0 });
    } },
    field("f-status", "Status", select([["", "any"], ["OPEN", "OPEN"], ["DONE", "DONE"], ["ERROR", "ERROR"]], state.status), null),
    field("f-jobtype", "Job type", select([["", "any"], ["direct", "direct"], ["perfect", "perfect"]], state.jobType), null),
    field("f-ttype", "Transcription type", select([["", "any"], ["transcription", "transcription"], ["captions", "captions"], ["translatedSubtitles", "translatedSubtitles"]], state.transcriptionType), null),
    field("f-sort", "Order", select(SORTS, state.sort), null),
    field("f-size", "Per page", select(PAGE_SIZES.map((n) => [n, n]), state.pageSize), null),
    el("div", { class: "apply" }, el("button", { type: "submit", id: "f-apply", class: "primary" }, "Apply")));
    page("Your jobs", filters, err, heading, body, pager);
    const [sortBy, sortDirection] = state.sort.split(".");
    const size = Number(state.pageSize);
    // The list refreshes itself every 5 s while one of its jobs is OPEN (the focus stays on
    // the link it was on).
    let shown = null;
    async function load() {
      let jobs;
      let total;
      try {
        const response = await api("GET", "/jobs", { raw: true, params: {
          status: state.status, jobType: state.jobType, transcriptionType: state.transcriptionType,
          page: state.page, pageSize: size, sortBy, sortDirection,
        } });
        jobs = await response.json();
        // The API counts all pages in X-Total-Count, so "Next" never leads to an empty page.
        total = Number(response.headers.get("X-Total-Count"));
      } catch (e) {
        const inputs = { status: "f-status", jobType: "f-jobtype", transcriptionType: "f-ttype", pageSize: "f-size", sortBy: "f-sort", sortDirection: "f-sort" };
        show(err, e, { fields: (f) => document.getElementById(inputs[f]) });
        return false;
      }
      const open = jobs.some((j) => j.status === "OPEN" || j.status === "BUSY");
      // Nothing changed: the table stays as it is (a screen reader keeps its place).
      const key = JSON.stringify([total, jobs]);
      if (key === shown) return open;
      shown = key;
      const pages = Math.max(1, Math.ceil(total / size));
      const first = state.page * size + 1;
      heading.textContent = total === 0 ? "No jobs" : jobs.length ? `Jobs ${first} to ${first + jobs.length - 1} of ${total}` : `Jobs: ${total}`;
      const sortedBy = { created: "Created", filename: "File", nrAudioSeconds: "Length" }[sortBy];
      const headers = ["File", "Status", "Created", "Type", "Length", "Language"];
      body.replaceChildren(jobs.length ? el("div", { class: "table-wrap" }, el("table", { class: "cards" },
        el("thead", {}, el("tr", {}, headers.map((h) => el("th", { scope: "col", "aria-sort": h === sortedBy ? (sortDirection === "ASC" ? "ascending" : "descending") : null }, h)))),
        el("tbody", {}, jobs.map((j) => el("tr", {},
          el("td", { class: "name", "data-label": "File" }, el("a", { href: `#/job/${j.jobId}` }, j.filename || j.jobId)),
          el("td", { "data-label": "Status" }, el("span", { class: `badge ${j.status}` }, j.status),
            j.progress ? progressView(j.progress, `Transcription of ${j.filename || j.jobId}`, null) : null),
          el("td", { "data-label": "Created" }, when(j.created)),
          el("td", { "data-label": "Type" }, `${j.jobType} ${j.transcriptionType}`),
          el("td", { "data-label": "Length" }, duration(j.nrAudioSeconds)),
          el("td", { "data-label": "Language" }, j.language + (j.targetLanguage ? ` → ${j.targetLanguage}` : ""))))))) :
        total > 0
          ? el("p", {}, `Page ${state.page + 1} is past the end: the list has ${pages} ${pages === 1 ? "page" : "pages"}. `, el("a", { href: "#/jobs", id: "first-page", onclick: (e) => {
            e.preventDefault();
            go({ page: 0 });
          } }, "Go to the first page."))
          : el("p", {}, "No jobs match. ", el("a", { href: "#/upload" }, "Upload a file.")));
      pager.replaceChildren(
        el("button", { id: "prev-page", disabled: state.page === 0, onclick: () => go({ page: Math.min(state.page, pages) - 1 }) }, "Previous page"),
        el("span", { id: "page-of" }, `Page ${state.page + 1} of ${pages}`),
        el("button", { id: "next-page", disabled: state.page + 1 >= pages, onclick: () => go({ page: state.page + 1 }) }, "Next page"));
      return open;
    }
    const open = await load();
    if (focusListHeading) heading.focus();
    focusListHeading = false;
    if (open) {
      const refresh = async () => {
        if (!body.isConnected) return;
        const focused = body.contains(document.activeElement) ? document.activeElement.getAttribute("href") : null;
        const still = await load().catch(() => true);
        if (focused) {
          const again = body.querySelector(`a[href="${focused}"]`);
          if (again) again.focus();
        }
        if (still !== false && body.isConnected) setTimeout(refresh, 5000);
      };
      setTimeout(refresh, 5000);
    }
  }

  // The server's capabilities (GET /capabilities): the languages with their names, the ones
  // direct jobs recognise, the translation targets. Loaded once.
  let capabilities = null;
  const loadCapabilities = () => (capabilities ? Promise.resolve(capabilities) : api("GET", "/capabilities").then((c) => (capabilities = c)));
  const languageName = (code) => (capabilities ? (capabilities.languages.concat(capabilities.targetOnlyLanguages).find((l) => l.code === code) || {}).name : null);
  const languageLabel = (code) => (languageName(code) ? `${languageName(code)} (${code})` : code);
  // Codes in the order of their names, as people look for them.
  const byName = (codes) => codes.slice().sort((a, b) => languageLabel(a).localeCompare(languageLabel(b)));
  const TURNAROUNDS = ["ONE_DAY", "TWO_DAYS", "THREE_DAYS", "FOUR_DAYS", "FIVE_DAYS", "SEVEN_DAYS", "TEN_DAYS", "FOURTEEN_DAYS"];
  const turnaroundLabel = (t) => `${t.replace("_", " ").toLowerCase()}`;

  // Every upload option of the spec (shared by the file and the URL upload). Options that do not
  // apply to the chosen job type or transcription type are disabled and not sent.
  function uploadOptions() {
    const target = select([["", "choose…"]], "");
    const languages = capabilities ? capabilities.languages.map((l) => [l.code, `${l.name} (${l.code})`]) : [["en", "en"]];
    const form = el("div", { class: "form-grid" },
      field("o-language", "Language", select(languages, "en")),
      field("o-jobType", "Job type", select([["direct", "direct (automatic)"], ["perfect", "perfect (by people)"]], "direct")),
      field("o-transcriptionType", "Transcription type", select([["transcription", "transcription"], ["captions", "captions"], ["translatedSubtitles", "translated subtitles"]], "transcription")),
      field("o-transcriptionStyle", "Style", select([["cleanread", "clean read"], ["verbatim", "verbatim"]], "cleanread"), "transcription only"),
      field("o-numberOfSpeakers", "Speakers", el("input", { type: "number", min: 0, max: 5, step: 1, placeholder: "up to 2" }), "how many speak, 1 to 5; empty = up to 2; 0 = unknown"),
      field("o-speakerChannels", "Speakers by channel", select([["", "server default"], ["true", "yes: one speaker per channel"], ["false", "no: by voice"]], ""), "a call recorded one party per channel"),
      field("o-turnaroundTime", "Turnaround", select([["", "default (5 days; 7 for translations)"], ...TURNAROUNDS.map((t) => [t, turnaroundLabel(t)])], ""), "perfect only"),
      field("o-targetLanguage", "Target language", target, "translated subtitles only"),
      field("o-glossaryId", "Glossary", select([["", "none"]], "")),
      field("o-callbackUrl", "Callback URL", el("input", { type: "url", placeholder: "https://…" }), "receives the finished job"));
    api("GET", "/glossary").then((gs) => {
      const sel = form.querySelector("#o-glossaryId");
      for (const g of gs) sel.append(el("option", { value: g.id }, g.name));
    }).catch(() => {});
    const q = (id) => form.querySelector(`#o-${id}`);
    // Only what applies is enabled; the target languages follow the job type.
    const refresh = () => {
      const type = q("transcriptionType").value;
      const perfect = q("jobType").value === "perfect";
      q("transcriptionStyle").disabled = type !== "transcription";
      q("turnaroundTime").disabled = !perfect;
      target.disabled = type !== "translatedSubtitles";
      const codes = byName(capabilities ? (perfect ? capabilities.perfectTranslationTargets : capabilities.directTranslationTargets) : []);
      const keep = target.value;
      target.replaceChildren(el("option", { value: "" }, codes.length ? "choose…" : "(none available)"),
        ...codes.map((c) => el("option", { value: c, selected: c === keep }, languageLabel(c))));
    };
    form.addEventListener("change", (e) => {
      if (e.target.id === "o-jobType" || e.target.id === "o-transcriptionType") refresh();
    });
    refresh();
    const read = () => {
      const p = {};
      for (const k of ["language", "jobType", "transcriptionType", "transcriptionStyle", "numberOfSpeakers", "speakerChannels", "turnaroundTime", "targetLanguage", "glossaryId", "callbackUrl"]) {
        const input = q(k);
        if (!input.disabled && input.value.trim() !== "") p[k] = input.value.trim();
      }
      return p;
    };
    return { form, read };
  }

  async function uploadView() {
    const err = errorBox("upload-error");
    // The language list comes from the server; without it the form offers English only.
    const unknownLanguages = await loadCapabilities().then(() => null, (e) => e);
    const opts = uploadOptions();
    const progress = el("progress", { id: "upload-progress", max: 100, value: 0, hidden: true, "aria-label": "Upload progress" });
    const progressText = el("p", { class: "hint", role: "status", id: "upload-progress-text" });
    const file = el("input", { type: "file", accept: "audio/*,video/*" });
    let chosen = null;
    const chosenText = el("p", { id: "chosen-file" }, "No file chosen.");
    const choose = (f) => {
      chosen = f;
      chosenText.textContent = f ? `Chosen: ${f.name} (${(f.size / 1e6).toFixed(1)} MB)` : "No file chosen.";
    };
    file.addEventListener("change", () => choose(file.files[0]));
    const drop = el("div", { class: "drop", id: "drop-zone" },
      el("p", {}, "Drop an audio or video file here, or choose one:"), field("file-input", "Media file", file), chosenText);
    drop.addEventListener("dragover", (e) => {
      e.preventDefault();
      drop.classList.add("over");
    });
    drop.addEventListener("dragleave", () => drop.classList.remove("over"));
    drop.addEventListener("drop", (e) => {
      e.preventDefault();
      drop.classList.remove("over");
      if (e.dataTransfer.files.length) {
        // The file input shows the dropped file too (so the form never says "no file").
        try {
          file.files = e.dataTransfer.files;
        } catch (_) {
          // an old browser: the text below still names it
        }
        choose(e.dataTransfer.files[0]);
      }
    });
    // The API's field paths -> the form's inputs (the options, the file).
    const fields = (f) => (f === "file" ? file : document.getElementById(`o-${f}`));
    const send = el("button", { class: "primary", id: "upload-btn", onclick: () => {
      show(err, null);
      if (!chosen) return show(err, new ApiError(400, { message: "Choose a media file first.", field: "file" }), { fields, focus: true });
      const q = query(opts.read());
      const data = new FormData();
      data.append("file", chosen, chosen.name);
      const xhr = new XMLHttpRequest();
      xhr.open("POST", `/api/jobs/upload-media?${q}`);
      xhr.setRequestHeader("Authorization", authorization());
      progress.hidden = false;
      send.disabled = true;
      xhr.upload.onprogress = (e) => {
        if (e.lengthComputable) {
          progress.value = Math.round((100 * e.loaded) / e.total);
          progressText.textContent = `Uploading: ${progress.value} %`;
        }
      };
      xhr.onload = () => {
        send.disabled = false;
        let body = null;
        try {
          body = JSON.parse(xhr.responseText);
        } catch (_) {
          body = null;
        }
        if (xhr.status === 200 && body) {
          progressText.textContent = "Uploaded.";
          refreshBalance();
          location.hash = `#/job/${body.jobStatus.jobId}`;
        } else {
          progress.hidden = true;
          progressText.textContent = "";
          show(err, new ApiError(xhr.status, body), { fields, focus: true });
        }
      };
      xhr.onerror = () => {
        send.disabled = false;
        progress.hidden = true;
        progressText.textContent = "";
        show(err, new Error("The upload was interrupted (network error). Check the connection and upload again."), { focus: true });
      };
      xhr.send(data);
    } }, "Upload");
    const url = el("input", { type: "url", class: "wide", placeholder: "https://example.com/talk.mp3" });
    const urlErr = errorBox("url-error");
    const urlForm = el("form", { class: "panel", onsubmit: async (e) => {
      e.preventDefault();
      show(urlErr, null);
      const p = opts.read();
      const bodyJson = { sourceUrl: url.value.trim(), ...p };
      if (bodyJson.numberOfSpeakers !== undefined) bodyJson.numberOfSpeakers = Number(bodyJson.numberOfSpeakers);
      if (bodyJson.speakerChannels !== undefined) bodyJson.speakerChannels = bodyJson.speakerChannels === "true";
      try {
        const r = await api("POST", "/jobs/upload-media-from-url", { json: bodyJson });
        refreshBalance();
        location.hash = `#/job/${r.jobStatus.jobId}`;
      } catch (x) {
        show(urlErr, x, { fields: (f) => (f === "sourceUrl" ? url : document.getElementById(`o-${f}`)), focus: true });
      }
    } }, field("source-url", "Media URL", url), el("div", { class: "row" }, el("button", { type: "submit", id: "url-btn" }, "Submit URL")), urlErr);
    page("Upload", unknownLanguages ? el("div", { class: "error", role: "alert" }, `The list of languages could not be loaded (${unknownLanguages.message}); reload the page to choose another language than English.`) : null,
      el("h2", {}, "Options"), el("div", { class: "panel" }, opts.form),
      el("h2", {}, "A file"), drop, el("div", { class: "row" }, send), progress, progressText, err,
      el("h2", {}, "Or a URL"), urlForm);
  }

  async function jobView(jobId) {
    const err = errorBox("job-error");
    const info = el("div", { class: "panel", id: "job-info" }, "Loading…");
    const actions = el("div", { id: "job-actions" });
    page("Job", info, err, actions);
    let last = null;
    async function poll() {
      try {
        const { jobStatus: j } = await api("GET", "/jobs/status", { params: { jobId } });
        main.querySelector("h1").textContent = j.filename || "Job";
        info.replaceChildren(el("dl", {},
          el("dt", {}, "Status"), el("dd", {}, el("span", { class: `badge ${j.status}`, id: "job-status" }, j.status),
            j.status === "OPEN" || j.status === "BUSY" ? el("span", { class: "hint", id: "job-open-for" }, (j.jobType === "perfect" ? " — people are working on it" : " — being transcribed") +
              `, submitted ${duration(Math.max(0, Math.round((Date.now() - j.created) / 1000)))} ago; this page follows it`) : null,
            j.progress ? progressView(j.progress, "Transcription", "job-progress") : null),
          el("dt", {}, "Job id"), el("dd", {}, el("code", {}, j.jobId)),
          el("dt", {}, "Created"), el("dd", {}, when(j.created)),
          el("dt", {}, "Kind"), el("dd", {}, `${j.jobType} ${j.transcriptionType}, ${j.language}` + (j.targetLanguage ? ` → ${j.targetLanguage}` : "")),
          el("dt", {}, "Length"), el("dd", {}, duration(j.nrAudioSeconds)),
          j.jobOptions ? [el("dt", {}, "Style"), el("dd", {}, j.jobOptions.transcriptionStyle)] : null,
          j.sourceJobId ? [el("dt", {}, "Translation of"), el("dd", {}, el("a", { href: `#/job/${j.sourceJobId}`, id: "source-job" }, j.sourceJobId))] : null,
          j.notes ? [el("dt", {}, "Notes"), el("dd", {}, j.notes)] : null));
        if (j.status !== last) {
          last = j.status;
          renderActions(j);
        }
        // Follows the job while it runs, and stops once it ended or the page was left (an
        // answer that arrives after leaving schedules nothing).
        if ((j.status === "OPEN" || j.status === "BUSY") && info.isConnected) poller = setTimeout(poll, 1500);
      } catch (e) {
        if (e.status === 410 || e.status === 404) return gone(e);
        show(err, e);
        // A passing failure (the server restarting): keep following the job.
        if ((e.status === 0 || e.status >= 500) && info.isConnected) poller = setTimeout(poll, 5000);
      }
    }
    // A deleted (410) or unknown (404) job: say so, instead of "Loading…".
    function gone(e) {
      document.title = "Job not found · Scribe";
      main.querySelector("h1").textContent = e.status === 410 ? "This job was deleted" : "No such job";
      info.replaceChildren(el("p", { id: "job-gone" }, e.message), el("p", {}, el("a", { href: "#/jobs" }, "Go to your jobs")));
      actions.replaceChildren();
    }
    async function renderActions(j) {
      const parts = [];
      if (j.status === "ERROR") {
        parts.push(el("div", { class: "error", role: "alert", id: "error-msg" }, j.errorMsg ? `This job failed: ${j.errorMsg}` : "This job failed."));
      }
      if (j.status === "DONE") {
        if (j.transcriptionType !== "translatedSubtitles") {
          parts.push(el("p", {}, el("a", { class: "button primary", id: "open-editor", href: `#/edit/${jobId}` }, "Open the editor")));
        }
        parts.push(exportsPanel(jobId));
        if (j.jobType === "perfect" && j.transcriptionType === "captions") parts.push(translationPanel(j));
      }
      const delErr = errorBox("delete-error");
      parts.push(el("h2", {}, "Delete"), el("div", { class: "row" }, el("button", { class: "danger", id: "delete-job", onclick: async () => {
        if (await confirmDelete("delete-job-confirm", "Delete this job?", "Its media, transcript and exports are removed. This cannot be undone.") !== "delete") return;
        try {
          await api("DELETE", "/jobs", { params: { jobId } });
          refreshBalance();
          location.hash = "#/jobs";
        } catch (e) {
          show(delErr, e, { focus: true });
        }
      } }, "Delete job")), delErr);
      actions.replaceChildren(...parts);
    }
    await poll();
  }

  // Ordering translated subtitles of a finished manual captions job (POST /jobs/translatedSubtitles).
  function translationPanel(j) {
    const err = errorBox("translate-error");
    const target = select([["", "choose…"]], "");
    loadCapabilities().then((c) => target.append(...byName(c.perfectTranslationTargets).map((code) => el("option", { value: code }, languageLabel(code))))).catch((e) => show(err, e));
    const form = el("form", { class: "panel", id: "translate-form", onsubmit: async (e) => {
      e.preventDefault();
      show(err, null);
      const v = (id) => form.querySelector(id).value.trim();
      try {
        const r = await api("POST", "/jobs/translatedSubtitles", { params: {
          sourceJobId: j.jobId, targetLanguage: v("#t-target"), turnaroundTime: v("#t-turnaround"), callbackUrl: v("#t-callback"), notes: v("#t-notes"),
        } });
        refreshBalance();
        location.hash = `#/job/${r.jobStatus.jobId}`;
      } catch (x) {
        show(err, x, { fields: byId("t-", { targetLanguage: "target", turnaroundTime: "turnaround", callbackUrl: "callback", notes: "notes" }), focus: true });
      }
    } },
    el("p", {}, "A translator writes subtitles in another language on these captions' timings."),
    el("div", { class: "form-grid" },
      field("t-target", "Target language", target),
      field("t-turnaround", "Turnaround", select([["", "default (7 days)"], ...TURNAROUNDS.map((t) => [t, turnaroundLabel(t)])], "")),
      field("t-callback", "Callback URL", el("input", { type: "url", placeholder: "https://…" })),
      field("t-notes", "Notes for the translator", el("textarea", { rows: 2, maxlength: 5000 }))),
    el("div", { class: "row" }, el("button", { class: "primary", type: "submit", id: "order-translation" }, "Order translation")), err);
    return el("section", { "aria-labelledby": "translate-h" }, el("h2", { id: "translate-h" }, "Translated subtitles"), form);
  }

  function exportsPanel(jobId) {
    const err = errorBox("export-error");
    const preview = el("pre", { class: "preview", id: "export-preview", tabindex: "0", "aria-label": "Export preview" });
    const link = el("p", { id: "export-link" });
    const num = (min, max, step, placeholder) => el("input", { type: "number", min, max, step, placeholder });
    const yesNo = (value) => select([["true", "yes"], ["false", "no"]], value);
    // The spec's knobs, grouped by the formats they apply to, with the server's bounds.
    const knobs = el("div", {},
      el("fieldset", { class: "knobs" }, el("legend", {}, "Subtitles: SRT, VTT (and STL: rows, seconds)"),
        el("div", { class: "form-grid" },
          field("x-chars", "Max characters per row", num(30, 45, 1, "42"), "SRT, VTT: 30 to 45; STL always 37"),
          field("x-rows", "Max rows per subtitle", num(1, 2, 1, "2"), "1 or 2"),
          field("x-screen", "Max seconds per row", num(1, 10, 0.5, "2"), "1 to 10"))),
      el("fieldset", { class: "knobs" }, el("legend", {}, "Plain text: TXT"),
        el("div", { class: "form-grid" },
          field("x-timestamps", "Timestamps", yesNo("true")),
          field("x-speakers", "Speakers", yesNo("true")),
          field("x-highlights", "Highlights only", yesNo("false")),
          field("x-txt-chars", "Max characters per row", num(20, 1000, 1, "no wrapping"), "20 to 1000"))),
      el("p", { class: "hint" }, "JSON has no knobs: it is the whole document, with confidences and highlights."));
    const v = (id) => knobs.querySelector(id).value;
    async function run(format) {
      show(err, null);
      link.replaceChildren();
      const p = { jobId };
      if (format === "srt" || format === "vtt" || format === "stl") {
        if (format !== "stl") p.maxCharsPerRow = v("#x-chars");
        p.maxNumberOfRows = v("#x-rows");
        p.maxScreenTimePerRowSeconds = v("#x-screen");
      }
      if (format === "txt") {
        p.includeTimestamps = v("#x-timestamps");
        p.includeSpeakers = v("#x-speakers");
        p.highlightsOnly = v("#x-highlights");
        p.maxCharsPerRow = v("#x-txt-chars");
      }
      try {
        if (format === "stl") {
          const r = await api("GET", "/jobs/export-stl", { params: p });
          preview.textContent = "EBU-STL is binary: use the download link.";
          link.append(el("a", { href: r.downloadUrl, id: "download-link", download: `${jobId}.stl` }, "Download the EBU-STL file"));
          return;
        }
        const response = await api("GET", `/jobs/export-${format}`, { params: p, raw: true });
        const text = await response.text();
        preview.textContent = format === "json" ? JSON.stringify(JSON.parse(text), null, 2) : text;
        const type = { srt: "application/x-subrip", vtt: "text/vtt", txt: "text/plain", json: "application/json" }[format];
        const href = URL.createObjectURL(new Blob([text], { type }));
        link.append(el("a", { href, id: "download-link", download: `${jobId}.${format}` }, `Download ${format.toUpperCase()}`));
      } catch (e) {
        const txt = format === "txt";
        const ids = { maxCharsPerRow: txt ? "txt-chars" : "chars", maxNumberOfRows: "rows", maxScreenTimePerRowSeconds: "screen", includeTimestamps: "timestamps", includeSpeakers: "speakers", highlightsOnly: "highlights" };
        show(err, e, { fields: byId("x-", ids), focus: true });
      }
    }
    return el("section", { "aria-labelledby": "exports-h" }, el("h2", { id: "exports-h" }, "Exports"),
      el("div", { class: "panel" }, knobs,
        el("div", { class: "row" }, ["srt", "vtt", "txt", "json", "stl"].map((f) => el("button", { id: `export-${f}`, onclick: () => run(f) }, f.toUpperCase())))),
      err, link, preview);
  }

  async function editView(jobId) {
    const host = el("div", { id: "editor" });
    const err = errorBox("edit-error");
    page("Edit transcript", el("p", {}, el("a", { href: `#/job/${jobId}` }, "← Back to the job")), err, host);
    let data;
    try {
      data = await api("GET", "/jobs/document", { params: { jobId } });
    } catch (e) {
      return show(err, e);
    }
    let revision = data.revision;
    editor = new Editor(host, {
      mode: "transcript",
      document: data.document,
      mediaUrl: sameOrigin(data.mediaUrl),
      account: me.userName,
      api,
      glossary: data.glossary,
      rules: loadCapabilities().then((c) => c.subtitleRules),
      draftKey: `job.${jobId}`,
      revision,
      save: async (doc) => {
        const r = await api("PUT", "/jobs/document", { params: { jobId }, json: doc });
        revision = r.revision;
        editor.opts.revision = revision;
        return `Saved revision ${r.revision} (${r.words} words). Exports now show it.`;
      },
    });
  }

  function sameOrigin(url) {
    try {
      const u = new URL(url, location.href);
      return u.pathname + u.search;
    } catch (_) {
      return url;
    }
  }

  // ---- customers: live transcription -------------------------------------------------------

  // The Live page (live.js) borrows the app's page, form helpers, API calls and the key the
  // customer signed in with: the WebSocket's INIT carries it, as the Authorization header does.
  function liveView() {
    live = window.ScribeLive.liveView({
      page, field, select, errorBox, show, api, languageLabel, loadCapabilities,
      apiKey: () => sessionStorage.getItem(KEY) || "",
    });
  }

  // ---- customers: glossaries ----------------------------------------------------------------

  // Glossaries: a list, and one form that creates a glossary or edits the chosen one (PUT
  // replaces name, names and items). Terms are rows of a term and its description.
  async function glossariesView() {
    const err = errorBox("glossary-error");
    const notice = el("div", { class: "notice", role: "status", id: "glossary-notice" });
    const list = el("div", { id: "glossaries" });
    let editing = null; // the glossary being edited, or null for a new one
    const name = el("input", { maxlength: 60, required: true });
    const names = el("textarea", { rows: 2, placeholder: "Kennedy, Berlin" });
    const itemRows = el("div", { id: "g-items" });
    const heading = el("h2", { id: "g-form-h" }, "New glossary");
    const submit = el("button", { class: "primary", type: "submit", id: "g-save" }, "Create glossary");
    const cancel = el("button", { type: "button", id: "g-cancel", hidden: true, onclick: () => {
      edit(null);
      name.focus();
    } }, "Cancel editing");
    let rowCount = 0;
    // Each term and description has its own label: shown above the boxes on phones, where the
    // column headings are hidden; read by screen readers everywhere.
    function addItem(item, focus) {
      const n = ++rowCount;
      const term = el("input", { maxlength: 60, class: "g-term", id: `g-term-${n}`, value: item ? item.name : "" });
      const desc = el("input", { maxlength: 200, class: "g-desc", id: `g-desc-${n}`, value: item && item.description ? item.description : "" });
      const row = el("div", { class: "item-row" },
        el("div", { class: "item-field" }, el("label", { class: "item-label", for: term.id }, `Term ${n}`), term),
        el("div", { class: "item-field g-desc-field" }, el("label", { class: "item-label", for: desc.id }, `Description of term ${n}`), desc),
        el("button", { type: "button", class: "danger", "aria-label": `Remove term ${n}`, onclick: () => {
          row.remove();
          (itemRows.querySelector(".g-term") || addButton).focus();
        } }, "Remove"));
      itemRows.append(row);
      if (focus) term.focus();
    }
    const addButton = el("button", { type: "button", id: "g-add-item", onclick: () => addItem(null, true) }, "Add a term");
    function edit(g) {
      editing = g;
      show(err, null);
      name.value = g ? g.name : "";
      names.value = g ? g.names.join(", ") : "";
      itemRows.replaceChildren();
      for (const item of g ? g.items : []) addItem(item, false);
      if (!g || !g.items.length) addItem(null, false);
      heading.textContent = g ? `Edit glossary ${g.name}` : "New glossary";
      submit.textContent = g ? "Save glossary" : "Create glossary";
      cancel.hidden = !g;
      if (g) name.focus();
    }
    async function load() {
      try {
        const gs = await api("GET", "/glossary");
        list.replaceChildren(gs.length ? el("div", { class: "table-wrap" }, el("table", { class: "cards" },
          el("thead", {}, el("tr", {}, ["Name", "Names", "Terms", "Actions"].map((h) => el("th", { scope: "col" }, h)))),
          el("tbody", {}, gs.map((g) => el("tr", { "data-glossary": g.id },
            el("td", { class: "name", "data-label": "Name" }, g.name),
            el("td", { class: "name", "data-label": "Names" }, g.names.join(", ")),
            el("td", { class: "name", "data-label": "Terms" }, g.items.length ? el("dl", { class: "terms" }, g.items.map((i) => [el("dt", {}, i.name), el("dd", {}, i.description || "—")])) : ""),
            el("td", { class: "action" }, el("div", { class: "row" },
              el("button", { class: "g-edit", "aria-label": `Edit ${g.name}`, onclick: () => edit(g) }, "Edit"),
              el("button", { class: "danger g-delete", "aria-label": `Delete ${g.name}`, onclick: async () => {
                if (await confirmDelete("delete-glossary-confirm", `Delete the glossary ${g.name}?`, "This cannot be undone.") !== "delete") return;
                try {
                  await api("DELETE", `/glossary/${encodeURIComponent(g.id)}`);
                  if (editing && editing.id === g.id) edit(null);
                  notice.textContent = `Glossary ${g.name} deleted.`;
                  load();
                } catch (e) {
                  show(err, e, { focus: true });
                }
              } }, "Delete")))))))) : el("p", {}, "No glossaries yet."));
      } catch (e) {
        show(err, e);
      }
    }
    const form = el("form", { class: "panel", "aria-labelledby": "g-form-h", onsubmit: async (e) => {
      e.preventDefault();
      show(err, null);
      notice.textContent = "";
      const rows = [...itemRows.querySelectorAll(".item-row")].filter((row) => row.querySelector(".g-term").value.trim() || row.querySelector(".g-desc").value.trim());
      const items = rows.map((row) => ({
        name: row.querySelector(".g-term").value.trim(),
        description: row.querySelector(".g-desc").value.trim() || null,
      }));
      // `items[2].name` is the third row sent; `names[1]` the second of the names.
      const fields = (f) => {
        const item = /^items\[(\d+)\]\.(name|description)$/.exec(f);
        if (item && rows[item[1]]) return rows[item[1]].querySelector(item[2] === "name" ? ".g-term" : ".g-desc");
        const oneName = /^names\[(\d+)\]$/.exec(f);
        if (oneName) return [names, `Name ${Number(oneName[1]) + 1} of “Names”`];
        return { name, names, items: addButton }[f] || null;
      };
      const body = { name: name.value.trim(), names: names.value.split(",").map((x) => x.trim()).filter(Boolean), items };
      try {
        const g = editing
          ? await api("PUT", `/glossary/${encodeURIComponent(editing.id)}`, { json: body })
          : await api("POST", "/glossary", { json: body });
        notice.textContent = editing ? `Glossary ${g.name} saved.` : `Glossary ${g.name} created.`;
        edit(null);
        load();
      } catch (x) {
        show(err, x, { fields, focus: true });
      }
    } }, heading,
    el("div", { class: "form-grid" }, field("g-name", "Name", name, "at most 60 characters"), field("g-names", "Names", names, "comma-separated, each at most 20 characters")),
    el("fieldset", { class: "knobs" }, el("legend", {}, "Terms and what they mean"),
      el("div", { class: "item-row item-head", "aria-hidden": "true" }, el("span", {}, "Term"), el("span", {}, "Description")), itemRows, addButton),
    el("div", { class: "row" }, submit, cancel));
    edit(null);
    page("Glossaries", el("p", {}, "Names and terms that guide recognition and people's work."), form, err, notice, el("h2", {}, "Your glossaries"), list);
    await load();
  }

  // ---- staff: tasks -------------------------------------------------------------------------

  async function tasksView() {
    const err = errorBox("tasks-error");
    const list = el("div", { id: "tasks" });
    const notice = el("div", { class: "notice", role: "status", id: "tasks-notice" }, sessionStorage.getItem("scribe.notice") || "");
    sessionStorage.removeItem("scribe.notice");
    page(me.role === "translator" ? "Translation tasks" : "Transcription tasks", el("p", {}, "Open tasks and the ones you hold, soonest deadline first."), notice, err, list);
    try {
      const tasks = await api("GET", "/work/tasks");
      list.replaceChildren(tasks.length ? el("div", { class: "table-wrap" }, el("table", { class: "cards" },
        el("thead", {}, el("tr", {}, ["Deadline", "Task", "Length", "Notes", "Action"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, tasks.map((t) => el("tr", { "data-task": t.taskId },
          el("td", { "data-label": "Deadline" }, when(t.deadline), t.overdue ? [" ", el("span", { class: "badge overdue" }, "overdue")] : null),
          el("td", { class: "name", "data-label": "Task" }, `${t.kind} ${t.language}` + (t.targetLanguage ? ` → ${t.targetLanguage}` : ""), el("br"),
            el("span", { class: "hint" }, `${t.transcriptionType}, ${t.transcriptionStyle}` + (t.glossaryName ? `, glossary ${t.glossaryName}` : "") + (t.revision ? `, revision ${t.revision}` : ""))),
          el("td", { "data-label": "Length" }, duration(t.nrAudioSeconds)),
          el("td", { class: "name", "data-label": "Notes" }, t.notes || "none"),
          el("td", { class: "action" }, t.claimedByYou
            ? el("a", { class: "button primary", href: `#/task/${encodeURIComponent(t.taskId)}` }, "Open")
            : el("button", { class: "primary claim", "aria-label": `Claim: ${t.kind} ${t.language}${t.targetLanguage ? ` to ${t.targetLanguage}` : ""}, due ${when(t.deadline)}`, onclick: async () => {
              try {
                await api("POST", `/work/tasks/${encodeURIComponent(t.taskId)}/claim`);
                location.hash = `#/task/${encodeURIComponent(t.taskId)}`;
              } catch (e) {
                show(err, e, { focus: true });
              }
            } }, "Claim"))))))) : el("p", {}, "No tasks for you right now."));
    } catch (e) {
      show(err, e);
    }
  }

  async function taskView(taskId) {
    const host = el("div", { id: "editor" });
    const err = errorBox("task-error");
    // The lease line moves into the editor's fixed bar (task-session.js); the deadline stays here.
    const lease = el("span", { class: "lease", id: "lease", role: "timer", "aria-live": "off" });
    const due = el("p", { class: "hint", id: "task-due" });
    page("Task", el("p", {}, el("a", { href: "#/tasks" }, "← Back to tasks")), due, lease, err, host);
    let detail;
    try {
      detail = await api("GET", `/work/tasks/${encodeURIComponent(taskId)}`);
    } catch (e) {
      return show(err, e);
    }
    const t = detail.task;
    main.querySelector("h1").textContent = t.kind === "translate" ? `Translate ${t.language} → ${t.targetLanguage}` : `Transcribe (${t.language})`;
    const path = `/work/tasks/${encodeURIComponent(taskId)}`;
    // The lease, auto-save, release and submit (task-session.js).
    const session = new window.ScribeTask.TaskSession({ api, path, task: t, leaseLine: lease, dueLine: due, when, leave: (notice) => {
      sessionStorage.setItem("scribe.notice", notice);
      location.hash = "#/tasks";
    } });
    editor = new Editor(host, {
      mode: t.kind === "translate" ? "translate" : "transcript",
      document: detail.document,
      sourceCues: detail.sourceCues,
      sourceLanguage: t.language,
      targetLanguage: t.targetLanguage,
      mediaUrl: sameOrigin(detail.mediaUrl),
      api,
      glossary: detail.glossary,
      instructions: detail.instructions,
      rules: loadCapabilities().then((c) => c.subtitleRules),
      account: me.userName,
      draftKey: `task.${taskId}`,
      revision: t.revision,
      save: (doc, how) => session.save(doc, how),
      onChange: () => session.changed(),
      onDestroy: () => session.destroy(),
      actions: [
        { id: "submit-task", label: "Submit", run: () => session.submit() },
        { id: "release-task", label: "Release", danger: true, run: () => session.release() },
      ],
    });
    session.attach(editor);
  }
})();
