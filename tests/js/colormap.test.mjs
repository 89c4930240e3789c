// The colour maps are perceptually ordered: the sequential map (viridis) only gets lighter, the diverging
// map is white at 0, near-symmetric in lightness, blue below and orange above, with no green.
// (tests/unit/test_colormaps.py holds them equal to what the notebook draws with, viridis to matplotlib's.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { diverging, luminance, sequential } from "../../static/js/page/components/colormap.js";

const xs = Array.from({ length: 101 }, (_, i) => i / 100);
const luma = ([r, g, b]) => 0.2126 * r + 0.7152 * g + 0.0722 * b; // 0..255, of the bytes as they are

test("sequential: dark to light, never back", () => {
  const lum = xs.map((t) => luminance(sequential(t)));
  lum.slice(1).forEach((v, i) => assert.ok(v - lum[i] > -0.002, `step ${i}: ${lum[i]} -> ${v}`));
  assert.ok(lum[100] - lum[0] > 0.7);
});

test("diverging: white at 0, symmetric lightness, blue below, orange above, no green", () => {
  const div = xs.map((t) => diverging(2 * t - 1, 1));
  const lum = div.map(luma);
  assert.equal(lum.indexOf(Math.max(...lum)), 50);
  assert.ok(Math.min(...div[50]) > 240);
  for (let i = 0; i < 50; i++) assert.ok(Math.abs(lum[i] - lum[100 - i]) < 12, `±${(50 - i) / 50}`);
  assert.ok(div[0][2] > div[0][0] + 60 && div[100][0] > div[100][2] + 100);
  assert.ok(!div.some(([r, g, b]) => g > r + 40 && g > b + 40));
});
