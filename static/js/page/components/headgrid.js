// All the heads of a model at a glance: an L × H grid of small attention patterns drawn from one
// (L, H, T, T) weights array, one canvas. Arrow keys move a focus across the grid, Enter/Space or a
// click opens a head (onSelect); featured heads (a job found by Python) get an accent frame, heads the reader
// changed (the live model's knock) a cross when knocked out and a dashed frame when their scores were scaled. It draws
// the numbers it is given and computes nothing about them.
//
// The longer of the two axes runs across, so a 30-layer model is a wide strip rather than a tall
// tower: MiniLM (6 × 12) has layers as rows, SmolLM2 (30 × 9) layers as columns. Labels say which.

import { SEQUENTIAL_LUT, lutIndex } from "./colormap.js";
import { canvasLifecycle, canvasWidth, drawStatus, drawTooltip, prepareCanvas, readTheme } from "./canvas.js";
import { checkArray } from "./validate.js";

const GAP = 3;
const MAX_THUMB = 56;
const MIN_THUMB = 12;
const LEFT = 64; // "layer 29"
const TOP = 22; // the columns' names

/** Whether layers run across (the longer axis does) in a grid of L layers and H heads. */
const layersRunAcross = (L, H) => L > H;

/** How the grid of L layers and H heads is laid out `width` CSS pixels wide: the same with the weights or before. */
function gridLayout(width, L, H) {
  const layersAcross = layersRunAcross(L, H);
  const rows = layersAcross ? H : L;
  const cols = layersAcross ? L : H;
  const thumb = Math.max(MIN_THUMB, Math.min(MAX_THUMB, Math.floor((width - LEFT - 4) / cols) - GAP));
  return { layersAcross, rows, cols, thumb, height: TOP + rows * (thumb + GAP) + 4 };
}

/** Where head (layer, head) sits: {row, col}, for the orientation `layersAcross`. */
export function gridCell(layer, head, layersAcross) {
  return layersAcross ? { row: head, col: layer } : { row: layer, col: head };
}

/**
 * Move a focus {layer, head} by a key in a grid of L layers and H heads (as drawn: see gridCell).
 * Returns the new focus, or null when the key is not a grid key.
 */
export function moveFocus(focus, key, L, H, layersAcross) {
  const rows = layersAcross ? H : L;
  const cols = layersAcross ? L : H;
  let { row, col } = gridCell(focus.layer, focus.head, layersAcross);
  if (key === "ArrowUp") row = Math.max(0, row - 1);
  else if (key === "ArrowDown") row = Math.min(rows - 1, row + 1);
  else if (key === "ArrowLeft") col = Math.max(0, col - 1);
  else if (key === "ArrowRight") col = Math.min(cols - 1, col + 1);
  else if (key === "Home") { row = 0; col = 0; }
  else if (key === "End") { row = rows - 1; col = cols - 1; }
  else return null;
  return layersAcross ? { layer: col, head: row } : { layer: row, head: col };
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

  const across = () => layersRunAcross(grid.L, grid.H);

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

  function render() {
    // the placeholder takes the height the grid will have, so its weights arriving move nothing below it
    const room = !grid && reserved ? gridLayout(canvasWidth(canvas), reserved.L, reserved.H).height : undefined;
    if (drawStatus(canvas, error, grid ? "" : "The heads appear when Python has loaded.", room)) return;
    const { L, H, T } = grid;
    const { layersAcross, rows, cols, thumb, height } = gridLayout(canvasWidth(canvas), L, H);
    const left = LEFT;
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
    const colName = layersAcross ? "L" : "H";
    const rowName = layersAcross ? "head" : "layer";
    for (let c = 0; c < cols; c++) {
      if (thumb >= 18 || c % 5 === 0) ctx.fillText(`${colName}${c}`, left + c * (thumb + GAP) + thumb / 2, top / 2);
    }
    ctx.textAlign = "right";
    for (let r = 0; r < rows; r++) ctx.fillText(`${rowName} ${r}`, left - 6, top + r * (thumb + GAP) + thumb / 2);
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
        const { row, col } = gridCell(layer, head, layersAcross);
        const x = left + col * (thumb + GAP);
        const y = top + row * (thumb + GAP);
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
    geometry = { left, top, thumb, gap: GAP, rows, cols, layersAcross, rects };
    canvas.dataset.heads = String(L * H);
  }

  function headAt(ev) {
    if (!geometry) return null;
    const box = canvas.getBoundingClientRect();
    const x = ev.clientX - box.left;
    const y = ev.clientY - box.top;
    return geometry.rects.find((r) => x >= r.x && x < r.x + r.size && y >= r.y && y < r.y + r.size) ?? null;
  }
  const pick = (r) => r && { layer: r.layer, head: r.head };

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
    handlers: {
      click: (ev) => { const h = pick(headAt(ev)); if (h) choose(h); },
      pointermove: (ev) => {
        const h = pick(headAt(ev));
        if (h?.layer !== hover?.layer || h?.head !== hover?.head) { hover = h; life.request(); }
      },
      pointerleave: () => { if (hover) { hover = null; life.request(); } },
      keydown: (ev) => {
        if (!grid) return;
        if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); choose({ ...focus }); return; }
        const next = moveFocus(focus, ev.key, grid.L, grid.H, across());
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
    /** Geometry in CSS pixels for tests: {left, top, thumb, rows, cols, layersAcross, rects}. */
    layout: () => { life.flush(); return geometry ? JSON.parse(JSON.stringify(geometry)) : null; },
    destroy: () => life.destroy(),
  };
}
