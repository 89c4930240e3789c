// Stored state is checked field by field (static/js/page/storage.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { isBoolean, isCount, isString, validated } from "../../static/js/page/storage.js";

const schema = (hints) => ({
  code: [isString, "starter"],
  attempts: [isCount(0), 0],
  solved: [isBoolean, false],
  hints: [isCount(0, hints), 0],
});

test("good fields are kept, bad ones fall back one by one", () => {
  assert.deepEqual(validated({ code: "x", attempts: 3, solved: true, hints: 2 }, schema(2)),
    { code: "x", attempts: 3, solved: true, hints: 2 });
  assert.deepEqual(validated({ code: "x", attempts: -4, solved: "yes", hints: -1 }, schema(2)),
    { code: "x", attempts: 0, solved: false, hints: 0 });
  assert.deepEqual(validated({ code: 7, attempts: 1.5, hints: 3 }, schema(2)),
    { code: "starter", attempts: 0, solved: false, hints: 0 });
});

test("junk that is not an object gives the defaults", () => {
  for (const junk of [null, undefined, 5, "text", [1, 2], true]) {
    assert.deepEqual(validated(junk, schema(2)), { code: "starter", attempts: 0, solved: false, hints: 0 });
  }
});
