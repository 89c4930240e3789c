// The soft dictionary lookup's pure parts: checking what lessonpy.maths.lookup.show_lookup sends, the
// temperature grid's nearest step, the plane's scale, the dots' sizes, the keys' keyboard order and
// the sentences that describe it. No DOM: tests/js/lookup.test.mjs runs them under Node.
//
// The payload (lessonpy.maths.lookup.build_lookup_payload): arrays keys (N, 2), query (2,), values (N,),
// scores (N,) = keys @ query, temperatures (n,) rising, weights (n, N) = softmax(scores / τ) per τ,
// answers (n,) = weights @ values, jacobian_norm (n,) (optional); stats {best, hard_answer, plain_average}.

import { LIMITS } from "../../shared/limits.js";
import { fmt } from "./canvas.js";
import { checkArray } from "./validate.js";

const [, MAX_KEYS] = LIMITS.widgets["lookup-view"].keys;
/** How far a row of weights may stray from summing to 1 (float32 and rounding), as lessonpy.maths.show allows. */
const ROW_SUM_TOL = 1e-3;

/** A 1-D array of `length` finite numbers (checkArray's checks, on a one-row view of it). */
function checkVector(arr, name, length) {
  const shape = arr?.shape;
  if (arr && Array.isArray(shape) && shape.length !== 1) {
    return { ok: false, message: `Cannot draw ${name}: expected a 1-D array, got shape [${shape.join(", ")}].` };
  }
  const checked = checkArray(arr && { ...arr, shape: Array.isArray(shape) ? [1, shape[0]] : shape }, { name });
  if (!checked.ok) return checked;
  if (length !== undefined && checked.cols !== length) {
    return { ok: false, message: `Cannot draw ${name}: expected ${length} numbers, got ${checked.cols}.` };
  }
  return checked;
}

/**
 * Check a show_lookup payload; never throws. Returns {ok: false, message} or
 * {ok: true, N, n, keys, query, values, scores, temperatures, weights, answers, jacobian (or null),
 *  title, stats}, the arrays as flat typed arrays (keys and weights row-major).
 */
export function checkLookup(payload) {
  const fail = (message) => ({ ok: false, message });
  if (!payload || typeof payload !== "object" || Array.isArray(payload)) return fail("Cannot draw the lookup: expected a payload object.");
  if (typeof payload.error === "string" && payload.error) return fail(payload.error); // show_lookup's refusal
  const arrays = payload.arrays && typeof payload.arrays === "object" ? payload.arrays : {};
  const keys = checkArray(arrays.keys, { name: "the keys" });
  if (!keys.ok) return keys;
  if (keys.cols !== 2) return fail(`Cannot draw the keys: expected 2-D points, shape [N, 2], got [${keys.rows}, ${keys.cols}].`);
  const N = keys.rows;
  if (N > MAX_KEYS) return fail(`Cannot draw the keys: ${N} keys is more than this picture draws (${MAX_KEYS}).`);
  const temperatures = checkVector(arrays.temperatures, "the temperatures");
  if (!temperatures.ok) return temperatures;
  const n = temperatures.cols;
  const t = temperatures.data;
  for (let i = 0; i < n; i++) {
    if (!(t[i] > 0) || (i > 0 && !(t[i] > t[i - 1]))) return fail("Cannot draw the lookup: the temperatures must be positive and rising.");
  }
  const vectors = {};
  for (const [key, name, length] of [["query", "the query", 2], ["values", "the values", N], ["scores", "the scores", N], ["answers", "the answers", n]]) {
    const checked = checkVector(arrays[key], name, length);
    if (!checked.ok) return checked;
    vectors[key] = checked.data;
  }
  let jacobian = null;
  if (arrays.jacobian_norm !== undefined && arrays.jacobian_norm !== null) {
    const checked = checkVector(arrays.jacobian_norm, "the Jacobian's size", n);
    if (!checked.ok) return checked;
    jacobian = checked.data;
  }
  const weights = checkArray(arrays.weights, { name: "the weights", rows: n });
  if (!weights.ok) return weights;
  if (weights.cols !== N) return fail(`Cannot draw the weights: expected one column per key (${N}), got ${weights.cols}.`);
  if (weights.min < 0) return fail("Cannot draw the weights: a weight is negative.");
  for (let i = 0; i < n; i++) {
    let sum = 0;
    for (let j = 0; j < N; j++) sum += weights.data[i * N + j];
    if (Math.abs(sum - 1) > ROW_SUM_TOL) return fail(`Cannot draw the weights: the row of temperature ${fmt(t[i], 4)} sums to ${fmt(sum)}, not 1.`);
  }
  const stats = payload.stats && typeof payload.stats === "object" ? payload.stats : {};
  return {
    ok: true, N, n, keys: keys.data, temperatures: t, weights: weights.data, jacobian, stats,
    ...vectors, title: typeof payload.title === "string" ? payload.title : "",
  };
}

/** The grid step whose temperature is nearest τ on the log scale the slider moves along (τ not positive: 1). */
export function nearestStep(temperatures, tau) {
  const target = Math.log(tau > 0 && Number.isFinite(tau) ? tau : 1);
  let best = 0;
  for (let i = 1; i < temperatures.length; i++) {
    if (Math.abs(Math.log(temperatures[i]) - target) < Math.abs(Math.log(temperatures[best]) - target)) best = i;
  }
  return best;
}

/**
 * The plane's map to the canvas, with one scale on both axes (angles and lengths as they are, since
 * the score q·k is geometry): every point, and the origin, fits in the box {left, top, width, height}.
 * Returns {scale, toX(x), toY(y)} (y up).
 */
export function planeFrame(points, box) {
  let [x0, x1, y0, y1] = [0, 0, 0, 0]; // the origin is always in the picture: the query's arrow starts there
  for (const [x, y] of points) {
    x0 = Math.min(x0, x); x1 = Math.max(x1, x);
    y0 = Math.min(y0, y); y1 = Math.max(y1, y);
  }
  const spanX = Math.max(x1 - x0, 1e-9);
  const spanY = Math.max(y1 - y0, 1e-9);
  const both = Math.max(spanX, spanY); // all points on a line (or at the origin): no infinite zoom
  const scale = Math.min(box.width / Math.max(spanX, both / 4), box.height / Math.max(spanY, both / 4));
  const cx = box.left + box.width / 2 - ((x0 + x1) / 2) * scale;
  const cy = box.top + box.height / 2 + ((y0 + y1) / 2) * scale;
  return { scale, toX: (x) => cx + x * scale, toY: (y) => cy - y * scale };
}

/** The step between axis ticks: 1, 2 or 5 times a power of ten, at least minPx apart at pxPerUnit. */
export function niceStep(pxPerUnit, minPx) {
  const raw = minPx / pxPerUnit;
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw * (1 - 1e-9));
}

/** How many decimals a tick at a multiple of `step` (niceStep's) needs: 0.2 -> 1, 0.05 -> 2, 5 -> 0. */
export const stepDecimals = (step) => Math.max(0, -Math.floor(Math.log10(step) + 1e-9));

/** A key's dot radius for weight w: its area is proportional to w, a whole weight of 1 fills rMax. */
export const dotRadius = (w, rMax) => rMax * Math.sqrt(Math.min(1, Math.max(0, w)));

/** A number with three significant digits, for temperatures and spreads (0.0625, 53.8, 4). */
export const sig = (v) => String(Number(v.toPrecision(3))).replace("-", "−");

/** A value as the reader wrote it where it is whole (10, not 10.00), else with two decimals. */
export const valueText = (v) => (Number.isInteger(v) ? String(v).replace("-", "−") : fmt(v, 2));

/** "τ = 0.0625 (spread 16)": the lesson calls 1/τ the spread of the scores. */
export const temperatureText = (tau) => `τ = ${sig(tau)} (spread ${sig(1 / tau)})`;

/** The weight of key j at grid step i. */
export const weightAt = (d, i, j) => d.weights[i * d.N + j];

/** "key 2 at (0.70, 0.70): score q·k 0.840, weight 0.370, value 30". */
export function describeKey(d, i, j) {
  const x = d.keys[2 * j];
  const y = d.keys[2 * j + 1];
  return `key ${j} at (${fmt(x, 2)}, ${fmt(y, 2)}): score q·k ${fmt(d.scores[j], 3)}, weight ${fmt(weightAt(d, i, j), 3)}, value ${valueText(d.values[j])}`;
}

/** One sentence for the picture at step i: the largest weights and the answer. */
export function describeLookup(d, i) {
  const order = Array.from({ length: d.N }, (_, j) => j).sort((a, b) => weightAt(d, i, b) - weightAt(d, i, a));
  const pct = (j) => `key ${j} ${Math.round(weightAt(d, i, j) * 100)}%`;
  const rest = d.N > 3 ? `, the other ${d.N - 3} less` : "";
  return `At ${temperatureText(d.temperatures[i])} the weights are ${order.slice(0, 3).map(pct).join(", ")}${rest}; ` +
    `the answer, weights @ values, is ${fmt(d.answers[i], 2)}.`;
}
