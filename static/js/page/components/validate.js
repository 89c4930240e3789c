// Input checking for the components. Arrays come from Python as {shape, dtype, data}; anything
// can go wrong on the way (a reader's own code, an old payload, a bug), so what a component is
// given passes through here (once) and a problem becomes a plain message instead of a throw.
// Pure functions, no DOM: tests/js/validate.test.mjs runs them under Node.

import { LIMITS } from "../../shared/limits.js";

// The largest arrays Python sends (lessonpy.runtime.limits, shared): rows are positions, columns are
// positions or features. Past these a picture stops being useful and the page would slow down.
const { MAX_T, MAX_D } = LIMITS;

const TYPED = [
  Float32Array, Float64Array, Int8Array, Uint8Array, Uint8ClampedArray,
  Int16Array, Uint16Array, Int32Array, Uint32Array,
];

function describe(x) {
  if (x === null) return "null";
  if (Array.isArray(x)) return Array.isArray(x[0]) ? "a nested list" : "a plain list";
  if (typeof x === "object") return x.constructor?.name ?? "an object";
  return typeof x;
}

/** Turn data into a numeric typed array, or return a message string. */
function toTypedArray(data, dtype) {
  if (data === undefined || data === null) return "has no data";
  if (TYPED.some((T) => data instanceof T)) return data;
  if (typeof BigInt64Array !== "undefined" && (data instanceof BigInt64Array || data instanceof BigUint64Array)) {
    return Float64Array.from(data, Number); // int64 from NumPy
  }
  if (data instanceof ArrayBuffer) {
    const bytes = dtype === "float64" ? 8 : 4;
    if (data.byteLength % bytes) return `has ${data.byteLength} bytes, not a whole number of ${dtype ?? "float32"} values`;
    return dtype === "float64" ? new Float64Array(data) : new Float32Array(data);
  }
  if (Array.isArray(data)) {
    // A flat list of numbers is usable; a nested list means the sender forgot to ravel().
    if (data.every((v) => typeof v === "number")) return Float64Array.from(data);
    return `data is ${describe(data)}, expected a flat typed array (ravel() the array in Python)`;
  }
  return `data is ${describe(data)}, expected a typed array such as Float32Array`;
}

/**
 * An array that passed checkArray: {ok: true, rows, cols, data (a numeric typed array), masked,
 * min, max} (min/max over finite values), and still {shape, dtype, data} like what it came from.
 * The linked view checks each array of a payload once and hands these to its components, which
 * take them as they are instead of scanning the same numbers again.
 */
class CheckedArray {
  constructor(fields) { Object.assign(this, fields); }
  get shape() { return [this.rows, this.cols]; }
  get dtype() { return this.data instanceof Float64Array ? "float64" : "float32"; }
}

/**
 * Check one array: what the page must know to draw it safely (a 2-D shape within the limits,
 * numeric data of that length, finite values). Python already told the reader what is wrong
 * with their arrays (lessonpy.maths.show); this keeps a bad or old payload from breaking a picture.
 * opts: {name, square, rows (expected row count), allowNegInf}.
 * Returns a CheckedArray or {ok: false, message}. An array checked before is not scanned again.
 */
export function checkArray(arr, opts = {}) {
  if (arr instanceof CheckedArray) {
    const reuse = (!opts.square || arr.rows === arr.cols) && (opts.rows === undefined || arr.rows === opts.rows) &&
      (opts.allowNegInf || !arr.masked);
    if (reuse) return arr;
    return checkArrayNow({ shape: arr.shape, dtype: arr.dtype, data: arr.data }, opts); // for its message
  }
  return checkArrayNow(arr, opts);
}

function checkArrayNow(arr, opts) {
  const name = opts.name ?? "array";
  const fail = (why) => ({ ok: false, message: `Cannot draw ${name}: ${why}.` });
  if (arr === undefined || arr === null) return fail("it is missing");
  if (typeof arr !== "object" || Array.isArray(arr) || ArrayBuffer.isView(arr)) {
    return fail(`expected {shape, dtype, data}, got ${describe(arr)}`);
  }
  const shape = arr.shape;
  if (!Array.isArray(shape) && !ArrayBuffer.isView(shape)) return fail("it has no shape");
  const dims = Array.from(shape, Number);
  if (dims.length !== 2) return fail(`expected a 2-D array, got shape [${dims.join(", ")}]`);
  if (!dims.every((d) => Number.isInteger(d) && d >= 0)) return fail(`shape [${dims.join(", ")}] is not a list of sizes`);
  const [rows, cols] = dims;
  if (rows === 0 || cols === 0) return fail(`it is empty (shape [${rows}, ${cols}]), so there is nothing to draw`);
  if (opts.square && rows !== cols) return fail(`expected a square T×T matrix, got shape [${rows}, ${cols}]`);
  if (opts.rows !== undefined && rows !== opts.rows) return fail(`expected ${opts.rows} rows (one per token), got ${rows}`);
  if (rows > MAX_T) return fail(`shape [${rows}, ${cols}] has more than ${MAX_T} rows`);
  if (cols > MAX_D) return fail(`shape [${rows}, ${cols}] has more than ${MAX_D} columns`);
  const data = toTypedArray(arr.data, arr.dtype);
  if (typeof data === "string") return fail(data);
  if (data.length !== rows * cols) {
    return fail(`shape [${rows}, ${cols}] needs ${rows * cols} values but data has ${data.length}`);
  }
  let bad = 0;
  let first = -1;
  let masked = 0;
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < data.length; i++) {
    const v = data[i];
    if (v - v === 0) { // finite (and fast)
      if (v < min) min = v;
      if (v > max) max = v;
      continue;
    }
    if (opts.allowNegInf && v === -Infinity) { masked++; continue; }
    if (first < 0) first = i;
    bad++;
  }
  if (bad) {
    const v = data[first];
    const what = Number.isNaN(v) ? "NaN" : v > 0 ? "+Infinity" : "-Infinity";
    const r = Math.floor(first / cols);
    const c = first % cols;
    return fail(`it holds ${bad} value${bad > 1 ? "s" : ""} that ${bad > 1 ? "are" : "is"} not a finite number (first: ${what} at row ${r}, column ${c})`);
  }
  if (masked === data.length) return fail("every value is masked (-Infinity)");
  return new CheckedArray({ ok: true, rows, cols, data, masked, min, max });
}

/** Token labels for T rows: the given strings, or positions when they are missing or do not fit. */
export function checkTokens(tokens, T) {
  if (Array.isArray(tokens) && tokens.length === T) {
    return { tokens: tokens.map((t, i) => (t === null || t === undefined ? String(i) : String(t))), note: "" };
  }
  const fallback = Array.from({ length: T }, (_, i) => String(i));
  if (tokens === undefined || tokens === null) return { tokens: fallback, note: "" };
  const n = Array.isArray(tokens) ? tokens.length : 0;
  return { tokens: fallback, note: `The ${n} token labels do not match the ${T} rows; showing positions instead.` };
}

const ARRAY_RULES = {
  weights: { name: "the attention weights", square: true },
  scores: { name: "the scores", square: true, allowNegInf: true }, // a causal mask leaves -inf
  Q: { name: "Q" }, K: { name: "K" }, V: { name: "V" }, out: { name: "the output" }, x: { name: "x" },
};

/**
 * Check a show_attention payload. Never throws. Returns
 * {ok, message, T, tokens, notes[], arrays: {key: checked}, problems: {key: message}, title, stats, hidden, qkDivisor}.
 * ok is false only when the weights (the one required array) are unusable; hidden: see hiddenCells. qkDivisor:
 * what Python says Q·Kᵀ was divided by to give the scores (a positive number), else null.
 */
export function checkPayload(payload) {
  const result = { ok: false, message: "", T: 0, tokens: [], notes: [], arrays: {}, problems: {}, title: "", stats: null, hidden: null, qkDivisor: null };
  if (!payload || typeof payload !== "object" || Array.isArray(payload)) {
    result.message = `Cannot draw attention: expected a payload object, got ${describe(payload)}.`;
    return result;
  }
  const arrays = payload.arrays && typeof payload.arrays === "object" ? payload.arrays : {};
  result.title = typeof payload.title === "string" ? payload.title : "";
  result.stats = payload.stats && typeof payload.stats === "object" ? payload.stats : null;
  if (typeof payload.error === "string" && payload.error) {
    // Python refused the arrays (show_attention's ShowError): show its message, draw nothing.
    result.message = payload.error;
    return result;
  }
  const w = checkArray(arrays.weights, ARRAY_RULES.weights);
  if (!w.ok) {
    result.message = w.message;
    return result;
  }
  result.ok = true;
  result.T = w.rows;
  result.arrays.weights = w;
  for (const key of ["scores", "Q", "K", "V", "out", "x"]) {
    if (arrays[key] === undefined || arrays[key] === null) continue;
    const checked = checkArray(arrays[key], { ...ARRAY_RULES[key], rows: w.rows });
    if (checked.ok) result.arrays[key] = checked;
    else result.problems[key] = checked.message;
  }
  const d = payload.qk_divisor;
  if (typeof d === "number" && d > 0 && Number.isFinite(d) && result.arrays.Q && result.arrays.K && result.arrays.scores) {
    result.qkDivisor = d;
  }
  const t = checkTokens(payload.tokens, w.rows);
  result.tokens = t.tokens;
  if (t.note) result.notes.push(t.note);
  result.hidden = hiddenCells(w.rows, payload.causal === true, result.arrays.scores);
  return result;
}

/**
 * The cells a mask hides (key j from query i), so every picture of the pattern greys the same ones: where the
 * scores are -inf, and for a causal head (show_attention's `causal`, a causal model's weights) every key after
 * its query. A Uint8Array(T * T) of 0 and 1, row-major, or null when nothing is hidden.
 */
export function hiddenCells(T, causal, scores) {
  // (where the mask hid a cell, a weight is 0: isMaskedCell greys only those, so a wrong mask still shows)
  const masked = Boolean(scores?.ok && scores.masked > 0 && scores.rows === T);
  if (!causal && !masked) return null;
  const hidden = new Uint8Array(T * T);
  for (let i = 0; i < T; i++) {
    for (let j = 0; j < T; j++) {
      const k = i * T + j;
      hidden[k] = (causal && j > i) || (masked && scores.data[k] === -Infinity) ? 1 : 0;
    }
  }
  return hidden;
}

/**
 * What a component makes of its update() argument: {checked, arrays, tokens}, where checked is
 * the array at spec.key checked by spec's rules (a CheckedArray or {ok: false, message}).
 * spec: {key, name, square, allowNegInf}, exported by each component (tests/js run them).
 */
export function checkInput(input, spec) {
  const { arrays, tokens } = normalizeInput(input, spec.key);
  return { checked: checkArray(arrays[spec.key], spec), arrays, tokens };
}

/**
 * Accept what a component's update() may be handed: a whole show_attention payload
 * ({arrays, tokens}), an arrays object ({weights, V, ...}, optionally with tokens), or one array
 * ({shape, data}) that stands for `key`. Returns {arrays, tokens} and never throws.
 */
export function normalizeInput(input, key) {
  if (!input || typeof input !== "object") return { arrays: {}, tokens: undefined };
  if (input.arrays && typeof input.arrays === "object") return { arrays: input.arrays, tokens: input.tokens };
  if ("shape" in input || "data" in input) return { arrays: { [key]: input }, tokens: undefined };
  return { arrays: input, tokens: input.tokens };
}

/**
 * Whether cell k of `data` (a pattern's weights) is drawn as masked: the mask hid it (hiddenCells) and its weight
 * is 0, as a mask makes it. A hidden cell with weight is drawn in colour, so a mask applied wrongly shows.
 */
export function isMaskedCell(hidden, data, k) {
  return Boolean(hidden?.[k]) && data[k] === 0;
}
