// Reading wheels before Python exists (static/js/worker/unzip.js), on archives written here byte by byte.
import assert from "node:assert/strict";
import { test } from "node:test";

import { unzip, zipEntries } from "../../static/js/worker/unzip.js";
import { makeZip } from "./zipfixture.mjs";

const text = (s) => new TextEncoder().encode(s);

test("stored and deflated files come back byte for byte, folders are skipped", async () => {
  const big = text("numpy ".repeat(10_000));
  const zip = makeZip({
    "pkg/": { data: new Uint8Array(), method: 0 },
    "pkg/__init__.pyc": { data: text("stored bytes"), method: 0 },
    "pkg/_core.so": { data: big, method: 8 },
    "pkg/empty.txt": { data: new Uint8Array(), method: 8 },
  }, { comment: "a comment after the directory" });
  const files = await unzip(zip);
  assert.deepEqual(files.map((f) => f.name), ["pkg/__init__.pyc", "pkg/_core.so", "pkg/empty.txt"]);
  assert.deepEqual(files[0].data, text("stored bytes"));
  assert.deepEqual(files[1].data, big);
  assert.equal(files[2].data.length, 0);
});

test("a file whose size differs from the directory's is an error, not a silent truncation", async () => {
  const zip = makeZip({ "a.py": { data: text("print(1)"), method: 8 } }, { sizeLies: true });
  await assert.rejects(unzip(zip), /a\.py: 8 bytes, expected 9/);
});

test("what is not a zip, or uses another compression, says so", () => {
  assert.throws(() => zipEntries(text("not a zip at all, just text that is long enough")), /not a zip archive/);
  const zip = makeZip({ "a.py": { data: text("x"), method: 0 } });
  zip[zip.length - 22 - (46 + "a.py".length) + 10] = 12; // the central directory says bzip2
  assert.throws(() => zipEntries(zip), /a\.py: compression method 12/);
});
