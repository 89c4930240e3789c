// A T × T matrix of one named array (the scores, the weights) with the tokens on both axes:
// what the scores and heatmap components share. They differ only in colour map and labels.

import { createMatrix } from "./matrix.js";
import { checkTokens, normalizeInput } from "./validate.js";

/**
 * createTokenMatrix(canvas, key, settings, cellLabel) -> the matrix renderer, whose update()
 * takes a payload, {[key], tokens}, or the array itself. cellLabel(r, c, value, labels) -> text.
 */
export function createTokenMatrix(canvas, key, settings, cellLabel) {
  const m = createMatrix(canvas, settings);
  return {
    ...m,
    update(input) {
      const { arrays, tokens } = normalizeInput(input, key);
      const T = Array.isArray(arrays[key]?.shape) ? arrays[key].shape[0] : 0;
      const labels = checkTokens(tokens ?? settings.tokens, T).tokens;
      m.update({ rowLabels: labels, panels: [{ matrix: arrays[key], colLabels: labels, cellLabel }] });
    },
  };
}
