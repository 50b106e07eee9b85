// Long lists in the editor (a transcript's segments, a translation's cues) keep only the items
// near the view in the DOM: what is visible and a screen above and below, between spacers whose
// heights stand for the others. This file is that geometry, shared by both lists: each item's
// height (as measured when it was last rendered, else estimated from its size), which items to
// render, the spacers, and keeping the first item on screen where it was when estimates above it
// are corrected. An item holding the keyboard focus stays rendered wherever the page scrolls
// (an island between two spacers), so typing goes on into it; it leaves once the focus does.
// What an item looks like, and how it is brought up to date, is the caller's (editor.js).
"use strict";

(function () {
  class ListWindow {
    /// `pad()`: a new, empty spacer element (a div, or a table row); `barBottom()`: where on
    /// screen the text starts to be visible (the fixed bar's bottom); `itemOf(view)` and
    /// `nodeOf(view)`: a rendered view's item and element; `sizeOf(item)`: what an item's height
    /// grows with (its words), and `sizePx(view)`: the pixels of that part of a rendered view;
    /// `estimate`: a first guess, {head, perUnit} pixels.
    constructor(opts) {
      this.opts = opts;
      this.padTop = opts.pad();
      this.padMid = opts.pad();
      this.padBottom = opts.pad();
      for (const pad of [this.padTop, this.padMid, this.padBottom]) pad.setAttribute("aria-hidden", "true");
      this.estimate = opts.estimate;
      this.heights = new WeakMap();
      this.reset();
    }

    /// Nothing rendered (a new list).
    reset() {
      this.views = []; // the views rendered, at their items' indices
      this.lo = 0; // the window: items lo..hi-1 are rendered
      this.hi = 0;
      this.pin = -1; // an item rendered outside the window because it holds the focus
    }

    /// The spacers above and below the list, in document order (`render` places the one
    /// between the window and an island).
    pads() {
      return [this.padTop, this.padBottom];
    }

    /// Forgets every height measured (the text's width changed).
    forgetHeights() {
      this.heights = new WeakMap();
    }

    /// An item's height in pixels (its gap below included).
    heightOf(item) {
      const known = this.heights.get(item);
      if (known !== undefined) return known;
      return this.estimate.head + this.estimate.perUnit * this.opts.sizeOf(item);
    }

    /// Where each item starts, in pixels below the first: `tops[i]`, and the whole height at
    /// `tops[items.length]`.
    layout(items) {
      const tops = new Float64Array(items.length + 1);
      for (let i = 0; i < items.length; i++) tops[i + 1] = tops[i] + this.heightOf(items[i]);
      return tops;
    }

    /// The last item starting at or above `y` (pixels below the first item's top).
    static indexAt(tops, y) {
      let lo = 0;
      let hi = tops.length - 2;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (tops[mid] <= y) lo = mid;
        else hi = mid - 1;
      }
      return Math.max(0, lo);
    }

    /// The indices rendered, in order.
    shown() {
      const out = [];
      if (this.pin >= 0 && this.pin < this.lo) out.push(this.pin);
      for (let i = this.lo; i < this.hi; i++) out.push(i);
      if (this.pin >= this.hi) out.push(this.pin);
      return out;
    }

    /// How far the page must scroll to bring item `i` (of `items`) a third of the way down
    /// the visible text.
    scrollTo(items, i) {
      const tops = this.layout(items);
      const bar = this.opts.barBottom();
      const base = this.padTop.getBoundingClientRect().top;
      return base + tops[i] - bar - (window.innerHeight - bar) / 3;
    }

    /// Whether the window must be rendered again: it no longer covers the screen with half a
    /// screen to spare (the spacers' boxes say it without a new layout), or the focus has left
    /// the item kept for it.
    stale(count) {
      const pinned = this.pin >= 0 ? this.views[this.pin] : null;
      if (pinned && !this.opts.nodeOf(pinned).contains(document.activeElement)) return true;
      const h = window.innerHeight;
      const bar = this.opts.barBottom();
      const above = this.pin >= 0 && this.pin < this.lo ? this.padMid : this.padTop;
      const below = this.pin >= this.hi ? this.padMid : this.padBottom;
      if (this.lo > 0 && above.getBoundingClientRect().bottom > bar - h / 2) return true;
      return this.hi < count && below.getBoundingClientRect().top < h * 1.5;
    }

    /// Renders the items near the view (and item `must` if given, and the item holding the
    /// focus) and nothing else. `view(item, old)` gives an item's view (`old`: its view if it was
    /// rendered, to keep); `update(view, i)` brings it up to date as item `i`. Returns the
    /// indices rendered, in order.
    render(items, must, view, update) {
      const { barBottom, itemOf, nodeOf } = this.opts;
      const bar = barBottom();
      const screen = window.innerHeight;
      let anchor = null;
      for (let i = this.lo; i < this.hi && !anchor; i++) {
        const v = this.views[i];
        if (!v) continue;
        const r = nodeOf(v).getBoundingClientRect();
        if (r.bottom > bar) anchor = { node: nodeOf(v), top: r.top };
      }
      // The views rendered, by item, and the one holding the focus, found again by identity
      // (edits move indices).
      const old = new Map();
      let held = null;
      const focused = document.activeElement;
      for (const i of this.shown()) {
        const v = this.views[i];
        if (!v) continue;
        old.set(itemOf(v), v);
        if (focused && nodeOf(v).contains(focused)) held = { item: itemOf(v), at: i };
      }
      const tops = this.layout(items);
      const base = this.padTop.getBoundingClientRect().top;
      let lo = ListWindow.indexAt(tops, bar - base - screen);
      let hi = Math.min(items.length, ListWindow.indexAt(tops, screen * 2 - base) + 1);
      if (must !== null && must !== undefined && must >= 0 && must < items.length) {
        lo = Math.min(lo, must);
        hi = Math.max(hi, must + 1);
      }
      let pin = -1;
      if (held) {
        const at = items[held.at] === held.item ? held.at : items.indexOf(held.item);
        if (at < 0) {
          // Gone from the list (an edit replaced it): the caller puts the focus back.
        } else if (at >= lo - 1 && at <= hi) {
          lo = Math.min(lo, at);
          hi = Math.max(hi, at + 1);
        } else pin = at;
      }
      this.lo = lo;
      this.hi = hi;
      this.pin = pin;
      const order = this.shown();
      // What leaves goes first (the middle spacer too, put back where an island needs it): the
      // nodes that stay then need no moving (moving the focused one would take its focus).
      this.padMid.remove();
      const staying = new Set(order.map((i) => items[i]));
      for (const [item, v] of old) {
        if (staying.has(item)) continue;
        nodeOf(v).remove();
        old.delete(item);
      }
      const views = new Array(items.length);
      let prev = this.padTop;
      for (const i of order) {
        if (i === lo && pin >= 0 && pin < lo) {
          if (prev.nextSibling !== this.padMid) prev.after(this.padMid);
          prev = this.padMid;
        }
        if (i === pin && pin >= hi) {
          if (prev.nextSibling !== this.padMid) prev.after(this.padMid);
          prev = this.padMid;
        }
        const item = items[i];
        const kept = old.get(item);
        if (kept) old.delete(item);
        const v = view(item, kept);
        const node = nodeOf(v);
        if (prev.nextSibling !== node) prev.after(node);
        prev = node;
        update(v, i);
        views[i] = v;
      }
      const n = items.length;
      if (pin < 0) {
        this.padTop.style.height = `${tops[lo]}px`;
        this.padBottom.style.height = `${tops[n] - tops[hi]}px`;
      } else if (pin < lo) {
        this.padTop.style.height = `${tops[pin]}px`;
        this.padMid.style.height = `${tops[lo] - tops[pin + 1]}px`;
        this.padBottom.style.height = `${tops[n] - tops[hi]}px`;
      } else {
        this.padTop.style.height = `${tops[lo]}px`;
        this.padMid.style.height = `${tops[pin] - tops[hi]}px`;
        this.padBottom.style.height = `${tops[n] - tops[pin + 1]}px`;
      }
      // Measured now (one layout for all): the heights, and the estimate's terms.
      let sizePx = 0;
      let size = 0;
      let headPx = 0;
      for (const i of order) {
        const v = views[i];
        const node = nodeOf(v);
        if (this.gap === undefined) this.gap = parseFloat(getComputedStyle(node).marginBottom) || 0;
        const h = node.offsetHeight + this.gap;
        this.heights.set(items[i], h);
        const px = this.opts.sizePx(v);
        sizePx += px;
        size += this.opts.sizeOf(items[i]);
        headPx += h - px;
      }
      if (order.length) {
        this.estimate = { head: headPx / order.length, perUnit: size > 0 ? sizePx / size : this.estimate.perUnit };
      }
      this.views = views;
      if (anchor && anchor.node.isConnected) {
        const moved = anchor.node.getBoundingClientRect().top - anchor.top;
        if (Math.abs(moved) >= 1) window.scrollBy(0, moved);
      }
      return order;
    }
  }

  window.ScribeWindow = { ListWindow };
})();
