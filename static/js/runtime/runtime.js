// The page's handle on the Python worker: start it, send requests one at a time, stream their
// events, stop runaway code, and bring Python back when it dies. The interpreter's life (boot,
// interrupt, restart, replay) is the state machine in restart.js; this file does what each
// state means. Only the current worker is listened to: a terminated worker can still deliver
// an error or a message (Pyodide's NoGilError comes ~2 s after terminate()), and it must
// never act on the interpreter that replaced it.
import { Event, Request, SIGINT, isReply, protocolError } from "../shared/protocol.js";
import { REPLAY_BUDGET_S, ReplayLog } from "./replay.js";
import { RestartMachine, State, Transition } from "./restart.js";

const BOOT_TIMEOUT_MS = 180_000; // a slow phone on a slow line still gets there; a hang does not wait forever
const INTERRUPT_GRACE_MS = 1_500; // after this a Stop asks whether the worker's thread is free (#busy)...
const ANSWER_WAIT_MS = 1_000; // ...each ask waiting this long for the answer...
// ...and a worker silent this long in all (asks answered late by this thread do not count) is taken to be a cell
// ignoring KeyboardInterrupt: a restart, about 4.5 s after the Stop. One unanswered ask (2.5 s after the Stop)
// was too little: CI's Firefox, on a machine loaded by the suite's other browsers, once took longer than that to
// unwind an interrupted `while True: pass` and lost the reader's variables to a restart it did not need.
const SILENCE_MS = 3_000;
// An idle install (preload) is served the bytes the prefetch downloaded (worker.js, downloads.js), and the
// import ahead that follows reads files already written: a few seconds at most, even on a slow phone. When
// the download failed the install's own fetch goes to the network: matplotlib's wheel, the largest (7.2 MB),
// takes about 58 s at 1 Mbit/s. Past this the install or import is taken to be stalled (a request that
// never answers), and runs queued behind it must not wait for the reader to press Restart: Python is
// restarted and replayed as for any request stuck past its deadline.
// A restart costs the reader variables (the replay skips slow cells), so the deadline is the boot's, three
// times that slow case: only an install that truly hangs reaches it.
const INSTALL_DEADLINE_MS = BOOT_TIMEOUT_MS;

/**
 * The worker start-python.js already started (taken once), or a new one with a new interrupt buffer:
 * start-python.js, loaded by every lesson page, owns creating workers, sending them "init" and the one
 * check of whether this browser can interrupt Python in place (newInterruptBuffer). Each worker polls a
 * buffer of its own: a terminated worker runs on for a moment (Pyodide's NoGilError comes ~2 s after
 * terminate()), still reading the buffer it was given; sharing it, a worker stopped for code that ignores
 * KeyboardInterrupt took the Stop meant for the new one (which then ran on, and was restarted too).
 */
function takeWorker(config) {
  const early = globalThis.earlyPython;
  if (early?.started) {
    const started = early.started;
    early.started = null;
    return started;
  }
  if (typeof globalThis.startPythonWorker !== "function") {
    throw new Error(early?.error ? `its start failed (${early.error})` : "the page's start-up script did not load");
  }
  return globalThis.startPythonWorker(config, globalThis.newInterruptBuffer());
}

const failure = (message, extra) => Object.assign(new Error(message), extra);

export class PythonRuntime extends EventTarget {
  #firstRunDone; // resolves this.firstRun

  /**
   * @param {{workerURL: string, indexURL: string, wheelURL: string, bootPackages: string[], fontCache: {url: string, path: string}|null, plan: Object|null, snapshot: Object|null}} config
   *   (plan: the boot plan, which of Pyodide's files to fetch when; snapshot: the memory snapshot to restore; protocol.js, InitRequest)
   */
  constructor(config) {
    super();
    this.config = config;
    // Shared with the current worker, when this browser can share one (start-python.js, newInterruptBuffer):
    // Stop then interrupts Python in place; otherwise Stop restarts it. Set by each boot.
    this.interruptBuffer = null;
    this.machine = new RestartMachine({ canInterrupt: false });
    this.worker = null;
    this.generation = 0; // one per worker: events of any other worker are ignored
    this.nextId = 1;
    this.init = null; // {id, resolve, reject, onEvent} of the boot under way
    this.queue = []; // requests not yet sent, oldest first: the worker gets one at a time
    this.inflight = null; // the request the worker is executing
    this.background = new Map(); // id -> {resolve, reject}: prefetches, which the worker never queues (prefetch())
    this.pings = new Map(); // id -> resolve: the pings of #busy, never queued either
    this.replayLog = new ReplayLog(); // what a restart re-runs (see replay.js)
    this.replayBudgetSeconds = REPLAY_BUDGET_S; // tests shorten it rather than sleep for seconds
    this.installDeadlineMs = INSTALL_DEADLINE_MS; // likewise
    this.ranCells = new Set(); // cells that have run in the current interpreter
    this.ready = null; // promise of a usable interpreter (its boot, and its replay after a restart)
    this.restarting = null; // promise of the report of the latest restart
    this.protocolErrors = []; // messages either side sent that protocol.js does not define (a bug)
    // The reply to the reader's first run (not a replay's): preload.js waits for it.
    this.firstRun = new Promise((resolve) => { this.#firstRunDone = resolve; });
    // Every message both ways is checked against protocol.js where a test drives the browser (WebDriver,
    // so Playwright, sets navigator.webdriver): one it does not define is our bug, and the browser tests
    // fail on it. A reader's page skips that: these messages come from our own code, except what the
    // reader's Python sends through lessonpy.runtime.bridge, which the worker checks on every page (worker.js).
    this.checkProtocol = globalThis.navigator?.webdriver === true;
  }

  /** Boot Python (once; again after a failed start); resolves with {pythonVersion, crossOriginIsolated}. */
  start() {
    if (!this.ready) {
      this.machine.fire(Transition.RETRY); // from FAILED; refused (harmless) on the first start
      this.ready = this.#bootFirst();
    }
    return this.ready;
  }

  /** Run a cell's code. Options: onEvent (streamed output), cells, order (page position),
   *  signal (abort = cancel if waiting, stop if running), onStart (the worker took it), files (the
   *  live models' files it needs first, protocol.js: CellFiles; a replay puts them there again). */
  async run(code, cellId, { onEvent, cells = {}, order, signal, onStart, files } = {}) {
    await this.#readyFor(signal);
    return this.#send(Request.RUN, { code, cellId, cells, ...(files?.length && { files }) },
      { onEvent, signal, onStart, cellId, order });
  }

  /** Call a lessonpy function with plain-data keyword arguments (widgets, graders).
   *  Options as for run(), plus deadlineMs: past it (from the start of the call) Python is
   *  taken to be stuck inside C code, where no interrupt reaches, and is restarted. */
  async call(module, func, kwargs = {}, { onEvent, signal, onStart, deadlineMs } = {}) {
    await this.#readyFor(signal);
    return this.#send(Request.CALL, { module, func, kwargs }, { onEvent, signal, onStart, deadlineMs });
  }

  /** Put the file at `url` into Python's file system at `path` (see protocol.js); options as for
   *  run(); onEvent gets "download" events; `size` and `sha256`, when given, are what it must be. */
  async fetchFile(url, path, { onEvent, signal, onStart, size = null, sha256 = null } = {}) {
    await this.#readyFor(signal);
    const expected = { ...(size !== null && { size }), ...(sha256 !== null && { sha256 }) }; // the build's, to check against
    return this.#send(Request.FETCH_FILE, { url, path, ...expected }, { onEvent, signal, onStart });
  }

  /** Download `packages` without installing them (protocol.js, PrefetchRequest), in the background:
   *  it runs no Python and is not queued, so requests sent meanwhile go ahead. Resolves with the
   *  worker's reply; rejects if Python restarts or fails first. */
  async prefetch(packages) {
    await this.start();
    return new Promise((resolve, reject) => {
      const message = { id: this.nextId++, type: Request.PREFETCH, packages };
      this.#checkProtocol("request", message);
      this.background.set(message.id, { resolve, reject });
      this.worker.postMessage(message);
    });
  }

  /** Install `packages`, then import `imports` (protocol.js, PreloadRequest): a request like a run,
   *  queued, because both run Python: a Stop of a request waiting behind it cancels that request and never lands
   *  in the install. An install or import that outlives INSTALL_DEADLINE_MS restarts Python (a restart's report
   *  says which: `stuck`). Rejects if Python restarts or fails first (the new interpreter loads them
   *  when a cell imports them). */
  async preload(packages, imports = []) {
    await this.start();
    const what = [packages.length && `Installing ${packages.join(", ")}`, imports.length && `importing ${imports.join(", ")}`]
      .filter(Boolean).join(", then ").replace(/^i/, "I");
    return this.#send(Request.PRELOAD, { packages, imports }, { preload: true, deadlineMs: this.installDeadlineMs, what });
  }

  /** Python ready (booted, or restarted and replayed); a Stop meanwhile cancels the wait at once. */
  #readyFor(signal) {
    const ready = this.start();
    if (!signal) return ready;
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(failure("cancelled", { cancelled: true }));
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener("abort", onAbort, { once: true });
      ready.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
    });
  }

  /** The reader's "Restart Python": a fresh interpreter, every variable gone, nothing replayed. */
  restart() {
    if (!this.machine.fire(Transition.CLEAN_RESTART)) return this.start();
    return this.#restartNow("clean", failure("Python was restarted", { stopped: true, cleared: true }));
  }

  /** The id of the cell whose run has id `runId` (events carry it), or null (a call, a replay's
   *  request that is over, or gone). Events arrive before their request's reply, so the running
   *  request is the one to ask. */
  cellOf(runId) {
    const req = this.inflight;
    return req && req.id === runId && req.type === Request.RUN ? req.cellId ?? null : null;
  }

  get busy() {
    return this.inflight !== null;
  }

  // ------------------------------------------------------------------------- booting

  async #bootFirst() {
    try {
      const info = await this.#boot();
      this.info = info;
      this.machine.fire(Transition.BOOTED);
      this.#status({ state: "ready", stage: "ready", fraction: 1 });
      this.#pump();
      return info;
    } catch (err) {
      this.#bootFailed(err);
      throw err;
    }
  }

  #bootFailed(err) {
    this.machine.fire(Transition.BOOT_FAILED);
    this.#dropBackground(`Python could not start: ${err.message || err}`);
    for (const req of this.queue.splice(0)) this.#settle(req, () => req.reject(failure(`Python could not start: ${err.message || err}`)));
    this.ready = null; // let a retry boot again
    this.worker?.terminate();
    this.worker = null;
    this.#status({ state: "error", stage: String(err.message || err), fraction: 0 });
  }

  /** Create (or adopt) a worker and wait for its init reply. */
  async #boot() {
    const generation = ++this.generation;
    this.#status({ state: "loading", stage: "Starting", fraction: 0 });
    const { worker, init: initRequest, sent, buffered, startedAt, interruptBuffer = null } = takeWorker(this.config);
    this.interruptBuffer = interruptBuffer;
    this.machine.canInterrupt = Boolean(interruptBuffer);
    for (const message of sent) this.#checkProtocol("request", message); // start-python.js cannot import protocol.js
    const initId = initRequest.id;
    // Milestones of this boot (ms since navigation), for the benchmark and the curious.
    this.timings = [["worker created", startedAt]];
    this.worker = worker;
    const current = () => generation === this.generation;
    worker.onerror = (e) => {
      e.preventDefault?.();
      if (current()) this.#crashed(`the Python worker crashed: ${e.message || "unknown error"}`);
    };
    worker.onmessage = (e) => {
      if (current()) this.#onMessage(e.data);
    };
    const init = new Promise((resolve, reject) => {
      this.init = { id: initId, resolve, reject, onEvent: (event) => {
        if (event.type === Event.PROGRESS && event.at) this.timings.push([event.stage, event.at - performance.timeOrigin]);
        if (event.type === Event.PROGRESS && event.stage !== "ready") {
          this.#status({ state: "loading", stage: event.stage, fraction: event.fraction });
        }
      } };
    });
    for (const message of buffered.splice(0)) this.#onMessage(message); // what came before we listened
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Python did not start within ${BOOT_TIMEOUT_MS / 1000} s`)), BOOT_TIMEOUT_MS);
    });
    try {
      const info = await Promise.race([init, timeout]);
      for (const [stage, at] of info.marks ?? []) this.timings.push([stage, at - performance.timeOrigin]);
      this.timings.sort((a, b) => a[1] - b[1]);
      return info;
    } finally {
      clearTimeout(timer);
      if (current()) this.init = null;
    }
  }

  // ------------------------------------------------------------------------- restarting

  /** The machine has just entered RESTARTING: replace the worker, then replay or not. */
  #restartNow(reason, error, stuck = null) {
    this.worker?.terminate();
    this.worker = null;
    this.init?.reject(failure("restarted again")); // a boot under way is abandoned
    this.init = null;
    const inflight = this.inflight;
    this.inflight = null;
    if (inflight) this.#settle(inflight, () => inflight.reject(error));
    this.#dropBackground("restarted");
    // Replay runs and preloads belonged to the interpreter that is gone; the reader's requests wait for the new one.
    const gone = (r) => r.replay || r.preload;
    for (const req of this.queue.filter(gone)) this.#settle(req, () => req.reject(failure("restarted")));
    this.queue = this.queue.filter((r) => !gone(r));
    const log = this.machine.replay ? this.replayLog : null;
    this.replayLog = new ReplayLog();
    this.ranCells = new Set();
    const restart = this.#bootAndReplay(reason, log, stuck);
    this.restarting = restart;
    // Runs asked for meanwhile wait on `ready`, so they see the replayed state.
    this.ready = restart.then(() => this.info);
    this.ready.catch(() => {});
    return restart;
  }

  /** `stuck`: {what, seconds} of the request that outlived its deadline, said in the report. */
  async #bootAndReplay(reason, log, stuck) {
    const booting = this.#boot();
    const generation = this.generation;
    const superseded = () => generation !== this.generation; // a newer restart took over
    try {
      this.info = await booting;
    } catch (err) {
      if (superseded()) return this.restarting;
      this.#bootFailed(err);
      throw err;
    }
    if (superseded()) return this.restarting;
    const report = { reason, stuck, replayed: [], skipped: [], failed: [], cleared: !log };
    if (this.machine.fire(Transition.BOOTED) === State.REPLAYING) {
      const { run, skipped } = log.plan(this.replayBudgetSeconds);
      report.skipped = skipped.map(({ cellId, seconds }) => ({ cellId, seconds }));
      for (const [i, entry] of run.entries()) {
        this.#status({ state: "loading", stage: `Re-running your earlier cells (${i + 1} of ${run.length})`, fraction: 0.95 });
        try {
          const files = entry.files ? { files: entry.files } : {};
          const result = await this.#send(Request.RUN, { code: entry.code, cellId: entry.cellId, cells: {}, ...files },
            { cellId: entry.cellId, order: entry.order, replay: true });
          (result.ok ? report.replayed : report.failed).push(entry.cellId);
        } catch {
          if (superseded()) return this.restarting; // the replay killed Python: a clean restart follows
          report.failed.push(entry.cellId);
        }
      }
      if (superseded()) return this.restarting;
      this.machine.fire(Transition.REPLAYED);
    }
    this.dispatchEvent(new CustomEvent("restarted", { detail: report })); // before "ready", which says what it did
    this.#status({ state: "ready", stage: "ready", fraction: 1 });
    this.#pump();
    return report;
  }

  /** The current interpreter died. While booting that is a failed boot; otherwise restart. */
  #crashed(message) {
    if (this.init) {
      this.init.reject(failure(message));
      return;
    }
    const inflight = this.inflight;
    if (this.machine.fire(Transition.CRASHED)) this.#restartNow("crash", failure(`Python stopped working: ${message}`, { fatal: true }));
    else if (inflight) this.#finish(inflight, { ok: false, error: message, fatal: true });
  }

  // ------------------------------------------------------------------------- requests

  // `what`: the request in the reader's words, for a restart's report when it outlives its deadline.
  #send(type, fields, { onEvent, signal, onStart, cellId, order, replay = false, preload = false, deadlineMs, what } = {}) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(failure("cancelled", { cancelled: true }));
        return;
      }
      const req = { id: this.nextId++, type, fields, onEvent, onStart, cellId, order, replay, preload, deadlineMs, what, resolve, reject, cleanup: [] };
      if (signal) {
        const onAbort = () => this.#abort(req);
        signal.addEventListener("abort", onAbort, { once: true });
        req.cleanup.push(() => signal.removeEventListener("abort", onAbort));
      }
      this.queue.push(req);
      this.#pump();
    });
  }

  /** Send the next request the interpreter's state allows: the reader's when READY, replays when REPLAYING. */
  #pump() {
    if (this.inflight || !this.worker) return;
    const state = this.machine.state;
    const allowed = (r) => (state === State.READY && !r.replay) || (state === State.REPLAYING && r.replay);
    const index = this.queue.findIndex(allowed);
    if (index < 0) return;
    const [req] = this.queue.splice(index, 1);
    this.inflight = req;
    req.sentAt = performance.now();
    if (this.interruptBuffer) this.interruptBuffer[0] = 0; // a stale Stop must not hit this request
    if (req.deadlineMs) {
      const timer = setTimeout(() => this.#stuck(req), req.deadlineMs);
      req.cleanup.push(() => clearTimeout(timer));
    }
    const message = { id: req.id, type: req.type, ...req.fields };
    this.#checkProtocol("request", message);
    this.worker.postMessage(message);
    req.onStart?.();
  }

  /** The request's own control was stopped: cancel it if it waits, stop it if it runs. */
  #abort(req) {
    const index = this.queue.indexOf(req);
    if (index >= 0) {
      this.queue.splice(index, 1);
      this.#settle(req, () => req.reject(failure("cancelled", { cancelled: true })));
    } else if (this.inflight === req) {
      this.#stopInflight(req);
    }
  }

  #stopInflight(req) {
    const next = this.machine.fire(Transition.STOP);
    if (next === State.RESTARTING) {
      this.#restartNow("stop", failure("stopped", { stopped: true }));
    } else if (next === State.INTERRUPTING) {
      this.interruptBuffer[0] = SIGINT;
      setTimeout(async () => {
        if (await this.#busy(req) && this.machine.fire(Transition.INTERRUPT_IGNORED)) {
          this.#restartNow("stop", failure("stopped", { stopped: true }));
        }
      }, INTERRUPT_GRACE_MS);
    } // else refused: a second Stop, or a Stop while Python restarts, adds nothing
  }

  /**
   * Is `req` still running after its Stop's grace? Not merely "has its reply not been handled yet": a reply
   * already posted may wait behind this thread's own work, and a restart then costs the reader a replay and
   * the idle preload (CI once lost its preload so, cause inferred: Chromium handled a reply queued behind 3 s
   * of script before the grace's timer when tried here). So the worker is pinged: it
   * answers once its thread is free, after its reply to `req` (a worker's messages arrive in order). No
   * answer within ANSWER_WAIT_MS: still in Python, asked again until it has been silent for SILENCE_MS. A wait
   * that ended late (this thread was busy) counts for nothing: the ping is sent again. An answer while `req` is
   * still unfinished means it awaits something (a download) that no interrupt reaches: busy too.
   */
  async #busy(req) {
    let silent = 0;
    for (;;) {
      if (this.inflight !== req) return false;
      const sent = performance.now();
      const answered = await this.#ping();
      if (this.inflight !== req) return false;
      if (answered) return true;
      const waited = performance.now() - sent;
      if (waited < 2 * ANSWER_WAIT_MS) silent += waited;
      if (silent >= SILENCE_MS) return true;
    }
  }

  /** Resolves true when the worker answers a ping within ANSWER_WAIT_MS, else false. */
  #ping() {
    return new Promise((resolve) => {
      if (!this.worker) return resolve(false);
      const message = { id: this.nextId++, type: Request.PING };
      const timer = setTimeout(() => {
        this.pings.delete(message.id);
        resolve(false);
      }, ANSWER_WAIT_MS);
      this.pings.set(message.id, () => {
        clearTimeout(timer);
        resolve(true);
      });
      this.#checkProtocol("request", message);
      this.worker.postMessage(message);
    });
  }

  #stuck(req) {
    if (this.inflight === req && this.machine.fire(Transition.STUCK)) {
      this.#restartNow("stuck", failure("did not finish in time", { stuck: true }),
        req.what ? { what: req.what, seconds: req.deadlineMs / 1000 } : null);
    }
  }

  /** Prefetches belonged to the interpreter that is gone. */
  #dropBackground(why) {
    for (const { reject } of this.background.values()) reject(failure(why));
    this.background.clear();
  }

  #checkProtocol(direction, message) {
    if (!this.checkProtocol) return;
    const error = protocolError(direction, message);
    if (!error) return;
    this.protocolErrors.push(error);
    console.error(`protocol.js does not define this ${direction}: ${error}`);
  }

  // Only the current worker's messages get here (see #boot), so a dead worker's late message
  // is dropped before it is checked.
  #onMessage(msg) {
    this.#checkProtocol(isReply(msg) ? "reply" : "event", msg);
    if (isReply(msg)) {
      if (this.init && msg.id === this.init.id) {
        if (msg.ok) this.init.resolve(msg.result);
        else this.init.reject(failure(msg.error));
        return;
      }
      const pong = this.pings.get(msg.id);
      if (pong) {
        this.pings.delete(msg.id);
        pong();
        return;
      }
      const background = this.background.get(msg.id);
      if (background) {
        this.background.delete(msg.id);
        if (msg.ok) background.resolve(msg.result);
        else background.reject(failure(msg.error, { fatal: Boolean(msg.fatal) }));
        if (msg.fatal) this.#crashed(msg.error);
        return;
      }
      if (this.inflight?.id !== msg.id) return; // a reply to nothing we wait for
      this.#finish(this.inflight, msg);
      if (msg.fatal) this.#crashed(msg.error); // Python died: bring a new one up at once
      return;
    }
    if (msg.type === Event.FATAL) {
      this.#crashed(msg.error);
      return;
    }
    if (this.init && msg.runId === this.init.id) this.init.onEvent(msg);
    else if (this.inflight && msg.runId === this.inflight.id) this.inflight.onEvent?.(msg);
    this.dispatchEvent(new CustomEvent("python-event", { detail: msg }));
  }

  /** A request's reply came: settle it, remember a cell run for a replay, send the next. */
  #finish(req, msg) {
    this.inflight = null;
    if (msg.ok) {
      const result = msg.result;
      if (req.type === Request.RUN) {
        if (!req.replay) this.#firstRunDone();
        if (result.errorName !== "KeyboardInterrupt") this.ranCells.add(req.cellId);
        this.replayLog.record({ cellId: req.cellId, code: req.fields.code, files: req.fields.files, ok: result.ok,
                                seconds: (performance.now() - req.sentAt) / 1000, order: req.order });
      }
      this.#settle(req, () => req.resolve(result));
    } else {
      this.#settle(req, () => req.reject(failure(msg.error, { fatal: Boolean(msg.fatal) })));
    }
    if (this.machine.state === State.INTERRUPTING) this.machine.fire(Transition.INTERRUPTED);
    if (!msg.fatal) this.#pump();
  }

  #settle(req, settle) {
    for (const undo of req.cleanup) undo();
    settle();
  }

  #status(detail) {
    this.status = detail;
    this.dispatchEvent(new CustomEvent("status", { detail }));
  }
}
