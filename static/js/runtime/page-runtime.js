// The page's one Python runtime, adopting the worker that start-python.js started before
// the page was parsed. Loaded `async` from <head>; page.js imports the same module.
import { PythonRuntime } from "./runtime.js";

// start-python.js (a classic script in <head>) has already read the config and started the worker, which the
// runtime adopts. Should that script have failed, nothing here may throw: the page's prose, quiz and pictures
// work without Python, and the runtime's start fails with a reason the status line shows.
export const config = globalThis.earlyPython?.config ?? readConfig();
export const runtime = new PythonRuntime(config);

function readConfig() {
  try {
    return JSON.parse(document.getElementById("page-config").textContent);
  } catch {
    return {};
  }
}
// Offline support waits for Python: it must not compete with the start-up it caches. A start that failed (the
// status line says so and offers "Try again") waits for the start the reader's retry makes: offline support
// used to be left out after one.
const keepOffline = (info) => import("./offline.js").then((m) =>
  m.keepForOffline(config.serviceWorkerURL, document.querySelector(".offline-note"), info?.archives));
const nextReady = () => new Promise((resolve) => {
  runtime.addEventListener("status", function onStatus({ detail }) {
    if (detail.state !== "ready") return;
    runtime.removeEventListener("status", onStatus);
    resolve();
  });
});
const whenStarted = () => runtime.start().then(keepOffline, () => nextReady().then(whenStarted));
whenStarted();

// Arrays and other events from Python reach the page's components as DOM events, so
// components stay independent of the runtime (they only listen for "lesson:<type>").
runtime.addEventListener("python-event", ({ detail }) => {
  document.dispatchEvent(new CustomEvent(`lesson:${detail.type}`, { detail }));
});

// Exposed for tests and the curious: this page's runtime, config, (once built) cells, and the idle preload (page.js).
globalThis.lessonPage = { runtime, config, cells: null, preload: null };
