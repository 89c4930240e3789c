// The head-change list's rules (static/js/page/widgets/real-heads/realheads-changes.js): one change per head, in grid
// order, named in the words the panel and the table caption use.
import assert from "node:assert/strict";
import { test } from "node:test";
import { CHANGES, changeName, describeChanges, describeComparison, pickedChange, withChange } from "../../static/js/page/widgets/real-heads/realheads-changes.js";

test("a head changed again keeps only its last change, and the list stays in grid order", () => {
  let list = withChange([], { layer: 3, head: 4 }, "off");
  list = withChange(list, { layer: 0, head: 7 }, 0.5);
  list = withChange(list, { layer: 3, head: 4 }, 2);
  assert.deepEqual(list, [{ layer: 0, head: 7, change: 0.5 }, { layer: 3, head: 4, change: 2 }]);
});

test("changes are named as the panel offers them, and any other factor by its value", () => {
  assert.equal(changeName("off"), "knocked out");
  assert.equal(changeName(0), "scores × 0, uniform");
  assert.equal(changeName(Math.sqrt(32)), "scores × √32"); // the value Python echoes back is the same double
  assert.equal(changeName(3), "scores × 3.00");
  assert.equal(describeChanges([]), "none");
  assert.equal(describeChanges([{ layer: 0, head: 3, change: "off" }, { layer: 2, head: 1, change: 0.5 }]),
    "layer 0, head 3 knocked out; layer 2, head 1 scores × 0.5");
});

test("every offered change is one Python accepts: \"off\" or a factor from 0 to 100", () => {
  for (const { change } of CHANGES) assert.ok(change === "off" || (change >= 0 && change <= 100), String(change));
  assert.equal(new Set(CHANGES.map((c) => c.short)).size, CHANGES.length);
});

test("the menus' values name a change only when each is one of their options", () => {
  assert.deepEqual(pickedChange({ layer: "5", head: "11", what: "0" }, 6, 12), { layer: 5, head: 11, change: "off" });
  assert.deepEqual(pickedChange({ layer: "0", head: "0", what: "3" }, 6, 12), { layer: 0, head: 0, change: 2 });
  // values set from outside the page (devtools): nothing to add, no error
  for (const bad of [{ what: "99" }, { what: "" }, { what: "-1" }, { what: "1.5" }, { layer: "6" }, { head: "12" }, { layer: "x" }]) {
    assert.equal(pickedChange({ layer: "1", head: "2", what: "0", ...bad }, 6, 12), null, JSON.stringify(bad));
  }
});

test("the sentence to compare with is described from Python's reason code, in words, never as an error", () => {
  assert.match(describeComparison(null), /^Nothing typed to compare with/);
  assert.equal(describeComparison({ text: "a ".repeat(200), problem: "too-long", count: 202, limit: 128 }),
    "The sentence to compare with makes 202 tokens and MiniLM reads at most 128: shorten it to see its cosine.");
  assert.match(describeComparison({ text: "\u200b", problem: "no-words", tokens: ["[CLS]", "[SEP]"] }), /no vector to compare/);
  assert.equal(describeComparison({ text: "It was.", tokens: ["[CLS]", "it", "was", ".", "[SEP]"], trained: 0.5, changed: 0.4 }),
    "MiniLM read the sentence to compare with as 5 tokens: [CLS] it was . [SEP]");
});
