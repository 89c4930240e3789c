// What a restart re-runs (static/js/runtime/replay.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { ReplayLog } from "../../static/js/runtime/replay.js";

const ids = (entries) => entries.map((e) => e.cellId);

test("each cell once: its latest successful run, in page order", () => {
  const log = new ReplayLog();
  for (let i = 0; i < 40; i++) log.record({ cellId: "b", code: `x = ${i}`, ok: true, seconds: 0.01, order: 2 });
  log.record({ cellId: "a", code: "a = 1", ok: true, seconds: 0.01, order: 1 });
  log.record({ cellId: "b", code: "x = 'broken'", ok: false, seconds: 0.01, order: 2 });
  const { run, skipped } = log.plan(8);
  assert.deepEqual(ids(run), ["a", "b"]);
  assert.equal(run[1].code, "x = 39");
  assert.deepEqual(skipped, []);
});

test("failed and interrupted runs are never replayed", () => {
  const log = new ReplayLog();
  log.record({ cellId: "oom", code: "big = [0] * 10**10", ok: false, seconds: 3, order: 1 });
  log.record({ cellId: "loop", code: "while True: pass", ok: false, seconds: 5, order: 2 });
  assert.deepEqual(log.plan(8), { run: [], skipped: [] });
});

test("slow runs are skipped once the budget is spent; quicker later ones still fit", () => {
  const log = new ReplayLog();
  log.record({ cellId: "setup", code: "", ok: true, seconds: 0.2, order: 1 });
  log.record({ cellId: "recursion", code: "", ok: true, seconds: 24, order: 2 });
  log.record({ cellId: "three", code: "", ok: true, seconds: 5, order: 3 });
  log.record({ cellId: "four", code: "", ok: true, seconds: 4, order: 4 });
  log.record({ cellId: "five", code: "", ok: true, seconds: 1, order: 5 });
  const { run, skipped } = log.plan(8);
  assert.deepEqual(ids(run), ["setup", "three", "five"]);
  assert.deepEqual(ids(skipped), ["recursion", "four"]);
});
