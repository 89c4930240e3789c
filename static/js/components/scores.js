// The score matrix Q·Kᵀ (scaled, as Python computed it), before the softmax. Diverging colour
// map centred on 0 with a symmetric range, so the sign of a score reads at a glance; cells a
// causal mask set to -inf are drawn grey.

import { createMatrix, fmt, shortLabel } from "./matrix.js";
import { normalizeInput, checkTokens } from "./validate.js";

/**
 * createScores(canvas, {tokens, onSelect, onDescribe, range}) -> {update, select, setReveal, destroy, ...}
 * update(payload | {scores, tokens} | scoresArray). range: "auto" (±max|score|) or [-m, m].
 */
export function createScores(canvas, options = {}) {
  const m = createMatrix(canvas, {
    name: "scores", rowAxis: "query", colAxis: "key", map: "diverging", range: options.range ?? "auto",
    pool: options.pool ?? "maxabs", square: true, allowNegInf: true, legendLabel: "score", ...options,
  });
  return {
    ...m,
    update(input) {
      const { arrays, tokens } = normalizeInput(input, "scores");
      const T = Array.isArray(arrays.scores?.shape) ? arrays.scores.shape[0] : 0;
      const labels = checkTokens(tokens ?? options.tokens, T).tokens;
      m.update({
        rowLabels: labels,
        panels: [{
          matrix: arrays.scores, colLabels: labels,
          cellLabel: (r, c, v, rl) => `q(${shortLabel(rl[r], 16)}) · k(${shortLabel(rl[c], 16)})\nscore ${fmt(v, 3)}`,
        }],
      });
    },
  };
}
