// What a restarted interpreter re-runs so the reader's variables come back: for each cell,
// its latest successful run, in page order, within a time budget. Failed and interrupted runs
// are never recorded (re-running them would repeat the failure: an endless loop, a cell that
// filled memory), and a cell run forty times is replayed once. Pure logic, tested by node.

export const REPLAY_BUDGET_S = 8; // a restart must not keep the reader waiting longer than this

export class ReplayLog {
  constructor() {
    this.runs = new Map(); // cellId -> {cellId, code, files, seconds, order}; one entry per cell
  }

  /**
   * Note a finished run. Only successful runs count; a later success of the same cell
   * replaces the earlier one. `order` is the cell's position on the page; `files`, what the run put into
   * Python's file system first (protocol.js, CellFiles), which a new interpreter needs again.
   */
  record({ cellId, code, files, ok, seconds, order = Infinity }) {
    if (!ok) return;
    this.runs.delete(cellId); // re-inserted: among equal orders, the newest comes last
    this.runs.set(cellId, { cellId, code, ...(files && { files }), seconds, order });
  }

  /**
   * Plan a replay: {run: [entries in page order], skipped: [entries too slow for the budget]}.
   * A run that does not fit the time left is skipped; quicker later ones may still fit.
   */
  plan(budgetSeconds = REPLAY_BUDGET_S) {
    const ordered = [...this.runs.values()].sort((a, b) => a.order - b.order);
    const run = [];
    const skipped = [];
    let left = budgetSeconds;
    for (const entry of ordered) {
      if (entry.seconds <= left) {
        run.push(entry);
        left -= entry.seconds;
      } else {
        skipped.push(entry);
      }
    }
    return { run, skipped };
  }
}
