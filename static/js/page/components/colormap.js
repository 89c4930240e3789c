// Colour maps for the attention components: value -> [r, g, b] (0..255), plus a legend drawer.
//
// Both maps are built here from a handful of control points in OKLab/OKLCh, a colour space whose
// lightness axis L tracks perceived lightness. Keeping L strictly monotonic (sequential) or
// symmetric about the centre (diverging) is what makes a map perceptually even, and readable
// in greyscale and with colour-vision deficiencies. The control points were chosen for this
// project: a blue -> teal -> green -> yellow ramp (the viridis idea) and a blue-white-orange
// diverging map (no red-green pair). Out-of-gamut colours lose chroma, never lightness.

const LUT_SIZE = 256;

// Sequential: [t, L, C, hue in degrees]. L rises linearly, so equal steps in value look equal.
const SEQUENTIAL_POINTS = [
  [0.0, 0.27, 0.11, 300],
  [0.25, 0.44, 0.11, 262],
  [0.5, 0.61, 0.1, 196],
  [0.75, 0.77, 0.15, 143],
  [1.0, 0.93, 0.18, 104],
];

// Diverging: [v in -1..1, L, a, b] in OKLab. Lightness falls off nearly symmetrically from the
// white centre (orange gets a little more light so it reads as orange, not brown).
const DIVERGING_POINTS = [
  [-1.0, 0.52, -0.03, -0.135], // blue
  [-0.5, 0.75, -0.025, -0.075],
  [0.0, 0.975, 0.0, 0.0], // near white
  [0.5, 0.78, 0.06, 0.075],
  [1.0, 0.58, 0.105, 0.115], // orange
];

/** Convert OKLab to linear sRGB (Björn Ottosson's published matrices). */
function oklabToLinear(L, a, b) {
  const l = (L + 0.3963377774 * a + 0.2158037573 * b) ** 3;
  const m = (L - 0.1055613458 * a - 0.0638541728 * b) ** 3;
  const s = (L - 0.0894841775 * a - 1.291485548 * b) ** 3;
  return [
    4.0767416621 * l - 3.3077115913 * m + 0.2309699292 * s,
    -1.2684380046 * l + 2.6097574011 * m - 0.3413193965 * s,
    -0.0041960863 * l - 0.7034186147 * m + 1.707614701 * s,
  ];
}

function encode(c) {
  const v = c <= 0.0031308 ? 12.92 * c : 1.055 * Math.pow(c, 1 / 2.4) - 0.055;
  return Math.round(Math.min(1, Math.max(0, v)) * 255);
}

const inGamut = (rgb) => rgb.every((c) => c >= -1e-4 && c <= 1 + 1e-4);

/** OKLab -> sRGB bytes, pulling chroma towards grey (same L, same hue) until it fits. */
function oklabToRgb(L, a, b) {
  let rgb = oklabToLinear(L, a, b);
  if (!inGamut(rgb)) {
    let lo = 0;
    let hi = 1;
    for (let i = 0; i < 20; i++) {
      const k = (lo + hi) / 2;
      if (inGamut(oklabToLinear(L, a * k, b * k))) lo = k;
      else hi = k;
    }
    rgb = oklabToLinear(L, a * lo, b * lo);
  }
  return rgb.map(encode);
}

function interpolate(points, x) {
  let i = 1;
  while (i < points.length - 1 && x > points[i][0]) i++;
  const p = points[i - 1];
  const q = points[i];
  const f = Math.min(1, Math.max(0, (x - p[0]) / (q[0] - p[0])));
  return p.map((v, k) => v + (q[k] - v) * f);
}

function buildLut(colourAt) {
  const lut = new Uint8ClampedArray(LUT_SIZE * 3);
  for (let i = 0; i < LUT_SIZE; i++) lut.set(colourAt(i / (LUT_SIZE - 1)), i * 3);
  return lut;
}

/** 256 sRGB triples for 0..1 (flat Uint8ClampedArray, r,g,b,r,g,b,...). */
export const SEQUENTIAL_LUT = buildLut((t) => {
  const [, L, C, h] = interpolate(SEQUENTIAL_POINTS, t);
  const rad = (h * Math.PI) / 180;
  return oklabToRgb(L, C * Math.cos(rad), C * Math.sin(rad));
});

/** 256 sRGB triples for -1..1 (index 0 is -1, index 255 is +1). */
export const DIVERGING_LUT = buildLut((t) => {
  const [, L, a, b] = interpolate(DIVERGING_POINTS, 2 * t - 1);
  return oklabToRgb(L, a, b);
});

function pick(lut, t) {
  const i = Math.round(Math.min(1, Math.max(0, t)) * (LUT_SIZE - 1)) * 3;
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
 * opts: {x, y, width, height, scale (from makeScale), label, ticks (count), color (text), font, format}
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
  const format = opts.format ?? ((v) => (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(2)));
  const n = opts.ticks ?? (scale.kind === "diverging" ? 3 : 3);
  ctx.fillStyle = opts.color ?? "#333";
  ctx.font = opts.font ?? "11px sans-serif";
  ctx.textBaseline = "top";
  for (let i = 0; i < n; i++) {
    const t = i / (n - 1);
    const v = scale.min + (scale.max - scale.min) * t;
    ctx.textAlign = i === 0 ? "left" : i === n - 1 ? "right" : "center";
    ctx.fillText(format(Math.abs(v) < 1e-12 ? 0 : v), x + t * width, y + height + 3);
  }
  if (opts.label) {
    ctx.textAlign = "left";
    ctx.textBaseline = "middle";
    ctx.fillText(opts.label, x + width + 8, y + height / 2);
  }
}
