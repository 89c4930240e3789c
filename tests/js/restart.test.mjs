// The interpreter's state machine (static/js/runtime/restart.js): every path the page can take.
import assert from "node:assert/strict";
import { test } from "node:test";

import { RestartMachine, State, Transition as T } from "../../static/js/runtime/restart.js";

/** A machine driven through `events`; returns it (each event must be accepted). */
function walk({ canInterrupt }, events) {
  const m = new RestartMachine({ canInterrupt });
  for (const event of events) assert.notEqual(m.fire(event), null, `${event} refused in ${m.state}`);
  return m;
}

test("boot: booting -> ready; a failed boot can be retried", () => {
  assert.equal(walk({ canInterrupt: true }, [T.BOOTED]).state, State.READY);
  const m = walk({ canInterrupt: true }, [T.BOOT_FAILED]);
  assert.equal(m.state, State.FAILED);
  assert.equal(m.fire(T.RETRY), State.BOOTING);
  assert.equal(m.fire(T.BOOTED), State.READY);
});

test("Stop with isolation interrupts in place; the interrupt takes", () => {
  const m = walk({ canInterrupt: true }, [T.BOOTED, T.STOP]);
  assert.equal(m.state, State.INTERRUPTING);
  assert.equal(m.fire(T.INTERRUPTED), State.READY);
  assert.equal(m.restarts, 0);
});

test("Stop with isolation, KeyboardInterrupt ignored (sleep, numpy busy): restart and replay", () => {
  const m = walk({ canInterrupt: true }, [T.BOOTED, T.STOP, T.INTERRUPT_IGNORED]);
  assert.equal(m.state, State.RESTARTING);
  assert.equal(m.replay, true);
  assert.equal(m.fire(T.BOOTED), State.REPLAYING);
  assert.equal(m.fire(T.REPLAYED), State.READY);
  assert.equal(m.restarts, 1);
});

test("Stop without isolation restarts at once and replays", () => {
  const m = walk({ canInterrupt: false }, [T.BOOTED, T.STOP]);
  assert.equal(m.state, State.RESTARTING);
  assert.equal(m.replay, true);
});

test("Stop twice is one stop; the grace timer of an interrupt that took does nothing", () => {
  const m = walk({ canInterrupt: true }, [T.BOOTED, T.STOP]);
  assert.equal(m.fire(T.STOP), null);
  assert.equal(m.state, State.INTERRUPTING);
  m.fire(T.INTERRUPTED);
  assert.equal(m.fire(T.INTERRUPT_IGNORED), null);
  assert.equal(m.state, State.READY);
  const plain = walk({ canInterrupt: false }, [T.BOOTED, T.STOP]);
  assert.equal(plain.fire(T.STOP), null);
  assert.equal(plain.restarts, 1);
});

test("Stop during a restart or a replay is refused: one restart, not two", () => {
  const m = walk({ canInterrupt: false }, [T.BOOTED, T.STOP]);
  assert.equal(m.fire(T.STOP), null);
  m.fire(T.BOOTED);
  assert.equal(m.state, State.REPLAYING);
  assert.equal(m.fire(T.STOP), null);
  assert.equal(m.fire(T.INTERRUPT_IGNORED), null);
  assert.equal(m.restarts, 1);
});

test("a crash (fatal error, os._exit) restarts and replays; a crash during the replay restarts clean", () => {
  const m = walk({ canInterrupt: true }, [T.BOOTED, T.CRASHED]);
  assert.equal(m.state, State.RESTARTING);
  assert.equal(m.replay, true);
  m.fire(T.BOOTED);
  assert.equal(m.fire(T.CRASHED), State.RESTARTING);
  assert.equal(m.replay, false);
  assert.equal(m.fire(T.BOOTED), State.READY); // nothing replayed this time
});

test("a crash while interrupting restarts; the late grace timer is then refused", () => {
  const m = walk({ canInterrupt: true }, [T.BOOTED, T.STOP, T.CRASHED]);
  assert.equal(m.state, State.RESTARTING);
  assert.equal(m.fire(T.INTERRUPT_IGNORED), null);
  assert.equal(m.restarts, 1);
});

test("a crash while (re)booting is a failed boot, not another restart", () => {
  const m = walk({ canInterrupt: false }, [T.BOOTED, T.STOP]);
  assert.equal(m.fire(T.CRASHED), null);
  assert.equal(m.fire(T.BOOT_FAILED), State.FAILED);
  assert.equal(new RestartMachine({ canInterrupt: true }).fire(T.CRASHED), null);
});

test("a request stuck in C past its deadline restarts and replays", () => {
  const m = walk({ canInterrupt: true }, [T.BOOTED, T.STUCK]);
  assert.equal(m.state, State.RESTARTING);
  assert.equal(m.replay, true);
});

test("the reader's clean restart replays nothing, from any settled state", () => {
  for (const path of [[T.BOOTED], [T.BOOTED, T.STOP], [T.BOOT_FAILED]]) {
    const m = walk({ canInterrupt: true }, [...path, T.CLEAN_RESTART]);
    assert.equal(m.state, State.RESTARTING);
    assert.equal(m.replay, false);
    assert.equal(m.fire(T.BOOTED), State.READY);
  }
  const replaying = walk({ canInterrupt: false }, [T.BOOTED, T.STOP, T.BOOTED, T.CLEAN_RESTART]);
  assert.equal(replaying.replay, false);
  assert.equal(new RestartMachine({ canInterrupt: true }).fire(T.CLEAN_RESTART), null); // not while booting
});

test("every transition of the table is walked by a test above", async () => {
  // Fire each event in each state; the accepted pairs must be exactly the documented ones.
  const accepted = [];
  for (const state of Object.values(State)) {
    for (const event of Object.values(T)) {
      const m = new RestartMachine({ canInterrupt: true });
      m.state = state;
      if (m.accepts(event)) accepted.push(`${state} ${event}`);
    }
  }
  assert.deepEqual(accepted.sort(), [
    "booting boot-failed", "booting booted",
    "failed clean-restart", "failed retry",
    "interrupting clean-restart", "interrupting crashed", "interrupting interrupt-ignored", "interrupting interrupted",
    "ready clean-restart", "ready crashed", "ready stop", "ready stuck",
    "replaying clean-restart", "replaying crashed", "replaying replayed",
    "restarting boot-failed", "restarting booted", "restarting clean-restart",
  ]);
});
