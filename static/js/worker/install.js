// Wheels unpacked without Python. Pyodide's installs (loadPackage, unpackArchive) unpack each wheel in
// Python (pyodide._package_loader.unpack_buffer: the bytes copied into a temporary file, then zipfile and
// shutil, entry by entry): 0.5 s for matplotlib and its dependencies in a started interpreter, 1.1 s in
// one restored from the snapshot (its wasm not optimised yet), most of a first figure's install. The
// wheels this site serves are stored zips (the host compresses them on the way): their files are slices
// of the bytes, written here in a few milliseconds, synchronously, as unpack_buffer's callers expect.
// Everything else goes to Python's unpack_buffer as before: deflated entries, names that are not plain
// ASCII paths, not one .dist-info folder of the wheel's name, two .data folders, a format that is not a wheel.
import { zipEntries } from "./unzip.js";
import { SHARED_LIBRARY } from "../shared/pyodide-seams.mjs";

/** A package name as Pyodide's lock and packaging's canonicalize_name write it. */
export const canonicalName = (name) => name.replace(/[-_.]+/g, "-").toLowerCase();


/** Write `files` ({name, data}, names relative to `dir`, which ends with "/") into Emscripten's FS, making their folders. */
export function writeFiles(FS, dir, files, { canOwn = false } = {}) {
  const made = new Set();
  for (const { name, data } of files) {
    const path = dir + name;
    const folder = path.slice(0, path.lastIndexOf("/"));
    if (!made.has(folder)) {
      FS.mkdirTree(folder);
      made.add(folder);
    }
    FS.writeFile(path, data, { canOwn });
  }
}

/**
 * What unpack_buffer would do with these arguments, as a plan, or null when Python should do it.
 * @returns {{files: {name: string, data: Uint8Array}[], distInfo: string|null, dataFiles: {name: string, data: Uint8Array}[]}|null}
 *   `files` relative to the folder it unpacks into, `dataFiles` (install_datafiles) to sys.prefix
 */
export function planUnpack(bytes, { filename, format }) {
  const wheelFormat = format === undefined || format === null ? null : format.replace(/^\./, "");
  let name = null; // the wheel's distribution name, from its file name (unpackArchive gives none)
  if (filename) {
    if (!/\.whl$/.test(filename) || (wheelFormat && !["whl", "wheel"].includes(wheelFormat))) return null;
    name = filename.split("/").pop().split("-")[0];
  } else if (!["whl", "wheel"].includes(wheelFormat)) {
    return null;
  }
  let entries;
  try {
    entries = zipEntries(bytes);
  } catch {
    return null; // Python says what is wrong with it
  }
  const tops = new Set();
  for (const entry of entries) {
    // zipfile reads names as cp437 unless flagged UTF-8, and shutil skips "/..." and ".." names: leave both to them
    if (entry.method !== 0 || entry.size !== entry.compressedSize || /[^\x20-\x7e]|^\/|\.\.|^\.\//.test(entry.name)) return null;
    tops.add(entry.name.split("/", 1)[0]);
  }
  const files = entries.map((entry) => ({ name: entry.name, data: bytes.subarray(entry.offset, entry.offset + entry.size) }));
  if (!name) return { files, distInfo: null, dataFiles: [] }; // unpackArchive: the files only, as Python does
  const ofName = (suffix) => [...tops].filter((top) => top.endsWith(suffix));
  const [infos, datas] = [ofName(".dist-info"), ofName(".data")];
  // Python takes the first of a set of such folders: with one of each, there is no doubt which
  if (infos.length !== 1 || !canonicalName(infos[0]).startsWith(canonicalName(name)) || datas.length > 1) return null;
  // install_datafiles: a wheel's <name>.data/data/ goes under sys.prefix too (fonttools' manual page)
  const data = datas.length && canonicalName(datas[0]).startsWith(canonicalName(name)) ? `${datas[0]}/data/` : null;
  const dataFiles = data ? files.filter((file) => file.name.startsWith(data)).map((file) => ({ ...file, name: file.name.slice(data.length) })) : [];
  return { files, distInfo: infos[0], dataFiles };
}

/**
 * Make `pyodide`'s installs unpack the wheels planUnpack accepts from JavaScript; the others, and every
 * other use of Pyodide's package loader, go to Python as before (through `seams`, shared/pyodide-seams.mjs:
 * inert seams leave every install to Python). `mark(name)`, if given, is told "<file> unpacked" for each
 * wheel unpacked here (the worker's boot marks).
 */
export function unpackWithoutPython(pyodide, seams, mark = () => {}) {
  let prefix = null;
  /** sys.prefix, where a wheel's data files go (ending with "/"), asked of Python once. */
  const sysPrefix = () => {
    if (prefix === null) {
      const sys = pyodide.pyimport("sys");
      prefix = `${sys.prefix}/`.replace(/\/+$/, "/");
      sys.destroy();
    }
    return prefix;
  };
  seams.hookUnpackBuffer(pyodide, (kwargs, { python, shouldLoadDynlib }) => {
    const { buffer, filename, format, target, extract_dir: extractDir, installer, source, calculate_dynlibs: dynlibs } = kwargs;
    const bytes = ArrayBuffer.isView(buffer) ? new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength) : new Uint8Array(buffer);
    const plan = target ? null : planUnpack(bytes, { filename, format }); // target names Python's folders: its call
    if (!plan) return python(kwargs);
    const where = extractDir || ".";
    const dir = `${pyodide.PATH.normalize(where.startsWith("/") ? where : `${pyodide.FS.cwd()}/${where}`)}/`.replace(/\/+$/, "/");
    pyodide.FS.mkdirTree(dir);
    // A package's wheel (loadPackage's fresh download, or downloads.js's kept bytes) is Pyodide's alone: its
    // files are written as views of it, not copied. unpackArchive's buffer is its caller's: copied.
    writeFiles(pyodide.FS, dir, plan.files, { canOwn: Boolean(filename) });
    if (plan.distInfo) { // set_wheel_installer: where it came from, as Python would have recorded it
      if (installer) pyodide.FS.writeFile(`${dir}${plan.distInfo}/INSTALLER`, installer);
      if (source) pyodide.FS.writeFile(`${dir}${plan.distInfo}/PYODIDE_SOURCE`, source);
    }
    if (plan.dataFiles.length) writeFiles(pyodide.FS, sysPrefix(), plan.dataFiles, { canOwn: Boolean(filename) });
    if (filename) mark(`${filename.split("/").pop()} unpacked`);
    if (!dynlibs) return undefined;
    // The libraries Pyodide loads next, in the archive's order; which ones, Python's own rule says.
    return plan.files.map((file) => file.name)
      .filter((path) => SHARED_LIBRARY.test(path.split("/").pop()) && shouldLoadDynlib(path))
      .map((path) => dir + path);
  });
}

/**
 * loadPyodide(options), its boot packages (numpy) unpacked like the later installs: the package loader is
 * hooked as finalizeBootstrap returns, before loadPyodide installs them (shared/pyodide-seams.mjs says why
 * then). numpy's wheel in Python: ≈0.25 s of a cold start, most of it the unpack.
 */
export async function loadPyodideUnpacking(loadPyodide, options, seams, mark) {
  const wasmURL = new URL(WASM, options.indexURL).href;
  let download = null; // Pyodide's own fetch of the wasm, made as it sets up its module, before createModule
  const unfetch = seams.swapFetch((network) => (resource, init) => {
    const response = network(resource, init);
    if (String(resource instanceof Request ? resource.url : resource) === wasmURL) download = response;
    return response;
  });
  const unhook = seams.hookCreateModule((create) => async (settings) => {
    // the same download instantiated, but a failure fails the boot at once, in words (pyodide-seams.mjs)
    const failed = seams.replaceInstantiateWasm(settings, (imports) => instantiateWasm(download ?? fetch(wasmURL), imports));
    const module = await Promise.race([create(settings), failed]);
    seams.afterFinalizeBootstrap(module, (finalize, args) => {
      const pyodide = finalize(...args);
      unpackWithoutPython(pyodide, seams, mark);
      return pyodide;
    });
    return module;
  });
  try {
    return await loadPyodide(options);
  } finally {
    unhook();
    unfetch();
  }
}

/** Pyodide's engine, the file a normal boot instantiates (Pyodide's own name for it in 0.27.7). */
const WASM = "pyodide.asm.wasm";

/** Instantiate the wasm from its `download` (a fetch's promise): {instance, module}, or an error that says
 *  which step failed, and what a reader can do, instead of the browser's "Failed to fetch". */
export async function instantiateWasm(download, imports, instantiate = WebAssembly.instantiateStreaming) {
  const what = `the download of Python's engine (${WASM})`;
  let response;
  try {
    response = await download;
  } catch {
    throw new Error(`${what} failed: the connection was lost or the site did not answer. Check the connection and try again.`);
  }
  if (!response.ok) throw new Error(`${what} failed: the site answered ${response.status}. Try again in a moment.`);
  try {
    return await instantiate(response, imports);
  } catch (err) {
    throw new Error(`${what} is not whole or not Pyodide's (${err?.message ?? err}): a connection cut short does this. Try again.`);
  }
}
