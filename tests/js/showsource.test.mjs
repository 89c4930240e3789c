// A view says under its picture which cell sent it (static/js/page/widgets/common.js, showSource): the router
// gives it the cell's name, so it reads nothing of the page (here there is no page: no document at all).
import { test } from "node:test";
import assert from "node:assert/strict";
import { showSource } from "../../static/js/page/widgets/common.js";

const view = () => ({ section: { dataset: {} }, source: { textContent: "" } });

test("the sender's name, as the router gives it, and the router's note", () => {
  const { section, source } = view();
  showSource(section, source, {}, { note: "No view is called 'x' on this page, so it is shown here.", sender: "Cell 3 · scores" });
  assert.equal(source.textContent, "Showing what Cell 3 · scores computed. No view is called 'x' on this page, so it is shown here.");
  assert.equal(section.dataset.updated, "1");
  showSource(section, source, { error: "bad shape" }, { sender: "Cell 4" });
  assert.equal(source.textContent, "Cell 4 sent arrays that cannot be drawn.");
  assert.equal(section.dataset.updated, "2");
});

test("arrays no cell sent are said to come from a cell", () => {
  const { section, source } = view();
  showSource(section, source, {}, { note: "", sender: null });
  assert.equal(source.textContent, "Showing what a cell computed.");
});
