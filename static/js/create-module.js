// Pyodide's module factory, wrapped. Pyodide's script (pyodide.asm.js) sets the global
// _createPyodideModule when it runs, and loadPyodide calls it: a wrapper sees the module (its API, FS,
// table) before loadPyodide boots Python in it. snapshot.js restores the image there; install.js makes
// the boot packages' installs unpack without Python.

/**
 * Make globalThis._createPyodideModule (set by Pyodide's script when it runs, called by loadPyodide)
 * `wrap(create)` of the script's own, whether the script has run already or runs later. Returns what
 * undoes it: the script's own function is the global again (a normal boot after a failed restore).
 */
export function hookCreateModule(wrap) {
  let create = globalThis._createPyodideModule;
  Object.defineProperty(globalThis, "_createPyodideModule", {
    configurable: true,
    get: () => (create ? wrap(create) : undefined),
    set: (fn) => {
      create = fn;
    },
  });
  return () => {
    delete globalThis._createPyodideModule;
    if (create) globalThis._createPyodideModule = create;
  };
}
