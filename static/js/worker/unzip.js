// The files of a zip archive (a wheel), inflated by the browser's own DecompressionStream.
// The snapshot restore needs numpy's files in Python's file system before Python exists, so
// Pyodide's unpackArchive (which runs Python) cannot do it. Stored and deflated entries only, no
// zip64 (wheels of this size use neither); anything else is an error, never a silent skip.

const EOCD = 0x06054b50; // end of central directory record
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const STORED = 0;
const DEFLATED = 8;

function endOfDirectory(view) {
  // The record is 22 bytes plus a comment of at most 65535: search backwards from the end.
  const last = Math.max(0, view.byteLength - 22 - 0xffff);
  for (let at = view.byteLength - 22; at >= last; at--) {
    if (view.getUint32(at, true) === EOCD) return at;
  }
  throw new Error("not a zip archive (no end of central directory)");
}

/** [{name, method, offset, size, compressedSize}] of every file entry, from the central directory. */
export function zipEntries(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = endOfDirectory(view);
  const count = view.getUint16(end + 10, true);
  let at = view.getUint32(end + 16, true);
  const decoder = new TextDecoder();
  const entries = [];
  for (let i = 0; i < count; i++) {
    if (view.getUint32(at, true) !== CENTRAL) throw new Error(`zip: bad central directory entry ${i}`);
    const method = view.getUint16(at + 10, true);
    const compressedSize = view.getUint32(at + 20, true);
    const size = view.getUint32(at + 24, true);
    const nameLength = view.getUint16(at + 28, true);
    const extraLength = view.getUint16(at + 30, true);
    const commentLength = view.getUint16(at + 32, true);
    const local = view.getUint32(at + 42, true);
    const name = decoder.decode(bytes.subarray(at + 46, at + 46 + nameLength));
    if (compressedSize === 0xffffffff || local === 0xffffffff) throw new Error(`zip: ${name}: zip64 is not supported`);
    if (method !== STORED && method !== DEFLATED) throw new Error(`zip: ${name}: compression method ${method} is not supported`);
    if (view.getUint32(local, true) !== LOCAL) throw new Error(`zip: ${name}: bad local header`);
    const offset = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    if (!name.endsWith("/")) entries.push({ name, method, offset, size, compressedSize });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

async function inflate(data) {
  const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** [{name, data: Uint8Array}] of every file of the archive, each checked against its recorded size. */
export async function unzip(bytes) {
  return Promise.all(zipEntries(bytes).map(async (entry) => {
    const raw = bytes.subarray(entry.offset, entry.offset + entry.compressedSize);
    const data = entry.method === STORED ? raw : await inflate(raw);
    if (data.length !== entry.size) throw new Error(`zip: ${entry.name}: ${data.length} bytes, expected ${entry.size}`);
    return { name: entry.name, data };
  }));
}
