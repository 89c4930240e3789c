// Colour maps for the attention components: value -> [r, g, b] (0..255), plus a legend drawer.
//
// The two maps are lessonpy.maths.colormaps' (py/lessonpy/maths/colormaps.py says how they were chosen), in the page's
// copy the build writes from Python (shared/colormaps.js): the notebook draws with the same colours.
// Sequential is matplotlib's viridis; diverging runs blue, white at 0, orange, symmetric in lightness.
import { COLORMAP_HEX } from "../../shared/colormaps.js";
import { chooseTicks } from "./ticks.js";

const LUT_SIZE = 256;

/** Pixels a tick mark reaches below the bar. */
const TICK_MARK = 3;

/** A table's hex string as a flat Uint8ClampedArray of sRGB triples (r,g,b,r,g,b,...). */
function decode(hex) {
  const lut = new Uint8ClampedArray(LUT_SIZE * 3);
  for (let i = 0; i < lut.length; i++) lut[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return lut;
}

/** 256 sRGB triples for 0..1 (flat Uint8ClampedArray, r,g,b,r,g,b,...): viridis. */
export const SEQUENTIAL_LUT = decode(COLORMAP_HEX.sequential);

/** 256 sRGB triples for -1..1 (index 0 is -1, index 255 is +1). */
export const DIVERGING_LUT = decode(COLORMAP_HEX.diverging);

/** Where `t` in 0..1 (clamped) is in a LUT's flat array: indexed as matplotlib's ListedColormap does
 * (floor(t * 256), 1 in the top colour), so the page and the notebook give a value the same colour. */
export function lutIndex(t) {
  return Math.min(LUT_SIZE - 1, Math.floor(Math.min(1, Math.max(0, t)) * LUT_SIZE)) * 3;
}

function pick(lut, t) {
  const i = lutIndex(t);
  return [lut[i], lut[i + 1], lut[i + 2]];
}

/** Sequential map: value in [min, max] (default 0..1) -> [r, g, b]. */
export function sequential(value, min = 0, max = 1) {
  const span = max - min || 1;
  return pick(SEQUENTIAL_LUT, (value - min) / span);
}

/** Diverging map centred on 0 with the symmetric range [-maxAbs, maxAbs] -> [r, g, b]. */
export function diverging(value, maxAbs = 1) {
  const m = maxAbs > 0 ? maxAbs : 1;
  return pick(DIVERGING_LUT, (value / m + 1) / 2);
}

/** A colour map as one object: lut, domain and a function, as the renderers need it. */
export function makeScale(kind, min, max) {
  if (kind === "diverging") {
    const m = Math.max(Math.abs(min), Math.abs(max)) || 1;
    return { kind, lut: DIVERGING_LUT, min: -m, max: m, color: (v) => diverging(v, m) };
  }
  const lo = Number.isFinite(min) ? min : 0;
  const hi = Number.isFinite(max) && max > lo ? max : lo + 1;
  return { kind: "sequential", lut: SEQUENTIAL_LUT, min: lo, max: hi, color: (v) => sequential(v, lo, hi) };
}

/** Relative luminance (0..1) of an sRGB byte triple: used to pick a readable text colour. */
export function luminance([r, g, b]) {
  const lin = (c) => {
    const v = c / 255;
    return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

export const rgbCss = ([r, g, b]) => `rgb(${r}, ${g}, ${b})`;

/**
 * Draw a horizontal legend bar with tick labels into ctx (CSS-pixel coordinates).
 * opts: {x, y, width, height, scale (from makeScale), label, color (text), border, font}
 * The ticks are chooseTicks' for the bar's width in this font: round values whose labels never overlap.
 */
export function drawLegend(ctx, opts) {
  const { x, y, width, scale } = opts;
  const height = opts.height ?? 10;
  const steps = Math.max(2, Math.floor(width));
  for (let i = 0; i < steps; i++) {
    const t = i / (steps - 1);
    ctx.fillStyle = rgbCss(pick(scale.lut, t));
    ctx.fillRect(x + (i * width) / steps, y, width / steps + 0.6, height);
  }
  ctx.strokeStyle = opts.border ?? opts.color ?? "#888";
  ctx.lineWidth = 1;
  ctx.strokeRect(x + 0.5, y + 0.5, width - 1, height - 1);
  ctx.fillStyle = opts.color ?? "#333";
  ctx.font = opts.font ?? "11px sans-serif";
  ctx.textBaseline = "top";
  ctx.textAlign = "left";
  const ticks = chooseTicks(scale.min, scale.max, width, (text) => ctx.measureText(text).width);
  for (const t of ticks) {
    // A short mark under the bar says which colour a label names, now that labels sit at round values.
    ctx.fillRect(Math.min(x + width - 1, Math.round(x + t.at)), y + height, 1, TICK_MARK);
    ctx.fillText(t.text, x + t.left, y + height + TICK_MARK + 1);
  }
  if (opts.label) {
    ctx.textBaseline = "middle";
    ctx.fillText(opts.label, x + width + 8, y + height / 2);
  }
}
