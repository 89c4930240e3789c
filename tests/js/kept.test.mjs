// Versioned files read from the service worker's copies (static/js/worker/kept.js), and what a restore's
// loadPyodide fetches (static/js/worker/snapshot.js's fetchForRestore).
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";

import { fetchKept } from "../../static/js/worker/kept.js";
import { fetchForRestore } from "../../static/js/worker/snapshot.js";
import { seamsFor, PYODIDE_VERSION } from "../../static/js/shared/pyodide-seams.mjs";

const INDEX = "https://site.test/pyodide/0.27.7-abc/";
const realFetch = globalThis.fetch;

/** Cache Storage holding `kept` ({url: body}); `calls` records each URL asked for. */
function cachesWith(kept, calls = []) {
  return {
    match: async (url) => {
      calls.push(url);
      return url in kept ? new Response(kept[url]) : undefined;
    },
  };
}

/** A network that answers every URL with "net:<url>" and records it. */
function network(calls) {
  return async (url) => {
    calls.push(String(url));
    return new Response(`net:${url}`);
  };
}

afterEach(() => {
  delete globalThis.caches;
  globalThis.fetch = realFetch;
});

test("a kept copy is read from Cache Storage, without asking the network", async () => {
  globalThis.caches = cachesWith({ [`${INDEX}numpy.whl`]: "kept numpy" });
  const asked = [];
  const response = await fetchKept(`${INDEX}numpy.whl`, undefined, network(asked));
  assert.equal(await response.text(), "kept numpy");
  assert.deepEqual(asked, []);
});

test("without a kept copy, without Cache Storage, or when it fails, the network answers", async () => {
  const asked = [];
  globalThis.caches = cachesWith({});
  assert.equal(await (await fetchKept(`${INDEX}a.zip`, undefined, network(asked))).text(), `net:${INDEX}a.zip`);
  delete globalThis.caches;
  assert.equal(await (await fetchKept(`${INDEX}b.zip`, undefined, network(asked))).text(), `net:${INDEX}b.zip`);
  globalThis.caches = { match: async () => { throw new Error("storage unavailable"); } };
  assert.equal(await (await fetchKept(`${INDEX}c.zip`, undefined, network(asked))).text(), `net:${INDEX}c.zip`);
  assert.deepEqual(asked, [`${INDEX}a.zip`, `${INDEX}b.zip`, `${INDEX}c.zip`]);
});

test("while a restore loads Pyodide: its folder's files come kept, the wasm is never fetched, the rest as before", async () => {
  const matched = [];
  globalThis.caches = cachesWith({ [`${INDEX}stored/python_stdlib.zip`]: "kept stdlib" }, matched);
  const asked = [];
  const net = network(asked);
  globalThis.fetch = net;
  const undo = seamsFor(PYODIDE_VERSION).swapFetch((network) => fetchForRestore(INDEX, `${INDEX}pyodide.asm.wasm`, network));

  assert.equal(await (await fetch(new URL(`${INDEX}stored/python_stdlib.zip`))).text(), "kept stdlib");
  assert.equal(await (await fetch(`${INDEX}pyodide-lock.json`)).text(), `net:${INDEX}pyodide-lock.json`); // not kept
  assert.equal(await (await fetch("https://site.test/elsewhere.json")).text(), "net:https://site.test/elsewhere.json");
  const wasm = fetch(new URL(`${INDEX}pyodide.asm.wasm`));
  const settled = await Promise.race([wasm.then(() => "settled"), new Promise((r) => setTimeout(() => r("pending"), 20))]);
  assert.equal(settled, "pending");
  assert.deepEqual(asked, [`${INDEX}pyodide-lock.json`, "https://site.test/elsewhere.json"]);
  assert.deepEqual(matched, [`${INDEX}stored/python_stdlib.zip`, `${INDEX}pyodide-lock.json`]);

  undo();
  assert.equal(globalThis.fetch, net);
});
