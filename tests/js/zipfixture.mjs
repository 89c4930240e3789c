// Zip archives written byte by byte, for the tests of what reads them (unzip.js, install.js).
import { deflateRawSync } from "node:zlib";

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
export function makeZip(files, { comment = "", sizeLies = false } = {}) {
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
