// The live files' downloads (static/js/worker/live-files.js): what is kept and what is used is checked against
// the build's size and SHA-256; a bad kept copy is dropped and downloaded again; a cut download is refused
// in words. The browser's own behaviour (a real cut connection, a real Cache Storage) is the browser test's.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { afterEach, test } from "node:test";

import { damage, fetchFile, FILE_CACHE } from "../../static/js/worker/live-files.js";
import { memoryFs } from "./memoryfs.mjs";

const URL_ = "https://site.test/data/minilm-live/minilm-live.safetensors";
const GOOD = new TextEncoder().encode("the weights, all of them");
const EXPECTED = { size: GOOD.length, sha256: createHash("sha256").update(GOOD).digest("hex") };
const realFetch = globalThis.fetch;
const realCaches = globalThis.caches;
afterEach(() => {
  globalThis.fetch = realFetch;
  globalThis.caches = realCaches;
});

/** Cache Storage with one cache: {url: bytes}; put can be made to fail (a full quota). */
function cacheStorage(kept = {}, { full = false } = {}) {
  const store = new Map(Object.entries(kept));
  const cache = {
    match: async (url) => (store.has(url) ? new Response(store.get(url)) : undefined),
    put: async (url, response) => {
      if (full) throw new DOMException("quota", "QuotaExceededError");
      store.set(url, new Uint8Array(await response.arrayBuffer()));
    },
    delete: async (url) => store.delete(url),
  };
  globalThis.caches = { open: async (name) => (assert.equal(name, FILE_CACHE), cache) };
  return store;
}

function answering(body, calls = []) {
  globalThis.fetch = async (url) => {
    calls.push(url);
    return new Response(body);
  };
  return calls;
}

const get = (fs, extra = {}) => fetchFile({ url: URL_, path: "/home/pyodide/m/w", expected: EXPECTED, fs, progress: () => {}, ...extra });

test("damage names a short, a long and a changed file, and passes the right one", async () => {
  assert.equal(await damage(GOOD, EXPECTED), null);
  assert.match(await damage(GOOD.slice(0, 5), EXPECTED), /^it ends after 0\.0 MB of 0\.0 MB$/);
  assert.match(await damage(new Uint8Array(3_000_000), { size: 1_000_000 }), /^it is 3\.0 MB, not 1\.0 MB$/);
  const changed = GOOD.slice();
  changed[0] ^= 1;
  assert.equal(await damage(changed, EXPECTED), "its content is not the file this site was built with");
  assert.equal(await damage(changed, {}), null); // nothing to check against
});

test("a whole download is kept and written; the next interpreter reads the kept copy", async () => {
  const store = cacheStorage();
  const calls = answering(GOOD);
  const fs = memoryFs();
  assert.deepEqual(await get(fs), { bytes: GOOD.length, source: "network", kept: true });
  assert.deepEqual(store.get(URL_), GOOD);
  assert.deepEqual(await get(fs), { bytes: GOOD.length, source: "python" });
  assert.deepEqual(await get(memoryFs()), { bytes: GOOD.length, source: "cache", kept: true });
  assert.equal(calls.length, 1);
});

test("a download that is not whole is refused in words and never kept", async () => {
  const store = cacheStorage();
  answering(GOOD.slice(0, 10));
  const fs = memoryFs();
  await assert.rejects(get(fs), /the download of minilm-live\.safetensors is not whole: it ends after .*Run it again/);
  assert.equal(store.size, 0);
  assert.equal(fs.files.size, 0);
});

test("a damaged or stale kept copy is dropped, downloaded again, and said", async () => {
  for (const bad of [GOOD.slice(0, 7), new TextEncoder().encode("the weights, all of THEM")]) {
    const store = cacheStorage({ [URL_]: bad });
    const calls = answering(GOOD);
    const fs = memoryFs();
    const reply = await get(fs);
    assert.equal(reply.source, "network");
    assert.match(reply.damaged, /ends after|not the file this site was built with/);
    assert.deepEqual(fs.files.get("/home/pyodide/m/w"), GOOD);
    assert.deepEqual(store.get(URL_), GOOD);
    assert.equal(calls.length, 1);
  }
});

test("a browser that will not keep the file still gets it, and says so", async () => {
  cacheStorage({}, { full: true });
  answering(GOOD);
  assert.deepEqual(await get(memoryFs()), { bytes: GOOD.length, source: "network", kept: false });
});

test("a connection lost midway says where, in words", async () => {
  cacheStorage();
  globalThis.fetch = async () => {
    let sent = false;
    const body = new ReadableStream({
      pull(controller) {
        if (!sent) {
          sent = true;
          controller.enqueue(GOOD.slice(0, 6));
        } else controller.error(new TypeError("network error"));
      },
    });
    return new Response(body, { headers: { "content-length": String(GOOD.length) } });
  };
  await assert.rejects(get(memoryFs()), /the download of minilm-live\.safetensors broke off at 25 % \(the connection was lost\)\. Run it again/);
  globalThis.fetch = async () => { throw new TypeError("Failed to fetch"); };
  await assert.rejects(get(memoryFs()), /could not download minilm-live\.safetensors: the site did not answer \(Failed to fetch\)\. Check your connection/);
  globalThis.fetch = async () => new Response("no", { status: 404, statusText: "Not Found" });
  await assert.rejects(get(memoryFs()), /could not download minilm-live\.safetensors: the site answered HTTP 404/);
});

/** A response whose body comes in `parts` (Uint8Arrays), as a network delivers it. */
function inParts(parts) {
  return new Response(new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  }));
}

test("a download in parts is filled into one buffer of the file's size, which the file system owns", async () => {
  cacheStorage();
  globalThis.fetch = async () => inParts([GOOD.slice(0, 3), GOOD.slice(3, 10), GOOD.slice(10)]);
  const fs = memoryFs();
  const written = [];
  fs.writeFile = (path, bytes, options) => { written.push(options); fs.files.set(path, bytes); };
  assert.equal((await get(fs)).source, "network");
  assert.deepEqual(fs.files.get("/home/pyodide/m/w"), GOOD);
  assert.equal(fs.files.get("/home/pyodide/m/w").buffer.byteLength, GOOD.length); // the one buffer, no larger
  assert.deepEqual(written, [{ canOwn: true }]);
});

test("an answer longer than the file, or of unknown size, is read whole and checked", async () => {
  const store = cacheStorage();
  globalThis.fetch = async () => inParts([GOOD.slice(0, 10), GOOD.slice(10), new Uint8Array(5)]);
  await assert.rejects(get(memoryFs()), /is not whole: it is 0\.0 MB, not 0\.0 MB/);
  assert.equal(store.size, 0);
  globalThis.fetch = async () => inParts([GOOD.slice(0, 10), GOOD.slice(10)]);
  const fs = memoryFs();
  await fetchFile({ url: URL_, path: "/p", expected: {}, fs, progress: () => {} }); // no size: chunks joined
  assert.deepEqual(fs.files.get("/p"), GOOD);
});

test("a Stop midway ends the download with its reason: nothing is written or kept", async () => {
  const store = cacheStorage();
  const controller = new AbortController();
  globalThis.fetch = async (url, { signal } = {}) => {
    const body = new ReadableStream({
      pull(stream) {
        stream.enqueue(GOOD.slice(0, 6));
        controller.abort(); // the reader's Stop, after the first part
        return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
      },
    });
    signal.addEventListener("abort", () => body.cancel(signal.reason).catch(() => {}));
    return new Response(body, { headers: { "content-length": String(GOOD.length) } });
  };
  const fs = memoryFs();
  await assert.rejects(get(fs, { signal: controller.signal }), (err) => err.name === "AbortError");
  assert.equal(fs.files.size, 0);
  assert.equal(store.size, 0);
  // stopped before it started: not even asked for
  const calls = answering(GOOD);
  await assert.rejects(get(fs, { signal: AbortSignal.abort() }), (err) => err.name === "AbortError");
  assert.equal(calls.length, 0);
});
