// Reading wheels before Python exists (static/js/unzip.js), on archives written here byte by byte.
import assert from "node:assert/strict";
import { test } from "node:test";
import { deflateRawSync } from "node:zlib";

import { unzip, zipEntries } from "../../static/js/unzip.js";

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
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, body);
    centrals.push(central, nameBytes);
    offset += 30 + nameBytes.length + body.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(centrals.length / 2, 8);
  end.writeUInt16LE(centrals.length / 2, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  end.writeUInt16LE(comment.length, 20);
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
