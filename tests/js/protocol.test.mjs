// protocol.js: every message type is defined with its fields, and anything else is refused.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Event, FIELDS, Request, cutNote, protocolError } from "../../static/js/shared/protocol.js";

const minimal = ([required]) => Object.fromEntries(required.map((k) => [k, null]));

test("every request and event type has its fields defined, and a minimal message passes", () => {
  for (const type of Object.values(Request)) {
    assert.ok(FIELDS.request[type], `request ${type} has no fields`);
    const id = type === Request.SET_INTERRUPT ? {} : { id: 1 };
    assert.equal(protocolError("request", { type, ...id, ...minimal(FIELDS.request[type]) }), null, type);
  }
  for (const type of Object.values(Event)) {
    assert.ok(FIELDS.event[type], `event ${type} has no fields`);
    assert.equal(protocolError("event", { type, runId: 3, ...minimal(FIELDS.event[type]) }), null, type);
  }
  assert.deepEqual(Object.keys(FIELDS.request).sort(), Object.values(Request).sort());
  assert.deepEqual(Object.keys(FIELDS.event).sort(), Object.values(Event).sort());
});

test("the messages the page and the worker really send are defined", () => {
  const ok = (direction, message) => assert.equal(protocolError(direction, message), null, JSON.stringify(message));
  ok("request", { id: 0, type: "init", indexURL: "u", wheelURL: "w", wheelSha256: "ab", bootPackages: ["numpy"], fontCache: null, plan: null });
  ok("request", { type: "set-interrupt", buffer: {} });
  ok("request", { id: 9, type: "ping" });
  ok("reply", { id: 9, ok: true });
  ok("request", { id: 4, type: "run", code: "1", cellId: "a", cells: { a: "1" } });
  ok("request", { id: 5, type: "call", module: "lessonpy.course.attention.widget_payloads", func: "explore", kwargs: { d_k: 4 } });
  ok("request", { id: 6, type: "fetch-file", url: "../data/minilm-live/vocab.txt", path: "/home/pyodide/minilm-live/vocab.txt" });
  ok("event", { type: "download", runId: 6, loaded: 1024, total: 44_800_000 });
  ok("request", { id: 7, type: "preload", packages: ["matplotlib"] });
  ok("request", { id: 8, type: "prefetch", packages: ["matplotlib"] });
  ok("reply", { id: 8, ok: true, result: { packages: ["cycler", "matplotlib"] } });
  ok("reply", { id: 7, ok: true, result: { loaded: ["matplotlib", "pillow"] } });
  ok("reply", { id: 4, ok: true, result: { ok: true } });
  ok("reply", { id: 5, ok: false, error: "boom", fatal: false });
  ok("event", { type: "progress", runId: 0, stage: "ready", fraction: 1, at: 12.5 });
  ok("event", { type: "figure", runId: 4, format: "png", data: new Uint8Array(3) });
  ok("event", { type: "arrays", runId: 4, view: "attention", title: null, target: null, tokens: [], arrays: {}, derived: [], stats: {} });
  ok("event", { type: "arrays", runId: 4, view: "attention", title: null, target: "v", error: "weights: row 0 sums to 2" });
  ok("event", { type: "fatal", error: "the Python worker failed to start" }); // start-python.js: no run
});

test("an undefined type, a missing field or an extra field is refused with a reason", () => {
  assert.match(protocolError("event", { type: "show-error", runId: 1, message: "x", target: null }), /unknown event type "show-error"/);
  assert.match(protocolError("event", { type: "stdout", runId: 1 }), /event stdout lacks text/);
  assert.match(protocolError("event", { type: "stdout", runId: 1, text: "", colour: "red" }), /does not define: colour/);
  assert.match(protocolError("request", { type: "run", code: "", cellId: "a", cells: {} }), /needs an integer id/);
  assert.match(protocolError("request", { id: 1, type: "eval", code: "" }), /unknown request type "eval"/);
  assert.match(protocolError("reply", { ok: true, result: 1 }), /integer id/);
  assert.match(protocolError("reply", { id: 1, ok: true, result: 1, request: 7 }), /does not define: request/);
  assert.match(protocolError("event", null), /must be an object/);
});

test("the note of cut output is worded once, for the run's output and for an error message", () => {
  assert.equal(cutNote("output", 29_800_001), "[output cut: 29,800,001 more characters were not shown]");
  assert.equal(cutNote("error message", 12), "[error message cut: 12 more characters were not shown]");
});
