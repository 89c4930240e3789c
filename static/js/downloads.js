// One download per wheel: the idle prefetch's (worker.js, prefetch) serves the install that follows.
// Pyodide's loadPackage fetches each wheel it installs itself (0.27.7: loadBinaryFile, a global
// fetch(url, {integrity})), whether it installs for the idle preload or for a run's imports. Without
// this, a wheel the prefetch had downloaded was read again from the HTTP cache (its brotli decoded a
// second time), and one still coming was waited for and then read again: a figure asked for right
// after the first output paid both, on a 2-core machine beside the page's own work.

const downloads = new Map(); // url -> {name, bytes: Promise<Uint8Array>}: coming or come, not installed yet

/** Keep the wheel at `url` (package `name`, as Pyodide's lock and loadedPackages name it) for its install. */
export function keepDownload(url, name, bytes) {
  bytes.catch(() => {}); // a failed download is the prefetch's to report; the install's fetch goes to the network
  downloads.set(url, { name, bytes });
}

/**
 * A fetch that answers a kept download's URL with its bytes (waiting for them while they come), and
 * anything else, or a download that failed, with `network`. The kept bytes were checked on their way in
 * as the install's fetch would check them (the prefetch fetches with the lock's integrity).
 */
export function fetchingKept(network) {
  return async (resource, init) => {
    const kept = downloads.get(resource instanceof Request ? resource.url : String(resource));
    const bytes = kept && (await kept.bytes.catch(() => null));
    return bytes ? new Response(bytes) : network(resource, init);
  };
}

/** Let go of the downloads of packages installed by now (`loaded`: pyodide.loadedPackages), or of all. */
export function forgetDownloads(loaded = null) {
  for (const [url, { name }] of downloads) if (!loaded || loaded[name]) downloads.delete(url);
}
