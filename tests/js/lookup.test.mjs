// The soft lookup's pure parts without a browser: what a show_lookup payload must hold (a bad one is a
// message naming the problem, never a throw), the slider's nearest grid step, the plane's one scale, the
// dots' areas, the keys' keyboard order and the sentences that describe the picture.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  checkLookup, describeKey, describeLookup, dotRadius, nearestStep, niceStep, planeFrame, stepDecimals, temperatureText, valueText,
} from "../../static/js/page/components/lookupdata.js";
import { LIMITS } from "../../static/js/shared/limits.js";
import { boxMeetsCircle } from "../../static/js/page/components/lookup.js";

const f32 = (shape, values) => ({ shape, dtype: "float32", data: Float32Array.from(values) });

/** The lesson's three keys at two temperatures, numbers as lessonpy.maths.lookup computes them (rounded). */
function payload(change = {}) {
  return {
    view: "lookup", title: "t", target: null,
    arrays: {
      keys: f32([3, 2], [1, 0, 0, 1, 0.7, 0.7]),
      query: f32([2], [1, 0.2]),
      values: f32([3], [10, 20, 30]),
      scores: f32([3], [1, 0.2, 0.84]),
      temperatures: f32([2], [0.25, 1]),
      weights: f32([2, 3], [0.638, 0.026, 0.336, 0.435, 0.195, 0.370]),
      answers: f32([2], [16.98, 19.36]),
      jacobian_norm: f32([2], [0.443, 0.465]),
      ...change,
    },
    stats: { best: [0], hard_answer: 10, plain_average: 20 },
  };
}

test("a good payload passes with its sizes and arrays", () => {
  const d = checkLookup(payload());
  assert.equal(d.ok, true);
  assert.equal(d.N, 3);
  assert.equal(d.n, 2);
  assert.deepEqual(Array.from(d.values), [10, 20, 30]);
  assert.equal(d.title, "t");
  assert.equal(checkLookup(payload({ jacobian_norm: undefined })).jacobian, null); // optional
});

test("a bad payload becomes a message naming what is wrong", () => {
  const bad = (change) => checkLookup(payload(change)).message;
  assert.match(checkLookup(null).message, /expected a payload object/);
  assert.equal(checkLookup({ view: "lookup", error: "keys: expected an (N, 2) array" }).message, "keys: expected an (N, 2) array");
  assert.match(bad({ keys: f32([2, 3], [1, 0, 0, 1, 0.7, 0.7]) }), /expected 2-D points, shape \[N, 2\], got \[2, 3\]/);
  assert.match(bad({ keys: undefined }), /the keys: it is missing/);
  assert.match(bad({ query: f32([3], [1, 0, 0]) }), /the query: expected 2 numbers, got 3/);
  assert.match(bad({ query: f32([1, 2], [1, 0.2]) }), /the query: expected a 1-D array/);
  assert.match(bad({ values: f32([2], [10, 20]) }), /the values: expected 3 numbers, got 2/);
  assert.match(bad({ values: f32([3], [10, NaN, 30]) }), /the values.*NaN/);
  assert.match(bad({ temperatures: f32([2], [1, 0.25]) }), /positive and rising/);
  assert.match(bad({ temperatures: f32([2], [0, 1]) }), /positive and rising/);
  assert.match(bad({ answers: f32([3], [1, 2, 3]) }), /the answers: expected 2 numbers/);
  assert.match(bad({ weights: f32([2, 2], [0.5, 0.5, 0.5, 0.5]) }), /one column per key \(3\)/);
  assert.match(bad({ weights: f32([2, 3], [0.6, 0.2, 0.2, 0.5, 0.5, 0.5]) }), /sums to 1\.500, not 1/);
  assert.match(bad({ weights: f32([2, 3], [1.2, -0.2, 0, 0.4, 0.3, 0.3]) }), /negative/);
  const many = LIMITS.widgets["lookup-view"].keys[1] + 1;
  assert.match(bad({ keys: f32([many, 2], new Array(2 * many).fill(1)) }), new RegExp(`${many} keys is more than`));
});

test("the slider's step is the grid temperature nearest on a log scale", () => {
  const grid = [1 / 64, 1 / 16, 1 / 4, 1, 4];
  assert.equal(nearestStep(grid, 1), 3);
  assert.equal(nearestStep(grid, 0.6), 3); // log-nearer to 1 than to 1/4 (above their geometric mean 0.5), though nearer 1/4 on a line
  assert.equal(nearestStep(grid, 0.4), 2);
  assert.equal(nearestStep(grid, 100), 4);
  assert.equal(nearestStep(grid, 1e-9), 0);
  assert.equal(nearestStep(grid, 0), 3); // not a temperature: 1
  assert.equal(nearestStep(grid, NaN), 3);
});

test("the plane keeps one scale on both axes and fits every point and the origin in the box", () => {
  const box = { left: 30, top: 50, width: 500, height: 200 };
  const points = [[1, 0], [0, 1], [0.7, 0.7], [1, 0.2]];
  const f = planeFrame(points, box);
  const inside = ([x, y]) => f.toX(x) >= box.left - 1e-9 && f.toX(x) <= box.left + box.width + 1e-9 &&
    f.toY(y) >= box.top - 1e-9 && f.toY(y) <= box.top + box.height + 1e-9;
  assert.ok([...points, [0, 0]].every(inside));
  assert.equal(f.scale, 200); // the height limits it: one unit of y spans the box
  assert.equal(f.toX(1) - f.toX(0), f.toY(0) - f.toY(1)); // the same scale both ways, y up
  // far from the origin, negative too
  const g = planeFrame([[-3, 5], [2, 9]], box);
  assert.ok([[-3, 5], [2, 9], [0, 0]].every(([x, y]) => g.toX(x) >= box.left - 1e-9 && g.toY(y) <= box.top + box.height + 1e-9 && g.toY(y) >= box.top - 1e-9));
  // every point at the origin, or on one line: a finite scale
  assert.ok(Number.isFinite(planeFrame([[0, 0]], box).scale));
  const line = planeFrame([[1, 0], [2, 0]], box);
  assert.ok(Number.isFinite(line.scale) && line.toX(2) <= box.left + box.width + 1e-9);
});

test("a dot's area is proportional to its weight", () => {
  const area = (w) => Math.PI * dotRadius(w, 28) ** 2;
  assert.equal(dotRadius(1, 28), 28);
  assert.equal(dotRadius(0, 28), 0);
  assert.ok(Math.abs(area(0.25) / area(1) - 0.25) < 1e-12);
  assert.ok(Math.abs(area(0.6) / area(0.2) - 3) < 1e-12);
  assert.equal(dotRadius(1.5, 28), 28); // clamped to what a weight can be
  assert.equal(dotRadius(-0.1, 28), 0);
});

test("axis ticks are 1, 2 or 5 times a power of ten, far enough apart", () => {
  assert.equal(niceStep(200, 48), 0.5);
  assert.equal(niceStep(100, 48), 0.5);
  assert.equal(niceStep(20, 48), 5);
  assert.equal(niceStep(48, 48), 1);
  assert.equal(niceStep(1000, 48), 0.05);
  assert.deepEqual([0.05, 0.2, 0.5, 1, 5].map(stepDecimals), [2, 1, 1, 0, 0]);
});

test("the words: the temperature with its spread, a key, the picture", () => {
  assert.equal(temperatureText(1 / 16), "τ = 0.0625 (spread 16)");
  assert.equal(temperatureText(2 ** -5.75), "τ = 0.0186 (spread 53.8)");
  assert.equal(temperatureText(4), "τ = 4 (spread 0.25)");
  const d = checkLookup(payload());
  assert.equal(describeKey(d, 1, 2), "key 2 at (0.70, 0.70): score q·k 0.840, weight 0.370, value 30");
  assert.equal(valueText(-2), "−2");
  assert.equal(valueText(2.5), "2.50");
  assert.equal(describeLookup(d, 0), "At τ = 0.25 (spread 4) the weights are key 0 64%, key 2 34%, key 1 3%; the answer, weights @ values, is 16.98.");
});

test("an axis number inside a key's ring is found, one beside it is not", () => {
  const ring = { x: 100, y: 50, r: 20 }; // k1 at (0, 1): the y axis's "1.0" is drawn just left of it
  assert.ok(boxMeetsCircle({ x: 80, y: 45, w: 15, h: 10 }, ring));
  assert.ok(boxMeetsCircle({ x: 95, y: 45, w: 10, h: 10 }, ring)); // the number over the centre
  assert.ok(!boxMeetsCircle({ x: 60, y: 45, w: 15, h: 10 }, ring));
  assert.ok(!boxMeetsCircle({ x: 80, y: 75, w: 15, h: 10 }, ring));
});
