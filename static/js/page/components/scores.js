// The score matrix Q·Kᵀ (scaled, as Python computed it), before the softmax. Diverging colour
// map centred on 0 with a symmetric range, so the sign of a score reads at a glance; cells a
// causal mask set to -inf are drawn grey.

import { fmt, shortLabel } from "./canvas.js";
import { createTokenMatrix } from "./tokenmatrix.js";

/** What the scores picture draws, and the rules its input is checked by (a causal mask leaves -inf). */
export const SCORES_INPUT = Object.freeze({ key: "scores", name: "scores", square: true, allowNegInf: true });

/**
 * createScores(canvas, {tokens, onSelect, onDescribe, range}) -> {update, select, setReveal, destroy, ...}
 * update(payload | {scores, tokens} | scoresArray). range: "auto" (±max|score|) or [-m, m].
 */
export function createScores(canvas, options = {}) {
  return createTokenMatrix(canvas, SCORES_INPUT, {
    rowAxis: "query", colAxis: "key", map: "diverging", range: options.range ?? "auto",
    pool: options.pool ?? "maxabs", legendLabel: "score", ...options,
  }, (r, c, v, rl) => `q(${shortLabel(rl[r], 16)}) · k(${shortLabel(rl[c], 16)})\nscore ${fmt(v, 3)}`);
}
