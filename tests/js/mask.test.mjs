// Which cells the attention view greys: the cells a mask hid (validate.js hiddenCells: the scores' -inf, and every
// key after its query for a causal head) and, in a weights heatmap, those of them whose weight is 0 (matrix.js
// maskHidden), so a weight the mask should have zeroed stays in colour. tests/browser/test_mask_browser.py draws them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { checkArray, checkPayload, hiddenCells } from "../../static/js/page/components/validate.js";
import { maskHidden } from "../../static/js/page/components/matrix.js";

const matrix = (rows) => ({ shape: [rows.length, rows[0].length], dtype: "float32", data: Float32Array.from(rows.flat()) });
const WEIGHTS = [[1, 0, 0], [0.5, 0.5, 0], [0.2, 0.3, 0.5]];
const FUTURE = [0, 1, 1, 0, 0, 1, 0, 0, 0];

test("a causal head hides every key after its query, with or without scores", () => {
  assert.deepEqual([...hiddenCells(3, true, null)], FUTURE);
  const { hidden } = checkPayload({ arrays: { weights: matrix(WEIGHTS) }, causal: true });
  assert.deepEqual([...hidden], FUTURE);
});

test("the scores' -inf are hidden cells; nothing is hidden without a mask", () => {
  const scores = checkArray(matrix([[0, -Infinity, 0], [0, 0, 0], [0, 0, 0]]), { allowNegInf: true });
  assert.deepEqual([...hiddenCells(3, false, scores)], [0, 1, 0, 0, 0, 0, 0, 0, 0]);
  assert.equal(hiddenCells(3, false, checkArray(matrix(WEIGHTS), {})), null);
  assert.equal(checkPayload({ arrays: { weights: matrix(WEIGHTS) } }).hidden, null);
  assert.equal(checkPayload({ arrays: { weights: matrix(WEIGHTS) }, causal: "yes" }).hidden, null); // true only
});

test("a hidden weight of 0 is drawn masked; a hidden weight that is not 0 stays a weight", () => {
  const leaky = [[1, 0, 0], [0.4, 0.5, 0.1], [0.2, 0.3, 0.5]]; // query 1 looks ahead: the picture must show it
  const { data, masked } = maskHidden(checkArray(matrix(leaky), {}), Uint8Array.from(FUTURE));
  assert.deepEqual([...data].map((v) => (v === -Infinity ? "masked" : v)),
    [1, "masked", "masked", 0.4, 0.5, 0.1, 0.2, 0.3, 0.5].map((v) => (typeof v === "number" ? Math.fround(v) : v)));
  assert.equal(masked, 2);
  const plain = checkArray(matrix(WEIGHTS), {});
  assert.equal(maskHidden(plain, null).data, plain.data); // no mask: the checked data as they are
});
