// Which files of the standard library zip a page's Python reads before the reader's first outputs: the
// build puts exactly those (sitebuild/stdlib_split.py) in the archive the page fetches up front.
//
// Usage: node stdlib_trace.mjs <pyodide dist dir, whole stdlib> <lessonpy wheel> <cells json> <output json> <packages,...>
//
// It does what the page's worker does, in its order, with the whole standard library mounted: boot with
// the boot packages, unpack the lesson's wheel, import the glue and start it, import every lessonpy
// module the page can call (widgets, graders) that imports with the boot packages alone (they hold
// what the snapshot's warm-up in sitebuild/snapshot.mjs imports: its snapshot is made with the core only), then the lesson's cells in page order (cells.json: [[id, code], ...]) up to
// the first one that imports a package the page does not boot with (that cell's own imports load in
// the page after the first output) or fails. Prints the zip entries of every module the import system
// looked for and found in the zip (RECORD), imported or not: a module whose import fails, caught
// (`try: import x except ImportError`), is still looked up in the page, and one of the rest's would make
// lessonpy.stdlib_rest download the rest synchronously, before the first output.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { PYTHON_ENV } from "../static/js/python-env.mjs"; // what the page's worker runs Python with
const SITE_PACKAGES = "/lib/python3.12/site-packages/";

const PAGE_MODULES = `
import importlib, pkgutil, lessonpy
import numpy, numpy.random, numpy.linalg, numpy.fft
_skipped = []
for _m in pkgutil.iter_modules(lessonpy.__path__, "lessonpy."):
    try:
        importlib.import_module(_m.name)
    except ModuleNotFoundError as exc:  # needs a package the page does not boot with (matplotlib)
        if importlib.util.find_spec(exc.name.partition(".")[0]) is not None:
            raise
        _skipped.append(_m.name)
_skipped
`;

// A cell imports only what is there: a name that cannot be found now is a package loaded on demand.
// Only looked up, not imported (the page does not look them up before the cell runs): not recorded.
const NEEDS_MORE = `
import importlib.util
from pyodide.code import find_imports
_recorder.on = False
try:
    _missing = [name for name in find_imports(_cell_code) if importlib.util.find_spec(name) is None]
finally:
    _recorder.on = True
_missing
`;

// First on sys.meta_path: asks the finders after it, as the import system would, and keeps the zip's
// entries they find. Installed once Python has booted (the boot's imports are in sys.modules, ENTRIES).
const ZIP = "/lib/python312.zip/";
const RECORD = `
import sys

class _Recorder:
    def __init__(self):
        self.found = set()
        self.on = True

    def find_spec(self, fullname, path=None, target=None):
        for finder in sys.meta_path[sys.meta_path.index(self) + 1:]:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find else None
            if spec is not None:
                if self.on and (spec.origin or "").startswith(${JSON.stringify(ZIP)}):
                    self.found.add(spec.origin[${ZIP.length}:])
                return spec
        return None

_recorder = _Recorder()
sys.meta_path.insert(0, _recorder)
`;

const ENTRIES = `
sorted(_recorder.found | {m.__spec__.origin[${ZIP.length}:] for m in list(sys.modules.values())
        if getattr(m, "__spec__", None) is not None and (m.__spec__.origin or "").startswith(${JSON.stringify(ZIP)})})
`;

const [distDir, wheel, cellsFile, output, packages] = process.argv.slice(2);
if (!packages) {
  console.error("usage: node stdlib_trace.mjs <pyodide dist dir> <lessonpy wheel> <cells json> <output json> <packages,...>");
  process.exit(2);
}

async function main() {
  const indexURL = path.resolve(distDir) + path.sep;
  const { loadPyodide } = await import(pathToFileURL(indexURL + "pyodide.mjs").href);
  const pyodide = await loadPyodide({
    indexURL, env: { ...PYTHON_ENV }, packages: packages.split(","), stdout: () => {}, stderr: (s) => console.error(s),
  });
  pyodide.runPython(RECORD);
  pyodide.unpackArchive(new Uint8Array(readFileSync(wheel)), "wheel", { extractDir: SITE_PACKAGES });
  const glue = pyodide.pyimport("lessonpy.pyodide_glue");
  glue.start(() => {}); // events go nowhere: only what they import matters
  const skipped = pyodide.runPython(PAGE_MODULES).toJs();
  const ran = [];
  let stoppedAt = null;
  for (const [id, code] of JSON.parse(readFileSync(cellsFile, "utf-8"))) {
    pyodide.globals.set("_cell_code", code);
    const missing = pyodide.runPython(NEEDS_MORE).toJs();
    if (missing.length) {
      stoppedAt = `${id} (imports ${missing.join(", ")})`;
      break;
    }
    const reply = await glue.run(code, id, pyodide.toPy({})); // a plain object, as the worker gets it
    if (!reply.ok) {
      stoppedAt = `${id} (failed)`;
      break;
    }
    ran.push(id);
  }
  const entries = pyodide.runPython(ENTRIES).toJs();
  writeFileSync(output, JSON.stringify({ entries, ran, stoppedAt, skipped }));
  console.log(JSON.stringify({ entries: entries.length, ran: ran.length, stoppedAt, skipped }));
}

// One line saying what failed, not Node's dump of the (minified, megabyte-long) line that threw.
main().catch((err) => {
  console.error(`stdlib_trace.mjs: ${err?.message ?? err}`);
  process.exit(1);
});
