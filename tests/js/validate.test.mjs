// What the components do with bad input, without a browser: every component's input rules
// (its exported *_INPUT, the ones its update() checks by) turn each bad input into a plain
// message, never a throw. tests/browser/components/test_components_browser.py checks that a message is drawn.
import { test } from "node:test";
import assert from "node:assert/strict";
import { HEATMAP_INPUT } from "../../static/js/page/components/heatmap.js";
import { OUTPUT_INPUT } from "../../static/js/page/components/output.js";
import { QUERYROW_INPUT } from "../../static/js/page/components/queryrow.js";
import { SCORES_INPUT } from "../../static/js/page/components/scores.js";
import { checkArray, checkInput, checkPayload } from "../../static/js/page/components/validate.js";
import { LIMITS } from "../../static/js/shared/limits.js";

const COMPONENTS = { heatmap: HEATMAP_INPUT, scores: SCORES_INPUT, output: OUTPUT_INPUT, queryrow: QUERYROW_INPUT };

// Each as the component would be handed it (the key is the component's own array).
const BAD_INPUTS = {
  "missing array": (key) => ({ arrays: {} }),
  "no data": (key) => ({ arrays: { [key]: { shape: [2, 2], dtype: "float32" } } }),
  "length mismatch": (key) => ({ arrays: { [key]: { shape: [3, 3], dtype: "float32", data: new Float32Array(8) } } }),
  NaN: (key) => ({ arrays: { [key]: { shape: [2, 2], dtype: "float32", data: new Float32Array([NaN, 1, 0, 1]) } } }),
  Infinity: (key) => ({ arrays: { [key]: { shape: [2, 2], dtype: "float32", data: new Float32Array([Infinity, 0, 0, 1]) } } }),
  "nested list": (key) => ({ arrays: { [key]: { shape: [2, 2], dtype: "float32", data: [[1, 0], [0, 1]] } } }),
  "string data": (key) => ({ arrays: { [key]: { shape: [2, 2], dtype: "float32", data: "oops" } } }),
  "T=0": (key) => ({ arrays: { [key]: { shape: [0, 0], dtype: "float32", data: new Float32Array(0) } } }),
  "bad shape": (key) => ({ arrays: { [key]: { shape: "2x2", dtype: "float32", data: new Float32Array(4) } } }),
  "3-D": (key) => ({ arrays: { [key]: { shape: [1, 2, 2], dtype: "float32", data: new Float32Array(4) } } }),
  // Not square for the T×T ones; for the output (any width) a 3-D shape instead.
  "not square": (key) => ({ arrays: { [key]: key === "out"
    ? { shape: [2, 3, 1], dtype: "float32", data: new Float32Array(6) }
    : { shape: [2, 3], dtype: "float32", data: new Float32Array(6) } } }),
  null: () => null,
  "a number": () => 42,
};

for (const [component, spec] of Object.entries(COMPONENTS)) {
  for (const [kind, make] of Object.entries(BAD_INPUTS)) {
    test(`${component}: ${kind} gives a message, not a throw`, () => {
      const { checked } = checkInput(make(spec.key), spec);
      assert.equal(checked.ok, false);
      assert.match(checked.message, /^Cannot draw /);
      assert.ok(checked.message.includes(spec.name), checked.message);
    });
  }
}

test("the messages say what is wrong", () => {
  const msg = (kind) => checkInput(BAD_INPUTS[kind]("weights"), HEATMAP_INPUT).checked.message;
  assert.match(msg("length mismatch"), /needs 9 values but data has 8/);
  assert.match(msg("NaN"), /NaN at row 0, column 0/);
  assert.match(msg("nested list"), /ravel\(\)/);
  assert.match(msg("T=0"), /empty/);
  assert.match(msg("not square"), /square/);
});

test("flat plain lists and float64 arrays are fine, and a checked array is taken as it is", () => {
  const plain = checkArray({ shape: [2, 2], dtype: "float64", data: [1, 0, 0.5, 0.5] }, HEATMAP_INPUT);
  assert.equal(plain.ok, true);
  assert.deepEqual([plain.rows, plain.cols, plain.min, plain.max], [2, 2, 0, 1]);
  assert.equal(checkArray({ shape: [2, 2], data: new Float64Array([1, 0, 0.5, 0.5]) }, HEATMAP_INPUT).ok, true);
  assert.equal(checkArray(plain, QUERYROW_INPUT), plain); // no second scan
  assert.equal(checkArray(plain, { rows: 3 }).ok, false); // but its shape still has to fit
});

test("masked scores pass for the scores picture only", () => {
  const masked = { shape: [2, 2], dtype: "float32", data: new Float32Array([0, -Infinity, 0, 0]) };
  const scores = checkArray(masked, SCORES_INPUT);
  assert.equal(scores.ok, true);
  assert.equal(scores.masked, 1);
  assert.match(checkArray(scores, HEATMAP_INPUT).message, /-Infinity at row 0, column 1/);
  const all = { shape: [1, 1], data: new Float32Array([-Infinity]) };
  assert.match(checkArray(all, SCORES_INPUT).message, /every value is masked/);
});

test("the size limits are the ones Python holds the reader to", () => {
  const big = (rows, cols) => ({ shape: [rows, cols], data: new Float32Array(rows * cols) });
  assert.equal(checkArray(big(LIMITS.MAX_T, 2), OUTPUT_INPUT).ok, true);
  assert.match(checkArray(big(LIMITS.MAX_T + 1, 2), OUTPUT_INPUT).message, /more than 512 rows/);
  assert.equal(checkArray(big(2, LIMITS.MAX_D), OUTPUT_INPUT).ok, true);
  assert.match(checkArray(big(2, LIMITS.MAX_D + 1), OUTPUT_INPUT).message, /more than 4096 columns/);
});

test("a payload is usable when its weights are; a bad optional array is reported, not fatal", () => {
  const eye = { shape: [2, 2], dtype: "float32", data: new Float32Array([1, 0, 0, 1]) };
  const p = checkPayload({ arrays: { weights: eye, V: { shape: [3, 2], data: new Float32Array(6) } }, tokens: ["a"] });
  assert.equal(p.ok, true);
  assert.equal(p.T, 2);
  assert.match(p.problems.V, /expected 2 rows/);
  assert.deepEqual(p.tokens, ["0", "1"]);
  assert.match(p.notes[0], /1 token labels do not match the 2 rows/);
  assert.equal(checkPayload({ error: "weights: row 0 sums to 2" }).message, "weights: row 0 sums to 2");
  assert.match(checkPayload(null).message, /expected a payload object/);
});
