// The site's service worker (written by build.py): after one visit the lessons work offline.
// - Versioned files (assets/<hash>/, pyodide/<version>-<content key>/) never change under their
//   URL. While the site answers they come from the browser's HTTP cache, where they are immutable
//   too; once it does not, from Cache Storage (see the fetch handler). Their caches are named after
//   their content, so a rebuild that changes them starts new caches, and one that does not keeps them.
// - Everything else (the pages) is network-first: a rebuilt lesson is seen at once; the cached
//   copy is for when the network fails or stalls (NETWORK_WAIT_MS).
"use strict";

const MANIFEST = {{ manifest | tojson }};
const PAGES = "pages";
// Each versioned folder's cache is its kind ("assets-", "pyodide-") plus its content key; the kind
// says which caches are this worker's to clean up.
// Python's memory snapshot (snapshot/<key>/, named after everything it was made from) is one of
// them: the page's worker restores Python from this cache on a revisit or a restart.
const VERSIONED = [
  { prefix: "assets/" + MANIFEST.assets + "/", kind: "assets-", cache: "assets-" + MANIFEST.assets },
  { prefix: MANIFEST.pyodide + "/", kind: "pyodide-", cache: "pyodide-" + MANIFEST.pyodideKey },
  { prefix: "snapshot/" + MANIFEST.snapshotKey + "/", kind: "snapshot-", cache: "snapshot-" + MANIFEST.snapshotKey },
];
const scope = () => self.registration.scope; // the site's root, wherever it is hosted

// Offline is "the site did not answer", not `navigator.onLine === false`: a server that is down or a
// connection that is lost while the machine keeps its network leaves onLine true. A page whose navigation
// failed or stalled is served from the cache, and so are the versioned files it asks for next, until the site
// answers again: WebKit's HTTP cache does not answer them once the network fails, as Chromium's and Firefox's
// happened to, and its page came without its styles and scripts. Kept in this worker's memory (a worker the
// browser stopped and starts again begins by trusting the network, and its next navigation tells).
const NETWORK_WAIT_MS = 4000; // a navigation that has a cached copy waits this long for the network
let unreachable = false;

function versionedCache(url) {
  if (!url.startsWith(scope())) return null;
  const path = url.slice(scope().length);
  const hit = VERSIONED.find((v) => path.startsWith(v.prefix));
  return hit ? hit.cache : null;
}

self.addEventListener("install", () => self.skipWaiting());

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    // Only this worker's own caches of older builds go; other caches of the site (the live
    // model's weights that the Python worker keeps) are not its to delete.
    const keep = new Set([PAGES, ...VERSIONED.map((v) => v.cache)]);
    const own = (name) => VERSIONED.some((v) => name.startsWith(v.kind));
    for (const name of await caches.keys()) if (own(name) && !keep.has(name)) await caches.delete(name);
    await self.clients.claim();
  })());
});

// The boot plan's files (sitebuild/startup/boot_plan.py; sitebuild/startup lists each kind's variant's files here),
// of the variant the page's worker picked for each kind (stored or deflated, static/js/worker/plan.js;
// deflated when it says nothing): only those are in the HTTP cache, and offline the worker's probes, kept
// too, pick the same ones again.
function archivePaths(picked) {
  return Object.entries(MANIFEST.archives).flatMap(([kind, variants]) => variants[picked?.[kind]] || variants.deflated);
}

// The page asks for the precache once Python is ready (the files are then in the HTTP cache,
// so this costs no second download); the reply says whether the site now works offline.
self.addEventListener("message", (event) => {
  if (event.data?.type !== "precache") return;
  event.waitUntil((async () => {
    let ok = true;
    try {
      for (const path of [...MANIFEST.precache, ...archivePaths(event.data.archives)]) {
        const url = new URL(path, scope()).href;
        const name = versionedCache(url) || PAGES;
        const cache = await caches.open(name);
        // Pages are fetched again (a revalidation, usually a 304): a kept page must name the assets
        // of this build, whose caches replace the old ones when this worker activates.
        if (name !== PAGES && (await cache.match(url))) continue;
        const response = await fetch(url);
        if (!response.ok) throw new Error(`${path}: ${response.status}`);
        await cache.put(url, response);
      }
    } catch {
      ok = false; // the next visit tries again
    }
    event.source?.postMessage({ type: "precached", ok });
  })());
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET" || !request.url.startsWith(scope())) return;
  const url = request.url.split("#")[0];
  const name = versionedCache(url);
  // While the site answers, versioned files go to the browser's HTTP cache (they are immutable there): a
  // response that passes through a service worker loses V8's cache of compiled wasm, and
  // compiling Pyodide's 10 MB again made a revisit slower than the first visit.
  if (name && self.navigator.onLine && !unreachable) return;
  event.respondWith(name ? cacheFirst(name, url, request) : networkFirst(url, request));
});

async function cacheFirst(name, url, request) {
  const cache = await caches.open(name);
  const hit = await cache.match(url, { ignoreVary: true });
  if (hit) return hit;
  const response = await fetch(request);
  unreachable = false; // it answered
  if (response.ok && response.type === "basic") cache.put(url, response.clone()).catch(() => {});
  return response;
}

async function networkFirst(url, request) {
  const cache = await caches.open(PAGES);
  const kept = () => cache.match(url, { ignoreSearch: true, ignoreVary: true });
  const network = fetch(request).then((response) => {
    unreachable = false;
    if (response.ok && response.type === "basic" && request.mode === "navigate") {
      cache.put(url.split("?")[0], response.clone()).catch(() => {});
    }
    return response;
  });
  network.catch(() => {}); // raced below; after a stall, its failure is nobody's
  // A stalled network: the kept copy after NETWORK_WAIT_MS, if there is one (else the network, however long).
  let timer;
  const stalled = new Promise((resolve) => {
    timer = setTimeout(resolve, NETWORK_WAIT_MS);
  }).then(kept).then((hit) => {
    if (!hit) return network;
    unreachable = true; // until the site answers again (the network's late answer says so)
    return hit;
  });
  try {
    return await Promise.race([network, stalled]);
  } catch (err) {
    unreachable = true;
    const hit = await kept();
    if (hit) return hit;
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
