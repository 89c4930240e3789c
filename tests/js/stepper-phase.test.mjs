// The step-through's phases (static/js/page/components/stepper.js, phaseOf): one rule says which phase a step is in,
// for its words, its "now" panel and the row it selects.
import { test } from "node:test";
import assert from "node:assert/strict";
import { phaseOf } from "../../static/js/page/components/stepper.js";

test("steps 1 … perPhase are the scores, then the softmax, then the output", () => {
  const perPhase = 4;
  assert.deepEqual([1, 2, 3, 4].map((s) => phaseOf(s, perPhase)), [0, 0, 0, 0]);
  assert.deepEqual([5, 8].map((s) => phaseOf(s, perPhase)), [1, 1]);
  assert.deepEqual([9, 12].map((s) => phaseOf(s, perPhase)), [2, 2]);
  assert.equal(phaseOf(1, 1), 0); // one row: each phase is one step
  assert.equal(phaseOf(3, 1), 2);
});
