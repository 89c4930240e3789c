// A page older than its site (static/js/worker/gone.js): a 404 under a versioned folder is remembered and said
// in words; other answers and other folders are not.
import assert from "node:assert/strict";
import { test } from "node:test";
import { noticingGone, siteChanged } from "../../static/js/worker/gone.js";

const answering = (status) => async () => new Response("x", { status });
const FOLDER = "http://127.0.0.1/pyodide/0.27.7-abc/";

test("a 404 under a versioned folder is remembered, other answers are not", async () => {
  const seen = { url: null };
  await noticingGone(answering(200), () => [FOLDER], seen)(FOLDER + "micropip.whl");
  await noticingGone(answering(404), () => [FOLDER], seen)("http://127.0.0.1/data/other.json");
  await noticingGone(answering(503), () => [FOLDER], seen)(FOLDER + "micropip.whl");
  await noticingGone(answering(404), () => [null], seen)(FOLDER + "micropip.whl"); // before init: no folder yet
  assert.equal(seen.url, null);
  const response = await noticingGone(answering(404), () => [FOLDER], seen)(new Request(FOLDER + "micropip-0.9.0-py3-none-any.whl"));
  assert.equal(response.status, 404); // the caller still gets the answer
  assert.equal(seen.url, FOLDER + "micropip-0.9.0-py3-none-any.whl");
});

test("a fetch the browser failed (Pyodide's, with integrity) asks the server whether the file is gone", async () => {
  const failing = (headStatus) => async (url, init) => {
    if (init?.method === "HEAD") return new Response(null, { status: headStatus });
    throw new TypeError("Failed to fetch");
  };
  const seen = { url: null };
  await assert.rejects(noticingGone(failing(200), () => [FOLDER], seen)(FOLDER + "a.whl", { integrity: "sha256-x" }), /Failed to fetch/);
  assert.equal(seen.url, null); // there, so a connection problem: not the site's change
  await assert.rejects(noticingGone(failing(404), () => [FOLDER], seen)(FOLDER + "b.whl", { integrity: "sha256-x" }), /Failed to fetch/);
  assert.equal(seen.url, FOLDER + "b.whl");
});

test("the message names the file and says to reload", () => {
  assert.equal(siteChanged(FOLDER + "micropip-0.9.0-py3-none-any.whl"),
    "The site was rebuilt after this page was opened: micropip-0.9.0-py3-none-any.whl is no longer there. " +
    "Reload the page to get the new version (your edits saved in this browser come back).");
});
