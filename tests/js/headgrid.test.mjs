// The head grid's pure parts without a browser: its layout, which head a point hits, how the arrow keys move across
// the grid, and what a bad (L, H, T, T) array turns into (a message, no throw).
import { test } from "node:test";
import assert from "node:assert/strict";
import { checkGrid, gridLayout, gridMinWidth, headAtPoint, MIN_TARGET, moveFocus } from "../../static/js/page/components/headgrid.js";

test("every model has layers as rows and heads as columns, with targets a finger can hit", () => {
  for (const [L, H] of [[6, 12], [30, 9]]) {
    for (const width of [gridMinWidth(H), 358, 680]) {
      const g = gridLayout(width, L, H);
      assert.ok(g.thumb >= MIN_TARGET, `${L}x${H} at ${width}px: ${g.thumb}px thumbnails`);
      assert.ok(g.left + H * g.pitch <= width, `${L}x${H} at ${width}px: a row of heads is wider than the canvas`);
      assert.equal(g.height, 22 + L * g.pitch + 4);
    }
  }
  // SmolLM2's 30 layers stay about a screen tall on a desktop; a phone's row names are short
  assert.ok(gridLayout(680, 30, 9).height <= 960);
  assert.equal(gridLayout(680, 6, 12).rowName(5), "layer 5");
  assert.equal(gridLayout(gridMinWidth(12), 6, 12).rowName(5), "L5");
});

test("a point opens the head whose thumbnail or following gap holds it, nothing outside the grid", () => {
  const g = { left: 30, top: 22, pitch: 30, L: 30, H: 9 };
  assert.deepEqual(headAtPoint(g, 30 + 6 * 30 + 15, 22 + 18 * 30 + 15), { layer: 18, head: 6 });
  assert.deepEqual(headAtPoint(g, 30, 22), { layer: 0, head: 0 });
  assert.deepEqual(headAtPoint(g, 30 + 9 * 30 - 1, 22 + 30 * 30 - 1), { layer: 29, head: 8 });
  assert.equal(headAtPoint(g, 29, 40), null);
  assert.equal(headAtPoint(g, 30 + 9 * 30, 40), null);
  assert.equal(headAtPoint(g, 40, 22 + 30 * 30), null);
});

test("arrow keys move one head along what is drawn, and stop at the edges", () => {
  // layers down, heads across, for MiniLM (6 x 12) and SmolLM2 (30 x 9) alike
  assert.deepEqual(moveFocus({ layer: 0, head: 2 }, "ArrowRight", 6, 12), { layer: 0, head: 3 });
  assert.deepEqual(moveFocus({ layer: 0, head: 2 }, "ArrowDown", 6, 12), { layer: 1, head: 2 });
  assert.deepEqual(moveFocus({ layer: 0, head: 0 }, "ArrowUp", 6, 12), { layer: 0, head: 0 });
  assert.deepEqual(moveFocus({ layer: 5, head: 11 }, "ArrowRight", 6, 12), { layer: 5, head: 11 });
  assert.deepEqual(moveFocus({ layer: 3, head: 4 }, "End", 6, 12), { layer: 5, head: 11 });
  assert.deepEqual(moveFocus({ layer: 3, head: 4 }, "Home", 6, 12), { layer: 0, head: 0 });
  assert.deepEqual(moveFocus({ layer: 16, head: 0 }, "ArrowDown", 30, 9), { layer: 17, head: 0 });
  assert.deepEqual(moveFocus({ layer: 29, head: 8 }, "ArrowDown", 30, 9), { layer: 29, head: 8 });
  assert.deepEqual(moveFocus({ layer: 29, head: 7 }, "ArrowRight", 30, 9), { layer: 29, head: 8 });
  assert.equal(moveFocus({ layer: 0, head: 0 }, "a", 6, 12), null);
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
