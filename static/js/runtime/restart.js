// The life of the page's Python interpreter as a state machine: booting, ready, being
// interrupted, restarting, replaying the reader's cells, failed. Pure logic, no worker and no
// DOM: runtime.js fires the named events and does what entering a state means. An event that
// does not fit the current state is refused (fire() returns null), which is how a second Stop,
// a Stop during a restart, or the grace timer of an interrupt that a crash overtook do nothing.

export const State = Object.freeze({
  BOOTING: "booting", // the first interpreter is starting (or a retry after a failed start)
  READY: "ready", // Python answers; requests run one after another
  INTERRUPTING: "interrupting", // SIGINT is written; waiting for the running code to stop
  RESTARTING: "restarting", // the old worker is terminated, a new interpreter is booting
  REPLAYING: "replaying", // the new interpreter re-runs the reader's earlier cells
  FAILED: "failed", // Python could not start; the reader may try again
});

/** What happens to the interpreter (the names runtime.js fires). */
export const Transition = Object.freeze({
  BOOTED: "booted", // the interpreter answered its init request
  BOOT_FAILED: "boot-failed", // it did not start (error or time-out)
  RETRY: "retry", // the reader asked to try starting again
  STOP: "stop", // the reader stopped the running code
  INTERRUPTED: "interrupted", // the interrupt took: the code ended with KeyboardInterrupt
  INTERRUPT_IGNORED: "interrupt-ignored", // the grace period passed and the code still runs
  STUCK: "stuck", // a request outlived its own deadline (code stuck inside one C call)
  CRASHED: "crashed", // the current interpreter died (os._exit, out of memory, a fatal error)
  REPLAYED: "replayed", // the earlier cells were re-run (or skipped)
  CLEAN_RESTART: "clean-restart", // the reader asked for a fresh interpreter, all variables cleared
});

const S = State;
const T = Transition;

/**
 * from -> {event -> [to, options]}. `replay` says whether entering RESTARTING re-runs the
 * earlier cells; `interrupt` (on STOP) is chosen by whether the page can interrupt in place.
 */
const TABLE = {
  [S.BOOTING]: {
    [T.BOOTED]: [S.READY],
    [T.BOOT_FAILED]: [S.FAILED],
  },
  [S.READY]: {
    [T.STOP]: (ctx) => (ctx.canInterrupt ? [S.INTERRUPTING] : [S.RESTARTING, { replay: true }]),
    [T.STUCK]: [S.RESTARTING, { replay: true }],
    [T.CRASHED]: [S.RESTARTING, { replay: true }],
    [T.CLEAN_RESTART]: [S.RESTARTING, { replay: false }],
  },
  [S.INTERRUPTING]: {
    [T.INTERRUPTED]: [S.READY],
    [T.INTERRUPT_IGNORED]: [S.RESTARTING, { replay: true }],
    [T.CRASHED]: [S.RESTARTING, { replay: true }],
    [T.CLEAN_RESTART]: [S.RESTARTING, { replay: false }],
  },
  [S.RESTARTING]: {
    [T.BOOTED]: (ctx) => (ctx.replay ? [S.REPLAYING] : [S.READY]),
    [T.BOOT_FAILED]: [S.FAILED], // a crash while booting is a failed boot: no restart loop
    [T.CLEAN_RESTART]: [S.RESTARTING, { replay: false }],
  },
  [S.REPLAYING]: {
    [T.REPLAYED]: [S.READY],
    // The replay itself killed Python (a cell that filled memory, say): start clean.
    [T.CRASHED]: [S.RESTARTING, { replay: false }],
    [T.CLEAN_RESTART]: [S.RESTARTING, { replay: false }],
  },
  [S.FAILED]: {
    [T.RETRY]: [S.BOOTING],
    [T.CLEAN_RESTART]: [S.RESTARTING, { replay: false }],
  },
};

export class RestartMachine {
  /** @param {{canInterrupt: boolean}} options  true when Stop can interrupt Python in place */
  constructor({ canInterrupt }) {
    this.state = S.BOOTING;
    this.canInterrupt = canInterrupt;
    this.replay = false; // whether the restart under way re-runs the earlier cells
    this.restarts = 0; // how many times RESTARTING was entered (each one is a new worker)
  }

  /** Would `event` be accepted now? */
  accepts(event) {
    return Boolean(TABLE[this.state]?.[event]);
  }

  /** Apply `event`; return the new state, or null (and change nothing) when it does not apply. */
  fire(event) {
    let rule = TABLE[this.state]?.[event];
    if (!rule) return null;
    if (typeof rule === "function") rule = rule(this);
    const [to, options = {}] = rule;
    if (to === S.RESTARTING) {
      this.replay = options.replay;
      this.restarts += 1;
    }
    this.state = to;
    return to;
  }
}
