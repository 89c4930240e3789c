// Large files Python reads (the live models' weights: MiniLM's 45 MB, SmolLM2's 97.7 MB), put into its file
// system on request (protocol.js: a panel's FetchFileRequest, a cell's RunRequest files, run-files.js). They are
// kept in the browser's Cache Storage, so a second visit, or a new interpreter after Stop, does not download
// them again. What is kept and what is used is checked against the size and SHA-256 the build wrote into the
// page: a download cut short, a garbage answer or a copy from an older build is never kept, and a bad kept copy
// is dropped and downloaded again. Without that, one bad copy failed every later visit ("cannot reshape
// array…") until the reader cleared the site's data, and a stale one drew the wrong model's heads as if all
// were well.

import { sha256Hex } from "./digest.js";

export const FILE_CACHE = "lesson-files-v1";
const PROGRESS_STEP = 1 / 100; // a "download" event per 1% (or per MB when the size is unknown)

const MB = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;

/** Why `bytes` are not the file the build described ({size, sha256}, either may be null), or null. */
export async function damage(bytes, { size = null, sha256 = null } = {}) {
  if (size !== null && bytes.length !== size) {
    return bytes.length < size ? `it ends after ${MB(bytes.length)} of ${MB(size)}` : `it is ${MB(bytes.length)}, not ${MB(size)}`;
  }
  if (sha256 === null) return null;
  const hex = await sha256Hex(bytes);
  return hex === null || hex === sha256.toLowerCase() ? null : "its content is not the file this site was built with";
}

/** The file name at the end of `url`, for messages. */
const fileName = (url) => new URL(url).pathname.split("/").pop();

/** Read `response`'s body, posting progress through `progress(loaded, total)`; a connection lost midway
 *  throws a message in words. */
async function readBody(response, url, expectedSize, progress, signal) {
  // a compressed response's length is not the file's: then the size is the build's, or unknown (0)
  const total = (response.headers.get("content-encoding") ? 0 : Number(response.headers.get("content-length"))) || expectedSize || 0;
  const reader = response.body.getReader();
  // The size known, the chunks go straight into one buffer of it: collected and joined instead, a 97.7 MB file
  // was in the worker's memory twice at the end of its download. Chunks are collected only when the size is
  // unknown, or when the answer runs past it (then it is not the file: damage() says so).
  let whole = total ? new Uint8Array(total) : null;
  const chunks = [];
  let loaded = 0;
  let reported = 0;
  progress(0, total);
  for (;;) {
    let step;
    try {
      step = await reader.read();
    } catch (err) {
      if (signal?.aborted) throw err; // the reader's Stop, not a lost connection
      const where = total ? `at ${Math.round((100 * loaded) / total)} %` : `after ${MB(loaded)}`;
      throw new Error(`the download of ${fileName(url)} broke off ${where} (the connection was lost). ` +
        "Run it again to download it again.");
    }
    if (step.done) break;
    if (whole && loaded + step.value.length <= whole.length) {
      whole.set(step.value, loaded);
    } else {
      if (whole) chunks.push(whole.subarray(0, loaded));
      whole = null;
      chunks.push(step.value);
    }
    loaded += step.value.length;
    if (total ? (loaded - reported) / total >= PROGRESS_STEP : loaded - reported >= 1 << 20) {
      reported = loaded;
      progress(loaded, total);
    }
  }
  progress(loaded, total || loaded);
  if (whole) return loaded === whole.length ? whole : whole.subarray(0, loaded); // short: damage() says so
  const bytes = new Uint8Array(loaded);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}

/**
 * Put the file at `url` into `fs` (Pyodide's FS) at `path`: from there if it is already there (checked
 * when written), else from the kept copy if that is whole, else downloaded, checked, kept and written.
 * `expected`: {size, sha256} from the build (either null or absent: unchecked). `progress(loaded, total)` is called while
 * it downloads. `signal` (optional): its abort ends the download and rejects with its reason (the worker's
 * Stop: nothing is written or kept). Returns {bytes, source: "python"|"cache"|"network", kept: whether the
 * browser keeps it, damaged?: why the kept copy was dropped and downloaded again}.
 */
export async function fetchFile({ url, path, expected = {}, fs, progress, signal }) {
  if (fs.analyzePath(path).exists) return { bytes: fs.stat(path).size, source: "python" };
  const cache = globalThis.caches ? await caches.open(FILE_CACHE).catch(() => null) : null;
  let bytes = null;
  let damaged = null;
  let kept = true; // false: the browser would not keep the download (a full or small quota)
  const cached = cache ? await cache.match(url).catch(() => null) : null;
  if (cached) {
    bytes = await cached.arrayBuffer().then((buffer) => new Uint8Array(buffer), () => null);
    damaged = bytes ? await damage(bytes, expected) : "it could not be read";
    if (damaged) {
      bytes = null;
      await cache.delete(url).catch(() => {});
    }
  }
  signal?.throwIfAborted(); // a Stop while the kept copy was read and checked
  const source = bytes ? "cache" : "network";
  if (!bytes) {
    let response;
    try {
      response = await fetch(url, { signal });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new Error(`could not download ${fileName(url)}: the site did not answer (${err?.message ?? err}). ` +
        "Check your connection and run it again.");
    }
    if (!response.ok) throw new Error(`could not download ${fileName(url)}: the site answered HTTP ${response.status}`);
    bytes = await readBody(response, url, expected.size ?? 0, progress, signal);
    const bad = await damage(bytes, expected);
    signal?.throwIfAborted();
    if (bad) throw new Error(`the download of ${fileName(url)} is not whole: ${bad}. Run it again to download it again.`);
    // only a whole, checked file is kept: nothing bad is left behind to be mistaken for it
    kept = cache ? await cache.put(url, new Response(bytes, { headers: { "content-length": String(bytes.length) } }))
      .then(() => true, () => false) : false;
  }
  fs.mkdirTree(path.slice(0, path.lastIndexOf("/")));
  fs.writeFile(path, bytes, { canOwn: true }); // the file system takes this array as the file's: no copy
  return { bytes: bytes.length, source, kept, ...(damaged ? { damaged } : {}) };
}
