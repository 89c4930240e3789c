// Every hook this site puts into Pyodide 0.27.7's internals, in one file: the worker's two boots (worker/boot.js:
// the restore from the build's memory snapshot, and the normal start whose installs unpack without Python) and
// the build's snapshot step (sitebuild/startup/snapshot.mjs) replace Pyodide's functions only through these.
// Beyond the hooks, the restore (worker/snapshot.js) and the snapshot step also read the module's internals
// (LDSO, API.restoreSnapshot, loadDynamicLibrary, wasmTable, Emscripten's settings): they run only when these
// seams are live.
//
// One version check turns all of them off: on any other Pyodide, `seamsFor(version)` gives seams that hook
// nothing, the worker boots the plain way (loadPyodide, its own unpacking, no restore) and the build makes no
// snapshot, and the page works, only slower. A Pyodide upgrade is a job for this file first. What is known to change (read from Pyodide's
// sources; re-check each against the new version before turning the seams back on):
// - 0.28 loads dynamic libraries through Emscripten's `_emscripten_dlopen_promise`, not `loadDynamicLibrary`
//   with a `struct dso` handle: the restore's library loading (DSO below, worker/snapshot.js loadLibraries)
//   and snapshot.mjs's record of each library's bases need rewriting;
// - Python 3.13 in 0.28 moves site-packages and the standard library's zip (SITE_PACKAGES, STDLIB_ZIP, which
//   the builder reads from here, and lessonpy.runtime.stdlib_rest's CORE and REST, which Python in the page keeps);
// - from Pyodide 314 `pyodide.asm.js` is renamed, so _createPyodideModule (hookCreateModule) and the
//   restore's script import (worker/snapshot.js startRuntime) change with it;
// - `API.finalizeBootstrap`, `API.restoreSnapshot`, `API.package_loader.unpack_buffer` and `API.importlib`
//   are private: check their signatures and when Pyodide calls them (load-package.ts, api.ts).

/** The Pyodide these seams were written against: the one the site ships (package.json pins it). */
export const PYODIDE_VERSION = "0.27.7";

// Pyodide's in-page paths and rules, one definition for the page, the build's Node steps and the builder
// (sitebuild/startup/seams.py reads these lines: keep each `export const` on one line).
/** Where Pyodide 0.27's loadPackage installs, and where the worker unpacks the lesson's wheel. */
export const SITE_PACKAGES = "/lib/python3.12/site-packages/";
/** The standard library's zip, as Pyodide 0.27 mounts it. */
export const STDLIB_ZIP = "/lib/python312.zip/";
/** Which of a wheel's files are shared libraries, as Pyodide's package loader picks them before asking
 * should_load_dynlib (pyodide._package_loader.SHAREDLIB_REGEX): install.js, and the builder's wheel split. */
export const SHARED_LIBRARY = /\.so(.\d+)*$/;

// Emscripten's `struct dso` (dynlink.c), as Pyodide 0.27.7's build lays it out: mem_allocated (u8) at 8,
// mem_addr at 12, table_addr at 20, file_data at 28 and its size at 32. The restore places a library at
// recorded bases through one such struct in low memory (below Emscripten's data, which starts at 1024);
// the snapshot step frees the copies of the libraries' files that dlopen keeps in each library's struct.
export const DSO = { at: 64, bytes: 36, memAllocated: 8, memAddr: 12, tableAddr: 20, fileData: 28, fileSize: 32 };

// WebAssembly's stack switching (JSPI): Pyodide looks for it once, when its module is created.
const JSPI_KEYS = ["Suspending", "Suspender", "promising"];

/** The seams for the Pyodide whose pyodide.mjs says `version`: live ones for PYODIDE_VERSION, else inert. */
export function seamsFor(version) {
  return version === PYODIDE_VERSION ? LIVE : inert(version);
}

const LIVE = {
  live: true,
  why: null,
  hookCreateModule,
  hideJSPI,
  showIPad,
  afterFinalizeBootstrap,
  hookUnpackBuffer,
  setInvalidateCaches,
  swapFetch,
  swapInstantiate,
  replaceInstantiateWasm,
  sameTableFunctions,
};

/** Seams that leave Pyodide as it is: every hook is a no-op, and `live` is false (no restore). */
function inert(version) {
  const nothing = () => () => {};
  return {
    live: false,
    why: `Pyodide ${version}: the site's hooks are written for ${PYODIDE_VERSION} (static/js/shared/pyodide-seams.mjs)`,
    hookCreateModule: nothing,
    hideJSPI: nothing,
    showIPad: nothing,
    afterFinalizeBootstrap: () => {},
    hookUnpackBuffer: () => false,
    setInvalidateCaches: () => false,
    swapFetch: nothing,
    swapInstantiate: nothing,
    replaceInstantiateWasm: () => new Promise(() => {}), // Pyodide's own, as it is: nothing to race
    sameTableFunctions: nothing,
  };
}

/**
 * Module creation. Pyodide's script (pyodide.asm.js) sets the global _createPyodideModule when it runs,
 * and loadPyodide calls it: make that global `wrap(create)` of the script's own, whether the script has run
 * already or runs later, so a wrapper sees the module (its API, FS, table) before Python boots in it.
 * Returns what undoes it: the script's own function is the global again.
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

/**
 * Hide JSPI from WebAssembly until the module exists, on either boot; returns what puts it back. With it,
 * Pyodide adds a function to the table, so a restore's table would differ from the image's (made under
 * Node, which has no JSPI); and a normal boot with it would be another interpreter than a restored one.
 * The lesson needs nothing JSPI gives (`pyodide.ffi.run_sync`).
 */
export function hideJSPI() {
  const hidden = Object.fromEntries(JSPI_KEYS.filter((k) => k in WebAssembly).map((k) => [k, WebAssembly[k]]));
  for (const key of Object.keys(hidden)) delete WebAssembly[key];
  return () => Object.assign(WebAssembly, hidden);
}

/**
 * Let Pyodide see an iPad as iOS until the module exists, on either boot; returns what undoes it. 0.27.7
 * decides "iOS" from navigator.platform alone (pyodide.asm.js, getPyEMCountArgsPtr), and an iPad reports
 * "MacIntel" there, so it builds its WebAssembly-GC helper, which crashes iPadOS 18's Safari; 0.28 also
 * counts a "MacIntel" with touch points as iOS (pyodide#5695, cpython#135388). A worker has no
 * maxTouchPoints: the page tells it (start-python.js, the init request's `ipad`). A no-op when `ipad` is false.
 */
export function showIPad(ipad) {
  const navigator = globalThis.navigator;
  if (!ipad || !navigator) return () => {};
  const own = Object.getOwnPropertyDescriptor(navigator, "platform"); // a worker's is its prototype's
  Object.defineProperty(navigator, "platform", { configurable: true, get: () => "iPad" });
  return () => (own ? Object.defineProperty(navigator, "platform", own) : delete navigator.platform);
}

/**
 * finalizeBootstrap, once: `replace(finalize, args)` is called instead of the module's own (the next call
 * is the module's own again). A restore passes the image's config in; a normal boot hooks the package
 * loader as it returns, before loadPyodide installs the boot packages (0.27.7: downloadAndInstall awaits
 * bootstrapFinalizedPromise, which finalizeBootstrap resolves, then reads API.package_loader).
 */
export function afterFinalizeBootstrap(module, replace) {
  const finalize = module.API.finalizeBootstrap;
  module.API.finalizeBootstrap = (...args) => {
    module.API.finalizeBootstrap = finalize;
    return replace(finalize, args);
  };
}

/**
 * The package loader: every install's unpack_buffer (0.27.7 reads API.package_loader.unpack_buffer at each
 * install, in load-package.ts and unpackArchive) goes to `unpack(kwargs, {python, shouldLoadDynlib})`, which
 * may hand the call on to `python(kwargs)`, Pyodide's own; `shouldLoadDynlib(path)` is Pyodide's rule for
 * which of a wheel's shared libraries it loads. Returns true.
 */
export function hookUnpackBuffer(pyodide, unpack) {
  const api = pyodide._api;
  const loader = api.package_loader;
  const own = { python: (kwargs) => loader.unpack_buffer.callKwargs(kwargs), shouldLoadDynlib: (path) => loader.should_load_dynlib(path) };
  api.package_loader = new Proxy(loader, {
    get: (object, prop) => (prop === "unpack_buffer" ? { callKwargs: (kwargs) => unpack(kwargs, own) } : Reflect.get(object, prop)),
  });
  return true;
}

/**
 * The cache invalidation Pyodide's loadPackage ends its installs with (0.27.7: API.importlib.invalidate_caches(),
 * a full importlib.invalidate_caches(), ≈70 ms; its only use of API.importlib after start-up) becomes
 * `invalidate`. Returns true.
 */
export function setInvalidateCaches(pyodide, invalidate) {
  pyodide._api.importlib = { invalidate_caches: invalidate };
  return true;
}

/**
 * The wasm's instantiation. Pyodide's (0.27.7: getInstantiateWasmFunc, Emscripten's settings.instantiateWasm)
 * only warns on the console when the download or the compile fails, and loadPyodide then never settles: the
 * page would wait for ever. `settings.instantiateWasm` becomes `instantiate(imports)`, which resolves to
 * {instance, module}; returns a promise that rejects with its failure, for the caller to race the module's
 * creation with. Settings without one (Node, which reads the file itself) are left as they are.
 */
export function replaceInstantiateWasm(settings, instantiate) {
  let fail;
  const failed = new Promise((_, reject) => (fail = reject));
  failed.catch(() => {}); // raced by the caller; unraced (no instantiateWasm) it never settles
  if (settings.instantiateWasm) {
    settings.instantiateWasm = (imports, success) => {
      instantiate(imports).then(({ instance, module }) => success(instance, module)).catch(fail);
      return {}; // Emscripten's sign that instantiation is under way
    };
  }
  return failed;
}

/**
 * The main module's table slots, as its start-up looks them up; call it with the instance before Emscripten
 * sees it (settings.instantiateWasm's success), undo it once the module is created. Returns what undoes it.
 *
 * Why: Emscripten's dynamic linking (0.27.7: updateGOT and reportUndefinedSymbols as the module starts) gives
 * each function the GOT.func imports name its table slot through addFunction, which reuses a slot the function
 * already has only when it finds the function's JS object among wasmTable.get(i) (updateTableMap, a WeakMap
 * keyed by those objects), and appends a slot otherwise. V8 (Node, where the build makes the image, and
 * Chromium) and SpiderMonkey give a wasm function one JS object, from the exports and from a table alike.
 * JavaScriptCore (Safari, WebKitGTK 2.50) gives table.get(i) another object than the export: every lookup
 * misses, and the 1,155 exported functions that the main module's table holds and its GOT.func names get a
 * second slot (13,071 slots at start-up, not 11,916). The function pointers in the image are then not the
 * module's (Python compares them: `tp_new == object_new`), and numpy's libraries would go where those slots are.
 *
 * So, only on an engine whose table.get differs from the export (a probe of a one-function module) and only
 * while the module starts (the slots updateTableMap reads then stay in Emscripten's mirror of the table),
 * table.get gives the main module's own export for its slots. A wasm function's `name` is its index in its
 * module (WebAssembly's JS API), and those slots hold only the main module's own functions: its elem segment
 * names no import (and those it imports are JS functions, not named by a number). numpy's libraries need
 * nothing of the kind: their tables hold no function they export. Their loads keep the table's length check
 * (worker/snapshot.js): an engine that still differs boots the normal way.
 */
export function sameTableFunctions(imports, instance) {
  const table = imports?.env?.__indirect_function_table;
  if (!(table instanceof WebAssembly.Table) || tableKeepsIdentity()) return () => {};
  const exported = new Map();
  for (const fn of Object.values(instance.exports)) {
    if (typeof fn === "function" && /^\d+$/.test(fn.name)) exported.set(fn.name, fn);
  }
  const own = table.length; // the main module's slots; addFunction's and the libraries' come after
  const get = table.get;
  table.get = function (index, ...rest) {
    const fn = get.call(this, index, ...rest);
    const export_ = fn && index < own ? exported.get(fn.name) : undefined;
    return export_ && export_.length === fn.length ? export_ : fn;
  };
  return () => delete table.get; // WebAssembly.Table.prototype.get again
}

// A module of one function, `f`, exported and in its table `t` at 0 (WebAssembly's binary format, by hand).
const ONE_FUNCTION_MODULE = [
  0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, // magic, version
  1, 5, 1, 0x60, 0, 1, 0x7f, // types: () -> i32
  3, 2, 1, 0, // functions: one, of type 0
  4, 4, 1, 0x70, 0, 1, // tables: funcref, 1 slot
  7, 9, 2, 1, 0x66, 0, 0, 1, 0x74, 1, 0, // exports: "f" function 0, "t" table 0
  9, 7, 1, 0, 0x41, 0, 0x0b, 1, 0, // elements: function 0 at slot 0
  0x0a, 6, 1, 4, 0, 0x41, 0x2a, 0x0b, // code: i32.const 42
];

/** Whether this engine's table.get(i) is the very export of the function in slot i (V8, SpiderMonkey: yes). */
function tableKeepsIdentity() {
  try {
    const { exports } = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(ONE_FUNCTION_MODULE)));
    return exports.t.get(0) === exports.f;
  } catch {
    return true; // no probe, no change: the table's length check still decides
  }
}

/** globalThis.fetch is `fetchFn` (given the fetch it replaces) while loadPyodide runs; returns what undoes it. */
export function swapFetch(fetchFn) {
  const network = globalThis.fetch;
  globalThis.fetch = fetchFn(network);
  return () => {
    globalThis.fetch = network;
  };
}

/**
 * WebAssembly.instantiate is `instantiateFn(own)` (own: the real one, bound) until undone: Emscripten's
 * loadDynamicLibrary instantiates a library's bytes through it and takes no module of ours. Returns what undoes it.
 */
export function swapInstantiate(instantiateFn) {
  const instantiate = WebAssembly.instantiate;
  WebAssembly.instantiate = instantiateFn(instantiate.bind(WebAssembly));
  return () => {
    WebAssembly.instantiate = instantiate;
  };
}
