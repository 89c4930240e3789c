// The canvas toolkit the components draw with: one shared draw queue, a component lifecycle,
// theme colours from CSS custom properties, sizing for the device pixel ratio, listeners,
// layout watching, labels, numbers, tooltips and messages. It knows nothing about attention.

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
export function requestDraw(fn) {
  drawQueue.add(fn);
  if (!drawFrame) drawFrame = requestAnimationFrame(runDrawQueue);
}
/** Run fn now if it is waiting in the queue (returns whether it was). */
export function flushDraw(fn) {
  if (!drawQueue.delete(fn)) return false;
  fn();
  return true;
}
export const cancelDraw = (fn) => drawQueue.delete(fn);

/** Colours and font of a component, read from CSS custom properties (light/dark aware). */
export function readTheme(canvas) {
  const family = cssVar(canvas, "font-family", "system-ui, sans-serif");
  return {
    fg: cssVar(canvas, "--attn-fg", "#1f2328"),
    muted: cssVar(canvas, "--attn-muted", "#59636e"),
    bg: cssVar(canvas, "--attn-bg", "#ffffff"),
    grid: cssVar(canvas, "--attn-grid", "#d0d7de"),
    accent: cssVar(canvas, "--attn-accent", "#c2185b"),
    select: cssVar(canvas, "--attn-select", "#1f2328"),
    empty: cssVar(canvas, "--attn-empty", "#eef1f4"),
    masked: cssVar(canvas, "--attn-masked", "#8c959f"),
    tipBg: cssVar(canvas, "--attn-tip-bg", "#1f2328"),
    tipFg: cssVar(canvas, "--attn-tip-fg", "#ffffff"),
    font: (size, weight = "") => `${weight} ${size}px ${family}`.trim(),
  };
}

/** Size the backing store for devicePixelRatio; returns a context drawing in CSS pixels. */
export function prepareCanvas(canvas, cssHeight) {
  const dpr = window.devicePixelRatio || 1;
  const width = Math.max(120, canvas.clientWidth || canvas.parentElement?.clientWidth || 320);
  canvas.style.height = `${Math.ceil(cssHeight)}px`;
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
export function listen(target, handlers) {
  const entries = Object.entries(handlers);
  for (const [type, handler] of entries) target.addEventListener(type, handler);
  return () => { for (const [type, handler] of entries) target.removeEventListener(type, handler); };
}

/** Call redraw when the canvas width or the colour scheme changes. Returns a cleanup function. */
export function watchLayout(canvas, redraw) {
  let lastWidth = canvas.clientWidth;
  let frame = 0;
  const schedule = () => {
    if (!frame) frame = requestAnimationFrame(() => { frame = 0; redraw(); });
  };
  const ro = typeof ResizeObserver !== "undefined" ? new ResizeObserver(() => {
    if (canvas.clientWidth !== lastWidth) { lastWidth = canvas.clientWidth; schedule(); }
  }) : null;
  ro?.observe(canvas);
  const media = window.matchMedia?.("(prefers-color-scheme: dark)");
  media?.addEventListener?.("change", schedule);
  // A page theme switch (class or data-theme on <html>) changes the custom properties we read.
  const mo = typeof MutationObserver !== "undefined" ? new MutationObserver(schedule) : null;
  mo?.observe(document.documentElement, { attributes: true, attributeFilter: ["class", "data-theme", "style"] });
  // devicePixelRatio changes (zoom, another monitor) without a width change: watch the resolution.
  let dprQuery = null;
  const onDpr = () => { armDpr(); schedule(); };
  const armDpr = () => {
    dprQuery?.removeEventListener?.("change", onDpr);
    dprQuery = window.matchMedia?.(`(resolution: ${window.devicePixelRatio || 1}dppx)`) ?? null;
    dprQuery?.addEventListener?.("change", onDpr);
  };
  armDpr();
  return () => {
    ro?.disconnect();
    mo?.disconnect();
    media?.removeEventListener?.("change", schedule);
    dprQuery?.removeEventListener?.("change", onDpr);
    if (frame) cancelAnimationFrame(frame);
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

/** Read a CSS custom property from an element, with a fallback. */
export function cssVar(el, name, fallback) {
  try {
    const v = getComputedStyle(el).getPropertyValue(name).trim();
    return v || fallback;
  } catch {
    return fallback;
  }
}

/** Draw a message in the middle of a canvas (wrapping lines) and expose it to assistive tech. */
export function drawMessage(canvas, message) {
  try {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(200, canvas.clientWidth || 300);
    const h = 120;
    canvas.style.height = `${h}px`;
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    const ctx = canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    ctx.fillStyle = cssVar(canvas, "--attn-message-bg", "#fff4e5");
    ctx.fillRect(0, 0, w, h);
    ctx.strokeStyle = cssVar(canvas, "--attn-message-border", "#b35806");
    ctx.lineWidth = 2;
    ctx.strokeRect(1, 1, w - 2, h - 2);
    ctx.fillStyle = cssVar(canvas, "--attn-fg", "#222");
    ctx.font = `14px ${cssVar(canvas, "font-family", "sans-serif")}`;
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    const lines = wrap(ctx, message, w - 32);
    const top = h / 2 - ((lines.length - 1) * 18) / 2;
    lines.forEach((line, i) => ctx.fillText(line, w / 2, top + i * 18));
  } catch {
    // A canvas that cannot draw still gets its text alternative below.
  }
  canvas.setAttribute("aria-label", message);
  canvas.dataset.message = message;
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

/** Draw `error`, or `empty` when there is nothing to draw; returns false when there is data to draw. */
export function drawStatus(canvas, error, empty) {
  if (error) {
    drawMessage(canvas, error);
    return true;
  }
  delete canvas.dataset.message;
  if (!empty) return false;
  drawMessage(canvas, empty);
  canvas.dataset.message = ""; // a placeholder, not a problem
  return true;
}

/**
 * The lifecycle every canvas component has: set data -> request a draw -> draw.
 * canvasLifecycle(canvas, {roleDescription, render, handlers}) -> {request, now, flush, destroy, destroyed}
 *   request()  draw in an upcoming frame; any number of requests in one task draw once
 *   now()      draw at once (a message must not wait for a frame)
 *   flush()    draw now if a draw is waiting (before reading the layout)
 *   destroy()  stop drawing, stop listening
 * It makes the canvas a focusable application (role, roledescription), adds the event
 * handlers ({type: handler}) and redraws when the width, the pixel ratio or the colours change.
 */
export function canvasLifecycle(canvas, { roleDescription, render, handlers = {} }) {
  let destroyed = false;
  const draw = () => { if (!destroyed) render(); };
  canvas.tabIndex = 0;
  canvas.setAttribute("role", "application");
  canvas.setAttribute("aria-roledescription", roleDescription);
  canvas.classList.add("attn-canvas");
  const unlisten = listen(canvas, handlers);
  const unwatch = watchLayout(canvas, draw);
  return {
    get destroyed() { return destroyed; },
    request() { if (!destroyed) requestDraw(draw); },
    now() { cancelDraw(draw); draw(); },
    flush: () => flushDraw(draw),
    destroy() {
      destroyed = true;
      cancelDraw(draw);
      unwatch();
      unlisten();
    },
  };
}
