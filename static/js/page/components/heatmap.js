// Heatmap of the attention weights: row i is softmax(scores[i]) as computed in Python, so every
// row sums to 1. Sequential colour map on the fixed range 0..1, so pictures compare across runs.
// Keys a mask hid (update's hidden) are grey, as in the scores, not a weight of 0.

import { fmt, shortLabel } from "./canvas.js";
import { createTokenMatrix } from "./tokenmatrix.js";

/** What the heatmap draws, and the rules its input is checked by. */
export const HEATMAP_INPUT = Object.freeze({ key: "weights", name: "attention weights", square: true });

/**
 * createHeatmap(canvas, {tokens, onSelect, onDescribe, pool}) -> {update, select, setReveal, destroy, ...}
 * update(payload | {weights, tokens, hidden} | weightsArray)
 */
export function createHeatmap(canvas, options = {}) {
  return createTokenMatrix(canvas, HEATMAP_INPUT, {
    rowAxis: "query", colAxis: "key", map: "sequential", range: [0, 1],
    pool: options.pool ?? "max", legendLabel: "weight", maskedText: "",
    maskedNote: "Grey cells are masked: their scores are −∞, so their weight is 0.", ...options,
  }, (r, c, v, rl) => `${shortLabel(rl[r], 16)} → ${shortLabel(rl[c], 16)}\n` +
    (v === -Infinity ? "masked: weight 0" : `weight ${fmt(v, 3)} (${Math.round(v * 100)}%)`));
}
