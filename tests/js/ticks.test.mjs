// A colour bar's ticks (components/ticks.js): round values whose labels never overlap, whatever the
// bar's width and range. Labels are measured as an 11 px sans-serif font is, about 6.5 px a character.
import { test } from "node:test";
import assert from "node:assert/strict";
import { TICK_GAP, chooseTicks } from "../../static/js/page/components/ticks.js";

const measure = (text) => text.length * 6.5;

/** Every label inside the bar, each TICK_GAP clear of the next, in order; every tick a round value. */
function assertReadable(ticks, length) {
  ticks.forEach((t, i) => {
    assert.ok(t.left >= 0 && t.left + t.width <= length + 1e-9, `${t.text} leaves the bar`);
    if (i) assert.ok(ticks[i - 1].left + ticks[i - 1].width + TICK_GAP <= t.left + 1e-9, `${ticks[i - 1].text} touches ${t.text}`);
    assert.ok(t.at >= -1e-9 && t.at <= length + 1e-9);
  });
}

/** One number format per bar: every label has the same number of decimals. */
const decimals = (ticks) => new Set(ticks.map((t) => (t.text.split(".")[1] ?? "").length));

test("the issue's case: 0..1 under a 48 px thumbnail no longer writes 0.00, 0.50 and 1.00 over each other", () => {
  const ticks = chooseTicks(0, 1, 48, measure);
  assertReadable(ticks, 48);
  assert.deepEqual(ticks.map((t) => t.text), ["0", "1"]);
});

test("a wide bar gets several round ticks with one format", () => {
  const ticks = chooseTicks(0, 0.9856, 220, measure);
  assertReadable(ticks, 220);
  assert.deepEqual(ticks.map((t) => t.text), ["0.0", "0.2", "0.4", "0.6", "0.8"]);
  assert.equal(decimals(ticks).size, 1);
});

test("0..100 in a narrow bar: fewer ticks, never 0.0050100", () => {
  for (const length of [48, 60, 80, 120]) {
    const ticks = chooseTicks(0, 100, length, measure);
    assertReadable(ticks, length);
    assert.ok(ticks.length >= 2, `${length} px: ${ticks.map((t) => t.text)}`);
    assert.equal(decimals(ticks).size, 1);
  }
  assert.deepEqual(chooseTicks(0, 100, 48, measure).map((t) => t.text), ["0", "100"]);
});

test("negative to positive: round ticks through zero, a real minus sign, no −0", () => {
  const ticks = chooseTicks(-3.72, 3.72, 220, measure);
  assertReadable(ticks, 220);
  assert.ok(ticks.some((t) => t.text === "0"));
  assert.ok(ticks.every((t) => !t.text.includes("-")));
  assert.deepEqual(ticks.map((t) => t.value), ticks.map((t) => -t.value).reverse().map((v) => v || 0));
  const narrow = chooseTicks(-3.38, 3.38, 48, measure);
  assertReadable(narrow, 48);
  assert.deepEqual(narrow.map((t) => t.text), ["0"], "too narrow for −2, 0 and 2: the centre stays named");
  assert.ok(chooseTicks(-0.3, 0.3, 220, measure).every((t) => !Object.is(t.value, -0) && t.text !== "−0.0"));
});

test("a tiny range gets the decimals it needs and at least one tick", () => {
  const ticks = chooseTicks(0.5, 0.5001, 220, measure);
  assertReadable(ticks, 220);
  assert.ok(ticks.length >= 2);
  assert.ok(ticks.every((t) => t.value >= 0.5 && t.value <= 0.5001));
  assert.equal(decimals(ticks).size, 1);
  assert.equal(new Set(ticks.map((t) => t.text)).size, ticks.length, "no two labels alike");
  const narrow = chooseTicks(0.5, 0.5001, 48, measure);
  assertReadable(narrow, 48);
  assert.equal(narrow.length, 1);
});

test("no room or no range: no ticks rather than overlapping ones", () => {
  assert.deepEqual(chooseTicks(0, 1, 4, measure), []);
  assert.deepEqual(chooseTicks(1, 1, 100, measure), []);
  assert.deepEqual(chooseTicks(0, Infinity, 100, measure), []);
});
