// The page's one Python runtime, adopting the worker that start-python.js started before
// the page was parsed. Loaded `async` from <head>; page.js imports the same module.
import { PythonRuntime } from "./runtime.js";

export const config = JSON.parse(document.getElementById("page-config").textContent);

// start-python.js (a classic script in <head>) has already started the worker; adopt it.
const early = globalThis.earlyPython;
export const runtime = new PythonRuntime(early.config, early.interruptBuffer);
runtime.start().then(
  // Offline support waits for Python: it must not compete with the start-up it caches.
  (info) => import("./offline.js").then((m) =>
    m.keepForOffline(config.serviceWorkerURL, document.querySelector(".offline-note"), info?.archives)),
  () => {}, // the status line reports failures
);

// Arrays and other events from Python reach the page's components as DOM events, so
// components stay independent of the runtime (they only listen for "lesson:<type>").
runtime.addEventListener("python-event", ({ detail }) => {
  document.dispatchEvent(new CustomEvent(`lesson:${detail.type}`, { detail }));
});

// Exposed for tests and the curious: this page's runtime, config, (once built) cells, and the idle preload (page.js).
globalThis.lessonPage = { runtime, config, cells: null, preload: null };
