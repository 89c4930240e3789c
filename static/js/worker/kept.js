// Versioned files (immutable under their URL: pyodide/<version>-<key>/, assets/<hash>/) as the service
// worker keeps them after a first visit (templates/sw.js): in Cache Storage, decoded. The HTTP cache
// holds them brotli-compressed and decodes them on every read: the standard library, numpy's wheel and
// the snapshot image (67 MB together) read 4-5 times faster from Cache Storage, so a revisit reads them
// from there, and from the network (the HTTP cache) when none is kept: a first visit, a browser without
// Cache Storage, a cache the browser evicted. The wasm is the exception (snapshot.js, startRuntime).

/**
 * The kept copy of `url` if the service worker has one, else `network(url, init)`. Only for versioned
 * files: a kept copy is never stale, as the URL names its content.
 */
export async function fetchKept(url, init, network = fetch) {
  return (await keptCopy(url)) || network(url, init);
}

/** The service worker's kept copy of `url` (a Response), or null when there is none. */
export async function keptCopy(url) {
  // match takes a Request as it is (a Request made a string is "[object Request]": always a miss)
  return globalThis.caches ? caches.match(url instanceof Request ? url : String(url)).then((r) => r ?? null, () => null) : null;
}

/** Drop every kept copy of `url` (one that failed its check): the next precache keeps a good one. */
export async function dropKept(url) {
  if (!globalThis.caches) return;
  for (const name of await caches.keys().catch(() => [])) {
    await caches.open(name).then((cache) => cache.delete(url)).catch(() => {});
  }
}
