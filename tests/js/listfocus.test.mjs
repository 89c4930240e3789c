// Keyboard focus along a list (static/js/page/components/listfocus.js): the head strip steps with Up and
// Down, the lookup's keys with every arrow; both stop at the ends, jump with Home and End, ignore the rest.
import assert from "node:assert/strict";
import { test } from "node:test";

import { stepFocus } from "../../static/js/page/components/listfocus.js";

test("Up and Down step one item and stop at the ends; Home and End jump; other keys are not the list's", () => {
  assert.equal(stepFocus(3, "ArrowDown", 12), 4);
  assert.equal(stepFocus(3, "ArrowUp", 12), 2);
  assert.equal(stepFocus(0, "ArrowUp", 12), 0);
  assert.equal(stepFocus(11, "ArrowDown", 12), 11);
  assert.equal(stepFocus(5, "Home", 9), 0);
  assert.equal(stepFocus(5, "End", 9), 8);
  assert.equal(stepFocus(5, "ArrowLeft", 9), null);
  assert.equal(stepFocus(5, "Enter", 9), null);
});

test("a list along a plane steps with every arrow", () => {
  const along = { forward: ["ArrowRight", "ArrowDown"], back: ["ArrowLeft", "ArrowUp"] };
  assert.equal(stepFocus(0, "ArrowRight", 3, along), 1);
  assert.equal(stepFocus(1, "ArrowDown", 3, along), 2);
  assert.equal(stepFocus(2, "ArrowRight", 3, along), 2);
  assert.equal(stepFocus(1, "ArrowLeft", 3, along), 0);
  assert.equal(stepFocus(0, "ArrowUp", 3, along), 0);
  assert.equal(stepFocus(1, "Enter", 3, along), null);
});
