// Small pieces the widgets share: building DOM, decoding the build's JSON payloads, waiting for
// Python, and calling it with a debounce that drops stale replies. No attention maths here.

import { el } from "../dom.js";

export { el }; // the widgets import it from here with the rest

let uid = 0;

/** A unique id for label/for pairs. */
export const newId = (prefix) => `${prefix}-${++uid}`;

const NON_FINITE = { "-inf": -Infinity, inf: Infinity, nan: NaN };

/**
 * Turn the build's JSON payload into what Python's bridge sends: every {shape, data: [numbers]}
 * becomes {shape, dtype, data: Float32Array}; "-inf"/"inf"/"nan" strings become the numbers.
 */
export function decodePayload(value) {
  if (Array.isArray(value)) return value.map(decodePayload);
  if (!value || typeof value !== "object") return value;
  if (Array.isArray(value.shape) && Array.isArray(value.data)) {
    const data = Float32Array.from(value.data, (v) => (typeof v === "number" ? v : NON_FINITE[v] ?? NaN));
    return { shape: value.shape, dtype: "float32", data };
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, decodePayload(v)]));
}

/**
 * What a failed Python call has to say to a reader: the last line of its traceback ("ValueError: type a
 * sentence first"), without the module path of the exception's class.
 */
export function pythonMessage(err) {
  const text = String(err?.message ?? err).trim();
  const last = text.split("\n").filter((line) => line.trim()).pop() ?? text;
  return /^Traceback/.test(text) ? last.replace(/^(?:\w+\.)+(\w+:)/, "$1") : text;
}

/**
 * The class name of what a failed Python call raised ("DataMissing" for a traceback ending
 * "lessonpy.models.realheads.DataMissing: …"), or null when the failure is no Python exception: a widget that words a
 * failure itself chooses its words by this, not by the message, which was written for someone debugging in Python.
 */
export function pythonErrorName(err) {
  const text = String(err?.message ?? err).trim();
  if (!/^Traceback/.test(text)) return null;
  return pythonMessage(err).match(/^(\w+)(?::|$)/)?.[1] ?? null;
}

/** Call onChange(state) now and whenever Python's state changes ("loading", "ready", "error"). */
export function watchPython(runtime, onChange) {
  const state = () => runtime.status?.state ?? "loading";
  const listener = () => onChange(state());
  runtime.addEventListener("status", listener);
  onChange(state());
  return () => runtime.removeEventListener("status", listener);
}

/** Call onNear() once, the first time *element* comes within half a screen of the viewport: a widget's data
 *  that only Python sends is asked for then, not on every visit. */
export function onceNear(element, onNear) {
  const seen = new IntersectionObserver((items) => {
    if (!items.some((item) => item.isIntersecting)) return;
    seen.disconnect();
    onNear();
  }, { rootMargin: "50% 0px" });
  seen.observe(element);
}

/**
 * What a widget says while Python is not ready; null when it is. While loading, one short line: it is
 * replaced by one line of results when Python is ready, and three lines then became one under the eyes of
 * a reader already there (a layout shift). That the picture is the build's is said by the picture's note.
 */
export function pythonNote(state) {
  if (state === "ready") return null;
  if (state === "error") return "Python could not start (see the status line at the top): the picture below is the one computed when the page was built.";
  return "Python is loading: the controls wait.";
}

/**
 * Put `stopButton` (a caller's) at the end of the widget's status line `status`, which is in the page. The line
 * keeps its height and its text its width whether the Stop shows or not (widgets.css), so a call starting or
 * ending moves nothing below it.
 */
export function statusWithStop(status, stopButton) {
  const line = el("div", "widget-status-line");
  status.replaceWith(line);
  line.append(status, stopButton);
}

/**
 * A caller of `call` (createCaller) that says on the widget's `status` line, and in its section's data-state, what the
 * call is doing, with its Stop at the end of the line (statusWithStop). `onResult(payload)` draws the reply and
 * returns the line that says what was computed.
 */
export function createStatusCaller(runtime, call, section, status, onResult) {
  const say = (text, state) => { status.textContent = text; section.dataset.state = state; };
  const caller = createCaller(runtime, call, {
    onResult(payload) { say(onResult(payload), "ready"); },
    onError(err) { say(`Python could not compute this: ${err.message ?? err}`, "error"); },
    onBusy(busy) { if (busy) say("Computing in Python…", "busy"); },
    onStopped() { say("Stopped. Change a setting to compute again.", "stopped"); },
  });
  statusWithStop(status, caller.stopButton);
  return caller;
}

/**
 * A debounced caller of one Python function, `call` = [module, function] (a widget's ctx.calls, from its spec).
 * request(kwargs) schedules a call
 * `delay` ms later (a newer request replaces it); onResult(payload) gets only the reply to the
 * newest request (its arrays, tokens and stats in one piece): replies to requests made since
 * are dropped. A call still waiting for Python (a cell is running) is cancelled by a newer one;
 * a running one is left to finish, since stopping it could cost a restart. `stopButton` stops
 * the current call.
 */
export function createCaller(runtime, [module, func], { delay = 150, onResult, onError, onBusy, onStopped }) {
  let timer = 0;
  let latest = 0;
  let current = null; // {controller, started} of the newest call sent
  const stopButton = el("button", "widget-stop", "Stop");
  stopButton.type = "button";
  stopButton.hidden = true;
  const busy = (on) => {
    // Keep a keyboard reader's focus: the Stop button is about to disappear.
    if (!on && document.activeElement === stopButton) stopButton.closest("section, [data-widget]")?.querySelector("input, select")?.focus();
    stopButton.hidden = !on;
    onBusy?.(on);
  };
  stopButton.addEventListener("click", () => {
    clearTimeout(timer);
    latest++;
    current?.controller.abort();
    busy(false);
    onStopped?.();
  });
  async function send(kwargs, id) {
    if (current && !current.started) current.controller.abort(); // still queued: never needed now
    const call = { controller: new AbortController(), started: false };
    current = call;
    try {
      const payload = await runtime.call(module, func, kwargs, {
        onStart: () => { call.started = true; },
        signal: call.controller.signal,
      });
      if (id !== latest) return; // the reader has moved on: a newer call is coming
      busy(false);
      onResult(payload);
    } catch (err) {
      if (id !== latest) return;
      busy(false);
      if (err.cancelled || err.stopped) onStopped?.();
      else onError?.(err);
    }
  }
  return {
    stopButton,
    request(kwargs) {
      clearTimeout(timer);
      const id = ++latest;
      busy(true);
      timer = setTimeout(() => send(kwargs, id), delay);
    },
    cancel() { clearTimeout(timer); latest++; },
  };
}

/**
 * Say under a view whose arrays a cell sent where they came from ("Showing what Cell 3 computed.",
 * or that they cannot be drawn) and count the updates (data-updated). `route` is the router's: its note, if any,
 * and `sender`, the name of the cell that sent them as the reader sees it (null: no cell).
 */
export function showSource(section, source, payload, { note = "", sender = null } = {}) {
  const label = sender ?? "a cell";
  const what = payload.error ? `${label} sent arrays that cannot be drawn` : `Showing what ${label} computed`;
  source.textContent = `${what}.${note ? ` ${note}` : ""}`;
  section.dataset.updated = String((Number(section.dataset.updated) || 0) + 1);
}

/** A number for reading: `digits` decimals and a real minus sign (an exponent only above 1e5). */
export function num(v, digits = 3) {
  if (typeof v !== "number" || Number.isNaN(v)) return "–";
  if (!Number.isFinite(v)) return v > 0 ? "∞" : "−∞";
  const a = Math.abs(v);
  const s = a >= 1e5 ? v.toExponential(2) : v.toFixed(digits);
  return s.replace("-", "−");
}

/** A labelled control row: <div><label for=id>text</label> input <output></div>. */
export function labelled(container, input, text, { after = false, output = false } = {}) {
  const row = el("div", "widget-control");
  input.id ||= newId("w");
  const label = el("label", "", text);
  label.htmlFor = input.id;
  if (after) row.append(input, label);
  else row.append(label, input);
  let out = null;
  if (output) {
    out = el("output", "widget-output");
    out.htmlFor = input.id;
    row.append(out);
  }
  container.append(row);
  return out;
}
