// Starts the Python worker before the rest of the lesson page is even parsed.
// This is a classic script in <head>, on purpose: module scripts (async or not) only run
// once the browser has parsed the whole page, and a long lesson (maths, code, widgets)
// takes a few hundred milliseconds to parse: Python would sit idle all that time.
// runtime.js adopts the worker started here, and calls startPythonWorker() for restarts,
// so this is the one place where a worker is created and told to boot.
"use strict";

/**
 * A new buffer for Stop to interrupt Python in place, or null when this browser cannot have one: that takes a
 * cross-origin isolated page *and* a SharedArrayBuffer that works (WebKitGTK 2.50 reports
 * `crossOriginIsolated` with no SharedArrayBuffer at all). Without it Stop restarts Python (runtime.js).
 * The one check of that feature: runtime.js asks it again for every new worker.
 */
globalThis.newInterruptBuffer = function newInterruptBuffer() {
  if (globalThis.crossOriginIsolated !== true || typeof SharedArrayBuffer !== "function") return null;
  try {
    return new Uint8Array(new SharedArrayBuffer(1));
  } catch {
    return null;
  }
};

/**
 * Create the module worker, which starts booting at once (see below), and give it the
 * interrupt buffer. Messages that arrive before runtime.js takes over are kept in `buffered`.
 * `interruptBuffer` in the result is the one the worker got: null when posting it failed (a browser that
 * will not share the buffer with a worker throws DataCloneError), and Stop then restarts Python.
 */
globalThis.startPythonWorker = function startPythonWorker(config, interruptBuffer) {
  const abs = (url) => new URL(url, document.baseURI).href;
  // The init request (protocol.js's InitRequest; a classic script cannot import it, and
  // runtime.js checks this message against it) travels as the worker's name,
  // which the worker reads as soon as it runs, without waiting for this thread.
  const init = {
    id: 0, type: "init", indexURL: abs(config.indexURL), wheelURL: abs(config.wheelURL), wheelSha256: config.wheelSha256,
    bootPackages: config.bootPackages,
    fontCache: config.fontCache ? { url: abs(config.fontCache.url), path: config.fontCache.path } : null,
    plan: config.plan || null,
    snapshot: config.snapshot ? { ...config.snapshot, url: abs(config.snapshot.url) } : null,
    matplotlibDocs: config.matplotlibDocs ? abs(config.matplotlibDocs) : null,
    // An iPad says "MacIntel" and has touch points; its worker cannot see them (shared/pyodide-seams.mjs, showIPad).
    ipad: navigator.platform === "MacIntel" && navigator.maxTouchPoints > 1,
  };
  const worker = new Worker(abs(config.workerURL), { type: "module", name: JSON.stringify(init) });
  const buffered = [];
  worker.onmessage = (event) => buffered.push(event.data);
  worker.onerror = (event) => {
    event.preventDefault();
    buffered.push({ type: "fatal", error: event.message || "the Python worker failed to start" });
  };
  const sent = [init];
  if (interruptBuffer) {
    const message = { type: "set-interrupt", buffer: interruptBuffer.buffer };
    try {
      worker.postMessage(message);
      sent.push(message);
    } catch {
      interruptBuffer = null;
    }
  }
  return { worker, init, sent, buffered, interruptBuffer, startedAt: performance.now() };
};

// The early start. What it sets, runtime.js and page-runtime.js read with care: should it fail (a browser without
// module workers, say), the page still works without Python (prose, quiz, pictures) and its status says why.
(() => {
  let config = null;
  try {
    // The build names the config's fields as the init request does (build.py, render_pages; start-up's part:
    // sitebuild/startup, page_config).
    config = JSON.parse(document.getElementById("page-config").textContent);
    const started = globalThis.startPythonWorker(config, globalThis.newInterruptBuffer());
    globalThis.earlyPython = { config, started };
  } catch (err) {
    globalThis.earlyPython = { config, started: null, error: String(err?.message ?? err) };
  }
})();
