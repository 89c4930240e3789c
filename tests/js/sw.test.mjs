// templates/sw.js, the site's service worker: offline is "the site did not answer", not navigator.onLine. Run in
// a context of its own with a stand-in for the worker's globals (its manifest filled in as build.py does), a
// network that answers, fails or stalls as each test says, and Cache Storage in memory.
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import vm from "node:vm";

const SCOPE = "http://127.0.0.1/";
const MANIFEST = { assets: "a1", pyodide: "pyodide/0.27.7-k", pyodideKey: "k", snapshotKey: "s", archives: {}, precache: [] };
const SOURCE = readFileSync(new URL("../../templates/sw.js", import.meta.url), "utf8")
  .replace("{{ manifest | tojson }}", JSON.stringify(MANIFEST));
const PAGE = `${SCOPE}lessons/attention/`;
const STYLE = `${SCOPE}assets/a1/css/page.css`;

/** The worker, with `network(url)` as its fetch; returns {fetchEvent(url, mode) -> undefined | Promise<body>}. */
function worker(network) {
  const stores = new Map();
  const open = async (name) => {
    if (!stores.has(name)) stores.set(name, new Map());
    const store = stores.get(name);
    return {
      match: async (url) => store.get(String(url).split("?")[0]),
      put: async (url, response) => void store.set(String(url), response),
    };
  };
  const listeners = {};
  const self = {
    registration: { scope: SCOPE },
    navigator: { onLine: true },
    addEventListener: (type, fn) => void (listeners[type] = fn),
  };
  const context = vm.createContext({
    self, URL, Promise, console,
    caches: { open, match: async () => undefined, keys: async () => [...stores.keys()] },
    fetch: (request) => network(request.url ?? String(request)),
    setTimeout: (fn) => setTimeout(fn, 5), // NETWORK_WAIT_MS, made short
    clearTimeout,
  });
  vm.runInContext(SOURCE, context);
  const seed = async (name, url, body) => (await open(name)).put(url, response(body));
  return {
    self,
    seed,
    fetchEvent(url, mode = "no-cors") {
      let answered;
      listeners.fetch({ request: { url, method: "GET", mode }, respondWith: (p) => void (answered = p) });
      return answered && answered.then((r) => r.body);
    },
  };
}

const response = (body) => ({ body, ok: true, type: "basic", clone() { return this; } });
const answers = (body) => async () => response(body);
const fails = async () => {
  throw new TypeError("Failed to fetch");
};
const stalls = () => new Promise(() => {});

test("while the site answers, versioned files are left to the browser's HTTP cache and pages come from the network", async () => {
  const sw = worker(answers("fresh"));
  assert.equal(sw.fetchEvent(STYLE), undefined); // not intercepted: V8 keeps its code cache
  assert.equal(await sw.fetchEvent(PAGE, "navigate"), "fresh");
});

for (const [how, network] of [["fails", fails], ["stalls", stalls]]) {
  test(`a navigation that ${how} is served the kept page, and the files it asks for next come from the cache`, async () => {
    let net = answers("fresh");
    const sw = worker((url) => net(url));
    await sw.seed("pages", PAGE, "kept page");
    await sw.seed("assets-a1", STYLE, "kept style");
    net = network; // the server is gone; navigator.onLine stays true
    assert.equal(await sw.fetchEvent(PAGE, "navigate"), "kept page");
    assert.equal(await sw.fetchEvent(STYLE), "kept style");
    net = answers("fresh"); // back: the next navigation says so, and versioned files go to the HTTP cache again
    assert.equal(await sw.fetchEvent(PAGE, "navigate"), "fresh");
    assert.equal(sw.fetchEvent(STYLE), undefined);
  });
}

test("offline by the browser's word: versioned files from the cache at once", async () => {
  const sw = worker(fails);
  await sw.seed("assets-a1", STYLE, "kept style");
  sw.self.navigator.onLine = false;
  assert.equal(await sw.fetchEvent(STYLE), "kept style");
});

test("a failed navigation with no kept page fails as the network did", async () => {
  const sw = worker(fails);
  await assert.rejects(sw.fetchEvent(PAGE, "navigate"), /Failed to fetch/);
});
