// The Python worker: boots Pyodide off the main thread (boot.js) and runs the page's requests one after
// another: cells, widgets' and graders' calls, file downloads, the idle preload; it streams the output
// within its limit and passes the page's Stop to Python.
import { bootPython } from "./boot.js";
import { fetchingKept, forgetDownloads, keepDownload } from "./downloads.js";
import { noticingGone, siteChanged } from "./gone.js";
import { canonicalName, writeFiles } from "./install.js";
import { damage, fetchFile as fetchInto } from "./live-files.js";
import { dropKept, fetchKept, keptCopy } from "./kept.js";
import { putRunFiles, stoppable } from "./run-files.js";
import { unzip } from "./unzip.js";
import { clipStrings } from "./clip.js";
import { LIMITS } from "../shared/limits.js";
import { Event, Request, SIGINT, protocolError } from "../shared/protocol.js";

// Every write is posted at once (print() shows up as it happens) until a flood starts:
// past OUTPUT_BURST posts in one OUTPUT_WINDOW_MS, writes are batched until the next window.
// Timers cannot help here, since the worker is busy running Python while it prints.
const OUTPUT_WINDOW_MS = 100;
const OUTPUT_BURST = 20;

// Every fetch of the worker, Pyodide's own among them, is served a wheel the idle prefetch downloaded
// (downloads.js); the worker's own downloads (fetchOk) go to the browser's.
// A 404 from Pyodide's (versioned) folder means the site was rebuilt under this page (gone.js).
const network = globalThis.fetch;
const gone = { url: null };
globalThis.fetch = noticingGone(fetchingKept(network), () => [packageIndex?.indexURL], gone);

let pyodide = null;
let glue = null; // lessonpy.runtime.pyodide_glue, once installed
// What comes after the first output, the boot plan's for this boot (boot.js): [{url, modules, into, unpack,
// download, written}]: the standard library's rest, and after a restore numpy's files besides its libraries.
let later = [];
let currentRunId = null;
const queue = []; // requests are handled strictly one after another

const now = () => performance.timeOrigin + performance.now(); // comparable with the page's clock
// Finer steps of the boot than its progress stages, [name, at] (at as now()): returned with the init
// reply, and added to the page's timings (runtime.js) for the benchmark and for profiling a restore.
const marks = [];
const mark = (name) => marks.push([name, now()]);

// Every message leaves through post() or reply(), and every string in it is clipped there (clip.js).
function post(type, fields = {}, transfer = []) {
  self.postMessage(clipStrings({ type, runId: currentRunId, ...fields }), transfer);
}

function reply(message, transfer = []) {
  self.postMessage(clipStrings(message), transfer);
}

let figuresPosted = 0; // by the request that runs (handle resets it)

/**
 * The door from Python to the page: lessonpy.runtime.bridge.emit's events, converted by lessonpy.runtime.pyodide_glue.
 * The reader's code can call emit with any payload, so on every page each event is checked against
 * protocol.js here, before it is sent: a malformed one is not sent, and the reason is raised in the
 * Python that emitted it (the reader's cell shows it).
 */
function fromPython(type, payload, transfer) {
  const fields = payload ?? {};
  const error = protocolError("event", { type, runId: currentRunId, ...fields });
  if (error) throw new Error(`lessonpy.runtime.bridge.emit: ${error} (static/js/shared/protocol.js defines the events)`);
  // lessonpy.runtime.figures sends no more than this; a reader's own emit() loop is refused past it too
  if (type === Event.FIGURE && ++figuresPosted > LIMITS.FIGURES_PER_RUN) {
    throw new Error(`lessonpy.runtime.bridge.emit: a run shows at most ${LIMITS.FIGURES_PER_RUN} figures`);
  }
  post(type, fields, transfer ? Array.from(transfer) : []);
}

// --------------------------------------------------------------------------- output streaming

/** UTF-8 characters in `bytes` (every byte that does not continue a character starts one). */
function countChars(bytes) {
  let n = 0;
  for (let i = 0; i < bytes.length; i++) if ((bytes[i] & 0xc0) !== 0x80) n++;
  return n;
}

// One budget per request for stdout and stderr together: the one place the output limit is enforced
// (the page shows what comes, and the cut note of OUTPUT_CUT). It counts bytes, which are never
// fewer than characters, so what is posted stays within LIMITS.OUTPUT_CHARS characters;
// whatever is past it is counted, not decoded: print("x" * 10**8) costs no more than a count.
const budget = {
  left: LIMITS.OUTPUT_CHARS,
  cutChars: 0,
  reset() {
    this.left = LIMITS.OUTPUT_CHARS;
    this.cutChars = 0;
  },
  /** The part of `bytes` that may still be shown; counts the rest as cut. */
  take(bytes) {
    if (bytes.length <= this.left) {
      this.left -= bytes.length;
      return bytes;
    }
    const kept = bytes.subarray(0, Math.max(0, this.left));
    this.cutChars += countChars(bytes.subarray(kept.length));
    this.left = 0;
    return kept;
  },
};

function makeStream(type) {
  const decoder = new TextDecoder();
  let pending = "";
  let windowStart = 0;
  let postsInWindow = 0;
  const stream = {
    write(bytes) {
      const kept = budget.take(bytes);
      if (!kept.length) return bytes.length; // taken, not shown: the run ends with an OUTPUT_CUT
      pending += decoder.decode(kept, { stream: true });
      const now = performance.now();
      if (now - windowStart > OUTPUT_WINDOW_MS) {
        windowStart = now;
        postsInWindow = 0;
      }
      if (postsInWindow < OUTPUT_BURST || pending.length >= LIMITS.OUTPUT_CHUNK_CHARS) stream.flush();
      return bytes.length;
    },
    flush() {
      // One message never carries more than a chunk: the page appends each without freezing.
      for (let at = 0; at < pending.length; at += LIMITS.OUTPUT_CHUNK_CHARS) {
        post(type, { text: pending.slice(at, at + LIMITS.OUTPUT_CHUNK_CHARS) });
      }
      if (pending) postsInWindow += 1;
      pending = "";
    },
    isatty: true, // line-buffered: print() shows up as it happens, not when the cell ends
  };
  return stream;
}

const stdout = makeStream(Event.STDOUT);
const stderr = makeStream(Event.STDERR);

// --------------------------------------------------------------------------- requests

let interruptBuffer = null; // set by a SET_INTERRUPT message, which may come before or after init
let interruptsHeld = false; // while a run's imports load (importsStopped)

function setInterrupt(buffer) {
  interruptBuffer = new Uint8Array(buffer);
  if (pyodide && !interruptsHeld) pyodide.setInterruptBuffer(interruptBuffer);
}

/** Python sees the page's Stop (held = false) or not: a Stop pressed meanwhile stays in the buffer. */
function holdInterrupts(held) {
  interruptsHeld = held;
  pyodide.setInterruptBuffer(held ? undefined : interruptBuffer);
}

async function init(request) {
  // matplotlib's font cache, made by the build (a few KB): without it the first figure
  // scans every font. Fetched now; written once matplotlib is unpacked (prepareMatplotlib).
  const { fontCache, matplotlibDocs } = request;
  if (fontCache) {
    pendingFontCache = fetch(fontCache.url)
      .then((r) => (r.ok ? r.arrayBuffer() : null))
      .then((bytes) => bytes && { path: fontCache.path, bytes: new Uint8Array(bytes) })
      .catch(() => null);
  }
  // The property lists matplotlib would write into its docstrings as pyplot is imported (the build's; without
  // them, a failed download among them, matplotlib writes them: lessonpy.runtime.artist_set_docs).
  if (matplotlibDocs) pendingMatplotlibDocs = fetch(matplotlibDocs).then((r) => (r.ok ? r.text() : null)).catch(() => null);
  const progress = (stage, fraction) => post(Event.PROGRESS, { stage, fraction, at: now() });
  const booted = await bootPython(request, { fetchBytes, fetchChecked, progress, mark });
  pyodide = booted.pyodide;
  packageIndex = { indexURL: request.indexURL, lockFileURL: booted.lockFileURL };
  later = booted.later.map((item) => ({ ...item, download: null, written: false }));
  pyodide.setStdout(stdout);
  pyodide.setStderr(stderr);
  if (interruptBuffer) pyodide.setInterruptBuffer(interruptBuffer);
  glue = pyodide.pyimport("lessonpy.runtime.pyodide_glue");
  glue.start(fromPython);
  progress("ready", 1);
  // When each large file had arrived: the restore's steps wait on these reads, from the caches too.
  for (const entry of performance.getEntriesByType("resource")) {
    if (/\.(wasm|zip|whl|snapshot)$/.test(entry.name)) marks.push([`${entry.name.split("/").pop()} arrived`, performance.timeOrigin + entry.responseEnd]);
  }
  const pythonVersion = pyodide.runPython("import sys; sys.version.split()[0]");
  const boot = { from: booted.how, note: booted.note }; // how Python came up, for the page's tests and the benchmark
  return { result: { pythonVersion, crossOriginIsolated: !!interruptBuffer, archives: booted.picked, boot, marks } };
}

/** The response for `url` (a versioned file: the service worker's kept copy when it has one, kept.js;
 * else the network's, not the kept downloads'); a failed one (HTTP error) throws. */
async function fetchOk(url) {
  const response = await fetchKept(url, undefined, network);
  if (!response.ok) throw new Error(`${url}: ${response.status} ${response.statusText}`);
  return response;
}

async function fetchBytes(url) {
  return new Uint8Array(await (await fetchOk(url)).arrayBuffer());
}

/**
 * The versioned file at `url`, whose SHA-256 must be `sha256` (hex). A kept copy that is not (a disk error,
 * a write cut short) is dropped from the service worker's caches and the file is read from the network
 * (the service worker's precache then keeps a good copy again): without this, a bad kept copy of the lesson's
 * wheel ended every later visit in "Python could not start". A network copy that is not it either throws.
 */
async function fetchChecked(url, sha256) {
  const kept = await keptCopy(url);
  const keptBytes = kept && (await kept.arrayBuffer().then((b) => new Uint8Array(b), () => null));
  if (keptBytes && !(await damage(keptBytes, { sha256 }))) return keptBytes;
  if (kept) await dropKept(url);
  const response = await network(url);
  if (!response.ok) throw new Error(`${url}: ${response.status} ${response.statusText}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  const bad = await damage(bytes, { sha256 });
  if (bad) throw new Error(`${url.split("/").pop()} did not arrive whole (${bad}): reload the page to download it again`);
  return bytes;
}

let pendingFontCache = null; // {path, bytes} promise (null: none), fetched at init
let pendingMatplotlibDocs = null; // JSON text promise (null: none), fetched at init
let matplotlibPrepared = null; // the promise of preparing it, once matplotlib is unpacked

/**
 * Once Pyodide's matplotlib is unpacked and before anything imports it: the build's font cache replaces the
 * wheel's (which Pyodide's matplotlib cannot use and would rebuild on import), its artists' set() are
 * documented when first read, and the build's property lists go into its docstrings' table
 * (lessonpy.runtime.artist_set_docs; nothing to do at start-up for a reader who never plots). Resolves when that is
 * done (at once while matplotlib is not loaded); every caller waits for the same.
 */
function prepareMatplotlib() {
  if (!pyodide.loadedPackages.matplotlib) return matplotlibPrepared ?? Promise.resolve();
  matplotlibPrepared ??= Promise.all([pendingFontCache, pendingMatplotlibDocs]).then(([cache, docs]) => {
    if (cache) pyodide.FS.writeFile(cache.path, cache.bytes);
    const artistDocs = pyodide.pyimport("lessonpy.runtime.artist_set_docs");
    try {
      artistDocs.install(docs ?? null);
    } finally {
      artistDocs.destroy();
    }
  });
  return matplotlibPrepared;
}

async function loadImports(code) {
  // matplotlib (and anything else Pyodide ships) loads the first time a cell imports it.
  const runId = currentRunId; // a stopped run's loading goes on after it (importsStopped): then it is quiet
  gone.url = null;
  try {
    await pyodide.loadPackagesFromImports(code, {
      messageCallback: (msg) => {
        if (/^Loading /.test(msg) && currentRunId === runId) post(Event.NOTICE, { text: msg.length > 90 ? `${msg.slice(0, 89)}…` : msg });
      },
      errorCallback: (msg) => currentRunId === runId && post(Event.STDERR, { text: msg + "\n" }),
    });
  } finally {
    forgetDownloads(pyodide.loadedPackages);
  }
  // before the import's own "No module named …": what happened, and what to do
  if (gone.url && currentRunId === runId) post(Event.STDERR, { text: siteChanged(gone.url) + "\n" });
  await prepareMatplotlib();
}

const STOP_POLL_MS = 50; // how often a run waiting for its imports or its files, or a download, looks for a Stop
let unfinishedImports = null; // the loading of a stopped run's imports, while it goes on (handle waits for it)

/**
 * Load the packages `code` imports (loadImports) with interrupts held back: Pyodide runs Python to
 * unpack a wheel, and a Stop landing there failed that install and was used up, so the stopped run
 * went on. Held back, the Stop stays in the buffer: seen here (polled while the packages download)
 * it ends the run as stopped at once, and the loading goes on to its end; the next request waits
 * for that (handle), so none of it runs beside another request's Python. Returns true when stopped.
 */
async function importsStopped(code) {
  if (!interruptBuffer) {
    await loadImports(code);
    return false;
  }
  holdInterrupts(true);
  const loading = loadImports(code).finally(() => holdInterrupts(false));
  let poll;
  const stop = new Promise((resolve) => {
    poll = setInterval(() => interruptBuffer[0] === SIGINT && resolve(true), STOP_POLL_MS);
  });
  try {
    // a Stop pressed during the last install is still in the buffer when the loading ends
    if (!(await Promise.race([loading.then(() => interruptBuffer[0] === SIGINT), stop]))) return false;
  } finally {
    clearInterval(poll);
  }
  interruptBuffer[0] = 0;
  unfinishedImports = loading.catch(() => {}).then(() => { unfinishedImports = null; });
  return true;
}

async function run({ code, cellId, cells, files }) {
  const unfit = files?.length ? await runFiles(files) : null;
  if (unfit) return { result: unfit };
  if (await importsStopped(code)) return { result: glue.stopped() };
  const result = await glue.run(code, cellId, pyodide.toPy(cells || {}));
  return { result: result instanceof Map ? Object.fromEntries(result) : result };
}

function call({ module, func, kwargs }) {
  // Widgets and graders call lessonpy functions; numpy arrays in what they return come back
  // as typed arrays whose buffers travel with the reply (lessonpy.runtime.pyodide_glue.call).
  // What the call raised comes back as its traceback, not raised across (lessonpy.runtime.pyodide_glue.call says why).
  const [ok, result, transfer] = glue.call(module, func, kwargs || {});
  if (!ok) throw new Error(result);
  return { result, transfer: Array.from(transfer) };
}

/** A download stopped by the page's Stop (stoppable's abort), or Python's KeyboardInterrupt in a listing call. */
const wasStopped = (err) => err?.name === "AbortError" || /KeyboardInterrupt/.test(String(err?.message ?? err));

async function fetchFile({ url, path, size = null, sha256 = null }) {
  const progress = (loaded, total) => post(Event.DOWNLOAD, { loaded, total });
  try {
    const result = await stoppable(interruptBuffer, (signal) =>
      fetchInto({ url, path, expected: { size, sha256 }, fs: pyodide.FS, progress, signal }), STOP_POLL_MS);
    return { result };
  } catch (err) {
    // the page's Stop ends the download in place: its panel says "Stopped", and Python need not restart
    if (wasStopped(err)) throw new Error("KeyboardInterrupt: the download was stopped");
    throw err;
  }
}

/** [{name, path, loaded}] of a live model's files, from Python's listing function `call` ([module, func]). */
function listFiles([module, func]) {
  const [ok, result] = glue.call(module, func, {});
  if (!ok) throw new Error(result);
  return result;
}

/**
 * Put a run's files into the file system before its code (run-files.js). Returns null when they are there,
 * else the run's reply: stopped (the page's Stop, in place), or failed with the download's reason in words.
 */
async function runFiles(files) {
  try {
    await stoppable(interruptBuffer, (signal) => putRunFiles({
      files, list: listFiles, fs: pyodide.FS, signal,
      progress: (name, loaded, total) => post(Event.DOWNLOAD, { name, loaded, total }),
    }), STOP_POLL_MS);
  } catch (err) {
    if (wasStopped(err)) return glue.stopped();
    return { ok: false, value: null, error: `${err?.message ?? err}\n`, errorName: "DownloadError", hint: null };
  }
  post(Event.NOTICE, { text: "Running…" });
  return null;
}

// --------------------------------------------------------------------------- idle preload

// What the page asks for once the reader has had a first output (preload.js): the boot plan's later files
// (the standard library's rest, what the boot and the first outputs did not need; after a restore numpy's
// files besides its libraries), and matplotlib, so that a first figure does not wait for its download and
// install. The download (prefetch) runs no Python, so it is not queued: requests go on meanwhile. Each
// package's install (preload) is queued like any request: Pyodide runs Python to unpack a wheel, and a Stop meant for a run landed there when the
// install ran beside it (the install failed and the run went on); behind it, a waiting request's
// Stop cancels that request on the page's side (runtime.js). Each wheel is read once, by the download;
// its install, the preload's or a run's that imports it first, is served those bytes (downloads.js),
// and waits for them while they come.

let packageIndex = null; // {indexURL, lockFileURL}: where loadPackage finds the packages (init)

async function prefetch({ packages }) {
  // The later files download alongside matplotlib and are written where Python looks for them (no Python:
  // an import of one of their modules then reads them instead of downloading them, lessonpy.runtime.stdlib_rest);
  // the first install puts a zip on the import path (mountLater). Once per interpreter.
  for (const item of later) item.download ??= writeLater(item).catch(() => {});
  const { indexURL, lockFileURL } = packageIndex;
  const lock = await (await fetchOk(lockFileURL)).json(); // read at boot: from the HTTP cache
  const seen = new Set();
  const order = []; // the packages not loaded yet, each after those it depends on
  const add = (name) => {
    const pkg = lock.packages[canonicalName(name)];
    if (!pkg || pyodide.loadedPackages[pkg.name] || seen.has(pkg.name)) return;
    seen.add(pkg.name);
    pkg.depends.forEach(add);
    order.push(pkg);
  };
  packages.forEach(add);
  // Each wheel is read once, here (the service worker's kept copy on a revisit, else the network),
  // checked against the lock's SHA-256 and kept for the install, whichever request makes it (downloads.js).
  // A failed download ends the preload, and lets go of what it kept. Asked for in the reverse of the install's
  // order, the package asked for first: matplotlib's wheel is most of the bytes, and the install waits for it
  // last; asked for after its 10 dependencies, it waited for a free connection (a browser opens 6 per host
  // over HTTP/1.1) until they had started.
  const downloads = [...order].reverse().map((pkg) => {
    const url = new URL(pkg.file_name, indexURL).href;
    return keepDownload(url, pkg.name, pkg.sha256, fetchBytes(url));
  });
  try {
    await Promise.all(downloads);
  } catch (err) {
    forgetDownloads();
    throw err;
  }
  forgetDownloads(pyodide.loadedPackages); // a run's imports may have installed some meanwhile, fetching their own
  // the reply says the downloads are over: the page then lets the service worker's precache read them (in-turn.js)
  await Promise.all(later.map((item) => item.download));
  return { packages: order.map((pkg) => pkg.name) };
}

async function preload({ packages, imports = [] }) {
  const quiet = { messageCallback: () => {}, errorCallback: () => {} };
  mountLater(); // before the install, once it has come: matplotlib's imports read the standard library's rest
  let loaded = [];
  try {
    if (packages.length) loaded = (await pyodide.loadPackage(packages, quiet)).map((p) => p.name);
  } finally {
    // What was installed, and what was asked for whether or not it was (loadPackage reports a failed
    // package to the muted errorCallback, not by throwing); the last step (no packages) lets go of all.
    forgetDownloads(packages.length ? [...Object.keys(pyodide.loadedPackages), ...packages] : null);
  }
  await prepareMatplotlib();
  // Into sys.modules, not the reader's names: a cell's own import then finds the module loaded. Only
  // once the later files are in the file system: else the import would download one synchronously (the
  // finder), holding Python for it in what should be idle time; the reader's own import does that.
  const imported = later.every((item) => item.written) ? imports : [];
  for (const name of imported) pyodide.pyimport(name).destroy();
  return { result: { loaded, imported } };
}

/**
 * A later zip (the standard library's rest) put on Python's import path (lessonpy.runtime.stdlib_rest.mount) once
 * prefetch has written it, unless an import did first. It runs Python, so only inside a queued request
 * (preload); it never waits for the download (the queue would wait with it): an install after it
 * arrives mounts it, and until then an import of one of its modules reads the written file, or
 * downloads it itself when it has not come (the finder says so when it cannot).
 */
function mountLater() {
  if (!later.some((item) => !item.unpack && item.written)) return;
  const finders = pyodide.pyimport("lessonpy.runtime.stdlib_rest");
  try {
    finders.mount(); // nothing when it is mounted already
  } finally {
    finders.destroy();
  }
}

/**
 * Download a later file and put it where its finder looks (lessonpy.runtime.stdlib_rest), unless an import did
 * first (the finder's synchronous download). A zip is written at `into`; a file to unpack (after a
 * restore, numpy's rest) is unzipped into the folder `into`. No Python: an import that numpy's folders'
 * finders miss (their caches may predate the files) is found by FolderRest, which makes them look again;
 * Pyodide's next install ends by making them look (boot.js).
 */
async function writeLater(item) {
  const bytes = await fetchBytes(item.url); // one interpreter per worker: a restart is a new worker
  if (!item.unpack) {
    if (!pyodide.FS.analyzePath(item.into).exists) pyodide.FS.writeFile(item.into, bytes);
  } else {
    const files = await unzip(bytes);
    // The last entry, not the first: an unpacking by the finder that a Stop cut short (it unpacks in the
    // archive's order) has the first files and not the last, and is completed here.
    if (files.length && !pyodide.FS.analyzePath(item.into + files.at(-1).name).exists) {
      writeFiles(pyodide.FS, item.into, files, { canOwn: true }); // unzip's arrays are the files' own
    }
  }
  item.written = true;
}

async function handleBackground(message) {
  try {
    reply({ id: message.id, ok: true, result: await prefetch(message) });
  } catch (err) {
    reply({ id: message.id, ok: false, error: String(err?.message ?? err), fatal: !pythonAlive() });
  }
}

function pythonAlive() {
  if (!pyodide) return true; // not booted yet: a boot failure, reported as such
  try {
    return pyodide.runPython("1") === 1;
  } catch {
    return false;
  }
}

// Some deaths of Python (os._exit, a fatal wasm trap) surface as an uncaught error in a
// later task, not as a rejected promise of the running request: report them so the page
// can restart Python instead of waiting forever.
function reportIfDead(event, reason) {
  if (!pyodide || pythonAlive()) return;
  post(Event.FATAL, { error: String(reason && reason.message ? reason.message : reason) });
  event.preventDefault(); // handled here: the page hears of it once, as a "fatal" message
}
self.addEventListener("error", (event) => reportIfDead(event, event.error || event.message));
self.addEventListener("unhandledrejection", (event) => reportIfDead(event, event.reason));

const handlers = { [Request.INIT]: init, [Request.RUN]: run, [Request.CALL]: call, [Request.FETCH_FILE]: fetchFile, [Request.PRELOAD]: preload };

async function handle(message) {
  await unfinishedImports; // a stopped run's imports load to their end first (importsStopped)
  const { id, type } = message;
  currentRunId = id;
  budget.reset();
  figuresPosted = 0;
  try {
    const handler = handlers[type];
    if (!handler) throw new Error(`unknown request type ${type}`);
    const { result, transfer = [] } = stoppedBeforeStart(type) ?? await handler(message); // each: {result, transfer?}
    endOutput();
    reply({ id, ok: true, result }, transfer);
  } catch (err) {
    // A failure of the machinery (not of the reader's code, which run() reports as data),
    // or Python itself died (os._exit, a fatal wasm error): then the page must restart us.
    endOutput();
    reply({ id, ok: false, error: String(err && err.message ? err.message : err), fatal: !pythonAlive() });
  } finally {
    currentRunId = null;
  }
}

/**
 * A Stop already pending when a request starts was pressed before the worker took it (it was still
 * loading a stopped run's imports, with interrupts held): the request ends as interrupted before any of it runs
 * (the page clears the buffer before it sends a request, so a Stop found here is this request's).
 * A run says "Stopped." as an interrupted cell does; other requests fail with KeyboardInterrupt.
 * Returns null when there is no such Stop.
 */
function stoppedBeforeStart(type) {
  if (type === Request.INIT || interruptBuffer?.[0] !== SIGINT) return null;
  interruptBuffer[0] = 0;
  if (type === Request.RUN) return { result: glue.stopped() };
  throw new Error("KeyboardInterrupt: stopped before it started");
}

/** Post what is still buffered, then say how much of the request's output was cut. */
function endOutput() {
  stdout.flush();
  stderr.flush();
  if (budget.cutChars) post(Event.OUTPUT_CUT, { chars: budget.cutChars });
}

let busy = false;
async function enqueue(message) {
  queue.push(message);
  if (busy) return;
  busy = true;
  while (queue.length) await handle(queue.shift());
  busy = false;
}

self.onmessage = (event) => {
  const message = event.data;
  if (message.type === Request.SET_INTERRUPT) setInterrupt(message.buffer); // no reply, never queued
  else if (message.type === Request.PREFETCH) handleBackground(message); // runs no Python: never queued
  else if (message.type === Request.PING) reply({ id: message.id, ok: true }); // the thread is free (protocol.js)
  else enqueue(message);
};

// The page passes the init request in the worker's name, so booting starts the moment this
// module runs: a message posted at creation only arrives once the page's main thread is free
// to forward it, and while a long lesson is being parsed that is a few hundred ms later.
if (self.name) enqueue(JSON.parse(self.name));
