// What Python loads ahead of the reader, and when. A first figure would otherwise wait for
// matplotlib's download (≈7 MB with its dependencies), its install, its import and the first
// render's one-time set-up, 1-2 s in all. So once the reader has had a first output and the runs
// they pressed are done, the worker downloads matplotlib, its dependencies and the standard
// library's rest in the background (runs go on meanwhile; the page booted with the library's core
// only), then installs the packages from those bytes, each as a request of its own once the runs
// pressed by then are done: a run pressed meanwhile waits for one package's install at most
// (worker.js, idle preload, says why). A run that imports matplotlib before then installs it
// itself, from the same download (downloads.js): each wheel is read once. Nothing is loaded before
// that first output (it would compete with it), nor for a reader who runs nothing, nor when the
// browser asks to save data. Last, matplotlib.pyplot is imported (a queued request too), so a figure
// asked for afterwards pays only its drawing: 0.19 s instead of 2.5-2.9 s on a loaded machine. It was
// off for a while: with it (and with quicker installs) the live tests more often saw Pyodide's "Error
// occurred while formatting traceback" instead of the exception a widget's call raised; such an
// exception now crosses to JavaScript as text (lessonpy.runtime.pyodide_glue.call), never raised across.
import { inTurn } from "./in-turn.js";
import { settled } from "./settled.js";

export const IDLE_PRELOAD = Object.freeze({ packages: ["matplotlib"], imports: ["matplotlib.pyplot"] });

/**
 * Preload IDLE_PRELOAD once the reader's first run has replied and Python has settled (settled.js;
 * `pressed()`: the promise of the runs pressed so far). Resolves with {loaded, imported} (the packages
 * it installed, the modules it imported) once it has completed, or null when it did not (saving data,
 * or a restart, a failed download, install or import ahead ended it; packages installed before that stay
 * installed).
 */
export async function preloadAfterFirstRun(runtime, pressed) {
  if (globalThis.navigator?.connection?.saveData) return null;
  await runtime.firstRun;
  // A new interpreter (a restart) has a new file system: the rests the first one was given after its first
  // output (the standard library's, numpy's after a restore) are downloaded and written again once it has
  // settled, no packages (an install waits for a cell's import). Files that are not modules (numpy's
  // metadata) come only this way: the finder fetches a rest only for an import.
  runtime.addEventListener("restarted", () => {
    settled(runtime, pressed).then(() => inTurn(() => runtime.prefetch([]))).catch(() => {});
  });
  try {
    await settled(runtime, pressed);
    // dependencies first; after the service worker's precache, if under way (in-turn.js)
    const { packages } = await inTurn(() => runtime.prefetch(IDLE_PRELOAD.packages));
    const loaded = [];
    for (const name of packages) {
      await settled(runtime, pressed); // runs pressed meanwhile go first
      loaded.push(...(await runtime.preload([name])).loaded);
    }
    await settled(runtime, pressed);
    const { imported } = await runtime.preload([], IDLE_PRELOAD.imports);
    return { loaded, imported };
  } catch {
    return null;
  }
}
