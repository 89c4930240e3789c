import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import test from "node:test";
import { fetchingKept, forgetDownloads, keepDownload } from "../../static/js/worker/downloads.js";

const WHEEL = "https://example.invalid/pyodide/pkg-1.0-py3-none-any.whl";
const bytes = new Uint8Array([80, 75, 3, 4, 1, 2, 3]);
const sha256 = createHash("sha256").update(bytes).digest("hex");

function network() {
  const calls = [];
  const fetch = async (resource) => {
    calls.push(String(resource));
    return new Response(new Uint8Array([9, 9, 9]));
  };
  return { calls, fetch };
}

test("a kept download whose bytes are the lock's is served, and the network is not asked", async () => {
  const { calls, fetch } = network();
  assert.deepEqual(await keepDownload(WHEEL, "pkg", sha256, Promise.resolve(bytes)), bytes);
  const response = await fetchingKept(fetch)(WHEEL, { integrity: "sha256-x" });
  assert.deepEqual(new Uint8Array(await response.arrayBuffer()), bytes);
  assert.deepEqual(calls, []);
  forgetDownloads();
});

test("a kept download is served as its own bytes: Pyodide's read of the response copies nothing", async () => {
  const { fetch } = network();
  const whole = new Uint8Array(bytes);
  await keepDownload(WHEEL, "pkg", sha256, Promise.resolve(whole));
  const response = await fetchingKept(fetch)(WHEEL);
  assert.equal(response.ok, true);
  assert.equal(response.status, 200);
  assert.equal(await response.arrayBuffer(), whole.buffer);
  forgetDownloads();
  // a view into a larger buffer is served as a copy of its own bytes only
  const larger = new Uint8Array(bytes.length + 4);
  larger.set(bytes, 2);
  await keepDownload(WHEEL, "pkg", sha256, Promise.resolve(larger.subarray(2, 2 + bytes.length)));
  const served = await (await fetchingKept(fetch)(WHEEL)).arrayBuffer();
  assert.deepEqual(new Uint8Array(served), bytes);
  forgetDownloads();
});

test("bytes that are not the lock's (a corrupt kept copy) are refused and the install's fetch goes to the network", async () => {
  const { calls, fetch } = network();
  const corrupt = new Uint8Array(bytes);
  corrupt[5] ^= 0xff;
  await assert.rejects(keepDownload(WHEEL, "pkg", sha256, Promise.resolve(corrupt)), /SHA-256 is not the lock's/);
  const response = await fetchingKept(fetch)(WHEEL);
  assert.deepEqual(new Uint8Array(await response.arrayBuffer()), new Uint8Array([9, 9, 9]));
  assert.deepEqual(calls, [WHEEL]);
  forgetDownloads();
});

test("downloads are let go of by the names installed or tried, or all", async () => {
  const { calls, fetch } = network();
  const other = WHEEL.replace("pkg-", "dep-");
  keepDownload(WHEEL, "pkg", sha256, Promise.resolve(bytes));
  keepDownload(other, "dep", sha256, Promise.resolve(bytes));
  forgetDownloads(["pkg"]); // an array of names
  await fetchingKept(fetch)(WHEEL);
  await fetchingKept(fetch)(other);
  assert.deepEqual(calls, [WHEEL]); // dep still kept
  forgetDownloads({ dep: {} }); // keyed like pyodide.loadedPackages
  await fetchingKept(fetch)(other);
  assert.deepEqual(calls, [WHEEL, other]);
});
