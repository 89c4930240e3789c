// A JSON file beside the lesson page, fetched once (page-file.js: the widgets' data, the far formulas).
import { test } from "node:test";
import assert from "node:assert/strict";
import { PageFileError, pageFile } from "../../static/js/page/page-file.js";

const widgetData = (url, fetchFn) => pageFile(url, "widget data", { fetchFn });

const ok = (body) => ({ ok: true, status: 200, json: async () => body });

test("the data is fetched once, however many widgets ask for it at once or later", async () => {
  const asked = [];
  const specs = widgetData("http://x/widgets.json", async (url) => { asked.push(url); return ok({ a: { name: "heads" } }); });
  const [one, two] = await Promise.all([specs.get(), specs.get()]);
  assert.equal(one, two);
  assert.deepEqual(await specs.get(), { a: { name: "heads" } });
  assert.deepEqual(specs.now(), { a: { name: "heads" } });
  assert.deepEqual(asked, ["http://x/widgets.json"]);
});

test("a failed download says why and is asked for again by the next widget", async () => {
  let calls = 0;
  const specs = widgetData("http://x/widgets.json", async () => {
    calls += 1;
    if (calls === 1) throw new TypeError("Failed to fetch");
    if (calls === 2) return { ok: false, status: 503, json: async () => ({}) };
    return ok({ b: {} });
  });
  assert.equal(specs.now(), null);
  await assert.rejects(specs.get(), /did not download \(the connection failed\)/);
  await assert.rejects(specs.get(), /HTTP 503/);
  assert.deepEqual(await specs.get(), { b: {} });
  assert.equal(calls, 3);
});

test("no file at all is said as such", async () => {
  await assert.rejects(widgetData(null, async () => ok({})).get(), /names no file of widget data/);
});

test("a file that is not JSON, or not an object, did not download, is not kept, and is asked for again", async () => {
  const answers = [
    { ok: true, status: 200, json: async () => { throw new SyntaxError("x"); } }, ok(null), ok([]), ok("a"), ok({ a: {} }),
  ];
  const specs = widgetData("http://x/widgets.json", async () => answers.shift());
  for (let i = 0; i < 4; i++) {
    await assert.rejects(specs.get(), (err) => err instanceof PageFileError
      && err.message === "its data did not download (what came is not the page's file); reload the page to try again");
    assert.equal(specs.now(), null);
  }
  assert.deepEqual(await specs.get(), { a: {} });
  assert.deepEqual(specs.now(), { a: {} });
});

test("a file that its reader's check refuses is refused the same way", async () => {
  const answers = [ok({ a: 1 }), ok({ a: { name: "heads" } })];
  const specs = pageFile("http://x/widgets.json", "widget data",
    { fetchFn: async () => answers.shift(), valid: (data) => typeof data.a === "object" });
  await assert.rejects(specs.get(), /did not download \(what came is not the page's file\)/);
  assert.deepEqual(await specs.get(), { a: { name: "heads" } });
});

test("the widgets' data is an object with an object, named, for each widget the page has", async () => {
  const { hasWidgets } = await import("../../static/js/page/widget-loader.js");
  const ids = ["step1-view", "heads"];
  assert.ok(hasWidgets({ "step1-view": { name: "attention-view" }, heads: { name: "heads" }, more: 1 }, ids));
  for (const wrong of [null, [], "x", {}, { "step1-view": { name: "attention-view" } },
    { "step1-view": null, heads: { name: "heads" } }, { "step1-view": [], heads: { name: "heads" } },
    { "step1-view": { name: 3 }, heads: { name: "heads" } }]) {
    assert.equal(hasWidgets(wrong, ids), false, JSON.stringify(wrong));
  }
});
