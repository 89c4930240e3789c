// The whole message protocol between the page (runtime.js, start-python.js) and the Python
// worker (worker.js, and Python through lessonpy.runtime.bridge). Where it is checked (protocolError):
// - what the reader's Python sends through lessonpy.runtime.bridge, on every page: the worker refuses a
//   malformed event and raises the reason in the reader's cell (worker.js, fromPython);
// - every message both ways where a test drives the browser (runtime.checkProtocol): one not
//   defined here is our bug, the page records it (runtime.protocolErrors) and the tests fail on it.
//   Readers' pages skip that check: the rest of the messages come from our own code only.
//
// Requests: {id, type, ...fields}                          page -> worker, one reply each
// Replies:  {id, ok: true, result} | {id, ok: false, error, fatal}   worker -> page
// Events:   {type, runId, ...fields}                       worker -> page, streamed while the
//           request with id runId runs ("fatal" may come with no request at all)
// Arrays always travel as {shape, dtype, data: TypedArray} with data's buffer transferred.
// No string the worker posts is longer than LIMITS.OUTPUT_CHARS (worker/clip.js).

/**
 * @typedef {{shape: number[], dtype: "float32", data: Float32Array}} WireArray
 * @typedef {{url: string, path: string}} FontCache  matplotlib's font cache: where to fetch it, where it goes
 *
 * @typedef {{id: 0, type: "init", indexURL: string, wheelURL: string, bootPackages: string[], fontCache: FontCache|null,
 *   plan: Object|null, snapshot: Object|null, matplotlibDocs: string|null, ipad?: boolean}} InitRequest
 *   Boot Python, load numpy and lessonpy. Sent as the worker's name (start-python.js), not posted.
 *   ipad: the page runs on an iPad, which a worker cannot tell from a Mac (shared/pyodide-seams.mjs, showIPad).
 *   matplotlibDocs: where the property lists matplotlib writes into its docstrings are (JSON, made by the build:
 *   sitebuild/startup/in_pyodide/kwdoc.py; lessonpy.runtime.artist_set_docs hands them to matplotlib), or null.
 *   plan: the boot plan, which of Pyodide's files to fetch when and where they go (sitebuild/startup/boot_plan.py
 *   writes it, worker/plan.js reads it), or null for Pyodide's own files (a CDN).
 *   snapshot: the build's memory snapshot to restore instead, when there is one (snapshot.js; made by
 *   sitebuild/startup/snapshot.py).
 *   Reply: {pythonVersion: string, crossOriginIsolated: boolean, archives: Object<string, "stored"|"deflated">|null,
 *   boot: {from: "snapshot"|"start", note: string|null}, marks: Array<[string, number]>} (archives: the variant of
 *   each kind it booted from, which the service worker keeps for offline use; note: why a snapshot was not restored;
 *   marks: finer steps of the boot, each [name, at], at as a progress event's).
 * @typedef {{type: "set-interrupt", buffer: SharedArrayBuffer}} SetInterruptRequest
 *   Where Stop writes SIGINT. No id and no reply.
 * @typedef {{id: number, type: "ping"}} PingRequest
 *   Never queued; the reply ({id, ok: true}) says the worker's thread is free: it comes only once the
 *   Python running then has given the thread back, and after that Python's own reply (runtime.js, #busy).
 * @typedef {{id: number, type: "run", code: string, cellId: string, cells: Object<string, string>, files?: CellFiles[]}} RunRequest
 *   Run one cell in the page's shared namespace; cells maps every cell id to its code (for hints).
 *   files: live models' files to put into Python's file system first, as FetchFileRequest does (checked, kept,
 *   "download" events with each file's name); a Stop meanwhile ends the run as stopped before its code starts,
 *   a failed download as a failed run whose errorName is "DownloadError".
 * @typedef {{call: [string, string], url: string, files: Object<string, {size: number, sha256: string}>}} CellFiles
 *   One model's files for a run (sitebuild/pages/cell_files.py): call, the lessonpy function listing
 *   [{name, path, loaded}] (loaded: Python has read them, nothing to put); url, the absolute folder they are in;
 *   files, each one's size and SHA-256 from the build.
 *   Reply: {ok: boolean, value: string|null, error: string|null, errorName: string|null, hint: string|null}.
 * @typedef {{id: number, type: "call", module: string, func: string, kwargs: Object}} CallRequest
 *   Call a lessonpy function (widgets, graders). Reply: what it returned, with numpy arrays as
 *   WireArrays (transferred), e.g. a widget's {arrays, tokens, stats, ...} in one piece.
 * @typedef {{id: number, type: "fetch-file", url: string, path: string, size?: number, sha256?: string}} FetchFileRequest
 *   Put the file at url into Python's file system at path (a folder is made): from there if it is
 *   already there, else from the browser's Cache Storage, else downloaded (and then cached), with
 *   "download" events; a kept copy or a download whose size or SHA-256 (hex) is not the build's is
 *   never used (worker/live-files.js). Reply: {bytes: number, source: "python"|"cache"|"network",
 *   kept: boolean, damaged?: string (why a kept copy was dropped and downloaded again)}.
 * @typedef {{id: number, type: "prefetch", packages: string[]}} PrefetchRequest
 *   Download Pyodide packages and what they depend on, without installing them (the service worker's
 *   kept copy on a revisit); the worker keeps the bytes for their install, whichever request makes it
 *   (downloads.js; runtime.prefetch, preload.js says what and when). It runs no Python, so it is never
 *   queued behind other requests, nor they behind it. Reply: {packages: string[]} (those downloaded,
 *   not loaded yet, each after those it depends on: an order to install them in).
 * @typedef {{id: number, type: "preload", packages: string[], imports?: string[]}} PreloadRequest
 *   Install Pyodide packages ahead of the reader, then import `imports` (runtime.preload): queued like a
 *   run, since both run Python. Reply: {loaded: string[], imported: string[]} (the packages installed
 *   now, the modules imported: none while a rest of the boot's files has not come, worker.js).
 *
 * @typedef {{type: "progress", runId: number, stage: string, fraction: number, at?: number}} ProgressEvent
 *   Boot progress, fraction 0..1; at: when (ms, performance.timeOrigin-based).
 * @typedef {{type: "stdout"|"stderr", runId: number, text: string}} StreamEvent  a chunk of output
 * @typedef {{type: "figure", runId: number, format: "png", data: Uint8Array}} FigureEvent
 *   A matplotlib figure the cell left open (lessonpy.runtime.figures, sent through lessonpy.runtime.bridge).
 * @typedef {{type: "arrays", runId: number, view: "attention"|"lookup"|"residual-stream", title: string|null, target: string|null,
 *   tokens?: string[], arrays?: Object<string, WireArray>, derived?: string[], causal?: boolean, stats?: Object,
 *   error?: string, qk_divisor?: number|null, layers?: number, norms?: Object, lens?: Object, position?: number,
 *   key?: number}} ArraysEvent
 *   What show_attention (lessonpy.maths.show, view "attention"), show_lookup (lessonpy.maths.lookup, view "lookup") or
 *   show_residual_stream (lessonpy.course.block.show_stream, view "residual-stream": its numbers as lists, not
 *   arrays) sends: arrays for a view, or the error that refused them.
 * @typedef {{type: "notice", runId: number, text: string}} NoticeEvent  e.g. "Loading matplotlib…"
 * @typedef {{type: "download", runId: number, loaded: number, total: number, name?: string}} DownloadEvent
 *   Progress of a fetch-file download, or of a run's files (then with the file's name): bytes so far, and the
 *   file's size (0 when the server did not say).
 * @typedef {{type: "output-cut", runId: number, chars: number}} OutputCutEvent
 *   At the end of a run: how many characters of its output the worker did not send (the run
 *   printed more than LIMITS.OUTPUT_CHARS).
 * @typedef {{type: "fatal", runId?: number|null, error: string}} FatalEvent
 *   Python died where no request could report it (os._exit, a wasm trap), or the worker failed
 *   to start (start-python.js): the page restarts Python.
 */

/** Request types (page -> worker). */
export const Request = Object.freeze({
  INIT: "init",
  SET_INTERRUPT: "set-interrupt",
  PING: "ping",
  RUN: "run",
  CALL: "call",
  FETCH_FILE: "fetch-file",
  PREFETCH: "prefetch",
  PRELOAD: "preload",
});

/** Event types (worker -> page). */
export const Event = Object.freeze({
  PROGRESS: "progress",
  STDOUT: "stdout",
  STDERR: "stderr",
  FIGURE: "figure",
  ARRAYS: "arrays",
  NOTICE: "notice",
  DOWNLOAD: "download",
  FATAL: "fatal",
  OUTPUT_CUT: "output-cut",
});

/**
 * What the reader is told of output the worker cut (the worker alone enforces LIMITS.OUTPUT_CHARS):
 * what: "output" (a run's stdout and stderr, one OUTPUT_CUT event). Any other text too long is cut in its
 * middle, saying so there (lessonpy.runtime.limits.clip, worker/clip.js).
 */
export const cutNote = (what, chars) => `[${what} cut: ${chars.toLocaleString("en")} more characters were not shown]`;

/** Interrupt-buffer values (Pyodide reads them between bytecodes). */
export const SIGINT = 2;

// The fields of each message type: [required, optional]. `id` (requests) and `runId` (events)
// come on top. Kept beside the typedefs above; protocolError checks messages against it.
const REQUEST_FIELDS = {
  [Request.INIT]: [["indexURL", "wheelURL", "wheelSha256", "bootPackages", "fontCache", "plan"], ["snapshot", "matplotlibDocs", "ipad"]],
  [Request.SET_INTERRUPT]: [["buffer"], []],
  [Request.PING]: [[], []],
  [Request.RUN]: [["code", "cellId", "cells"], ["files"]],
  [Request.CALL]: [["module", "func", "kwargs"], []],
  [Request.FETCH_FILE]: [["url", "path"], ["size", "sha256"]],
  [Request.PREFETCH]: [["packages"], []],
  [Request.PRELOAD]: [["packages"], ["imports"]],
};
const EVENT_FIELDS = {
  [Event.PROGRESS]: [["stage", "fraction"], ["at"]],
  [Event.STDOUT]: [["text"], []],
  [Event.STDERR]: [["text"], []],
  [Event.FIGURE]: [["format", "data"], []],
  [Event.ARRAYS]: [["view", "title", "target"], ["tokens", "arrays", "derived", "causal", "stats", "error", "qk_divisor",
    "layers", "norms", "lens", "position", "key"]],
  [Event.NOTICE]: [["text"], []],
  [Event.DOWNLOAD]: [["loaded", "total"], ["name"]],
  [Event.FATAL]: [["error"], []],
  [Event.OUTPUT_CUT]: [["chars"], []],
};
const REPLY_FIELDS = [["id", "ok"], ["result", "error", "fatal"]];

/** The fields of every message, by direction and type: {request, event, reply} (for tests and docs). */
export const FIELDS = Object.freeze({ request: REQUEST_FIELDS, event: EVENT_FIELDS, reply: REPLY_FIELDS });

function fieldError(what, message, [required, optional], extra) {
  const allowed = new Set([...required, ...optional, ...extra]);
  const missing = required.filter((k) => !(k in message));
  if (missing.length) return `${what} lacks ${missing.join(", ")}`;
  const unknown = Object.keys(message).filter((k) => !allowed.has(k));
  if (unknown.length) return `${what} has fields the protocol does not define: ${unknown.join(", ")}`;
  return null;
}

/**
 * Why `message` (travelling `direction`: "request" page -> worker, "reply" or "event"
 * worker -> page) is not one the protocol defines, or null when it is.
 */
export function protocolError(direction, message) {
  if (!message || typeof message !== "object") return `a ${direction} must be an object`;
  if (direction === "request") {
    const fields = REQUEST_FIELDS[message.type];
    if (!fields) return `unknown request type ${JSON.stringify(message.type)}`;
    const extra = message.type === Request.SET_INTERRUPT ? [] : ["id"];
    if (extra.length && !Number.isInteger(message.id)) return `request ${message.type} needs an integer id`;
    return fieldError(`request ${message.type}`, message, fields, ["type", ...extra]);
  }
  if (direction === "reply") {
    if (!Number.isInteger(message.id)) return "a reply needs the integer id of its request";
    return fieldError("reply", message, REPLY_FIELDS, []);
  }
  if (direction === "event") {
    const fields = EVENT_FIELDS[message.type];
    if (!fields) return `unknown event type ${JSON.stringify(message.type)}`;
    return fieldError(`event ${message.type}`, message, fields, ["type", "runId"]);
  }
  return `unknown direction ${direction}`;
}

/** Is a message from the worker a reply (it answers a request) rather than an event? */
export const isReply = (message) => message?.id !== undefined;
