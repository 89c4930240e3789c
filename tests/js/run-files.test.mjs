// A run's files (static/js/worker/run-files.js): each model's files listed by Python, the ones it has not read put
// into the file system (live-files.js) with progress named by file; a Stop in the interrupt buffer aborts.
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";

import { putRunFiles, stoppable } from "../../static/js/worker/run-files.js";
import { SIGINT } from "../../static/js/shared/protocol.js";
import { memoryFs } from "./memoryfs.mjs";

const realFetch = globalThis.fetch;
const realCaches = globalThis.caches;
afterEach(() => {
  globalThis.fetch = realFetch;
  globalThis.caches = realCaches;
});

const BYTES = new TextEncoder().encode("weights");

test("the files Python has not read are fetched from the model's folder, with progress by name", async () => {
  globalThis.caches = undefined; // no Cache Storage: downloaded, not kept
  const asked = [];
  globalThis.fetch = async (url) => {
    asked.push(url);
    return new Response(BYTES);
  };
  const listed = [];
  const list = (call) => {
    listed.push(call.join(":"));
    return call[0] === "read"
      ? [{ name: "old.bin", path: "/m/old.bin", loaded: true }]
      : [{ name: "w.gguf", path: "/s/w.gguf", loaded: false }, { name: "t.json", path: "/s/t.json", loaded: false }];
  };
  const files = [
    { call: ["read", "files"], url: "https://site.test/data/minilm-live/", files: {} },
    { call: ["new", "files"], url: "https://site.test/data/smollm2-live/", files: { "w.gguf": { size: BYTES.length } } },
  ];
  const fs = memoryFs();
  const progress = [];
  await putRunFiles({ files, list, fs, progress: (...args) => progress.push(args) });
  assert.deepEqual(listed, ["read:files", "new:files"]);
  assert.deepEqual(asked, ["https://site.test/data/smollm2-live/w.gguf", "https://site.test/data/smollm2-live/t.json"]);
  assert.deepEqual([...fs.files.keys()], ["/s/w.gguf", "/s/t.json"]);
  assert.deepEqual(progress[0], ["w.gguf", 0, BYTES.length]); // said before any byte comes
  assert.ok(progress.every(([name]) => name === "w.gguf" || name === "t.json"));
});

test("a file whose size is not the build's fails the run's files in words", async () => {
  globalThis.caches = undefined;
  globalThis.fetch = async () => new Response(BYTES.slice(0, 3));
  const files = [{ call: ["m", "files"], url: "https://site.test/d/", files: { "w.gguf": { size: BYTES.length } } }];
  const list = () => [{ name: "w.gguf", path: "/s/w.gguf", loaded: false }];
  await assert.rejects(putRunFiles({ files, list, fs: memoryFs(), progress: () => {} }), /w\.gguf is not whole: it ends after/);
});

test("stoppable aborts its task when a Stop lands in the buffer, and takes the Stop out", async () => {
  const buffer = new Int32Array(1);
  const seen = await stoppable(buffer, (signal) => new Promise((resolve) => {
    signal.addEventListener("abort", () => resolve("aborted"));
    setTimeout(() => { buffer[0] = SIGINT; }, 20);
  }), 5);
  assert.equal(seen, "aborted");
  assert.equal(buffer[0], 0); // no Python after it sees this Stop
  assert.equal(await stoppable(null, (signal) => signal), undefined); // no buffer: nothing to watch
});
