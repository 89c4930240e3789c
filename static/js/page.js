// Entry point of a lesson page: start Python in a worker right away, then wire up the page.
import { CellPage } from "./cells.js";
import { initFeatures, registerFeature } from "./features.js";
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

// Arrays and other events from Python reach the page's components as DOM events, so
// components stay independent of the runtime (they only listen for "lesson:<type>").
runtime.addEventListener("python-event", ({ detail }) => {
  document.dispatchEvent(new CustomEvent(`lesson:${detail.type}`, { detail }));
});

const cells = new CellPage(document, runtime, config.lesson);

// Quizzes, exercises and widgets load only on pages that have them.
registerFeature("[data-quiz]", "./quiz.js");
registerFeature("[data-exercise]", "./exercises.js");
registerFeature("[data-widget]", "./widgets.js");
initFeatures({ runtime, lesson: config.lesson, root: document, cells });

// Exposed for tests and the curious: the runtime and cells of this page.
globalThis.lessonPage = { runtime, cells, config };
