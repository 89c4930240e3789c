// Starts the Python worker before the rest of the lesson page is even parsed.
// This is a classic script in <head>, on purpose: module scripts (async or not) only run
// once the browser has parsed the whole page, and a long lesson (maths, code, widgets)
// takes a few hundred milliseconds to parse: Python would sit idle all that time.
// runtime.js adopts the worker started here, and calls startPythonWorker() for restarts,
// so this is the one place where a worker is created and told to boot.
"use strict";

/**
 * Create the module worker, which starts booting at once (see below), and give it the
 * interrupt buffer. Messages that arrive before runtime.js takes over are kept in `buffered`.
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
  };
  const worker = new Worker(abs(config.workerURL), { type: "module", name: JSON.stringify(init) });
  const buffered = [];
  worker.onmessage = (event) => buffered.push(event.data);
  worker.onerror = (event) => {
    event.preventDefault();
    buffered.push({ type: "fatal", error: event.message || "the Python worker failed to start" });
  };
  const sent = [init];
  if (interruptBuffer) sent.push({ type: "set-interrupt", buffer: interruptBuffer.buffer });
  if (sent[1]) worker.postMessage(sent[1]);
  return { worker, init, sent, buffered, startedAt: performance.now() };
};

(() => {
  // The build names the config's fields as the init request does (build.py, render_pages).
  const config = JSON.parse(document.getElementById("page-config").textContent);
  // With cross-origin isolation Python can be interrupted in place; otherwise Stop restarts it.
  const interruptBuffer = globalThis.crossOriginIsolated ? new Uint8Array(new SharedArrayBuffer(1)) : null;
  globalThis.earlyPython = { config, interruptBuffer, started: globalThis.startPythonWorker(config, interruptBuffer) };
})();
