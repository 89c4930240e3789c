// Restoring Python from the build's memory snapshot (made by sitebuild/startup/snapshot.mjs, which says what
// the image holds and what lives outside it). worker.js calls findSnapshot, then restorePython, and
// boots the normal way whenever either fails: a snapshot is a shortcut, never a requirement.
import { isCompressed } from "./archives.js";
import { writeFiles } from "./install.js";
import { fetchKept } from "./kept.js";
import { unzip } from "./unzip.js";
import { DSO, SITE_PACKAGES } from "../shared/pyodide-seams.mjs";

// numpy's libraries are placed at the bases they had in the image through Emscripten's `struct dso` (DSO in
// shared/pyodide-seams.mjs): with mem_allocated set, loadDynamicLibrary puts the library there instead of
// allocating. The struct is zero as the module initialised it, and is zeroed again once the libraries are
// in: applyImage keeps that page as it is when the image has it so (sitebuild/startup/snapshot_image.py).

/**
 * The snapshot to restore, if this page should restore one: the copy the service worker keeps (a
 * revisit, a restart), else, when the build asked for it ("always") and firstVisitDownload agrees, a
 * download. Resolves as soon as that is known, to {source, bytes: Promise<Uint8Array>}, so the download
 * runs alongside Pyodide's own; or to null when there is none to use. Never rejects.
 */
export async function findSnapshot(spec) {
  if (!spec) return null;
  try {
    const kept = globalThis.caches ? await caches.match(spec.url) : null;
    const response = kept || (spec.fetch === "always" ? await firstVisitDownload(spec.url, globalThis.navigator?.connection) : null);
    if (!response?.ok) return null;
    const bytes = response.arrayBuffer().then((buffer) => new Uint8Array(buffer));
    bytes.catch(() => {}); // awaited by restorePython, whose failure is the caller's to handle
    return { source: kept ? "kept" : "download", bytes };
  } catch {
    return null;
  }
}

/**
 * A first visit's download of the image (a build's "always"), or null when the visit should boot normally.
 * The image saves Python's start-up (≈1 s of CPU idle) for ≈2.4 MB more before the first output, as
 * brotli; not for a browser that asks to save data (never fetched), nor from a host that sends it
 * uncompressed (5x its brotli size): its headers say so before its body comes, and the body is cancelled
 * (what was already under way is lost, nothing more). The link's speed cannot decide: browsers report at
 * most 10 Mbit/s, and headless Chromium 1.6 on loopback before it has seen a transfer. The visit that
 * boots normally is not the last: the service worker keeps the image for the next.
 */
export async function firstVisitDownload(url, connection, fetchFn = fetch) {
  if (connection?.saveData) return null;
  const response = await fetchFn(url);
  if (isCompressed(response)) return response;
  await response.body?.cancel().catch(() => {});
  return null;
}

async function sha256(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function checkBytes(bytes, spec) {
  if (bytes.length !== spec.bytes) throw new Error(`snapshot has ${bytes.length} bytes, expected ${spec.bytes}`);
  if ((await sha256(bytes)) !== spec.sha256) throw new Error("snapshot's sha256 differs from the build's");
}

// The image's format (sitebuild/startup/snapshot_image.py, which writes it): a page is left out when it is zero
// or when the memory already holds it (BASE); the others follow Pyodide's own header.
const IMAGE_MAGIC = "PYSNAPD1";
const [ZERO, BASE, FILE] = [0, 1, 2];

/**
 * Copy the build's image (`data`, checked by checkBytes) into `heap` (the module's memory, numpy's
 * libraries loaded): zero pages and the file's pages written, BASE pages kept once their sha256 is
 * `baseSha256`, the build's. Returns Pyodide's snapshot header, for API.restoreSnapshot (which then has
 * no memory left to copy). Throws on anything else: the caller boots Python the normal way.
 */
export async function applyImage(heap, data, baseSha256) {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (new TextDecoder().decode(data.subarray(0, 8)) !== IMAGE_MAGIC) throw new Error("snapshot: not an image of this format");
  const [page, memoryBytes, headerBytes, count] = [8, 12, 16, 20].map((at) => view.getUint32(at, true));
  if (page * count !== memoryBytes || heap.length < memoryBytes) {
    throw new Error(`snapshot: ${count} pages of ${page} bytes for a memory of ${heap.length}`);
  }
  const kinds = data.subarray(24, 24 + count);
  let at = 24 + count + (-count & 15);
  const header = data.subarray(at, at + headerBytes);
  at += headerBytes;
  const reused = kinds.reduce((n, kind) => n + (kind === BASE), 0);
  const base = new Uint8Array(reused * page);
  for (let i = 0, j = 0; i < count; i++) {
    if (kinds[i] === BASE) base.set(heap.subarray(i * page, (i + 1) * page), page * j++);
  }
  if ((await sha256(base)) !== baseSha256) throw new Error("snapshot: the memory it builds on differs from the build's");
  for (let i = 0; i < count; i++) {
    if (kinds[i] === ZERO) heap.fill(0, i * page, (i + 1) * page);
    else if (kinds[i] === FILE) {
      heap.set(data.subarray(at, at + page), i * page);
      at += page;
    } else if (kinds[i] !== BASE) throw new Error(`snapshot: page ${i} of unknown kind ${kinds[i]}`);
  }
  if (at !== data.length) throw new Error(`snapshot: ${data.length - at} bytes after its last page`);
  return header;
}

/** Drop a kept copy that failed its check: the service worker then keeps a good one again. */
async function forget(url) {
  for (const name of await caches.keys()) await (await caches.open(name)).delete(url);
}

/**
 * Start what a restore needs of Pyodide's own files, alongside pyodide.mjs and the archives' probes
 * (loadPyodide would load them one after the other, after those): pyodide.asm.js, which defines
 * _createPyodideModule, and the wasm, compiled streaming from the HTTP cache, where V8's cache of
 * compiled code serves a revisit. Not from the service worker's kept copy like the other large files
 * (kept.js): a Response from Cache Storage comes with no code cache, read in the worker, or only from
 * the second revisit on, served by the service worker; compiling the functions again then cost the
 * first revisit more than the faster read saved. {script, wasm: Promise<WebAssembly.Module>, wasmURL};
 * restorePython compiles the wasm once more if this compile fails.
 */
export function startRuntime(indexURL, mark) {
  const script = import(new URL("pyodide.asm.js", indexURL).href);
  const wasmURL = new URL("pyodide.asm.wasm", indexURL).href;
  const wasm = WebAssembly.compileStreaming(fetch(wasmURL));
  script.catch(() => {}); // awaited by restorePython
  wasm.then(() => mark("wasm compiled"), () => {});
  return { script, wasm, wasmURL };
}

/**
 * WebAssembly.instantiate as loadDynamicLibrary calls it (the library's bytes in, {module, instance}
 * out), instantiating `compiled` (a promise of the module compiled from the same bytes) instead; from
 * the bytes when that compile failed.
 */
export function instantiateCompiled(compiled, instantiate = WebAssembly.instantiate.bind(WebAssembly)) {
  return (bytes, imports) => compiled.then(
    (module) => instantiate(module, imports).then((instance) => ({ module, instance })),
    () => instantiate(bytes, imports),
  );
}

/** {path: Promise<WebAssembly.Module>} of the libraries to load, compiling (off this thread) at once. */
function compileLibraries(archives, details) {
  const paths = new Set(details.dynlibs.map((lib) => lib.name));
  const compiled = new Map();
  for (const { name, data } of archives.flat()) {
    if (!paths.has(SITE_PACKAGES + name)) continue;
    const module = WebAssembly.compile(data);
    module.catch(() => {}); // instantiateCompiled falls back to the bytes
    compiled.set(SITE_PACKAGES + name, module);
  }
  return compiled;
}

/**
 * The restore's details (sitebuild/startup's SNAPSHOT_DETAILS, beside the image: {dynlibs, handles, loaded}), which a
 * restore needs only once numpy's libraries have come; `readJSON` the worker's read of a versioned JSON file
 * (boot.js). Throws when they cannot be read: no restore then.
 */
export async function readDetails(spec, readJSON) {
  const details = await readJSON(new URL(spec.details, spec.url).href);
  if (!Array.isArray(details?.dynlibs) || !Array.isArray(details?.handles)) throw new Error(`snapshot: ${spec.details} is not a restore's details`);
  return details;
}

/**
 * Load Pyodide from the snapshot: `found` from findSnapshot, `spec` the build's restore spec (page
 * config; its `details` file is read here, readDetails), `options` what loadPyodide gets otherwise (the archives' URLs among them), `libraries` the URLs
 * of the zips of the boot packages' libraries (the boot plan's, plan.js: sitebuild/startup/wheel_split.py
 * makes them; their other files come after the first output), `fetchBytes` the worker's download of a file,
 * `readJSON` its read of a JSON one,
 * `runtime` what startRuntime started, `seams` Pyodide's internals it hooks (shared/pyodide-seams.mjs, live
 * ones: the caller restores only then), `mark` the worker's record of the boot's steps.
 * Throws if anything does not match; the caller then boots normally. Returns the pyodide API, with
 * the boot packages loaded and lessonpy imported. The caller hides JSPI while it runs (seams.hideJSPI).
 */
export async function restorePython({ loadPyodide, indexURL, spec, found, options, libraries: urls, fetchBytes, readJSON, runtime, seams, mark }) {
  if (!urls.length) throw new Error("snapshot: the site has no libraries to restore it with");
  // Everything that can be checked before Pyodide starts is checked first.
  const details = readDetails(spec, readJSON);
  found.bytes.then(() => mark("snapshot read"), () => {});
  const checked = found.bytes.then((bytes) => checkBytes(bytes, spec)).then(() => mark("snapshot checked")).catch(async (err) => {
    if (found.source === "kept") await forget(spec.url).catch(() => {});
    throw err;
  });
  const archives = Promise.all(urls.map((url) => fetchBytes(url).then((bytes) => {
    mark(`${url.split("/").pop()} read`);
    return unzip(bytes);
  }))).then((files) => {
    mark("libraries unzipped");
    return files;
  });
  // numpy's libraries compile while Pyodide's module is made, not one by one as loadDynamicLibrary reads them.
  const libraries = Promise.all([archives, details]).then(([files, restore]) => compileLibraries(files, restore));
  details.catch(() => {});
  checked.catch(() => {});
  archives.catch(() => {});
  libraries.catch(() => {}); // awaited below unless an earlier step failed first (the boot then falls back)
  runtime.script.then(() => mark("pyodide.asm.js imported"), () => {});
  // loadPyodide starts now, whether or not Pyodide's script has run yet: it fetches the standard
  // library at once (the module waits for it), and imports the script itself if need be.
  const network = globalThis.fetch; // fetchForRestore replaces it while loadPyodide runs
  const unhook = seams.hookCreateModule((createModule) => async (settings) => {
    settings.noInitialRun = true; // as loadPyodide does for its own (build-time only) snapshots
    settings.INITIAL_MEMORY = spec.memoryBytes;
    // Pyodide's would fetch and compile the wasm; startRuntime's compile is used instead, and if it
    // failed the wasm is fetched and compiled once more (a second failure ends the restore).
    let sameFunctions = () => {};
    const failed = seams.replaceInstantiateWasm(settings, (imports) => runtime.wasm.catch(() => {
      mark("wasm compiled again");
      return WebAssembly.compileStreaming(network(runtime.wasmURL));
    }).then((compiled) => WebAssembly.instantiate(compiled, imports).then((instance) => {
      mark("wasm instantiated");
      // The table slots the module's start-up gives functions must be the image's, as under Node; Safari's
      // engine would add 1,155 of its own (seams.sameTableFunctions says why).
      sameFunctions = seams.sameTableFunctions(imports, instance);
      return { instance, module: compiled };
    })));
    let module;
    try {
      module = await Promise.race([createModule(settings), failed]);
    } finally {
      sameFunctions(); // undone: the slots it was for are in Emscripten's mirror of the table
    }
    mark("module created");
    await loadLibraries(module, spec, await details, await archives, await libraries, seams, mark);
    await checked;
    const header = await applyImage(module.HEAPU8, await found.bytes, spec.baseSha256);
    const config = module.API.restoreSnapshot(header); // the memory is in: this reads the header's config
    mark("image restored");
    seams.afterFinalizeBootstrap(module, (finalize, [, deserializer]) => finalize(config, deserializer));
    return module;
  });
  const unfetch = seams.swapFetch((network) => fetchForRestore(indexURL, runtime.wasmURL, network));
  let pyodide;
  try {
    pyodide = await loadPyodide({ ...options, packages: [] });
  } finally {
    unfetch();
    unhook();
  }
  const module = pyodide._module;
  // dlopen handles are pointers in the image; the JS table from handle to library is not.
  const { handles, loaded } = await details;
  for (const [handle, name] of handles) {
    const lib = module.LDSO.loadedLibsByName[name];
    if (!lib) throw new Error(`snapshot: library ${name} was not loaded`);
    module.LDSO.loadedLibsByHandle[handle] = lib;
  }
  Object.assign(pyodide.loadedPackages, loaded);
  mark("bootstrap finalized");
  reseed(pyodide);
  mark("reset after restore");
  return pyodide;
}

/**
 * The fetch loadPyodide gets while it restores (seams.swapFetch): what it fetches from Pyodide's folder
 * (the standard library, the lock) comes from the service worker's kept copies (kept.js), and the wasm
 * fetch its settings start as it begins (getBinaryResponse, for Pyodide's own compile, which
 * instantiateWasm above replaces) is never made: it used to read the 10 MB again alongside the restore's own.
 */
export function fetchForRestore(indexURL, wasmURL, network) {
  return (resource, init) => {
    const url = resource instanceof Request ? resource.url : String(resource);
    if (url === wasmURL) return new Promise(() => {}); // never read
    return url.startsWith(indexURL) ? fetchKept(resource, init, network) : network(resource, init);
  };
}

/** Write `files` (unzip's {name, data}, names relative to site-packages) there, making their folders. */
function writeSitePackages(FS, files) {
  writeFiles(FS, SITE_PACKAGES, files, { canOwn: true }); // unzip's arrays are the files' own
}

async function loadLibraries(module, spec, details, archives, compiled, seams, mark) {
  const table = module.wasmTable.length;
  // The browser may add one helper to the table at start-up that Node does not (WasmGC); its index
  // lives in memory, which the image resets, and the first library reuses the slot as it did in Node.
  if (table !== spec.tableAtStart && table !== spec.tableAtStart + 1) {
    throw new Error(`snapshot: function table starts at ${table}, the snapshot's at ${spec.tableAtStart}`);
  }
  for (const files of archives) writeSitePackages(module.FS, files);
  mark("files written");
  // loadDynamicLibrary reads each library's bytes from the file system and instantiates them with
  // WebAssembly.instantiate (Emscripten's loadWebAssemblyModule, which takes no module of ours when it
  // loads by name): for the one library being loaded, that call instantiates the module compiled above.
  let current = null; // the module compiled for the library being loaded, if its compile was started
  const undo = seams.swapInstantiate((instantiate) => (bytes, imports) =>
    (current ? instantiateCompiled(current, instantiate)(bytes, imports) : instantiate(bytes, imports)));
  try {
    for (const lib of details.dynlibs) {
      module.HEAP8[DSO.at + DSO.memAllocated] = 1;
      module.HEAPU32[(DSO.at + DSO.memAddr) >> 2] = lib.memoryBase;
      module.HEAPU32[(DSO.at + DSO.tableAddr) >> 2] = lib.tableBase;
      module.HEAPU32[(DSO.at + DSO.fileData) >> 2] = 0;
      module.HEAPU32[(DSO.at + DSO.fileSize) >> 2] = 0;
      current = compiled.get(lib.name) ?? null;
      const flags = { loadAsync: true, global: lib.global, nodelete: true, allowUndefined: true, fs: module.FS };
      await module.loadDynamicLibrary(lib.name, flags, lib.global ? null : {}, DSO.at);
    }
  } finally {
    undo();
    module.HEAPU8.fill(0, DSO.at, DSO.at + DSO.bytes);
  }
  mark("libraries loaded");
  if (module.wasmTable.length !== spec.tableLength) {
    throw new Error(`snapshot: function table has ${module.wasmTable.length} entries, the snapshot's ${spec.tableLength}`);
  }
}

// State the image froze at build time that must be this reader's: the generators' seeds, the time
// zone (lessonpy.runtime.restored says what can and cannot be reset, the hash seed among the latter).
function reseed(pyodide) {
  pyodide.runPython("import lessonpy.runtime.restored; lessonpy.runtime.restored.reset_after_restore()");
}
