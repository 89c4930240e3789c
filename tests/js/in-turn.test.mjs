import assert from "node:assert/strict";
import test from "node:test";
import { inTurn } from "../../static/js/runtime/in-turn.js";

const tick = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

test("tasks run one after the other, a failed one included", async () => {
  const order = [];
  const first = inTurn(async () => { order.push("a start"); await tick(20); order.push("a end"); throw new Error("a failed"); });
  const second = inTurn(async () => { order.push("b start"); return "b"; });
  await assert.rejects(first, /a failed/);
  assert.equal(await second, "b");
  assert.deepEqual(order, ["a start", "a end", "b start"]);
});

test("a task that never ends holds the next one back only waitMs", async () => {
  let started = false;
  inTurn(() => new Promise(() => {}), 30);
  const next = inTurn(async () => { started = true; return "ran"; });
  await tick(10);
  assert.equal(started, false, "the next task waits while the first is within its time");
  assert.equal(await next, "ran");
});
