// Heatmap of the attention weights: row i is softmax(scores[i]) as computed in Python, so every
// row sums to 1. Sequential colour map on the fixed range 0..1, so pictures compare across runs.

import { fmt, shortLabel } from "./canvas.js";
import { createTokenMatrix } from "./tokenmatrix.js";

/** What the heatmap draws, and the rules its input is checked by. */
export const HEATMAP_INPUT = Object.freeze({ key: "weights", name: "attention weights", square: true });

/**
 * createHeatmap(canvas, {tokens, onSelect, onDescribe, pool}) -> {update, select, setReveal, destroy, ...}
 * update(payload | {weights, tokens} | weightsArray)
 */
export function createHeatmap(canvas, options = {}) {
  return createTokenMatrix(canvas, HEATMAP_INPUT, {
    rowAxis: "query", colAxis: "key", map: "sequential", range: [0, 1],
    pool: options.pool ?? "max", legendLabel: "weight", ...options,
  }, (r, c, v, rl) => `${shortLabel(rl[r], 16)} → ${shortLabel(rl[c], 16)}\nweight ${fmt(v, 3)} (${Math.round(v * 100)}%)`);
}
