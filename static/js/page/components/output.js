// The output of attention, out = weights @ V (T×D, computed in Python), beside the value rows V
// it mixes. The bars left of V show the selected query row's weights: how much of each value row
// goes into that query's output row.

import { fmt, shortLabel } from "./canvas.js";
import { createMatrix } from "./matrix.js";
import { checkArray, checkInput, checkTokens, normalizeInput } from "./validate.js";

/** What the output picture draws, and the rules its input is checked by (V and weights are extras). */
export const OUTPUT_INPUT = Object.freeze({ key: "out", name: "attention output" });

/**
 * createOutput(canvas, {tokens, onSelect, onDescribe}) -> {update, select, setReveal, destroy, ...}
 * update(payload | {out, V, weights, tokens}). V and weights are optional: without them only
 * the output is drawn. One symmetric colour range covers V and out so their colours compare.
 */
export function createOutput(canvas, options = {}) {
  let weights = null; // checked T×T weights, for the bars beside V
  let labels = [];
  let hasV = false;
  let selectedRow = null;
  const m = createMatrix(canvas, {
    name: OUTPUT_INPUT.name, rowAxis: "token", colAxis: "dim", map: "diverging",
    pool: options.pool ?? "mean", legendLabel: "value", ...options,
  });

  const rowWeights = () => (weights && selectedRow !== null
    ? weights.data.subarray(selectedRow * weights.cols, (selectedRow + 1) * weights.cols) : null);

  function refreshGutter() {
    if (!hasV) return;
    const w = rowWeights();
    const token = labels[selectedRow];
    // Shorter forms for narrow cells (a phone): matrix.js draws the longest that fits beside V's labels.
    m.setGutter(0, w, w ? [`w[${shortLabel(token, 6)}]`, `w[${shortLabel(token, 3)}]`, "w"] : []);
  }

  function setData(input) {
    const { checked, arrays, tokens } = checkInput(input, OUTPUT_INPUT);
    const out = checked.ok ? checked : arrays.out; // a bad one goes on as it came: the renderer shows its message
    const T = checked.ok ? checked.rows : 0;
    const D = checked.ok ? checked.cols : 0;
    labels = checkTokens(tokens ?? options.tokens, T).tokens;
    // V and weights are extras: a bad one is left out rather than hiding the output.
    const V = arrays.V && checkArray(arrays.V, { rows: T }).ok && arrays.V.shape[1] === D ? arrays.V : null;
    const w = arrays.weights ? checkArray(arrays.weights, { square: true, rows: T }) : null;
    weights = w && w.ok ? w : null;
    hasV = Boolean(V);
    if (selectedRow !== null && selectedRow >= T) selectedRow = null;

    let maxAbs = 1e-9;
    for (const a of [out, V]) {
      const data = a?.data;
      if (!data || typeof data.length !== "number") continue;
      for (let i = 0; i < data.length; i++) { const v = Math.abs(data[i]); if (v > maxAbs && Number.isFinite(v)) maxAbs = v; }
    }
    const dims = Array.from({ length: D || 0 }, (_, i) => String(i));
    const panels = [];
    if (V) {
      panels.push({
        matrix: V, title: "V", colLabels: dims, range: [-maxAbs, maxAbs], revealable: false, gutter: null,
        cellLabel: (r, c, v, rl) => {
          const g = rowWeights();
          return `V[${shortLabel(rl[r], 16)}, ${c}] = ${fmt(v, 3)}` +
            (g ? `\nweight from ${shortLabel(rl[selectedRow], 12)}: ${fmt(g[r], 3)}` : "");
        },
      });
    }
    panels.push({
      matrix: out, title: "out", colLabels: dims, range: [-maxAbs, maxAbs],
      cellLabel: (r, c, v, rl) => `out[${shortLabel(rl[r], 16)}, ${c}] = ${fmt(v, 3)}`,
    });
    m.update({ rowLabels: labels, panels });
    refreshGutter();
    m.select(selectedRow);
  }

  return {
    ...m,
    update(input) {
      try {
        setData(input);
      } catch (err) {
        // Anything unexpected: let the renderer report the output array's own problem.
        hasV = false;
        m.update({ panels: [{ matrix: normalizeInput(input, "out").arrays.out }] });
      }
    },
    select(row) {
      selectedRow = Number.isInteger(row) ? row : null;
      refreshGutter(); // the bars beside V follow the selected row
      m.select(selectedRow);
    },
  };
}
