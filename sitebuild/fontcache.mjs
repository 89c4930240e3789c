// Build matplotlib's font cache with Pyodide itself under Node, so readers' browsers do not.
// usage: node fontcache.mjs <pyodide dist dir> <output file>
// Prints where the cache belongs inside Pyodide's file system on stdout. (Pyodide's
// matplotlib keeps it as fontlist.json beside font_manager.py; font paths inside are
// /lib/python3.12/site-packages/..., the same in the page.)
import { writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { PYTHON_ENV } from "../static/js/python-env.mjs"; // the page's Python's environment

const [distDir, output] = process.argv.slice(2);
if (!distDir || !output) {
  console.error("usage: node fontcache.mjs <pyodide dist dir> <output file>");
  process.exit(2);
}
const indexURL = path.resolve(distDir) + path.sep;
const { loadPyodide } = await import(pathToFileURL(path.join(indexURL, "pyodide.mjs")).href);
const pyodide = await loadPyodide({
  indexURL, env: { ...PYTHON_ENV }, stdout: (s) => console.error(s), stderr: (s) => console.error(s),
});
await pyodide.loadPackage("matplotlib", { messageCallback: () => {} });
const target = pyodide.runPython(`
import os
import matplotlib.font_manager as fm  # builds the cache, and saves it where it reads it from
target = os.path.join(os.path.dirname(fm.__file__), "fontlist.json")
if not os.path.exists(target):  # a matplotlib that reads it elsewhere: stop rather than ship a dud
    raise SystemExit(f"no font cache at {target}")
target
`);
writeFileSync(output, pyodide.FS.readFile(target));
console.log(target);
