// static/js/runtime/start-python.js, the classic script that starts Python from <head>: its one check of whether
// Stop can interrupt in place, and an early start that fails without taking the page down. Run in a context
// of its own with only the globals the script reads.
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import vm from "node:vm";

const SOURCE = readFileSync(new URL("../../static/js/runtime/start-python.js", import.meta.url), "utf8");
const CONFIG = { workerURL: "w.js", indexURL: "py/", wheelURL: "l.whl", wheelSha256: "00", bootPackages: ["numpy"], fontCache: null, plan: null };

/** Run the script with `globals`; returns its global object. Workers record what they were sent. */
function load(globals) {
  class Worker {
    constructor(url, options) {
      Object.assign(this, { url, options, posted: [] });
      context.workers.push(this);
    }
    postMessage(message) {
      if (globals.postFails) throw new DOMException("cannot clone", "DataCloneError");
      this.posted.push(message);
    }
  }
  const context = vm.createContext({
    workers: [], Worker, URL, JSON, performance, DOMException, Uint8Array,
    navigator: { platform: "Linux x86_64", maxTouchPoints: 0 },
    document: { baseURI: "http://127.0.0.1/lessons/a/", getElementById: () => ({ textContent: JSON.stringify(CONFIG) }) },
    ...globals,
  });
  context.globalThis = context;
  vm.runInContext(SOURCE, context);
  return context;
}

test("isolated with a working SharedArrayBuffer: the worker gets an interrupt buffer", () => {
  const page = load({ crossOriginIsolated: true, SharedArrayBuffer });
  assert.ok(page.earlyPython.started.interruptBuffer instanceof Uint8Array);
  assert.equal(page.workers[0].posted[0].type, "set-interrupt");
});

test("isolated but without SharedArrayBuffer (WebKitGTK 2.50): no buffer, and the page still starts Python", () => {
  const page = load({ crossOriginIsolated: true, SharedArrayBuffer: undefined }); // a context has its own otherwise
  assert.equal(page.newInterruptBuffer(), null);
  assert.equal(page.earlyPython.started.interruptBuffer, null);
  assert.equal(page.workers[0].posted.length, 0);
  assert.equal(JSON.parse(page.workers[0].options.name).type, "init");
});

test("not isolated: no buffer, whatever SharedArrayBuffer there is", () => {
  const page = load({ crossOriginIsolated: false, SharedArrayBuffer });
  assert.equal(page.earlyPython.started.interruptBuffer, null);
});

test("a buffer the browser will not post to the worker: Stop restarts instead", () => {
  const page = load({ crossOriginIsolated: true, SharedArrayBuffer, postFails: true });
  assert.equal(page.earlyPython.started.interruptBuffer, null);
  assert.equal(JSON.stringify(page.earlyPython.started.sent.map((m) => m.type)), '["init"]'); // another realm's array
});

test("an early start that fails leaves the config and the reason, never an exception", () => {
  const page = load({ crossOriginIsolated: false, Worker: undefined });
  assert.equal(page.earlyPython.started, null);
  assert.equal(JSON.stringify(page.earlyPython.config), JSON.stringify(CONFIG));
  assert.match(page.earlyPython.error, /Worker/);
});

test("an iPad (MacIntel with touch points) is said so in the init request", () => {
  const page = load({ crossOriginIsolated: false, navigator: { platform: "MacIntel", maxTouchPoints: 5 } });
  assert.equal(JSON.parse(page.workers[0].options.name).ipad, true);
  const mac = load({ crossOriginIsolated: false, navigator: { platform: "MacIntel", maxTouchPoints: 0 } });
  assert.equal(JSON.parse(mac.workers[0].options.name).ipad, false);
});
