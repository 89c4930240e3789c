// Entry point of a lesson page. Python's start-up is the slow part, so the worker is
// started first, before the editor and the rest of the page's code are even loaded.
import { PythonRuntime } from "./runtime.js";
import { bindStatus } from "./status.js";

const config = JSON.parse(document.getElementById("page-config").textContent);

const runtime = new PythonRuntime({
  workerURL: config.workerURL,
  indexURL: config.pyodideIndexURL,
  wheelURL: config.wheelURL,
  bootPackages: config.bootPackages,
});
bindStatus(document.querySelector(".py-status"), runtime, { onRetry: () => runtime.start().catch(() => {}) });
runtime.start().catch(() => {}); // the status line reports failures

// Exposed for tests and the curious: this page's runtime, config and (once built) cells.
globalThis.lessonPage = { runtime, config, cells: null };

// Arrays and other events from Python reach the page's components as DOM events, so
// components stay independent of the runtime (they only listen for "lesson:<type>").
runtime.addEventListener("python-event", ({ detail }) => {
  document.dispatchEvent(new CustomEvent(`lesson:${detail.type}`, { detail }));
});

const [{ CellPage }, { initFeatures, registerFeature }] = await Promise.all([
  import("./cells.js"), // pulls in CodeMirror, the largest script of the page
  import("./features.js"),
]);
const cells = new CellPage(document, runtime, config.lesson);
globalThis.lessonPage.cells = cells;

// Quizzes, exercises and widgets load only on pages that have them.
registerFeature("[data-quiz]", "./quiz.js");
registerFeature("[data-exercise]", "./exercises.js");
registerFeature("[data-widget]", "./widgets.js");
registerFeature("[data-copy]", "./copy.js");
initFeatures({ runtime, lesson: config.lesson, root: document, cells });
await cells.ready;
document.body.dataset.cells = "ready"; // every editor is in place
