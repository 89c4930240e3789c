// What Python loads ahead of the reader, and when. The worker also fetches the standard library's
// rest then (worker.js, fetchStdlibRest: the page boots with its core only). A first figure would otherwise wait for
// matplotlib's download (≈7 MB with its dependencies), its install, its import and the first
// render's one-time set-up, 1-2 s in all. So once the reader has had a first output and the runs
// they pressed are done, the worker downloads and installs matplotlib in the background, then takes
// the steps below (none at the moment), one at a time, each only while no request is being
// handled: a Run pressed meanwhile waits for one step at the most (worker.js, preload). Nothing is loaded before that first output (it would
// compete with it), nor for a reader who runs nothing, nor when the browser asks to save data.
export const IDLE_PRELOAD = Object.freeze({
  packages: ["matplotlib"],
  // No import steps for now. With them ("matplotlib", "matplotlib.font_manager", "matplotlib.text",
  // "matplotlib.axes", "matplotlib.figure", "matplotlib.pyplot", "lessonpy.figures:warm_up") a
  // figure asked for afterwards took 0.19 s instead of 2.5-2.9 s (loaded machine), but a Stop of the
  // live MiniLM forward pass after even the first step ended in Pyodide's "Error occurred while
  // formatting traceback" (PyodideInternalError) instead of KeyboardInterrupt
  // (tests/test_realheads_live_browser.py); a reader's own `import matplotlib.pyplot` does not do
  // that. Until that is understood only the download and install are done ahead.
  steps: [],
});

/**
 * Preload IDLE_PRELOAD once the reader's first run has replied and the runs pressed by then are over
 * (`pressed()`: the promise of those, which grows as the reader presses Run). Resolves with the
 * worker's reply, or null when nothing was preloaded (saving data, or Python restarted first).
 */
export async function preloadAfterFirstRun(runtime, pressed) {
  if (globalThis.navigator?.connection?.saveData) return null;
  await runtime.firstRun;
  for (let chain = pressed(); ; chain = pressed()) {
    await chain;
    if (chain === pressed()) break; // nothing pressed meanwhile
  }
  return runtime.preload(IDLE_PRELOAD.packages, IDLE_PRELOAD.steps).catch(() => null);
}
