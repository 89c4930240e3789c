// worker/clip.js: the worker's last guard, so no string it posts is longer than LIMITS.OUTPUT_CHARS.
import { test } from "node:test";
import assert from "node:assert/strict";
import { clipStrings, clipText } from "../../static/js/worker/clip.js";
import { LIMITS } from "../../static/js/shared/limits.js";

test("clipText keeps the start and the end, as lessonpy.runtime.limits.clip does", () => {
  const text = "abcdefghij".repeat(10);
  assert.equal(clipText(text, 200), text);
  // the same example as tests/unit/test_limits.py
  assert.equal(clipText(text, 60), "abcdef … [89 characters not shown] … fghij");
});

test("clipStrings clips every string of a message, however deep, and leaves the rest alone", () => {
  const huge = "x".repeat(10 ** 7);
  const data = new Float32Array(3);
  const message = { type: "arrays", runId: 1, title: huge, stats: { notes: ["ok", huge], at: new Map([["k", huge]]) },
    arrays: { w: { shape: [3], dtype: "float32", data } }, ok: true, n: 3 };
  const clipped = clipStrings(message);
  assert.equal(clipped, message); // in place: the worker posts the object it built
  for (const text of [message.title, message.stats.notes[1], message.stats.at.get("k")]) {
    assert.ok(text.length <= LIMITS.OUTPUT_CHARS && text.includes("characters not shown"), text.length);
  }
  assert.equal(message.stats.notes[0], "ok");
  assert.equal(message.arrays.w.data, data);
  assert.equal(clipStrings(huge).length <= LIMITS.OUTPUT_CHARS, true);
  assert.equal(clipStrings(null), null);
});
