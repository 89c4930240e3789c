// Which files of the standard library zip a page's Python reads before the reader's first outputs: the
// build puts exactly those (sitebuild/startup/stdlib_split.py) in the archive the page fetches up front.
// And the build's run of the lesson's cells in page order: a cell that fails here fails the build.
//
// Usage: node stdlib_trace.mjs <pyodide dist dir, whole stdlib> <lessonpy wheel> <cells json> <output json> <packages,...>
//
// It does what the page's worker does, in its order, with the whole standard library mounted: boot with
// the boot packages, unpack the lesson's wheel, import the glue and start it, import every lessonpy
// module the page can call (widgets, graders) that imports with the boot packages alone (they hold
// what the snapshot's warm-up in sitebuild/startup/snapshot.mjs imports: its snapshot is made with the core only), then the lesson's cells in page order (cells.json: [[id, code, needsPage], ...]).
// It records the zip entries of every module the import system looked for and found in the zip
// (recorded_entries), imported or not (a module whose import fails, caught, `try: import x except ImportError`,
// is still looked up in the page, and one of the rest's would make lessonpy.runtime.stdlib_rest download the rest
// synchronously, before the first output), up to the first cell that imports a package the page does not
// boot with (that cell's own imports load in the page after the first output) or that only the page can run
// (needsPage: what it imports there is not known here). The cells after that run too, with their packages
// loaded and nothing recorded, skipping those that need the page, until one fails: `failed` names it and
// holds its traceback.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { PYTHON_ENV } from "../../static/js/shared/python-env.mjs"; // what the page's worker runs Python with
import { SITE_PACKAGES, STDLIB_ZIP } from "../../static/js/shared/pyodide-seams.mjs"; // Pyodide's in-page paths

// The Python it runs in Pyodide, in a file of its own (part of the trace's key: stdlib_split.py).
const TRACE = readFileSync(new URL("./in_pyodide/stdlib_trace.py", import.meta.url), "utf-8");

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
  pyodide.runPython(TRACE);
  const py = (name) => pyodide.globals.get(name);
  py("install_recorder")(STDLIB_ZIP);
  pyodide.unpackArchive(new Uint8Array(readFileSync(wheel)), "wheel", { extractDir: SITE_PACKAGES });
  const glue = pyodide.pyimport("lessonpy.runtime.pyodide_glue");
  glue.start(() => {}); // events go nowhere: only what they import matters
  const skipped = py("import_page_modules")().toJs();
  const ran = [];
  let stoppedAt = null;
  let entries = null; // recorded up to stoppedAt
  let failed = null;
  for (const [id, code, needsPage] of JSON.parse(readFileSync(cellsFile, "utf-8"))) {
    if (needsPage) {
      stoppedAt ??= `${id} (needs the page)`;
      entries ??= py("recorded_entries")().toJs();
      continue;
    }
    if (!entries) {
      const missing = py("missing_imports")(code).toJs();
      if (missing.length) {
        stoppedAt = `${id} (imports ${missing.join(", ")})`;
        entries = py("recorded_entries")().toJs();
      }
    }
    if (entries) await pyodide.loadPackagesFromImports(code, { messageCallback: () => {} });
    const reply = await glue.run(code, id, pyodide.toPy({})); // a plain object, as the worker gets it
    if (!reply.ok) {
      failed = { id, error: String(reply.error ?? reply.errorName ?? "failed") };
      break;
    }
    ran.push(id);
  }
  entries ??= py("recorded_entries")().toJs();
  writeFileSync(output, JSON.stringify({ entries, ran, stoppedAt, skipped, failed }));
  console.log(JSON.stringify({ entries: entries.length, ran: ran.length, stoppedAt, skipped, failed: failed?.id ?? null }));
}

// One line saying what failed, not Node's dump of the (minified, megabyte-long) line that threw.
main().catch((err) => {
  console.error(`stdlib_trace.mjs: ${err?.message ?? err}`);
  process.exit(1);
});
