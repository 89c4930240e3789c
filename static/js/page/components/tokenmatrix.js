// A T × T matrix of one named array (the scores, the weights) with the tokens on both axes:
// what the scores and heatmap components share. They differ only in colour map and labels.

import { createMatrix } from "./matrix.js";
import { checkInput, checkTokens } from "./validate.js";

/**
 * createTokenMatrix(canvas, input, settings, cellLabel) -> the matrix renderer, whose update()
 * takes a payload, {[input.key], tokens, hidden}, or the array itself. input: the component's
 * {key, name, square, allowNegInf} (see validate.js checkInput). cellLabel(r, c, value, labels) -> text.
 * hidden: the cells a mask hid (validate.js hiddenCells), drawn masked.
 */
export function createTokenMatrix(canvas, input, settings, cellLabel) {
  const m = createMatrix(canvas, { ...settings, name: input.name, square: input.square, allowNegInf: input.allowNegInf });
  return {
    ...m,
    update(given) {
      const { checked, arrays, tokens } = checkInput(given, input);
      const labels = checkTokens(tokens ?? settings.tokens, checked.ok ? checked.rows : 0).tokens;
      // A bad array goes on as it came: the renderer shows its message.
      m.update({ rowLabels: labels, panels: [{ matrix: checked.ok ? checked : arrays[input.key], colLabels: labels, cellLabel,
        hidden: given?.hidden ?? null }] });
    },
  };
}
