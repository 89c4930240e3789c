// The head strip's pure parts without a browser: one query's row in every head of a layer out of the
// flat (L, H, T, T) array, the strongest keys (a causal row's masked zeros are never a key), the keys
// that move between heads, the height that does not depend on the data, and the messages for a layer
// or query that is not there.
import { test } from "node:test";
import assert from "node:assert/strict";
import { checkSelection, keyLabel, queryRows, stripHeight, topKeys } from "../../static/js/page/components/headstrip.js";

/** A (L, H, T, T) grid whose value at (l, h, i, j) encodes its own index, so a wrong stride shows. */
function codedGrid(L, H, T) {
  const data = new Float32Array(L * H * T * T);
  for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) {
    data[((l * H + h) * T + i) * T + j] = l * 1000 + h * 100 + i * 10 + j;
  }
  return { L, H, T, data };
}

test("queryRows takes row `query` of every head of `layer`, head by head", () => {
  const grid = codedGrid(3, 4, 5);
  const rows = queryRows(grid, 2, 3);
  assert.equal(rows.length, 4 * 5);
  for (let h = 0; h < 4; h++) {
    assert.deepEqual([...rows.subarray(h * 5, (h + 1) * 5)], [0, 1, 2, 3, 4].map((j) => 2000 + h * 100 + 30 + j));
  }
  assert.deepEqual([...queryRows(grid, 0, 0).subarray(0, 5)], [0, 1, 2, 3, 4]);
  rows[0] = -1; // a copy: the grid is not changed through it
  assert.equal(grid.data[((2 * 4 + 0) * 5 + 3) * 5], 2030);
});

test("topKeys: strongest first, ties to the earlier key", () => {
  const row = Float32Array.from([0.1, 0.4, 0.1, 0.4]);
  assert.deepEqual(topKeys(row, 3, false), [{ key: 1, weight: row[1] }, { key: 3, weight: row[3] }]);
  assert.deepEqual(topKeys(row, 3, false, 1), [{ key: 1, weight: row[1] }]);
  assert.deepEqual(topKeys(Float32Array.from([0.2, 0.2, 0.6]), 0, false).map((k) => k.key), [2, 0]);
});

test("a causal row's keys stop at the query: its zeros after it are the mask, not keys", () => {
  // query 0 of a causal model sees only itself: one key, whatever the zeros after it
  assert.deepEqual(topKeys(Float32Array.from([1, 0, 0, 0]), 0, true), [{ key: 0, weight: 1 }]);
  // an encoder's row may look ahead, a causal one may not (even if a stored weight there were larger)
  const row = Float32Array.from([0.3, 0.2, 0.5]);
  assert.deepEqual(topKeys(row, 1, false).map((k) => k.key), [2, 0]);
  assert.deepEqual(topKeys(row, 1, true).map((k) => k.key), [0, 1]);
});

test("the height depends on the number of heads only, and grows with it", () => {
  assert.equal(stripHeight(12) - stripHeight(11), stripHeight(9) - stripHeight(8));
  assert.ok(stripHeight(12) > stripHeight(9));
  assert.ok(stripHeight(1) > 0);
});

test("a layer or query that is not there is a message naming the range; no query is no message", () => {
  const grid = codedGrid(6, 12, 13);
  assert.equal(checkSelection(grid, 5, 12), "");
  assert.equal(checkSelection(grid, 0, null), "");
  assert.match(checkSelection(grid, 6, 0), /layer 6 is not one of the 6 layers \(0 to 5\)/);
  assert.match(checkSelection(grid, -1, 0), /layer -1/);
  assert.match(checkSelection(grid, 1.5, 0), /layer 1.5/);
  assert.match(checkSelection(grid, 0, 13), /query 13 is not one of the 13 positions \(0 to 12\)/);
  assert.match(checkSelection(grid, 0, "2"), /query 2 is not one/);
});

test("keyLabel cuts a key's name to the room it has, never past it", () => {
  const shown = (text) => text.replace(/[\u2068\u2069]/g, ""); // the direction isolates take no room
  const ctx = { measureText: (text) => ({ width: [...shown(text)].length * 7 }) }; // 7 px a character
  assert.equal(shown(keyLabel(ctx, " because", 36)), "·bec…"); // 5 characters: 35 px
  assert.equal(shown(keyLabel(ctx, "cat", 36)), "cat");
  assert.ok([...shown(keyLabel(ctx, "extraordinarily", 36))].length * 7 <= 36);
});
