// Which archives the worker boots from (static/js/worker/archives.js): stored only when the host is seen
// compressing that kind of archive, deflated in every other case.
import assert from "node:assert/strict";
import { test } from "node:test";

import { DEFLATED, STORED, pickArchives } from "../../static/js/worker/archives.js";

const INDEX = "https://example.org/site/pyodide/0.27.7-0123456789abcdef/";
const CHOICES = {
  stdlib: { deflated: "python_stdlib.zip", stored: "stored/python_stdlib.zip", probe: "stored/compression-probe.zip" },
  wheels: { deflated: "pyodide-lock.json", stored: "stored/pyodide-lock.json", probe: "stored/compression-probe.whl" },
};

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

test("a host that compresses both kinds gets the stored archives", async () => {
  const { fetchFn, asked } = host({ "stored/compression-probe.zip": { encoding: "br" }, "stored/compression-probe.whl": { encoding: "gzip" } });
  const { options, picked } = await pickArchives(INDEX, CHOICES, fetchFn);
  assert.deepEqual(picked, { stdlib: STORED, wheels: STORED });
  assert.equal(options.stdLibURL, INDEX + "stored/python_stdlib.zip");
  assert.equal(options.lockFileURL, INDEX + "stored/pyodide-lock.json");
  assert.deepEqual(asked.sort(), [INDEX + "stored/compression-probe.whl", INDEX + "stored/compression-probe.zip"]);
});

test("each kind is decided by its own probe: a host may compress .zip and not .whl", async () => {
  const { fetchFn } = host({ "stored/compression-probe.zip": { encoding: "br" }, "stored/compression-probe.whl": {} });
  const { options, picked } = await pickArchives(INDEX, CHOICES, fetchFn);
  assert.deepEqual(picked, { stdlib: STORED, wheels: DEFLATED });
  assert.equal(options.lockFileURL, INDEX + "pyodide-lock.json");
});

test("unsure means deflated: no encoding, identity, a missing probe, an error status, a failed fetch", async () => {
  for (const answer of [{}, { encoding: "identity" }, { status: 404 }, { status: 500, encoding: "br" }, { error: "offline" }]) {
    const { fetchFn } = host({ "stored/compression-probe.zip": answer, "stored/compression-probe.whl": answer });
    const { options, picked } = await pickArchives(INDEX, CHOICES, fetchFn);
    assert.deepEqual(picked, { stdlib: DEFLATED, wheels: DEFLATED }, JSON.stringify(answer));
    assert.equal(options.stdLibURL, INDEX + "python_stdlib.zip");
    assert.equal(options.lockFileURL, INDEX + "pyodide-lock.json");
  }
});

test("without choices (Pyodide from a CDN) nothing is fetched and Pyodide's defaults stay", async () => {
  const { fetchFn, asked } = host({});
  assert.deepEqual(await pickArchives(INDEX, null, fetchFn), { options: {}, picked: null, rest: null, boot: [] });
  assert.deepEqual(asked, []);
});

test("a split standard library's rest comes in the variant its core was picked in", async () => {
  const rest = { deflated: "python_stdlib_rest.zip", stored: "stored/python_stdlib_rest.zip", modules: ["this", "csv"] };
  const choices = { ...CHOICES, stdlib: { ...CHOICES.stdlib, rest } };
  for (const [answer, url] of [[{ encoding: "br" }, "stored/python_stdlib_rest.zip"], [{}, "python_stdlib_rest.zip"]]) {
    const { fetchFn } = host({ "stored/compression-probe.zip": answer, "stored/compression-probe.whl": answer });
    const picked = await pickArchives(INDEX, choices, fetchFn);
    assert.deepEqual(picked.rest, { url: INDEX + url, modules: ["this", "csv"] });
    assert.equal(picked.options.stdLibURL, INDEX + url.replace("_rest", ""));
  }
  const { fetchFn } = host({});
  assert.equal((await pickArchives(INDEX, CHOICES, fetchFn)).rest, null); // not split: nothing more to fetch
});

test("the boot packages' wheels come in the variant the wheels were picked in, as absolute URLs", async () => {
  const numpy = (file) => [{ name: "numpy", file, sha256: file.length.toString(16) }];
  const boot = { deflated: numpy("numpy-2.0.2.whl"), stored: numpy("stored/numpy-2.0.2.whl") };
  const choices = { ...CHOICES, wheels: { ...CHOICES.wheels, boot } };
  for (const [answer, file] of [[{ encoding: "br" }, "stored/numpy-2.0.2.whl"], [{}, "numpy-2.0.2.whl"]]) {
    const { fetchFn } = host({ "stored/compression-probe.whl": answer });
    const picked = await pickArchives(INDEX, choices, fetchFn);
    assert.deepEqual(picked.boot, [{ name: "numpy", url: INDEX + file, sha256: file.length.toString(16) }]);
  }
  const { fetchFn } = host({});
  assert.deepEqual((await pickArchives(INDEX, CHOICES, fetchFn)).boot, []); // none named: nothing to start early
});
