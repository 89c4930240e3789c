// One download per wheel: the idle prefetch's (worker.js, prefetch) serves the install that follows.
// Pyodide's loadPackage fetches each wheel it installs itself (0.27.7: loadBinaryFile, a global
// fetch(url, {integrity})), whether it installs for the idle preload or for a run's imports. Without
// this, a wheel the prefetch had downloaded was read again from the HTTP cache (its brotli decoded a
// second time), and one still coming was waited for and then read again: a figure asked for right
// after the first output paid both, on a 2-core machine beside the page's own work.

import { sha256Hex } from "./digest.js";

const downloads = new Map(); // url -> {name, bytes: Promise<Uint8Array>}: coming or come, not installed yet

/**
 * Keep the wheel at `url` (package `name`, as Pyodide's lock and loadedPackages name it, its SHA-256
 * `sha256` in hex as the lock gives it) for its install; returns the checked bytes. They are checked
 * here, whatever they came from: the service worker's kept copy is read without the browser's
 * integrity check that Pyodide's own fetch would have had.
 */
export function keepDownload(url, name, sha256, bytes) {
  const checked = bytes.then(async (data) => {
    // Outside a secure context (no digest: null) the bytes came from the network, and Pyodide's own
    // fetch (with the lock's integrity) would have read the same.
    const hex = await sha256Hex(data);
    if (hex !== null && hex !== sha256.toLowerCase()) throw new Error(`${url}: its SHA-256 is not the lock's`);
    return data;
  });
  checked.catch(() => {}); // a failed download is the prefetch's to report; the install's fetch goes to the network
  downloads.set(url, { name, bytes: checked });
  return checked;
}

/**
 * A fetch that answers a kept download's URL with its bytes (waiting for them while they come), and
 * anything else, or a download that failed (or whose bytes are not the lock's), with `network`.
 */
export function fetchingKept(network) {
  return async (resource, init) => {
    const kept = downloads.get(resource instanceof Request ? resource.url : String(resource));
    const bytes = kept && (await kept.bytes.catch(() => null));
    return bytes ? keptResponse(bytes) : network(resource, init);
  };
}

/**
 * What Pyodide's loadBinaryFile reads of a response (0.27.7: `ok`, then `arrayBuffer()`), answered with the
 * kept bytes themselves. A real `new Response(bytes)` copied them twice on the worker's thread, into the
 * response's body and out of it: ≈0.1 s of a first figure's install for matplotlib and its dependencies
 * (a profile of the figure; tests/js/downloads.test.mjs). The bytes are nobody else's: the download made
 * them and nothing writes to them (install.js writes the files as views of them).
 */
function keptResponse(bytes) {
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  const body = whole ? bytes.buffer : bytes.slice().buffer;
  return { ok: true, status: 200, statusText: "OK", arrayBuffer: async () => body };
}

/** Let go of the downloads of the packages `names` (installed, or tried: an object keyed by name, like
 *  pyodide.loadedPackages, or an array), or of all. */
export function forgetDownloads(names = null) {
  const done = Array.isArray(names) ? new Set(names) : names && new Set(Object.keys(names));
  for (const [url, { name }] of downloads) if (!done || done.has(name)) downloads.delete(url);
}
