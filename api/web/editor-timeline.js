// The editor's timeline on the waveform: every segment (transcripts) or cue (translations) is a
// wavesurfer region whose edges can be dragged to fix its timing, labelled with its reading
// speed (characters per second) and marked when it breaks the rules the subtitle exports apply
// (the numbers come from the server: `subtitleRules` of GET /api/capabilities). Dragging an
// edge moves and scales the words inside with it, in order, never past a neighbour.
"use strict";

(function () {
  const ms = (t) => Math.round(t * 1000) / 1000;
  const clamp = (t, lo, hi) => Math.max(lo, Math.min(hi, t));
  /// Shortest span a dragged segment keeps per word, and a dragged cue keeps, in seconds.
  const MIN_WORD_SPAN = 0.02;
  /// A region narrower than this (pixels) shows no label: it would cover its neighbours'.
  const LABEL_PIXELS = 56;

  /// Characters a viewer reads (one space between words), as the exports count them.
  function readChars(text) {
    return [...text.trim().replace(/\s+/g, " ")].length;
  }

  /// The segment's words' time span: [first start, last end].
  function span(seg) {
    const ws = seg.words;
    return [ws[0].start, Math.max(...ws.map((w) => w.end))];
  }

  /// Moves the edges of segment `i` of `doc` to [start, end], clamped between its neighbours
  /// (never worse than before) and the media's `duration`: every word of the segment, and every
  /// highlight inside it, moves and scales with the edges. Returns the new [start, end].
  function retimeSegment(doc, i, start, end, duration) {
    const seg = doc.segments[i];
    const [s0, e0] = span(seg);
    const prev = doc.segments[i - 1];
    const next = doc.segments[i + 1];
    const lo = prev && prev.words.length ? Math.min(span(prev)[1], s0) : 0;
    const hi = next && next.words.length ? Math.max(next.words[0].start, e0) : Number.isFinite(duration) && duration > 0 ? Math.max(duration, e0) : Infinity;
    start = clamp(start, lo, hi);
    end = clamp(end, lo, hi);
    const least = Math.max(MIN_WORD_SPAN * seg.words.length, e0 > s0 ? 0 : MIN_WORD_SPAN);
    if (end - start < least) {
      if (start !== s0) start = Math.max(lo, end - least);
      else end = Math.min(hi, start + least);
    }
    const scale = e0 > s0 ? (end - start) / (e0 - s0) : 0;
    const map = (t) => ms(start + (t - s0) * scale);
    for (const h of doc.highlights || []) {
      if (h.start >= s0 - 1e-6 && h.end <= e0 + 1e-6) {
        h.start = map(h.start);
        h.end = map(h.end);
      }
    }
    for (const w of seg.words) {
      w.start = map(w.start);
      w.end = Math.max(w.start, map(w.end));
    }
    return span(seg);
  }

  /// Moves cue `i` of a translation to [start, end], between its neighbours and within the media.
  function retimeCue(cues, i, start, end, duration) {
    const lo = i > 0 ? cues[i - 1].end : 0;
    const hi = i + 1 < cues.length ? cues[i + 1].start : Number.isFinite(duration) && duration > 0 ? duration : Infinity;
    const c = cues[i];
    start = clamp(start, Math.min(lo, c.start), Math.max(hi, c.end));
    end = clamp(end, Math.min(lo, c.start), Math.max(hi, c.end));
    if (end - start < MIN_WORD_SPAN) {
      if (start !== c.start) start = end - MIN_WORD_SPAN;
      else end = start + MIN_WORD_SPAN;
    }
    c.start = ms(start);
    c.end = ms(end);
    return [c.start, c.end];
  }

  /// What a unit (segment or cue) breaks of the exports' rules. `cue`: whether it is shown as
  /// one subtitle (translations), so duration and gap rules apply; a transcript's segment is cut
  /// into several cues by the exports, so only its reading speed is measured.
  function breaches(unit, previousEnd, rules, knobs, cue) {
    const out = [];
    if (!rules) return out;
    const d = unit.end - unit.start;
    const cps = d > 0 ? unit.chars / d : Infinity;
    if (unit.chars && cps > rules.maxCharsPerSecond + 1e-3) out.push(`reads at ${cps.toFixed(1)} characters per second (at most ${rules.maxCharsPerSecond})`);
    if (cue) {
      if (d < rules.minDurationSeconds - 1e-3) out.push(`on screen ${d.toFixed(2)} s (at least ${rules.minDurationSeconds.toFixed(2)} s)`);
      const longest = knobs.rows * knobs.screen;
      if (d > longest + 1e-3) out.push(`on screen ${d.toFixed(2)} s (at most ${longest} s for ${knobs.rows} rows)`);
      if (previousEnd !== null && unit.start - previousEnd < rules.minGapSeconds - 2e-3) out.push(`starts ${Math.max(0, unit.start - previousEnd).toFixed(3)} s after the cue before (at least ${rules.minGapSeconds} s)`);
    }
    return out;
  }

  /// The timeline of one editor: draws its regions, and hands edge drags back to it.
  class Timeline {
    /// editor: the Editor (its doc, mode, knobs, rules, regions plugin and media).
    constructor(editor, summary) {
      this.editor = editor;
      this.summary = summary;
      this.units = [];
      this.drawn = []; // the unit regions drawn, parallel to units (region.unit: its segment or cue)
      this.shaded = []; // the highlights' regions
      /// Whether an edge is being dragged: a redraw then waits for the drop.
      this.dragging = false;
    }

    /// The segments or cues as {start, end, chars, label, source} (source: the segment or cue).
    measure() {
      const e = this.editor;
      if (e.mode === "translate") {
        return e.doc.cues.map((c, i) => ({ start: c.start, end: c.end, chars: readChars(c.target || ""), label: `Cue ${i + 1}`, source: c }));
      }
      return e.doc.segments.map((seg, i) => {
        if (!seg.words.length) return null;
        const [start, end] = span(seg);
        return { start, end, chars: readChars(seg.words.map((w) => w.text).join(" ")), label: `Segment ${i + 1}`, source: seg };
      });
    }

    /// Brings the regions up to date with the document, touching only what changed (an edit
    /// on a long transcript changes one or two of hundreds): highlights (shaded, not
    /// interactive) are matched by their times, segments or cues by their object; a region is
    /// added, moved, renumbered, relabelled or removed only where it differs.
    draw() {
      const e = this.editor;
      if (!e.regions || e.waveBox.dataset.ready !== "true" || this.dragging) return;
      this.drawHighlights(e.doc.highlights);
      const units = this.measure();
      const old = new Map();
      for (const r of this.drawn) if (r) old.set(r.unit, r);
      const drawn = [];
      const pps = this.pixelsPerSecond();
      let previousEnd = null;
      units.forEach((u, i) => {
        if (!u) {
          drawn.push(null);
          return;
        }
        const broken = breaches(u, previousEnd, e.rules, e.knobs, e.mode === "translate");
        previousEnd = u.end;
        u.broken = broken;
        const cps = u.end > u.start ? u.chars / (u.end - u.start) : 0;
        const text = (broken.length ? "⚠ " : "") + `${cps.toFixed(1)} cps`;
        const title = `${u.label}: ${cps.toFixed(1)} characters per second` + (broken.length ? `; ${broken.join("; ")}` : "");
        const color = broken.length ? "rgba(164, 22, 26, 0.16)" : i % 2 ? "rgba(11, 92, 173, 0.08)" : "rgba(11, 92, 173, 0.15)";
        const id = `unit-${i}`;
        const end = Math.max(u.end, u.start + 0.01);
        let r = old.get(u.source);
        if (r) {
          old.delete(u.source);
          if (r.start !== u.start || r.end !== end) r.setOptions({ start: u.start, end });
          if (r.id !== id) r.setOptions({ id });
          if (r.color !== color) r.setOptions({ color });
        } else {
          r = e.regions.addRegion({ id, start: u.start, end, color, drag: false, resize: true, minLength: 0.01 });
          r.unit = u.source;
          r.labelNode = document.createElement("span");
          r.setContent(r.labelNode);
        }
        r.labelWide = (u.end - u.start) * pps >= LABEL_PIXELS;
        this.label(r, text, title, broken.length > 0);
        drawn.push(r);
      });
      for (const gone of old.values()) gone.remove();
      this.drawn = drawn;
      this.units = units;
      this.summarize();
    }

    /// A region's label: its reading speed, and in its title the rules it breaks; shown only
    /// where the region is wide enough to hold it (zoomed out on an hour, hundreds of labels
    /// would pile up into one smear; the summary below the waveform names what breaks the rules).
    label(r, text, title, broken) {
      const node = r.labelNode;
      r.labelBroken = broken;
      if (node.textContent !== text) node.textContent = text;
      if (node.title !== title) node.title = title;
      const style = `font: 600 11px system-ui, sans-serif; padding: 1px 3px; border-radius: 3px; background: ${broken ? "#a4161a" : "rgba(255,255,255,.85)"}; color: ${broken ? "#fff" : "#1b1f24"};${r.labelWide ? "" : " display: none;"}`;
      if (node.getAttribute("style") !== style) node.setAttribute("style", style);
    }

    /// Pixels per second of media as the waveform is drawn now.
    pixelsPerSecond() {
      const wave = this.editor.wave;
      const duration = wave ? wave.getDuration() : 0;
      return wave && duration > 0 ? wave.getWrapper().scrollWidth / duration : 0;
    }

    /// The waveform was zoomed or resized: show the labels that fit now.
    fit() {
      const pps = this.pixelsPerSecond();
      for (const r of this.drawn) {
        if (!r) continue;
        const wide = (r.end - r.start) * pps >= LABEL_PIXELS;
        if (wide === r.labelWide) continue;
        r.labelWide = wide;
        this.label(r, r.labelNode.textContent, r.labelNode.title, r.labelBroken);
      }
    }

    /// The highlights' shaded regions, matched by their times: new ones added, gone ones removed.
    drawHighlights(highlights) {
      const e = this.editor;
      const old = new Map();
      for (const r of this.shaded) {
        const key = `${r.hlStart} ${r.hlEnd}`;
        if (!old.has(key)) old.set(key, []);
        old.get(key).push(r);
      }
      const shaded = [];
      for (const h of highlights) {
        const kept = old.get(`${h.start} ${h.end}`);
        let r = kept && kept.length ? kept.shift() : null;
        if (!r) {
          r = e.regions.addRegion({ start: h.start, end: Math.max(h.end, h.start + 0.05), color: "rgba(255, 214, 0, 0.35)", drag: false, resize: false });
          r.hlStart = h.start;
          r.hlEnd = h.end;
          if (r.element) {
            r.element.style.pointerEvents = "none";
            // Under the segments' labels and edges, whenever it was added.
            r.element.style.zIndex = "-1";
          }
        }
        shaded.push(r);
      }
      for (const rest of old.values()) for (const r of rest) r.remove();
      this.shaded = shaded;
    }

    /// One short line for everyone (the regions are drawn on a canvas-like surface): how many
    /// units break the subtitle rules, the first few named in its title; "Next problem" goes there.
    summarize() {
      if (!this.summary) return;
      const units = this.units.filter(Boolean);
      const kind = this.editor.mode === "translate" ? "cue" : "segment";
      const broken = units.filter((u) => u.broken && u.broken.length);
      const rules = this.editor.rules;
      let text = `${units.length} ${kind}${units.length === 1 ? "" : "s"} on the timeline`;
      let title = "Drag an edge on the waveform to fix the timing.";
      if (rules) {
        text += broken.length ? `; ⚠ ${broken.length} ${broken.length === 1 ? "breaks" : "break"} the subtitle rules` : "; all within the subtitle rules";
        title = broken.length
          ? `${broken.slice(0, 5).map((u) => `${u.label} ${u.broken[0]}`).join("; ")}${broken.length > 5 ? "; …" : ""}. ${title}`
          : `At most ${rules.maxCharsPerSecond} characters per second. ${title}`;
      }
      this.summary.textContent = `${text}.`;
      this.summary.title = title;
      if (this.editor.nextProblemBtn) this.editor.nextProblemBtn.hidden = !broken.length;
    }

    /// Goes to the next unit that breaks the rules after the cursor (or the media's position),
    /// wrapping round: plays from there, puts the cursor in it and says what is wrong.
    nextProblem() {
      const e = this.editor;
      const broken = this.units.map((u, i) => (u && u.broken && u.broken.length ? i : -1)).filter((i) => i >= 0);
      if (!broken.length) return e.setStatus("Nothing breaks the subtitle rules.");
      const here = e.focus ? Number(e.focus.s) : -1;
      const at = broken.find((i) => i > here) ?? broken[0];
      const u = this.units[at];
      e.seek(u.start);
      if (e.mode === "translate") {
        const node = e.targetOf(at);
        if (node) node.focus();
      } else e.focusWord(at, 0);
      e.focus = { s: at, w: 0 };
      e.setStatus(`${u.label} ${u.broken.join("; ")} (${broken.indexOf(at) + 1} of ${broken.length}).`);
    }

    /// Keyboard timing: moves the `side` ("start" or "end") of unit `i` by `delta` seconds.
    nudge(i, side, delta) {
      const e = this.editor;
      if (e.mode === "translate") {
        const c = e.doc.cues[i];
        if (!c) return;
        this.retime(i, c.start + (side === "start" ? delta : 0), c.end + (side === "end" ? delta : 0));
      } else {
        const seg = e.doc.segments[i];
        if (!seg || !seg.words.length) return;
        const [s0, e0] = span(seg);
        this.retime(i, s0 + (side === "start" ? delta : 0), e0 + (side === "end" ? delta : 0));
      }
    }

    /// An edge was dropped: retime its unit, then redraw.
    dropped(region) {
      this.dragging = false;
      const i = this.drawn.indexOf(region);
      if (i >= 0) this.retime(i, region.start, region.end);
    }

    /// Moves unit `i` to [start, end] (within its neighbours and the media), then redraws.
    retime(i, start, end) {
      const e = this.editor;
      const duration = e.audio ? e.audio.duration : NaN;
      let label;
      if (e.mode === "translate") {
        const [s, t] = retimeCue(e.doc.cues, i, start, end, duration);
        label = `Cue ${i + 1} now ${ScribeEditor.clock(s)}–${ScribeEditor.clock(t)}`;
      } else {
        const [s, t] = retimeSegment(e.doc, i, start, end, duration);
        label = `Segment ${i + 1} now ${ScribeEditor.clock(s)}–${ScribeEditor.clock(t)}`;
      }
      // After the plugin has finished with the drag: the redraw moves its region where the times say.
      setTimeout(() => e.timingChanged(label), 0);
    }
  }

  window.ScribeTimeline = { Timeline, retimeSegment, retimeCue, readChars, breaches };
})();
