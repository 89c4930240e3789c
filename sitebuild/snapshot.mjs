// Make Pyodide's memory snapshot at build time: the interpreter with numpy and the lesson's Python
// already imported, so the page's worker restores it instead of starting Python.
//
// Usage: node snapshot.mjs <pyodide dist dir> <lessonpy wheel> <output snapshot> <output meta json> <packages,...>
//
// A snapshot is the whole wasm memory. What lives outside it, the page must rebuild exactly as it was:
// - the dynamic libraries' code and their function-table entries: each numpy library is instantiated
//   again at the memory base and table base it had here (recorded below, in load order);
// - the dlopen handles Python keeps (pointers into memory) map to libraries in a JS table: recorded;
// - the file system is JS objects: the page writes numpy's wheel and the lesson's wheel again;
// - Pyodide's list of loaded packages: recorded (its snapshot check wants it empty, so it is emptied
//   around makeMemorySnapshot).
// Anything that makes the function table differ (another Pyodide, another set of libraries) is
// caught in the page by comparing table sizes before the memory is restored.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

// What the worker passes to loadPyodide (static/js/worker.js): the environment is part of the image.
const ENV = { MPLBACKEND: "Agg", HOME: "/home/pyodide" };
const SITE_PACKAGES = "/lib/python3.12/site-packages/";
// Imported here so the reader's first cells find them imported; the warm-up runs the paths the
// first cells take (a generator, matmul, a softmax), whose lazily built state is then in the image.
const WARM_UP = `
import gc, importlib
importlib.invalidate_caches()
import numpy, numpy.random, numpy.linalg, numpy.fft
import lessonpy.pyodide_glue, lessonpy.runner, lessonpy.show, lessonpy.attention, lessonpy.restored
_x = numpy.random.default_rng(0).standard_normal((4, 8))
_w = numpy.exp(_x @ _x.T); _w /= _w.sum(axis=-1, keepdims=True)
del _x, _w
gc.collect()
`;

const [distDir, wheel, outSnapshot, outMeta, packages] = process.argv.slice(2);
if (!packages) {
  console.error("usage: node snapshot.mjs <pyodide dist dir> <lessonpy wheel> <output snapshot> <output meta json> <packages,...>");
  process.exit(2);
}
const indexURL = path.resolve(distDir) + path.sep;

// The memory and table base of every library instantiated (they are the imports __memory_base and
// __table_base of its instantiation); loadDynamicLibrary below pairs them with the library's name.
const instantiated = [];
const instantiate = WebAssembly.instantiate;
WebAssembly.instantiate = async function (source, imports) {
  const result = await instantiate.call(this, source, imports);
  const base = imports?.env?.__memory_base; // only a side module (a dynamic library) has one
  if (base !== undefined) {
    instantiated.push({ memoryBase: Number(base), tableBase: Number(imports.env.__table_base) });
  }
  return result;
};

async function main() {
  await import(pathToFileURL(indexURL + "pyodide.asm.js").href); // defines globalThis._createPyodideModule
  const { loadPyodide } = await import(pathToFileURL(indexURL + "pyodide.mjs").href);
  let module = null;
  let tableAtStart = 0;
  const dynlibs = [];
  const createModule = globalThis._createPyodideModule;
  globalThis._createPyodideModule = async (settings) => {
    module = await createModule(settings);
    tableAtStart = module.wasmTable.length;
    const load = module.loadDynamicLibrary;
    module.loadDynamicLibrary = async (name, flags, localScope, handle) => {
      const before = instantiated.length;
      const result = await load(name, flags, localScope, handle);
      const mine = instantiated.slice(before);
      // A library that pulls in another would instantiate twice; numpy's do not, and the page's
      // reload could not tell the two apart, so refuse rather than record a wrong base.
      if (mine.length !== 1) throw new Error(`${name}: ${mine.length} instantiations; cannot record its bases`);
      dynlibs.push({ name, global: Boolean(flags.global), ...mine[0] });
      return result;
    };
    return module;
  };

  const pyodide = await loadPyodide({
    indexURL, env: ENV, packages: packages.split(","), _makeSnapshot: true, // the page's boot packages
    stdout: (s) => console.error(s), stderr: (s) => console.error(s),
  });
  pyodide.unpackArchive(new Uint8Array(readFileSync(wheel)), "wheel", { extractDir: SITE_PACKAGES });
  pyodide.runPython(WARM_UP);

  const loaded = { ...pyodide.loadedPackages };
  for (const name of Object.keys(loaded)) delete pyodide.loadedPackages[name];
  const snapshot = pyodide.makeMemorySnapshot();
  Object.assign(pyodide.loadedPackages, loaded);

  const handles = Object.entries(module.LDSO.loadedLibsByHandle)
    .filter(([, lib]) => lib.name !== "__main__")
    .map(([handle, lib]) => [Number(handle), lib.name]);
  writeFileSync(outSnapshot, snapshot);
  writeFileSync(outMeta, JSON.stringify({
    bytes: snapshot.length, tableAtStart, tableLength: module.wasmTable.length, dynlibs, handles, loaded,
  }));
  console.log(JSON.stringify({ bytes: snapshot.length, dynlibs: dynlibs.length, handles: handles.length }));
}

// One line saying what failed, not Node's dump of the (minified, megabyte-long) line that threw.
main().catch((err) => {
  console.error(`snapshot.mjs: ${err?.message ?? err}`);
  process.exit(1);
});
