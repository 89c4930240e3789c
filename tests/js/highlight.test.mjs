// The token runs of a static code block (static/js/page/highlight.js, parseRuns): what the build writes, and
// what is refused (the code then stays plain rather than coloured wrong).
import assert from "node:assert/strict";
import test from "node:test";

import { parseRuns } from "../../static/js/page/highlight.js";

test("runs are a class (or none) and a length each, and must cover the text exactly", () => {
  assert.deepEqual(parseRuns("k:3 w:1 nf:1 :4 c1:6", 15), [["k", 3], ["w", 1], ["nf", 1], ["", 4], ["c1", 6]]);
  assert.equal(parseRuns("k:3 :4", 8), null, "one short: the text is not the one the runs were made for");
  assert.equal(parseRuns("k:3 :4", 6), null, "one long");
});

test("malformed runs are refused", () => {
  for (const bad of ["k3", "k:", "k:0", "k:-1", "k:1.5", "k:x", ""]) assert.equal(parseRuns(bad, 3), null, bad);
});
