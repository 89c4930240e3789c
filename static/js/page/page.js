// Entry point of a lesson page, run once the page is parsed. Python is already starting
// (page-runtime.js); this wires up the status line, the cells and the page's optional features.
import { config, runtime } from "../runtime/page-runtime.js";
import { preloadAfterFirstRun } from "../runtime/preload.js";
import { settled } from "../runtime/settled.js";
import { CellPage } from "./cells.js";
import { initFeatures, registerFeature } from "./features.js";
import { readerMoved } from "./idle.js";
import { buildAllWhenIdle, deferNearEditors } from "./lazy-editor.js"; // CodeMirror itself loads later, when the first editor is built
import { bindStatus } from "./status.js";
import * as storage from "./storage.js";

bindStatus(document.querySelector(".py-status"), runtime, {
  onRetry: () => runtime.start().catch(() => {}),
  restartButton: document.querySelector(".py-restart"),
  onRestart: () => runtime.restart().catch(() => {}),
});

// Storage full or turned off: say so once; edits stay in the editors while the page is open.
storage.onSaveFailure((reason) => {
  const note = document.createElement("p");
  note.className = "storage-notice";
  note.setAttribute("role", "alert");
  note.textContent = reason === "full"
    ? "This browser's storage for the site is full, so your edits and answers are not saved: they stay on this page until you close or reload it. Copy anything you want to keep."
    : "This browser does not let the page save anything, so your edits and answers are not saved: they stay on this page until you close or reload it. Copy anything you want to keep.";
  document.querySelector(".site-header").append(note);
});
// Even the editors near the screen wait until Python has started and the runs pressed meanwhile are over
// (settled.js), and are not built while Python computes: the stand-ins show the code, Run works on them,
// and one the reader clicks becomes an editor at once. Built beside Python's start, they delayed a first
// output by about 0.1 s on a 2-core machine (bench/startup.py, docs/speed.md).
let cells = null;
deferNearEditors(settled(runtime, () => cells?.chain), () => runtime.busy);
cells = new CellPage(document, runtime, config.lesson);
globalThis.lessonPage.cells = cells;
// matplotlib, in the worker's idle time after the reader's first output (preload.js)
globalThis.lessonPage.preload = preloadAfterFirstRun(runtime, () => cells.chain);

// Quizzes, exercises and widgets load only on pages that have them.
registerFeature("[data-quiz]", "quiz.js", () => import("./quiz.js"));
registerFeature("[data-exercise]", "exercises.js", () => import("./exercises.js"));
registerFeature("[data-widget]", "widget-loader.js", () => import("./widget-loader.js"));
registerFeature("[data-copy]", "copy.js", () => import("./copy.js"));
registerFeature("pre[data-tokens]", "highlight.js", () => import("./highlight.js"));
registerFeature("[data-notebook]", "notebook.js", () => import("./notebook.js"));
registerFeature(".table-scroll", "scrollcue.js", () => import("./components/scrollcue.js"));
registerFeature("code.math-later", "maths.js", () => import("./maths.js"));
document.body.dataset.cells = "ready"; // every cell runs (Run, Shift+Enter); editors come as the reader nears them
// the widgets' pre-rendered data, beside the page (build.py, WIDGET_DATA): fetched when the first widget nears
const widgetsURL = config.widgets ? new URL(config.widgets, document.baseURI).href : null;
// the MathML of the big formulas far down (build.py, LATER_MATHS): fetched when Python settles or one nears
const mathsURL = config.maths ? new URL(config.maths, document.baseURI).href : null;
const features = initFeatures({ runtime, lesson: config.lesson, root: document, cells, cellIds: config.cells, widgetsURL, mathsURL });
// The editors far from the screen are built in idle time once every feature (exercises included)
// has made its editors, Python has settled (settled.js) and the reader has moved on the page
// (idle.js, readerMoved): nothing of them is needed before the first output, nor on the first screen.
await Promise.all([features, settled(runtime, () => cells.chain), readerMoved()]);
await buildAllWhenIdle(() => runtime.busy);
