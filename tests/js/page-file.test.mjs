// A JSON file beside the lesson page, fetched once (page-file.js: the widgets' data, the far formulas).
import { test } from "node:test";
import assert from "node:assert/strict";
import { pageFile } from "../../static/js/page/page-file.js";

const widgetData = (url, fetchFn) => pageFile(url, "widget data", fetchFn);

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

test("a file that is not JSON, or no file at all, is said as such", async () => {
  const broken = widgetData("http://x/widgets.json", async () => ({ ok: true, status: 200, json: async () => { throw new SyntaxError("x"); } }));
  await assert.rejects(broken.get(), /not valid JSON/);
  await assert.rejects(widgetData(null, async () => ok({})).get(), /names no file of widget data/);
});
