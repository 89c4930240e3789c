// The canvas toolkit the components draw with: one shared draw queue, a component lifecycle,
// theme colours from CSS custom properties (read once per theme change), sizes from one
// ResizeObserver (a draw reads layout only when it cannot wait for its report), sizing for the device pixel ratio, listeners, labels,
// numbers, tooltips and messages. It knows nothing about attention.

// One draw queue for every component: at most ~20 ms of drawing per animation frame, so several
// large views updated at once spread over frames instead of making one long task.
const drawQueue = new Set();
let drawFrame = 0;
function runDrawQueue() {
  drawFrame = 0;
  const start = performance.now();
  for (const fn of [...drawQueue]) {
    if (performance.now() - start > 20) break;
    drawQueue.delete(fn);
    try { fn(); } catch (err) { console.error(err); }
  }
  if (drawQueue.size) drawFrame = requestAnimationFrame(runDrawQueue);
}
/** Ask for fn (a component's render) to run in an upcoming frame; repeated asks coalesce. */
function requestDraw(fn) {
  drawQueue.add(fn);
  if (!drawFrame) drawFrame = requestAnimationFrame(runDrawQueue);
}
/** Run fn now if it is waiting in the queue (returns whether it was). */
function flushDraw(fn) {
  if (!drawQueue.delete(fn)) return false;
  fn();
  return true;
}
const cancelDraw = (fn) => drawQueue.delete(fn);

// The theme: every colour and the font the canvases draw with, read from the root's custom
// properties (components.css) once per theme change, not per draw: a getComputedStyle per colour
// per draw was ~45 ms of the lesson's load. A change of the system's light/dark setting or of the
// page's own theme (class, data-theme or style on <html>) clears it and redraws every canvas.
const THEME = {
  fg: ["--attn-fg", "#1f2328"], muted: ["--attn-muted", "#59636e"], bg: ["--attn-bg", "#ffffff"],
  grid: ["--attn-grid", "#d0d7de"], accent: ["--attn-accent", "#c2185b"], select: ["--attn-select", "#1f2328"],
  empty: ["--attn-empty", "#eef1f4"], masked: ["--attn-masked", "#8c959f"], tipBg: ["--attn-tip-bg", "#1f2328"],
  tipFg: ["--attn-tip-fg", "#ffffff"], messageBg: ["--attn-message-bg", "#fff4e5"],
  messageBorder: ["--attn-message-border", "#b35806"], family: ["--attn-font", "system-ui, sans-serif"],
};
let theme = null;
const onThemeChange = new Set(); // the redraws of the canvases alive
let themeWatched = false;

function watchTheme() {
  themeWatched = true;
  const changed = () => {
    theme = null;
    for (const redraw of onThemeChange) redraw();
  };
  globalThis.matchMedia?.("(prefers-color-scheme: dark)").addEventListener?.("change", changed);
  if (typeof MutationObserver !== "undefined" && globalThis.document) {
    new MutationObserver(changed).observe(document.documentElement, { attributes: true, attributeFilter: ["class", "data-theme", "style"] });
  }
}

/** Colours and font of the components, as one object (light/dark aware, cached per theme). */
export function readTheme() {
  if (theme) return theme;
  if (!themeWatched) watchTheme();
  let style = null;
  try {
    style = getComputedStyle(document.documentElement);
  } catch {
    // no document (a test outside the browser): the fallbacks
  }
  const values = Object.fromEntries(Object.entries(THEME).map(([key, [name, fallback]]) => (
    [key, style?.getPropertyValue(name).trim() || fallback])));
  const { family } = values;
  const rgbs = {};
  theme = {
    ...values,
    font: (size, weight = "") => `${weight} ${size}px ${family}`.trim(),
    // [r, g, b] of a theme colour, for code that writes pixels: any CSS colour, as a canvas reads it
    rgb: (key) => (rgbs[key] ??= cssRgb(values[key])),
  };
  return theme;
}

function cssRgb(css) {
  const ctx = document.createElement("canvas").getContext("2d");
  ctx.fillStyle = css;
  const normal = ctx.fillStyle; // #rrggbb, or rgba(...) when the colour is translucent
  if (normal.startsWith("#")) return [1, 3, 5].map((i) => parseInt(normal.slice(i, i + 2), 16));
  return (normal.match(/\d+/g) ?? [200, 200, 200]).slice(0, 3).map(Number);
}

// Canvas widths as ResizeObserver reports them (one observer for every canvas): a draw waits for
// the report instead of reading layout, which forced the browser to lay out the page again for each
// canvas it drew. Without ResizeObserver (Node, where tests import this module; every browser that
// runs the page has it) nothing would report: a canvas is then drawn at once, at its width read from
// the layout once (canvasWidth).
const widths = new WeakMap();
const onResize = new WeakMap(); // canvas -> its redraw
const resizer = typeof ResizeObserver === "undefined" ? null : new ResizeObserver((entries) => {
  for (const entry of entries) {
    const width = Math.round(entry.contentBoxSize?.[0]?.inlineSize ?? entry.contentRect.width); // as clientWidth
    if (!width || width === widths.get(entry.target)) continue; // 0: not laid out (hidden, skipped)
    widths.set(entry.target, width);
    onResize.get(entry.target)?.();
  }
});

/**
 * The canvas's width in CSS pixels: as ResizeObserver last reported it, else (not reported yet:
 * just made, or a caller needs the geometry now) read from the layout once.
 */
export function canvasWidth(canvas) {
  let width = widths.get(canvas);
  if (!width) {
    width = layoutWidth(canvas);
    if (width) widths.set(canvas, width);
  }
  return drawnWidth(width);
}

/** The canvas's width read from the layout (laying the page out if it is not), 0 when it is not laid out. */
const layoutWidth = (canvas) => canvas.clientWidth || canvas.parentElement?.clientWidth || 0;
/** The width a canvas is drawn at, from its box's (0: unknown). */
const drawnWidth = (width) => Math.max(120, width || 320);

/** Whether a draw may go ahead: the width is known (reported by ResizeObserver or read before), or no
 *  observer will report it. */
const widthKnown = (canvas) => widths.has(canvas) || resizer === null;

/**
 * Give the canvas its CSS height now, before its picture is drawn: the one place a canvas's height is set. A
 * component's height follows from its data (rows, columns, cell size) and its width, so canvasLifecycle holds it
 * when the data comes and when the width is reported, and a draw that waits for a frame (the queue's budget, a
 * loaded machine) then changes pixels only, never the page's layout. A message on the canvas (a placeholder
 * before the data) is cleared when the height changes: stretched to the new height it would be unreadable.
 */
export function holdHeight(canvas, cssHeight) {
  const css = `${Math.ceil(cssHeight)}px`;
  if (canvas.style.height === css) return;
  canvas.style.height = css;
  if (canvas.dataset.message !== undefined) canvas.height = Math.round(cssHeight * (window.devicePixelRatio || 1));
}

/** Size the backing store for devicePixelRatio; returns a context drawing in CSS pixels. */
export function prepareCanvas(canvas, cssHeight) {
  const dpr = window.devicePixelRatio || 1;
  const width = canvasWidth(canvas);
  holdHeight(canvas, cssHeight);
  const w = Math.round(width * dpr);
  const h = Math.round(cssHeight * dpr);
  if (canvas.width !== w) canvas.width = w;
  if (canvas.height !== h) canvas.height = h;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, cssHeight);
  return { ctx, width, dpr };
}

/** Add event listeners ({type: handler}) to a target; returns a function that removes them all. */
function listen(target, handlers) {
  const entries = Object.entries(handlers);
  for (const [type, handler] of entries) target.addEventListener(type, handler);
  return () => { for (const [type, handler] of entries) target.removeEventListener(type, handler); };
}

/**
 * Call `changed` when the canvas's width (ResizeObserver), the colour scheme or the device pixel
 * ratio changes (the lifecycle then queues a draw). Returns a cleanup function.
 */
function watchLayout(canvas, changed) {
  onResize.set(canvas, changed);
  resizer?.observe(canvas);
  onThemeChange.add(changed);
  // devicePixelRatio changes (zoom, another monitor) without a width change: watch the resolution.
  let dprQuery = null;
  const onDpr = () => { armDpr(); changed(); };
  const armDpr = () => {
    dprQuery?.removeEventListener?.("change", onDpr);
    dprQuery = window.matchMedia?.(`(resolution: ${window.devicePixelRatio || 1}dppx)`) ?? null;
    dprQuery?.addEventListener?.("change", onDpr);
  };
  armDpr();
  return () => {
    resizer?.unobserve(canvas);
    onResize.delete(canvas);
    onThemeChange.delete(changed);
    dprQuery?.removeEventListener?.("change", onDpr);
  };
}

/**
 * Wrap a reader's label in Unicode isolates (FSI … PDI), so its own direction marks (an
 * Arabic word, a stray U+202E) cannot reverse the sentence or label it is joined into.
 */
export function isolate(s) {
  return `\u2068${s}\u2069`;
}

/** Make a token readable on an axis: visible whitespace, at most n characters, direction isolated. */
export function shortLabel(s, n = 8) {
  const t = String(s).replace(/\n/g, "⏎").replace(/\s/g, "·") || "∅";
  return isolate(t.length > n ? `${t.slice(0, n - 1)}…` : t);
}

/** The first of a label's forms (longest first; or one string) no wider than room in ctx's font; "" if none. */
export function fitLabel(ctx, forms, room) {
  return [].concat(forms).find((text) => ctx.measureText(text).width <= room) ?? "";
}

/** Format a number for people: fixed decimals, real minus sign. */
export function fmt(v, digits = 3) {
  if (v === -Infinity) return "−∞ (masked)";
  if (!Number.isFinite(v)) return String(v);
  const s = Math.abs(v) >= 1000 ? v.toExponential(2) : v.toFixed(digits);
  return s.replace("-", "−");
}

export function drawTooltip(ctx, theme, text, x, y, width, height) {
  ctx.font = theme.font(12);
  const lines = String(text).split("\n");
  const w = Math.max(...lines.map((l) => ctx.measureText(l).width)) + 12;
  const h = lines.length * 16 + 8;
  let tx = x + 12;
  let ty = y + 12;
  if (tx + w > width - 2) tx = Math.max(2, x - w - 12);
  if (ty + h > height - 2) ty = Math.max(2, y - h - 12);
  ctx.fillStyle = theme.tipBg;
  ctx.globalAlpha = 0.94;
  ctx.fillRect(tx, ty, w, h);
  ctx.globalAlpha = 1;
  ctx.fillStyle = theme.tipFg;
  ctx.textAlign = "left";
  ctx.textBaseline = "top";
  lines.forEach((l, i) => ctx.fillText(l, tx + 6, ty + 5 + i * 16));
}

/** Draw a message in the middle of a canvas (wrapping lines) and expose it to assistive tech.
 *  h: its height in CSS pixels (a component that keeps its place passes the height of its picture). */
function drawMessage(canvas, message, h = 120) {
  holdHeight(canvas, h);
  canvas.setAttribute("aria-label", message);
  canvas.dataset.message = message;
  // Watched but its width not reported yet (just made): the text alternative is there at once, the
  // pixels when ResizeObserver reports the width (which redraws), never after a layout read.
  if (!widthKnown(canvas) && onResize.has(canvas)) return;
  try {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(200, canvasWidth(canvas));
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    const ctx = canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    const theme = readTheme();
    ctx.fillStyle = theme.messageBg;
    ctx.fillRect(0, 0, w, h);
    ctx.strokeStyle = theme.messageBorder;
    ctx.lineWidth = 2;
    ctx.strokeRect(1, 1, w - 2, h - 2);
    ctx.fillStyle = theme.fg;
    ctx.font = theme.font(14);
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    const lines = wrap(ctx, message, w - 32);
    const top = h / 2 - ((lines.length - 1) * 18) / 2;
    lines.forEach((line, i) => ctx.fillText(line, w / 2, top + i * 18));
  } catch {
    // A canvas that cannot draw still has its text alternative.
  }
}

export function wrap(ctx, text, width) {
  const words = String(text).split(/\s+/);
  const lines = [];
  let line = "";
  for (const word of words) {
    const next = line ? `${line} ${word}` : word;
    if (ctx.measureText(next).width > width && line) {
      lines.push(line);
      line = word;
    } else line = next;
  }
  if (line) lines.push(line);
  return lines.slice(0, 5);
}

/** Draw `error`, or `empty` when there is nothing to draw; returns false when there is data to draw.
 *  height: the message's height in CSS pixels (default 120); a picture whose height is known before its
 *  data passes it, so the page does not move when the data comes. */
export function drawStatus(canvas, error, empty, height) {
  if (error) {
    drawMessage(canvas, error, height);
    return true;
  }
  delete canvas.dataset.message;
  if (!empty) return false;
  drawMessage(canvas, empty, height);
  canvas.dataset.message = ""; // a placeholder, not a problem
  return true;
}

/**
 * The lifecycle every canvas component has: set data -> hold its height -> request a draw -> draw.
 * canvasLifecycle(canvas, {roleDescription, render, height, handlers}) -> {request, now, flush, destroy, destroyed}
 *   request()  hold the height now, draw in an upcoming frame (once the canvas's width is known); any
 *              number of requests in one task draw once
 *   now()      draw at once (a message must not wait for a frame)
 *   flush()    draw now if a draw is waiting (before reading the layout)
 *   destroy()  stop drawing, stop listening
 * height(width) is the component's picture's height in CSS pixels at that width, from its data (what its
 * render draws at), or null when it has no picture (a message, drawn at once, sizes itself). It is held
 * (holdHeight) at each request, so before the next layout, and whenever ResizeObserver reports a new width:
 * a canvas made and given its data in one task is first laid out at its height, not at its placeholder's.
 * It makes the canvas a focusable application (role, roledescription), adds the event
 * handlers ({type: handler}) and redraws when the width, the pixel ratio or the colours change.
 */
export function canvasLifecycle(canvas, { roleDescription, render, height = null, handlers = {} }) {
  let destroyed = false;
  // A draw asked for before ResizeObserver has reported the canvas's width waits for that report
  // (the width is read from the layout only if something needs the drawing at once, flush or now, or its height).
  // A canvas that is not laid out (off screen in a skipped block, hidden) is drawn when it is.
  let waiting = false;
  const draw = () => { waiting = false; if (!destroyed) render(); };
  // The width ResizeObserver reported, else read from the layout: a canvas just made, in view, is first laid out
  // at the height held here. Held from the observer's report instead, after that first layout, Chromium counts
  // the change as a layout shift although no frame showed the first height. The read is not kept: the draw
  // still waits for the report, so a canvas far off the screen (in a skipped block) is drawn only when it nears.
  const hold = () => {
    if (!height) return;
    const width = widths.get(canvas) || layoutWidth(canvas);
    if (!width) return; // not laid out (hidden): held when it is
    try {
      const h = height(drawnWidth(width));
      if (h) holdHeight(canvas, h);
    } catch (err) {
      console.error(err); // the draw then sizes it, or says what is wrong
    }
  };
  canvas.tabIndex = 0;
  canvas.setAttribute("role", "application");
  canvas.setAttribute("aria-roledescription", roleDescription);
  canvas.classList.add("attn-canvas");
  const unlisten = listen(canvas, handlers);
  const unwatch = watchLayout(canvas, () => { if (!destroyed) { hold(); requestDraw(draw); } }); // through the queue
  return {
    get destroyed() { return destroyed; },
    request() {
      if (destroyed) return;
      hold();
      if (widthKnown(canvas)) requestDraw(draw);
      else waiting = true;
    },
    now() { cancelDraw(draw); draw(); },
    flush: () => (waiting ? (draw(), true) : flushDraw(draw)),
    destroy() {
      destroyed = true;
      cancelDraw(draw);
      unwatch();
      unlisten();
    },
  };
}

/**
 * The end every canvas component's handle shares: `layout()` (its geometry in CSS pixels, drawn first, as a
 * copy, for tests and keyboard focus), `flush()` and `destroy()`. *read* returns the current geometry or null.
 */
export function drawnApi(life, read) {
  return {
    layout: () => { life.flush(); const g = read(); return g ? JSON.parse(JSON.stringify(g)) : null; },
    flush: () => life.flush(),
    destroy: () => life.destroy(),
  };
}
