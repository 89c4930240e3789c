// static/js/worker/snapshot.js: numpy's libraries instantiated from modules compiled ahead (instantiateCompiled), and a first
// visit's download of the image (firstVisitDownload).
import assert from "node:assert/strict";
import { test } from "node:test";

import { firstVisitDownload, instantiateCompiled, readDetails } from "../../static/js/worker/snapshot.js";

// (module (func (export "answer") (result i32) i32.const 42))
const ANSWER = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f,
  0x03, 0x02, 0x01, 0x00,
  0x07, 0x0a, 0x01, 0x06, 0x61, 0x6e, 0x73, 0x77, 0x65, 0x72, 0x00, 0x00,
  0x0a, 0x06, 0x01, 0x04, 0x00, 0x41, 0x2a, 0x0b,
]);

/** WebAssembly.instantiate that records what it was given ("module" or "bytes"). */
function recording(calls) {
  return (source, imports) => {
    calls.push(source instanceof WebAssembly.Module ? "module" : "bytes");
    return WebAssembly.instantiate(source, imports);
  };
}

test("the module compiled ahead is instantiated, and the bytes are not compiled again", async () => {
  const compiled = WebAssembly.compile(ANSWER);
  const calls = [];
  const { module, instance } = await instantiateCompiled(compiled, recording(calls))(ANSWER, {});
  assert.equal(module, await compiled);
  assert.equal(instance.exports.answer(), 42);
  assert.deepEqual(calls, ["module"]);
});

test("a compile that failed falls back to instantiating the bytes as loadDynamicLibrary would", async () => {
  const failed = Promise.reject(new Error("bad module"));
  failed.catch(() => {});
  const calls = [];
  const { module, instance } = await instantiateCompiled(failed, recording(calls))(ANSWER, {});
  assert.ok(module instanceof WebAssembly.Module);
  assert.equal(instance.exports.answer(), 42);
  assert.deepEqual(calls, ["bytes"]);
});

test("bytes that are no library either reject: the restore then gives way to the normal boot", async () => {
  const failed = Promise.reject(new Error("bad module"));
  failed.catch(() => {});
  await assert.rejects(instantiateCompiled(failed)(ANSWER.subarray(0, 12), {}), WebAssembly.CompileError);
});

test("a first visit downloads the image only when the host compresses it and the browser does not ask to save data", async () => {
  const url = "https://example.org/site/snapshot/0123/python.snapshot";
  const host = (headers, status = 200) => {
    const asked = [];
    let cancelled = false;
    const fetchFn = async (u) => {
      asked.push(u);
      const body = new ReadableStream({ pull: (c) => c.enqueue(new Uint8Array(1024)), cancel: () => { cancelled = true; } });
      return new Response(body, { status, headers });
    };
    return { fetchFn, asked, cancelled: () => cancelled };
  };
  for (const encoding of ["br", "gzip", " BR "]) {
    const { fetchFn } = host({ "content-encoding": encoding });
    assert.ok(await firstVisitDownload(url, { saveData: false }, fetchFn), encoding);
  }
  for (const [headers, status] of [[{}, 200], [{ "content-encoding": "identity" }, 200], [{ "content-encoding": "br" }, 404]]) {
    const { fetchFn, cancelled } = host(headers, status);
    assert.equal(await firstVisitDownload(url, undefined, fetchFn), null, JSON.stringify([headers, status]));
    assert.ok(cancelled(), "the body of an image not used is not read");
  }
  const { fetchFn, asked } = host({ "content-encoding": "br" });
  assert.equal(await firstVisitDownload(url, { saveData: true }, fetchFn), null);
  assert.deepEqual(asked, []); // never fetched
});

test("the restore's details are read beside the image, and a missing or foreign file says so", async () => {
  const spec = { url: "https://example.org/site/snapshot/0123456789abcdef/python.snapshot", details: "restore.json" };
  const details = { dynlibs: [{ name: "/lib/a.so", global: false, memoryBase: 8, tableBase: 1 }], handles: [[4, "/lib/a.so"]], loaded: { numpy: "default channel" } };
  const asked = [];
  const serve = (answer) => async (url) => { // the worker's readJSON (boot.js)
    asked.push(url);
    if (answer instanceof Error) throw answer;
    return answer;
  };
  assert.deepEqual(await readDetails(spec, serve(details)), details);
  assert.deepEqual(asked, ["https://example.org/site/snapshot/0123456789abcdef/restore.json"]);
  await assert.rejects(readDetails(spec, serve(new Error("restore.json: 404 Not Found"))), /restore\.json: 404/);
  await assert.rejects(readDetails(spec, serve({})), /restore\.json is not a restore's details/);
  await assert.rejects(readDetails(spec, serve(null)), /restore\.json is not a restore's details/);
});
