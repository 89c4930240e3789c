// The head grid's pure parts without a browser: where a head sits, how the arrow keys move across
// the grid in either orientation, and what a bad (L, H, T, T) array turns into (a message, no throw).
import { test } from "node:test";
import assert from "node:assert/strict";
import { checkGrid, gridCell, moveFocus } from "../../static/js/page/components/headgrid.js";

test("layers are rows unless there are more layers than heads", () => {
  assert.deepEqual(gridCell(2, 5, false), { row: 2, col: 5 });
  assert.deepEqual(gridCell(2, 5, true), { row: 5, col: 2 });
});

test("arrow keys move one head along what is drawn, and stop at the edges", () => {
  // MiniLM: 6 layers (rows) x 12 heads (columns)
  assert.deepEqual(moveFocus({ layer: 0, head: 2 }, "ArrowRight", 6, 12, false), { layer: 0, head: 3 });
  assert.deepEqual(moveFocus({ layer: 0, head: 2 }, "ArrowDown", 6, 12, false), { layer: 1, head: 2 });
  assert.deepEqual(moveFocus({ layer: 0, head: 0 }, "ArrowUp", 6, 12, false), { layer: 0, head: 0 });
  assert.deepEqual(moveFocus({ layer: 5, head: 11 }, "ArrowRight", 6, 12, false), { layer: 5, head: 11 });
  assert.deepEqual(moveFocus({ layer: 3, head: 4 }, "End", 6, 12, false), { layer: 5, head: 11 });
  assert.deepEqual(moveFocus({ layer: 3, head: 4 }, "Home", 6, 12, false), { layer: 0, head: 0 });
  // SmolLM2: 30 layers across (columns) x 9 heads down (rows)
  assert.deepEqual(moveFocus({ layer: 16, head: 0 }, "ArrowRight", 30, 9, true), { layer: 17, head: 0 });
  assert.deepEqual(moveFocus({ layer: 16, head: 0 }, "ArrowDown", 30, 9, true), { layer: 16, head: 1 });
  assert.deepEqual(moveFocus({ layer: 29, head: 8 }, "ArrowDown", 30, 9, true), { layer: 29, head: 8 });
  assert.equal(moveFocus({ layer: 0, head: 0 }, "a", 6, 12, false), null);
});

test("a good grid passes; a bad one becomes a message naming what is wrong", () => {
  const good = { shape: [2, 3, 4, 4], dtype: "float32", data: new Float32Array(2 * 3 * 16).fill(0.25) };
  assert.deepEqual({ ...checkGrid(good), data: null }, { ok: true, L: 2, H: 3, T: 4, data: null });
  const bad = (weights) => checkGrid(weights).message;
  assert.match(bad(null), /shape \(layers, heads, T, T\)/);
  assert.match(bad({ shape: [2, 3, 4], data: new Float32Array(24) }), /shape \(layers, heads, T, T\)/);
  assert.match(bad({ shape: [2, 3, 4, 5], data: new Float32Array(120) }), /T × T, got 4 × 5/);
  assert.match(bad({ shape: [2, 3, 4, 4], data: new Float32Array(10) }), /needs 96 float32 values/);
  const nan = new Float32Array(96).fill(0.25);
  nan[3 * 16 + 5] = NaN; // layer 1, head 0
  assert.match(bad({ shape: [2, 3, 4, 4], dtype: "float32", data: nan }), /layer 1, head 0/);
});
