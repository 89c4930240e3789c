// Python's start-up in the worker, both ways behind one function: restored from the build's memory
// snapshot (snapshot.js) when the page has one to use, else started the normal way (loadPyodide, its
// installs unpacked without Python: install.js); a restore that fails falls back to the normal start.
// Then the lesson's wheel is unpacked and the finder of the files that come after the first output is
// put on the import path. worker.js keeps the requests, the output streams and the interrupts.
import { forgetDownloads, keepDownload } from "./downloads.js";
import { loadPyodideUnpacking, unpackWithoutPython, writeFiles } from "./install.js";
import { choosePlan } from "./plan.js";
import { findSnapshot, restorePython, startRuntime } from "./snapshot.js";
import { unzip } from "./unzip.js";
import { SITE_PACKAGES, seamsFor } from "../shared/pyodide-seams.mjs";
import { PYTHON_ENV } from "../shared/python-env.mjs";

// After files are added to the file system: the finders of its folders look again, and a folder that
// had none (it did not exist yet) is looked up again, as importlib.invalidate_caches() does. Not that,
// which also re-reads the standard library zip's directory once per package imported from it
// (0.1 s), and the zip has not changed.
const FIND_NEW_FILES = `import importlib.machinery, sys
for path, finder in list(sys.path_importer_cache.items()):
    if finder is None: del sys.path_importer_cache[path]
    elif isinstance(finder, importlib.machinery.FileFinder): finder.invalidate_caches()
if "importlib.metadata" in sys.modules: sys.modules["importlib.metadata"].MetadataPathFinder.invalidate_caches()`;

/**
 * Boot Python for the page: `init` is the page's init request (protocol.js's InitRequest: indexURL,
 * wheelURL, wheelSha256, bootPackages, plan, snapshot, ipad), `fetchBytes(url)` the worker's download of a versioned
 * file, `fetchChecked(url, sha256)` the same, checked (worker.js), `progress(stage, fraction)` the page's progress line, `mark(name)` the record of the boot's steps.
 * Resolves to {pyodide, how, note, picked, later, lockFileURL}: `how` "snapshot" or "start", `note` why a
 * snapshot was not restored (null when none was tried or it worked), `picked` the archives' variants
 * (plan.js), `later` what comes after the first output for this boot ([{url, modules, into, unpack}], each
 * with its finder installed), `lockFileURL` where loadPackage finds the packages.
 */
export async function bootPython({ indexURL, wheelURL, wheelSha256, bootPackages, plan, snapshot, ipad = false }, { fetchBytes, fetchChecked, progress, mark }) {
  progress("Downloading Python", 0.05);
  // The lesson's own wheel downloads while the interpreter boots; a bad kept copy of it is dropped (fetchChecked).
  const lessonWheel = fetchChecked(wheelURL, wheelSha256);
  lessonWheel.catch(() => {}); // awaited below; a failure is reported there
  // ... and is inflated meanwhile (unzip.js, off this thread): once Python is up its files are written in
  // milliseconds, where Pyodide's unpackArchive (Python's zipfile and shutil) took 40-90 ms of the first output.
  const lessonFiles = lessonWheel.then(unzip);
  lessonFiles.catch(() => {}); // unpacked by Pyodide below instead
  // The site's small JSON files of the boot (the later files' module lists, the snapshot's restore details) are
  // versioned files like the others: read as fetchBytes reads them, the service worker's kept copy first.
  const readJSON = (url) => fetchBytes(url).then((bytes) => JSON.parse(new TextDecoder().decode(bytes)));
  // The boot plan with stored or deflated archives, by what the host does with a small probe of each kind
  // (plan.js); the probes travel while pyodide.mjs loads.
  const planChoice = choosePlan(indexURL, plan, readJSON);
  const found = findSnapshot(snapshot); // the service worker's copy, or a download ("always" builds)
  const runtime = found.then((use) => use && startRuntime(indexURL, mark)); // with pyodide.mjs, not after it
  const { loadPyodide, version } = await import(new URL("pyodide.mjs", indexURL).href);
  mark("pyodide.mjs imported");
  const seams = seamsFor(version); // inert on a Pyodide they were not written for: no restore, no hooks
  const chosen = await planChoice;
  const lockFileURL = chosen.options.lockFileURL ?? new URL("pyodide-lock.json", indexURL).href;
  mark("archives picked");
  progress("Starting Python and numpy", 0.25);
  const options = {
    indexURL,
    ...chosen.options, // stdLibURL, lockFileURL
    packages: bootPackages, // numpy, loaded as soon as the interpreter is up
    env: { ...PYTHON_ENV }, // a copy: loadPyodide may add to it
    stdout: () => {}, // boot chatter ("Loading numpy…") is not the reader's output
  };
  let pyodide = null;
  let how = "start";
  let note = null;
  const showJSPI = seams.hideJSPI(); // until the module exists, on either boot (pyodide-seams.mjs says why)
  const hidePlatform = seams.showIPad(ipad); // likewise
  try {
    const use = await found;
    if (use && !seams.live) note = seams.why;
    else if (use) {
      try {
        // options name the archives the plan picked (stdLibURL, lockFileURL), and so do numpy's libraries
        pyodide = await restorePython({ loadPyodide, indexURL, spec: snapshot, found: use, options, libraries: chosen.restore, fetchBytes, readJSON, runtime: await runtime, seams, mark });
        how = "snapshot";
      } catch (err) {
        // The reader loses nothing but time: the normal boot follows. Said on the console for developers.
        note = String(err?.message ?? err);
        console.info(`Python starts without its snapshot: ${note}`);
      }
    }
    if (!pyodide) {
      // The boot packages' wheels download now, not once Pyodide has read its lock and started its
      // script: their bytes then come while the wasm compiles, not after Python's bootstrap, which holds
      // this thread (a body is read only when the thread is free). Pyodide's install is served them.
      for (const wheel of chosen.normal) keepDownload(wheel.url, wheel.name, wheel.sha256, fetchBytes(wheel.url));
      try {
        pyodide = await loadPyodideUnpacking(loadPyodide, options, seams, mark);
      } finally {
        forgetDownloads(chosen.normal.map((wheel) => wheel.name));
      }
    }
  } finally {
    showJSPI();
    hidePlatform();
  }
  mark("python up");
  // A restore's installs from now on unpack without Python (install.js says why); a normal boot's were
  // hooked as it booted (loadPyodideUnpacking), numpy's among them.
  if (how === "snapshot") unpackWithoutPython(pyodide, seams, mark);
  progress("Installing the lesson's Python", 0.85);
  // Unpacked straight into site-packages: micropip (≈0.2 s of imports) stays off the critical
  // path, and a cell that imports it gets it on demand like any other package (loadImports).
  // After a restore lessonpy is already imported; its files are for what it imports later.
  const files = await lessonFiles.catch(() => null);
  if (files) writeFiles(pyodide.FS, SITE_PACKAGES, files, { canOwn: true }); // unzip's arrays are the files' own
  else pyodide.unpackArchive(await lessonWheel, "wheel", { extractDir: SITE_PACKAGES });
  recordWheelSource(pyodide, wheelURL);
  pyodide.runPython(FIND_NEW_FILES);
  // Pyodide's loadPackage (a cell's import, the preload) ends its installs with a full
  // importlib.invalidate_caches() (≈70 ms); the narrow one finds what they add as well.
  seams.setInvalidateCaches(pyodide, () => pyodide.runPython(FIND_NEW_FILES));
  mark("lesson wheel unpacked");
  const lists = await chosen.moduleLists;
  const later = (how === "snapshot" ? [...chosen.later, ...chosen.restored] : chosen.later)
    .map((item) => ({ ...item, modules: lists[item.modules] ?? [] }));
  installFinders(pyodide, later);
  return { pyodide, how, note, picked: chosen.picked, later, lockFileURL };
}

/**
 * Before anything else runs: a module of a file that comes after the first output (`later`: the standard
 * library's rest, and after a restore numpy's other files), imported before it has come (preload), is
 * fetched synchronously by lessonpy.runtime.stdlib_rest's finder. Both boots: the image has no finder.
 */
function installFinders(pyodide, later) {
  if (!later.length) return;
  const finders = pyodide.pyimport("lessonpy.runtime.stdlib_rest");
  try {
    for (const item of later) {
      const modules = pyodide.toPy(item.modules);
      // an unpacked file's modules go into its folder; a zip is mounted where lessonpy looks for it (its REST)
      const finder = item.unpack ? finders.add_folder(item.url, modules, item.into) : finders.install(item.url, modules);
      finder.destroy(); // the finder stays on sys.meta_path
      modules.destroy();
    }
  } finally {
    finders.destroy();
  }
}

/**
 * Record in the lesson wheel's .dist-info where it came from, as Pyodide's loadPackage and micropip do for
 * what they install: micropip.list() lists only packages with a PYODIDE_SOURCE file there (micropip 0.9.0,
 * list.py), and unpackArchive, given no file name, writes none. Both boots unpack the wheel here (the
 * snapshot holds memory, not files).
 */
function recordWheelSource(pyodide, wheelURL) {
  // A wheel is {name}-{version}-{tags}.whl and unpacks its metadata to {name}-{version}.dist-info (PEP 427).
  const [name, version] = decodeURIComponent(new URL(wheelURL).pathname.split("/").pop()).split("-");
  const distInfo = `${SITE_PACKAGES}${name}-${version}.dist-info/`;
  pyodide.FS.writeFile(distInfo + "INSTALLER", "pyodide.unpackArchive"); // what Pyodide writes for a named wheel
  pyodide.FS.writeFile(distInfo + "PYODIDE_SOURCE", wheelURL); // micropip's value for a wheel from a URL
}
