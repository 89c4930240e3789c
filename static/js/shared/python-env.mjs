// The environment Python runs in: the page's worker passes it to loadPyodide (worker.js), and the
// build's Pyodide under Node runs with it too (sitebuild/startup/snapshot.mjs, whose memory snapshot holds
// it, and sitebuild/startup/fontcache.mjs). One definition for all; the snapshot's and the font cache's keys
// hash this file, so a change here makes new ones. (.mjs: Node takes it as a module as it is, with
// no package.json "type" to say so.)
export const PYTHON_ENV = Object.freeze({
  MPLBACKEND: "Agg", // matplotlib's default backend in Pyodide 0.27 needs a DOM, which a worker lacks
  HOME: "/home/pyodide",
});
