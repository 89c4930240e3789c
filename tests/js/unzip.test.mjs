// Reading wheels before Python exists (static/js/unzip.js), on archives written here byte by byte.
import assert from "node:assert/strict";
import { test } from "node:test";
import { deflateRawSync } from "node:zlib";

import { unzip, zipEntries } from "../../static/js/unzip.js";

/** A zip record: its signature, then [offset, bytes, value] little-endian fields where the format puts them. */
function record(length, signature, fields) {
  const bytes = Buffer.alloc(length);
  bytes.writeUInt32LE(signature, 0);
  for (const [at, width, value] of fields) {
    if (width === 2) bytes.writeUInt16LE(value, at);
    else bytes.writeUInt32LE(value, at);
  }
  return bytes;
}

/** A zip of {name: {data, method}} (0 stored, 8 deflated), with a comment after the directory. */
function makeZip(files, { comment = "", sizeLies = false } = {}) {
  const enc = new TextEncoder();
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const [name, { data, method }] of Object.entries(files)) {
    const nameBytes = enc.encode(name);
    const body = method === 8 ? new Uint8Array(deflateRawSync(data)) : data;
    const size = data.length + (sizeLies ? 1 : 0);
    // method, compressed size, size, name length: the local header and the directory entry hold the same fields
    locals.push(record(30, 0x04034b50, [[8, 2, method], [18, 4, body.length], [22, 4, size], [26, 2, nameBytes.length]]),
      nameBytes, body);
    centrals.push(record(46, 0x02014b50, [[10, 2, method], [20, 4, body.length], [24, 4, size],
      [28, 2, nameBytes.length], [42, 4, offset]]), nameBytes);
    offset += 30 + nameBytes.length + body.length;
  }
  const directory = Buffer.concat(centrals);
  const count = centrals.length / 2;
  const end = record(22, 0x06054b50, [[8, 2, count], [10, 2, count], [12, 4, directory.length], [16, 4, offset],
    [20, 2, comment.length]]);
  return new Uint8Array(Buffer.concat([...locals, directory, end, Buffer.from(comment)]));
}

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
