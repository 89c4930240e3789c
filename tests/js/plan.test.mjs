// The boot plan read by the worker (static/js/worker/plan.js) with each kind's variant picked by its probe
// (archives.js): stored only when the host is seen compressing that kind of archive, deflated in every other case.
import assert from "node:assert/strict";
import { test } from "node:test";

import { DEFLATED, STORED } from "../../static/js/worker/archives.js";
import { choosePlan } from "../../static/js/worker/plan.js";

const INDEX = "https://example.org/site/pyodide/0.27.7-0123456789abcdef/";
const REST = "/lib/python312-rest.zip";
const SITE = "/lib/python3.12/site-packages/";
const stored = (file) => `stored/${file}`;
const asIs = (file) => file;

/** A plan as sitebuild/startup/boot_plan.py writes it, with `split` numpy's libraries apart (a snapshot build). */
function plan({ rest = true, split = true } = {}) {
  const variant = (at) => ({
    stdlib: {
      start: [{ file: at("python_stdlib.zip"), option: "stdLibURL" }], normal: [],
      restore: split ? [at("numpy.libs.zip")] : [],
      later: rest ? [{ file: at("python_stdlib_rest.zip"), modules: "python_stdlib_rest.zip", into: REST, unpack: false }] : [],
      restored: split ? [{ file: at("numpy.rest.zip"), modules: "numpy.rest.zip", into: SITE, unpack: true }] : [],
    },
    wheels: {
      start: [{ file: at("pyodide-lock.json"), option: "lockFileURL" }],
      normal: [{ file: at("numpy-2.0.2.whl"), name: "numpy", sha256: at("ab").length.toString(16) }],
      restore: split ? [] : [at("numpy-2.0.2.whl")], later: [], restored: [],
    },
  });
  return {
    probes: { stdlib: "stored/compression-probe.zip", wheels: "stored/compression-probe.whl" },
    kinds: Object.fromEntries(["stdlib", "wheels"].map((kind) => [kind, {
      [DEFLATED]: variant(asIs)[kind], [STORED]: variant(stored)[kind],
    }])),
    modulesFile: "later-modules.json",
  };
}

/** The later files' module lists, as the build writes them beside the plan's files (boot_plan.write_modules). */
const LISTS = { "python_stdlib_rest.zip": ["this", "csv"], "numpy.rest.zip": ["numpy.polynomial"] };

/** The worker's read of a versioned JSON file (boot.js's readJSON), here of the module lists alone. */
function reader() {
  const read = [];
  const readJSON = async (url) => {
    read.push(url);
    if (url !== INDEX + "later-modules.json") throw new Error(`${url}: 404 Not Found`);
    return LISTS;
  };
  return { readJSON, read };
}

/** A fetch that answers each probe URL as `answers` says: an encoding, a status, or a thrown error. */
function host(answers) {
  const asked = [];
  const fetchFn = async (url) => {
    asked.push(url);
    const answer = answers[url.slice(INDEX.length)] ?? { status: 404 };
    if (answer.error) throw new TypeError(answer.error);
    const headers = answer.encoding ? { "content-encoding": answer.encoding } : {};
    return new Response("PK…", { status: answer.status ?? 200, headers });
  };
  return { fetchFn, asked };
}

test("a host that compresses both kinds gets every file of the plan stored, as absolute URLs", async () => {
  const { fetchFn, asked } = host({ "stored/compression-probe.zip": { encoding: "br" }, "stored/compression-probe.whl": { encoding: "gzip" } });
  const { readJSON, read } = reader();
  const chosen = await choosePlan(INDEX, plan(), readJSON, fetchFn);
  assert.deepEqual(chosen.picked, { stdlib: STORED, wheels: STORED });
  assert.deepEqual(chosen.options, { stdLibURL: INDEX + "stored/python_stdlib.zip", lockFileURL: INDEX + "stored/pyodide-lock.json" });
  assert.deepEqual(chosen.normal, [{ name: "numpy", url: INDEX + "stored/numpy-2.0.2.whl", sha256: "9" }]);
  assert.deepEqual(chosen.restore, [INDEX + "stored/numpy.libs.zip"]);
  assert.deepEqual(chosen.later, [{ url: INDEX + "stored/python_stdlib_rest.zip", modules: "python_stdlib_rest.zip", into: REST, unpack: false }]);
  assert.deepEqual(chosen.restored, [{ url: INDEX + "stored/numpy.rest.zip", modules: "numpy.rest.zip", into: SITE, unpack: true }]);
  assert.deepEqual(await chosen.moduleLists, LISTS); // one list per later file, whichever variant
  assert.deepEqual(read, [INDEX + "later-modules.json"]); // read once, as the worker reads its versioned files
  assert.deepEqual(asked.sort(), [INDEX + "stored/compression-probe.whl", INDEX + "stored/compression-probe.zip"]);
});

test("each kind is decided by its own probe: a host may compress .zip and not .whl", async () => {
  const { fetchFn } = host({ "stored/compression-probe.zip": { encoding: "br" }, "stored/compression-probe.whl": {} });
  const chosen = await choosePlan(INDEX, plan(), reader().readJSON, fetchFn);
  assert.deepEqual(chosen.picked, { stdlib: STORED, wheels: DEFLATED });
  assert.equal(chosen.options.stdLibURL, INDEX + "stored/python_stdlib.zip");
  assert.equal(chosen.options.lockFileURL, INDEX + "pyodide-lock.json");
  assert.deepEqual(chosen.normal.map((wheel) => wheel.url), [INDEX + "numpy-2.0.2.whl"]);
  assert.deepEqual(chosen.restore, [INDEX + "stored/numpy.libs.zip"]); // zips: with the standard library
});

test("unsure means deflated: no encoding, identity, a missing probe, an error status, a failed fetch", async () => {
  for (const answer of [{}, { encoding: "identity" }, { status: 404 }, { status: 500, encoding: "br" }, { error: "offline" }]) {
    const { fetchFn } = host({ "stored/compression-probe.zip": answer, "stored/compression-probe.whl": answer });
    const chosen = await choosePlan(INDEX, plan(), reader().readJSON, fetchFn);
    assert.deepEqual(chosen.picked, { stdlib: DEFLATED, wheels: DEFLATED }, JSON.stringify(answer));
    assert.deepEqual(chosen.options, { stdLibURL: INDEX + "python_stdlib.zip", lockFileURL: INDEX + "pyodide-lock.json" });
  }
});

test("without a plan (Pyodide from a CDN) nothing is fetched and Pyodide's defaults stay", async () => {
  const { fetchFn, asked } = host({});
  const { readJSON, read } = reader();
  const chosen = await choosePlan(INDEX, null, readJSON, fetchFn);
  assert.deepEqual({ ...chosen, moduleLists: await chosen.moduleLists },
    { picked: null, options: {}, normal: [], restore: [], later: [], restored: [], moduleLists: {} });
  assert.deepEqual([...asked, ...read], []);
});

test("unsplit: no rest to fetch later, and a restore reads the whole wheels in the lock's variant", async () => {
  const { fetchFn } = host({ "stored/compression-probe.whl": { encoding: "br" } });
  const chosen = await choosePlan(INDEX, plan({ rest: false, split: false }), reader().readJSON, fetchFn);
  assert.deepEqual(chosen.later, []);
  assert.deepEqual(chosen.restored, []);
  assert.deepEqual(chosen.restore, [INDEX + "stored/numpy-2.0.2.whl"]);
});

test("module lists that do not download are said as such when the boot needs them, not before", async () => {
  const { fetchFn } = host({});
  const failing = async (url) => { throw new Error(`${url}: 503 Service Unavailable`); }; // as worker.js's fetchOk says it
  const chosen = await choosePlan(INDEX, plan(), failing, fetchFn); // the boot goes on meanwhile
  await assert.rejects(chosen.moduleLists, /later-modules\.json: 503 Service Unavailable/);
});
