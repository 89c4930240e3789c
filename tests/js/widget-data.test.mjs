// The lesson's widget data, fetched once beside the page (widgets.js, widgetSpecs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { widgetSpecs } from "../../static/js/page/widgets.js";

const ok = (body) => ({ ok: true, status: 200, json: async () => body });

test("the data is fetched once, however many widgets ask for it at once or later", async () => {
  const asked = [];
  const specs = widgetSpecs("http://x/widgets.json", async (url) => { asked.push(url); return ok({ a: { name: "heads" } }); });
  const [one, two] = await Promise.all([specs.get(), specs.get()]);
  assert.equal(one, two);
  assert.deepEqual(await specs.get(), { a: { name: "heads" } });
  assert.deepEqual(asked, ["http://x/widgets.json"]);
});

test("a failed download says why and is asked for again by the next widget", async () => {
  let calls = 0;
  const specs = widgetSpecs("http://x/widgets.json", async () => {
    calls += 1;
    if (calls === 1) throw new TypeError("Failed to fetch");
    if (calls === 2) return { ok: false, status: 503, json: async () => ({}) };
    return ok({ b: {} });
  });
  await assert.rejects(specs.get(), /did not download \(the connection failed\)/);
  await assert.rejects(specs.get(), /HTTP 503/);
  assert.deepEqual(await specs.get(), { b: {} });
  assert.equal(calls, 3);
});

test("a file that is not JSON, or no file at all, is said as such", async () => {
  const broken = widgetSpecs("http://x/widgets.json", async () => ({ ok: true, status: 200, json: async () => { throw new SyntaxError("x"); } }));
  await assert.rejects(broken.get(), /not valid JSON/);
  await assert.rejects(widgetSpecs(null, async () => ok({})).get(), /names no file of widget data/);
});
