// A line the page composes around a message from Python stays within LINE_CHARS (line.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import { LINE_CHARS, lineAround } from "../../static/js/page/line.js";
import { LIMITS } from "../../static/js/shared/limits.js";

test("a short message is put in whole", () => {
  assert.equal(lineAround("", "NameError", ": see the output below."), "NameError: see the output below.");
  assert.equal(lineAround("MiniLM could not run: ", "ValueError: type a sentence first", " Still the old ones."),
    "MiniLM could not run: ValueError: type a sentence first Still the old ones.");
});

test("a message of MESSAGE_CHARS is cut with an ellipsis; the page's own words around it stay whole", () => {
  const line = lineAround("", "E".repeat(LIMITS.MESSAGE_CHARS), ": see the output below.");
  assert.equal(line.length, LINE_CHARS);
  assert.match(line, /^E+…: see the output below\.$/);
  const live = lineAround("MiniLM could not run: ", `ForwardError: ${"m".repeat(10 ** 7)}`, " The tokens below are as before.");
  assert.equal(live.length, LINE_CHARS);
  assert.match(live, /^MiniLM could not run: ForwardError: m+… The tokens below are as before\.$/);
});

test("a message exactly as long as the room left is not cut", () => {
  const room = LINE_CHARS - "ab".length;
  assert.equal(lineAround("a", "x".repeat(room), "b"), `a${"x".repeat(room)}b`);
  assert.equal(lineAround("a", "x".repeat(room + 1), "b").length, LINE_CHARS);
});

test("the cut never splits a character outside the BMP, nor leaves a space before the ellipsis", () => {
  const emoji = "😀".repeat(LINE_CHARS);
  const line = lineAround("", emoji);
  assert.ok(line.length <= LINE_CHARS);
  assert.doesNotMatch(line, /[\uD800-\uDBFF]…/);
  assert.equal(lineAround("", `${"word ".repeat(LINE_CHARS)}`).slice(-2), "d…");
});
