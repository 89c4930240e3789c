// All the heads of a model at a glance: an L × H grid of small attention patterns drawn from one
// (L, H, T, T) weights array, one canvas. Arrow keys move a focus across the grid, Enter/Space or a
// click opens a head (onSelect); featured heads (a job found by Python) get an accent frame, heads the reader
// changed (the live model's knock) a cross when knocked out and a dashed frame when their scores were scaled. It draws
// the numbers it is given and computes nothing about them.
//
// Layers are rows and heads columns for every model, so two models read the same way; a model's heads
// are few (MiniLM 12, SmolLM2 9), so a phone's width holds a row of finger-sized targets, and its many
// layers (SmolLM2's 30) run down the page. A tall grid's thumbnails shrink to keep it within MAX_HEIGHT, never
// below MIN_TARGET; a screen too narrow for a row of them scrolls the grid sideways (minWidth) rather than
// drawing heads out of reach.

import { SEQUENTIAL_LUT, lutIndex } from "./colormap.js";
import { canvasLifecycle, canvasWidth, drawStatus, drawTooltip, prepareCanvas, readTheme } from "./canvas.js";
import { checkArray } from "./validate.js";

const MAX_THUMB = 56;
export const MIN_TARGET = 24; // a finger's target, CSS pixels (WCAG 2.2's minimum target size)
const MAX_HEIGHT = 960; // SmolLM2's 30 layers stay about one screen tall on a desktop
const TOP = 22; // the columns' names
// Row names and the gap between thumbnails: "layer 29" where a row of heads has room, "L29" where it has not.
const WIDE = { left: 64, gap: 3, rowName: (r) => `layer ${r}` };
const NARROW = { left: 30, gap: 2, rowName: (r) => `L${r}` };

/** The narrowest width (CSS pixels) that holds a row of H heads at the target size. */
export function gridMinWidth(H) {
  return NARROW.left + H * (MIN_TARGET + NARROW.gap) + 4;
}

/**
 * How the grid of L layers (rows) and H heads (columns) is laid out `width` CSS pixels wide, the same with
 * the weights or before: {left, gap, rowName, thumb, pitch, height}. pitch = thumb + gap, a head's target.
 */
export function gridLayout(width, L, H) {
  const fits = (labels) => Math.floor((width - labels.left - 4) / H) - labels.gap;
  const labels = fits(WIDE) >= MIN_TARGET ? WIDE : NARROW;
  const tall = Math.floor((MAX_HEIGHT - TOP) / L) - labels.gap;
  const thumb = Math.max(MIN_TARGET, Math.min(MAX_THUMB, fits(labels), tall));
  const pitch = thumb + labels.gap;
  return { ...labels, thumb, pitch, height: TOP + L * pitch + 4 };
}

/** The head {layer, head} whose target (its thumbnail and the gap after it) holds the point (x, y) in CSS
 *  pixels of a layout {left, top, pitch, L, H}, or null. */
export function headAtPoint({ left, top, pitch, L, H }, x, y) {
  const head = Math.floor((x - left) / pitch);
  const layer = Math.floor((y - top) / pitch);
  return head >= 0 && head < H && layer >= 0 && layer < L ? { layer, head } : null;
}

/**
 * Move a focus {layer, head} by a key in a grid of L layers (rows) and H heads (columns).
 * Returns the new focus, or null when the key is not a grid key.
 */
export function moveFocus(focus, key, L, H) {
  let { layer, head } = focus;
  if (key === "ArrowUp") layer = Math.max(0, layer - 1);
  else if (key === "ArrowDown") layer = Math.min(L - 1, layer + 1);
  else if (key === "ArrowLeft") head = Math.max(0, head - 1);
  else if (key === "ArrowRight") head = Math.min(H - 1, head + 1);
  else if (key === "Home") { layer = 0; head = 0; }
  else if (key === "End") { layer = L - 1; head = H - 1; }
  else return null;
  return { layer, head };
}

/** Check a (L, H, T, T) weights array: {ok, L, H, T, data} or {ok: false, message}. */
export function checkGrid(weights) {
  if (!weights || !Array.isArray(weights.shape) || weights.shape.length !== 4) {
    return { ok: false, message: "Cannot draw the heads: expected weights of shape (layers, heads, T, T)." };
  }
  const [L, H, T, T2] = weights.shape;
  if (T !== T2) return { ok: false, message: `Cannot draw the heads: each pattern must be T × T, got ${T} × ${T2}.` };
  if (![L, H, T].every((n) => Number.isInteger(n) && n > 0)) {
    return { ok: false, message: `Cannot draw the heads: shape [${weights.shape.join(", ")}] is not a list of sizes.` };
  }
  const data = weights.data;
  if (!(data instanceof Float32Array) || data.length !== L * H * T * T) {
    return { ok: false, message: `Cannot draw the heads: shape [${L}, ${H}, ${T}, ${T}] needs ${L * H * T * T} float32 values.` };
  }
  // each pattern gets the checks every drawn matrix gets (numbers, finite, size limits)
  for (let k = 0; k < L * H; k++) {
    const one = checkArray({ shape: [T, T], dtype: "float32", data: data.subarray(k * T * T, (k + 1) * T * T) },
      { name: `the weights of layer ${Math.floor(k / H)}, head ${k % H}`, square: true });
    if (!one.ok) return { ok: false, message: one.message };
  }
  return { ok: true, L, H, T, data };
}

/**
 * createHeadGrid(canvas, {onSelect({layer, head}), onFocus({layer, head}), describe({layer, head}) -> text})
 *   -> {update({weights, featured, changed, causal}), reserve(L, H), select({layer, head} | null), focused(), layout(),
 *       destroy()}
 * featured: [{job, layer, head}] framed in the accent colour; changed: [{layer, head, change}] ("off": crossed,
 * a factor: a dashed frame); causal: zeros above the diagonal are
 * drawn as "masked" (the model never computes them), not as weight 0.
 */
export function createHeadGrid(canvas, options = {}) {
  let grid = null; // checkGrid's result
  let error = "";
  let featured = [];
  let changed = [];
  let causal = false;
  let selected = null;
  let focus = { layer: 0, head: 0 };
  let hover = null;
  let focused = false;
  let reserved = null; // {L, H} of the grid to come, before its weights (reserve)
  let image = null; // every pattern side by side, one pixel per weight, made once per update and theme
  let imageTheme = null;
  let geometry = null;
  const describe = options.describe ?? (({ layer, head }) => `layer ${layer}, head ${head}`);

  function makeImage() {
    const { L, H, T, data } = grid;
    const off = document.createElement("canvas");
    off.width = T;
    off.height = L * H * T;
    const ctx = off.getContext("2d");
    const img = ctx.createImageData(T, L * H * T);
    const grey = readTheme().rgb("masked");
    for (let k = 0; k < data.length; k++) {
      const j = k % T;
      const i = Math.floor(k / T) % T;
      const o = k * 4;
      if (causal && j > i) {
        img.data[o] = grey[0]; img.data[o + 1] = grey[1]; img.data[o + 2] = grey[2];
      } else {
        const li = lutIndex(data[k]);
        img.data[o] = SEQUENTIAL_LUT[li]; img.data[o + 1] = SEQUENTIAL_LUT[li + 1]; img.data[o + 2] = SEQUENTIAL_LUT[li + 2];
      }
      img.data[o + 3] = 255;
    }
    ctx.putImageData(img, 0, 0);
    return off;
  }

  /** Too narrow for a row of targets of the grid drawn or to come, the canvas grows past its box, which scrolls:
   *  set before the width is read (as the grid or its size comes, and at each draw). */
  function fitMinWidth() {
    const size = grid ?? reserved;
    canvas.style.minWidth = size ? `${gridMinWidth(size.H)}px` : "";
  }

  function render() {
    // the placeholder takes the height the grid will have, so its weights arriving move nothing below it
    fitMinWidth();
    const room = !grid && reserved ? gridLayout(canvasWidth(canvas), reserved.L, reserved.H).height : undefined;
    if (drawStatus(canvas, error, grid ? "" : "The heads appear when Python has loaded.", room)) { geometry = null; return; }
    const { L, H, T } = grid;
    const { left, gap, rowName, thumb, pitch, height } = gridLayout(canvasWidth(canvas), L, H);
    const top = TOP;
    const { ctx, width } = prepareCanvas(canvas, height);
    const theme = readTheme();
    if (imageTheme !== theme) image = null; // masked cells take the theme's grey
    image ??= makeImage();
    imageTheme = theme;
    ctx.imageSmoothingEnabled = false;
    ctx.fillStyle = theme.muted;
    ctx.font = theme.font(11);
    ctx.textBaseline = "middle";
    ctx.textAlign = "center";
    const colName = thumb >= 44 ? (c) => `head ${c}` : (c) => `h${c}`;
    for (let c = 0; c < H; c++) ctx.fillText(colName(c), left + c * pitch + thumb / 2, top / 2);
    ctx.textAlign = "right";
    for (let r = 0; r < L; r++) ctx.fillText(rowName(r), left - 4, top + r * pitch + thumb / 2);
    const rects = [];
    const frame = (x, y, colour, lw, dash = []) => {
      ctx.save();
      ctx.strokeStyle = colour;
      ctx.lineWidth = lw;
      ctx.setLineDash(dash);
      ctx.strokeRect(x - lw / 2 - 0.5, y - lw / 2 - 0.5, thumb + lw + 1, thumb + lw + 1);
      ctx.restore();
    };
    for (let layer = 0; layer < L; layer++) {
      for (let head = 0; head < H; head++) {
        const x = left + head * pitch;
        const y = top + layer * pitch;
        ctx.drawImage(image, 0, (layer * H + head) * T, T, T, x, y, thumb, thumb);
        rects.push({ layer, head, x, y, size: thumb });
      }
    }
    const at = ({ layer, head }) => rects[layer * H + head];
    for (const f of featured) {
      const r = at(f);
      if (r) frame(r.x, r.y, theme.accent, 2);
    }
    for (const c of changed) {
      const r = at(c);
      if (!r) continue;
      if (c.change === "off") {
        ctx.save();
        ctx.strokeStyle = theme.messageBorder;
        ctx.lineWidth = 2;
        ctx.beginPath();
        ctx.moveTo(r.x + 2, r.y + 2); ctx.lineTo(r.x + thumb - 2, r.y + thumb - 2);
        ctx.moveTo(r.x + thumb - 2, r.y + 2); ctx.lineTo(r.x + 2, r.y + thumb - 2);
        ctx.stroke();
        ctx.restore();
      } else {
        frame(r.x, r.y, theme.messageBorder, 2, [4, 3]);
      }
    }
    if (selected) { const r = at(selected); frame(r.x, r.y, theme.select, 3); }
    if (focused) { const r = at(focus); frame(r.x, r.y, theme.fg, 1.5, [3, 2]); }
    if (hover) {
      const r = at(hover);
      drawTooltip(ctx, theme, describe(hover), r.x + r.size / 2, r.y + r.size / 2, width, height);
    }
    geometry = { left, top, thumb, gap, pitch, L, H, rects };
    canvas.dataset.heads = String(L * H);
  }

  function headAt(ev) {
    if (!geometry) return null;
    const box = canvas.getBoundingClientRect();
    const x = ev.clientX - box.left;
    const y = ev.clientY - box.top;
    return headAtPoint(geometry, x, y);
  }

  function label() {
    if (!grid) return;
    canvas.setAttribute("aria-label", `All ${grid.L * grid.H} heads (${grid.L} layers × ${grid.H} heads, counted from 0). ` +
      `Focused: ${describe(focus)}. Arrow keys move, Enter opens the head below.`);
  }

  function choose(head) {
    selected = head;
    focus = { ...head };
    label();
    life.request();
    options.onSelect?.({ ...head });
  }

  const life = canvasLifecycle(canvas, {
    roleDescription: "grid of attention heads",
    render,
    height: (width) => (grid ? gridLayout(width, grid.L, grid.H).height : null),
    handlers: {
      click: (ev) => { const h = headAt(ev); if (h) choose(h); },
      pointermove: (ev) => {
        const h = headAt(ev);
        if (h?.layer !== hover?.layer || h?.head !== hover?.head) { hover = h; life.request(); }
      },
      pointerleave: () => { if (hover) { hover = null; life.request(); } },
      keydown: (ev) => {
        if (!grid) return;
        if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); choose({ ...focus }); return; }
        const next = moveFocus(focus, ev.key, grid.L, grid.H);
        if (!next) return;
        ev.preventDefault();
        focus = next;
        label();
        options.onFocus?.({ ...focus });
        life.request();
      },
      focus: () => { focused = true; life.request(); },
      blur: () => { focused = false; life.request(); },
    },
  });
  life.now();

  return {
    update({ weights, featured: marks = [], changed: edits = [], causal: isCausal = false }) {
      if (life.destroyed) return;
      const checked = checkGrid(weights);
      image = null;
      hover = null;
      if (!checked.ok) { grid = null; error = checked.message; life.now(); return; }
      grid = checked;
      error = "";
      featured = marks;
      changed = edits ?? [];
      causal = Boolean(isCausal);
      if (selected && (selected.layer >= grid.L || selected.head >= grid.H)) selected = null;
      if (focus.layer >= grid.L || focus.head >= grid.H) focus = { layer: 0, head: 0 };
      label();
      fitMinWidth();
      life.request();
    },
    /** The size of the grid to come (L layers, H heads), before its weights: the placeholder keeps its room. */
    reserve(L, H) {
      reserved = Number.isInteger(L) && Number.isInteger(H) && L > 0 && H > 0 ? { L, H } : null;
      if (!grid) life.now();
    },
    /** Frame a head as the open one (null: none) without calling onSelect. */
    select(head) {
      selected = head ? { layer: head.layer, head: head.head } : null;
      if (selected) focus = { ...selected };
      label();
      life.request();
    },
    focused: () => ({ ...focus }),
    /** Geometry in CSS pixels for tests: {left, top, thumb, gap, pitch, L, H, rects}. */
    layout: () => { life.flush(); return geometry ? JSON.parse(JSON.stringify(geometry)) : null; },
    destroy: () => life.destroy(),
  };
}
