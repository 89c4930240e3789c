// Heatmap of the attention weights: row i is softmax(scores[i]) as computed in Python, so every
// row sums to 1. Sequential colour map on the fixed range 0..1, so pictures compare across runs.

import { createMatrix, fmt, shortLabel } from "./matrix.js";
import { normalizeInput, checkTokens } from "./validate.js";

/**
 * createHeatmap(canvas, {tokens, onSelect, onDescribe, pool}) -> {update, select, setReveal, destroy, ...}
 * update(payload | {weights, tokens} | weightsArray)
 */
export function createHeatmap(canvas, options = {}) {
  const m = createMatrix(canvas, {
    name: "attention weights", rowAxis: "query", colAxis: "key", map: "sequential", range: [0, 1],
    pool: options.pool ?? "max", square: true, legendLabel: "weight", ...options,
  });
  return {
    ...m,
    update(input) {
      const { arrays, tokens } = normalizeInput(input, "weights");
      const T = Array.isArray(arrays.weights?.shape) ? arrays.weights.shape[0] : 0;
      const labels = checkTokens(tokens ?? options.tokens, T).tokens;
      m.update({
        rowLabels: labels,
        panels: [{
          matrix: arrays.weights, colLabels: labels,
          cellLabel: (r, c, v, rl) => `${shortLabel(rl[r], 16)} → ${shortLabel(rl[c], 16)}\nweight ${fmt(v, 3)} (${Math.round(v * 100)}%)`,
        }],
      });
    },
  };
}
