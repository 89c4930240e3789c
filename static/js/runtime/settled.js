// The one gate of the page's deferrable work: Python is ready and the runs the reader pressed are
// over. The editors and widgets far from the screen are built after it (page.js, widget-loader.js) and
// the idle preload starts after it (preload.js): none of them may compete with a result asked for.

/**
 * Resolves once Python is ready (booted, or restarted and its cells replayed; a start that failed
 * counts too: nothing computes) and the runs pressed by then are over, and those pressed while it
 * waited: it waits again until neither changed while it waited.
 * @param {{ready: Promise|null}} runtime  runtime.js's PythonRuntime, already started (page-runtime.js);
 *   `ready` is replaced by each restart's boot and replay
 * @param {() => (Promise|undefined)} pressed  the promise of the runs pressed so far (cells.js,
 *   CellPage.chain, which never rejects and is replaced as the reader presses Run)
 */
export async function settled(runtime, pressed) {
  for (;;) {
    const chain = pressed();
    const ready = runtime.ready;
    await Promise.allSettled([ready, chain]);
    if (chain === pressed() && ready === runtime.ready) return;
  }
}
