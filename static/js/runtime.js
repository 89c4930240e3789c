// The page's handle on the Python worker: start it, send requests, stream events, stop runaway code.
import { Event, Request, SIGINT, isReply, protocolError } from "./protocol.js";

const BOOT_TIMEOUT_MS = 180_000; // a slow phone on a slow line still gets there; a hang does not wait forever
const INTERRUPT_GRACE_MS = 1_500; // after this, a cell that ignores KeyboardInterrupt gets a restart

/**
 * The worker start-python.js already started (taken once), or a new one: start-python.js,
 * loaded by every lesson page, owns creating workers and sending them "init".
 */
function takeWorker(config, interruptBuffer) {
  const early = globalThis.earlyPython;
  if (early?.started) {
    const started = early.started;
    early.started = null;
    return started;
  }
  return globalThis.startPythonWorker(config, interruptBuffer);
}

export class PythonRuntime extends EventTarget {
  /**
   * @param {{workerURL: string, indexURL: string, wheelURL: string, bootPackages: string[], fontCache: {url: string, path: string}|null}} config
   * @param {Uint8Array|null} interruptBuffer  shared with the worker (needs cross-origin isolation)
   */
  constructor(config, interruptBuffer = null) {
    super();
    this.config = config;
    this.worker = null;
    this.nextId = 1;
    this.pending = new Map(); // id -> {resolve, reject, onEvent}
    this.history = []; // [{code, cellId}] of finished runs, replayed after a restart
    this.ranCells = new Set(); // cells that have run in the current interpreter
    this.ready = null; // promise of the current boot
    this.currentRun = null; // id of the request being executed
    this.protocolErrors = []; // messages either side sent that protocol.js does not define (a bug)
    // With cross-origin isolation Python can be interrupted in place; otherwise Stop restarts it.
    this.interruptBuffer = interruptBuffer;
  }

  /** Boot Python (once); resolves with {pythonVersion, crossOriginIsolated}. */
  start() {
    if (!this.ready) this.ready = this.#boot();
    return this.ready;
  }

  async #boot() {
    this.#status({ state: "loading", stage: "Starting", fraction: 0 });
    const { worker, init: initRequest, sent, buffered, startedAt } = takeWorker(this.config, this.interruptBuffer);
    for (const message of sent) this.#checkProtocol("request", message); // start-python.js cannot import protocol.js
    const initId = initRequest.id;
    // Milestones of this boot (ms since navigation), for the benchmark and the curious.
    this.timings = [["worker created", startedAt]];
    this.worker = worker;
    this.worker.onerror = (e) => {
      e.preventDefault?.();
      const booted = this.status?.state === "ready";
      this.#failAll(`the Python worker crashed: ${e.message || "unknown error"}`, { fatal: true });
      if (booted) this.restart().catch(() => {}); // a crash after start-up: restart and replay
    };
    const init = new Promise((resolve, reject) => {
      this.pending.set(initId, { resolve, reject, type: Request.INIT, cellId: null, onEvent: (event) => {
        if (event.type === Event.PROGRESS && event.at) this.timings.push([event.stage, event.at - performance.timeOrigin]);
        if (event.type === Event.PROGRESS && event.stage !== "ready") {
          this.#status({ state: "loading", stage: event.stage, fraction: event.fraction });
        }
      } });
    });
    this.worker.onmessage = (e) => this.#onMessage(e.data);
    for (const message of buffered.splice(0)) this.#onMessage(message); // what came before we listened
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Python did not start within ${BOOT_TIMEOUT_MS / 1000} s`)), BOOT_TIMEOUT_MS);
    });
    try {
      const info = await Promise.race([init, timeout]);
      this.#status({ state: "ready", stage: "ready", fraction: 1 });
      return info;
    } catch (err) {
      this.ready = null; // let a retry boot again
      this.worker?.terminate();
      this.#status({ state: "error", stage: String(err.message || err), fraction: 0 });
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Run a cell's code; onEvent receives streamed stdout/stderr/figure/arrays events. */
  async run(code, cellId, { onEvent = () => {}, cells = {} } = {}) {
    await this.start();
    return this.#run(code, cellId, onEvent, cells);
  }

  async #run(code, cellId, onEvent = () => {}, cells = {}) {
    if (this.interruptBuffer) this.interruptBuffer[0] = 0; // a stale Stop must not hit the next run
    const result = await this.#request(Request.RUN, { code, cellId, cells }, onEvent);
    if (result.errorName !== "KeyboardInterrupt") {
      this.history.push({ code, cellId });
      this.ranCells.add(cellId);
    }
    return result;
  }

  /** Call a lessonpy function with plain-data keyword arguments (widgets, graders). */
  async call(module, func, kwargs = {}, onEvent = () => {}) {
    await this.start();
    if (this.interruptBuffer) this.interruptBuffer[0] = 0;
    return this.#request(Request.CALL, { module, func, kwargs }, onEvent);
  }

  /** Put the file at `url` into Python's file system at `path` (see protocol.js); onEvent gets "download" events. */
  async fetchFile(url, path, onEvent = () => {}) {
    await this.start();
    return this.#request(Request.FETCH_FILE, { url, path }, onEvent);
  }

  /** The id of the cell whose run has id `runId` (events carry it), or null (a call, or gone). */
  cellOf(runId) {
    return this.pending.get(runId)?.cellId ?? null;
  }

  /** Stop the running code: interrupt it if we can, else (or if it will not stop) restart Python. */
  async stop() {
    if (this.currentRun === null) return;
    if (this.interruptBuffer) {
      const id = this.currentRun;
      this.interruptBuffer[0] = SIGINT;
      const stopped = await this.#waitUntilFinished(id, INTERRUPT_GRACE_MS);
      if (stopped) return;
    }
    await this.restart();
  }

  /** Throw the interpreter away, boot a fresh one and replay what the reader had run. */
  async restart() {
    this.worker?.terminate();
    this.worker = null;
    this.#failAll("stopped", { stopped: true });
    // An interrupt that did not take must not kill the new interpreter as it boots.
    if (this.interruptBuffer) this.interruptBuffer[0] = 0;
    const replay = this.history;
    this.history = [];
    this.ranCells = new Set();
    // Runs asked for meanwhile wait on `ready`, so they see the replayed state.
    this.ready = this.#boot().then(async (info) => {
      if (replay.length) {
        this.#status({ state: "loading", stage: "Re-running your earlier cells", fraction: 0.95 });
        for (const { code, cellId } of replay) await this.#run(code, cellId); // output not shown again
        this.#status({ state: "ready", stage: "ready", fraction: 1 });
      }
      return info;
    });
    await this.ready;
  }

  get busy() {
    return this.currentRun !== null;
  }

  #waitUntilFinished(id, ms) {
    return new Promise((resolve) => {
      const started = performance.now();
      const poll = () => {
        if (!this.pending.has(id)) resolve(true);
        else if (performance.now() - started > ms) resolve(false);
        else setTimeout(poll, 25);
      };
      poll();
    });
  }

  #request(type, fields, onEvent) {
    const id = this.nextId++;
    const message = { id, type, ...fields };
    this.#checkProtocol("request", message);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onEvent, type, cellId: type === Request.RUN ? fields.cellId : null });
      if (type !== Request.INIT) this.currentRun ??= id;
      this.worker.postMessage(message);
    });
  }

  #checkProtocol(direction, message) {
    const error = protocolError(direction, message);
    if (!error) return;
    this.protocolErrors.push(error);
    console.error(`protocol.js does not define this ${direction}: ${error}`);
  }

  #onMessage(msg) {
    this.#checkProtocol(isReply(msg) ? "reply" : "event", msg);
    if (isReply(msg)) {
      const entry = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      if (this.currentRun === msg.id) this.currentRun = this.#nextPendingRun();
      if (!entry) return;
      if (msg.ok) entry.resolve(msg.result);
      else entry.reject(Object.assign(new Error(msg.error), { fatal: !!msg.fatal }));
      if (msg.fatal) this.restart().catch(() => {}); // Python died: bring a new one up at once
      return;
    }
    if (msg.type === Event.FATAL) {
      const booted = this.status?.state === "ready";
      this.#failAll(`Python stopped working: ${msg.error}`, { fatal: true });
      if (booted) this.restart().catch(() => {}); // during start-up the status line reports it instead
      return;
    }
    const entry = this.pending.get(msg.runId);
    if (entry) entry.onEvent(msg);
    this.dispatchEvent(new CustomEvent("python-event", { detail: msg }));
  }

  #nextPendingRun() {
    for (const [id, entry] of this.pending) if (entry.type !== Request.INIT) return id;
    return null;
  }

  #failAll(message, extra = {}) {
    for (const [, entry] of this.pending) entry.reject(Object.assign(new Error(message), extra));
    this.pending.clear();
    this.currentRun = null;
  }

  #status(detail) {
    this.status = detail;
    this.dispatchEvent(new CustomEvent("status", { detail }));
  }
}
