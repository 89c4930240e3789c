// Make Pyodide's memory snapshot at build time: the interpreter with numpy and the lesson's Python
// already imported, so the page's worker restores it instead of starting Python.
//
// Usage: node snapshot.mjs <pyodide dist dir> <lessonpy wheel> <output snapshot> <output meta json> <packages,...>
//
// A snapshot is the whole wasm memory. What lives outside it, the page must rebuild exactly as it was:
// - the dynamic libraries' code and their function-table entries: each numpy library is instantiated
//   again at the memory base and table base it had here (recorded below, in load order);
// - the dlopen handles Python keeps (pointers into memory) map to libraries in a JS table: recorded;
// - the file system is JS objects: the page writes numpy's libraries and the lesson's wheel again (numpy's
//   other files come after the first output: sitebuild/startup/wheel_split.py);
// - Pyodide's list of loaded packages: recorded (its snapshot check wants it empty, so it is emptied
//   around makeMemorySnapshot).
// Anything that makes the function table differ (another Pyodide, another set of libraries) is
// caught in the page by comparing table sizes before the memory is restored.
//
// Memory the restored interpreter never reads is zeroed before the image is taken, so that it costs
// next to nothing compressed (clearUnused): the copies of numpy's libraries that dlopen keeps, the heap's
// free chunks and the stack below its pointer.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
// What the worker passes to loadPyodide (static/js/worker/boot.js): the environment is part of the image.
import { PYTHON_ENV } from "../../static/js/shared/python-env.mjs";
// The hooks into Pyodide's internals, the page's (one file; inert on another Pyodide, and then no snapshot).
import { DSO, SITE_PACKAGES, seamsFor } from "../../static/js/shared/pyodide-seams.mjs";
// The program's name (sys.executable, argv[0]) as Emscripten has it in a browser, the page's. Under Node it
// would be this script's absolute path: the image would carry the build machine's folders to every reader,
// and the path's length would move what Python allocates after it, numpy's libraries among them, so two
// checkouts would make different images under one key.
const PROGRAM = "./this.program";
// What the image holds imported and warmed up (its docstring says why), run before the image is taken.
const WARM_UP = readFileSync(new URL("./in_pyodide/snapshot_warm_up.py", import.meta.url), "utf-8");

// Emscripten's `struct dso` (DSO: static/js/worker/snapshot.js writes the same struct): the file's bytes at
// DSO.fileData, their size at DSO.fileSize.
// dlmalloc's chunk header: the head word (size | CINUSE 2 | PINUSE 1) 4 bytes into the chunk, the user's
// bytes from 8. A free chunk keeps its list links in its first user words (fd, bk; from 256 bytes on, a tree
// chunk also child[2], parent, index), the rest is whatever was freed there.
const HEAD = 4;
const CINUSE = 2;
const LINKS_SMALL = 16;
const LINKS_TREE = 32;
const TREE_SIZE = 256;

/**
 * Zero what the restored interpreter never reads, and say how much (bytes):
 * - `libraryCopies`: dlopen (Emscripten's dynlink.c) reads each library's file into the heap and keeps it
 *   in the library's `struct dso` so that other threads could load it too; this build has no threads and
 *   the page loads the libraries from the wheel's files (static/js/worker/snapshot.js), so they are freed;
 * - `freeHeap`: the bytes of dlmalloc's free chunks, their links kept (Pyodide builds CPython without
 *   pymalloc, so every Python object is a malloc chunk and a freed one leaves its bytes here);
 * - `stack`: the stack below its pointer (no wasm function is running while JS calls this).
 * The walk over the heap is checked against dlmalloc's own count (mallinfo): another allocator or
 * layout stops the snapshot rather than zeroing live memory.
 */
function clearUnused(module) {
  const U32 = module.HEAPU32;
  let libraryCopies = 0;
  for (const [handle, lib] of Object.entries(module.LDSO.loadedLibsByHandle)) {
    const at = Number(handle);
    if (lib.name === "__main__" || !U32[(at + DSO.fileData) >> 2]) continue;
    libraryCopies += U32[(at + DSO.fileSize) >> 2];
    module._free(U32[(at + DSO.fileData) >> 2]);
    U32[(at + DSO.fileData) >> 2] = 0;
    U32[(at + DSO.fileSize) >> 2] = 0;
  }
  const info = mallinfo(module);
  const heapEnd = U32[module._emscripten_get_sbrk_ptr() >> 2];
  const sizeAt = (chunk) => U32[(chunk + HEAD) >> 2] & ~7;
  // The top chunk (size info.topSize) is followed by a fake chunk of dlmalloc's own that ends at the break.
  const isTop = (chunk) => sizeAt(chunk) === info.topSize && chunk + info.topSize + sizeAt(chunk + info.topSize) === heapEnd;
  let chunk = module.___heap_base;
  let inChunks = 0, free = 0, freeChunks = 0, freeHeap = 0;
  while (chunk < heapEnd && sizeAt(chunk) > 0 && !isTop(chunk)) {
    const size = sizeAt(chunk);
    inChunks += size;
    if (!(U32[(chunk + HEAD) >> 2] & CINUSE)) {
      const from = chunk + (size >= TREE_SIZE ? LINKS_TREE : LINKS_SMALL);
      if (chunk + size > from) {
        module.HEAPU8.fill(0, from, chunk + size);
        freeHeap += chunk + size - from;
      }
      free += size;
      freeChunks++;
    }
    chunk += size;
  }
  // mallinfo counts the top chunk and the fake one after it as one free chunk, and all of them in arena.
  const topAndFoot = heapEnd - chunk;
  if (!isTop(chunk) || inChunks + topAndFoot !== info.arena || free + topAndFoot !== info.free || freeChunks + 1 !== info.freeChunks) {
    throw new Error(`the heap walk does not match dlmalloc's mallinfo (${JSON.stringify(info)}); not a layout this script knows`);
  }
  module.HEAPU8.fill(0, chunk + 8, chunk + info.topSize); // the top chunk's own bytes (its head stays)
  freeHeap += info.topSize - 8;
  const stackEnd = module._emscripten_stack_get_end();
  const stack = module.stackSave() - stackEnd;
  module.HEAPU8.fill(0, stackEnd, stackEnd + stack);
  return { libraryCopies, freeHeap, stack };
}

/** dlmalloc's mallinfo: {arena, freeChunks, free, topSize} (struct mallinfo: ten size_t, returned through a pointer). */
function mallinfo(module) {
  const saved = module.stackSave();
  try {
    const at = module.stackAlloc(40);
    module._mallinfo(at);
    const field = (i) => module.HEAPU32[(at >> 2) + i];
    return { arena: field(0), freeChunks: field(1), free: field(8), topSize: field(9) };
  } finally {
    module.stackRestore(saved);
  }
}

const [distDir, wheel, outSnapshot, outMeta, packages] = process.argv.slice(2);
if (!packages) {
  console.error("usage: node snapshot.mjs <pyodide dist dir> <lessonpy wheel> <output snapshot> <output meta json> <packages,...>");
  process.exit(2);
}
const indexURL = path.resolve(distDir) + path.sep;

// The memory and table base of every library instantiated (they are the imports __memory_base and
// __table_base of its instantiation); loadDynamicLibrary below pairs them with the library's name.
const instantiated = [];
const recordBases = (instantiate) => async (source, imports) => {
  const result = await instantiate(source, imports);
  const base = imports?.env?.__memory_base; // only a side module (a dynamic library) has one
  if (base !== undefined) {
    instantiated.push({ memoryBase: Number(base), tableBase: Number(imports.env.__table_base) });
  }
  return result;
};

async function main() {
  await import(pathToFileURL(indexURL + "pyodide.asm.js").href); // defines globalThis._createPyodideModule
  const { loadPyodide, version } = await import(pathToFileURL(indexURL + "pyodide.mjs").href);
  const seams = seamsFor(version);
  if (!seams.live) throw new Error(`no snapshot: ${seams.why}`);
  seams.swapInstantiate(recordBases); // for the whole run: this process only makes the snapshot
  let module = null;
  let tableAtStart = 0;
  const dynlibs = [];
  seams.hookCreateModule((createModule) => async (settings) => {
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
  });

  const pyodide = await loadPyodide({
    indexURL, env: { ...PYTHON_ENV }, packages: packages.split(","), _makeSnapshot: true, // the page's boot packages
    _sysExecutable: PROGRAM, // Emscripten's thisProgram
    stdout: (s) => console.error(s), stderr: (s) => console.error(s),
  });
  pyodide.unpackArchive(new Uint8Array(readFileSync(wheel)), "wheel", { extractDir: SITE_PACKAGES });
  pyodide.runPython(WARM_UP);

  const cleared = clearUnused(module);
  const loaded = { ...pyodide.loadedPackages };
  for (const name of Object.keys(loaded)) delete pyodide.loadedPackages[name];
  const snapshot = pyodide.makeMemorySnapshot();
  Object.assign(pyodide.loadedPackages, loaded);

  const handles = Object.entries(module.LDSO.loadedLibsByHandle)
    .filter(([, lib]) => lib.name !== "__main__")
    .map(([handle, lib]) => [Number(handle), lib.name]);
  const headerBytes = new Uint32Array(snapshot.buffer, snapshot.byteOffset, 2)[1]; // Pyodide's header: its size
  writeFileSync(outSnapshot, snapshot);
  writeFileSync(outMeta, JSON.stringify({
    bytes: snapshot.length, headerBytes, tableAtStart, tableLength: module.wasmTable.length, dynlibs, handles, loaded,
  }));
  console.log(JSON.stringify({ bytes: snapshot.length, dynlibs: dynlibs.length, handles: handles.length, cleared }));
}

// One line saying what failed, not Node's dump of the (minified, megabyte-long) line that threw.
main().catch((err) => {
  console.error(`snapshot.mjs: ${err?.message ?? err}`);
  process.exit(1);
});
