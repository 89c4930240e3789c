// Test fixture: loads every component module and exposes window.fx for the browser tests.
// The numbers come from Python (sample_data.py) as base64 float32; nothing is computed here.

import { createAttentionView } from "../../static/js/page/components/linked.js";
import { createHeatmap } from "../../static/js/page/components/heatmap.js";
import { createScores } from "../../static/js/page/components/scores.js";
import { createOutput } from "../../static/js/page/components/output.js";
import { createQueryRow } from "../../static/js/page/components/queryrow.js";
import { createTable } from "../../static/js/page/components/table.js";
import { createLookupView } from "../../static/js/page/components/lookupview.js";
import * as colormap from "../../static/js/page/components/colormap.js";

const longTasks = [];
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) longTasks.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: "longtask", buffered: true });
} catch {
  // Not every browser reports long tasks.
}

/** {shape, dtype, b64} -> {shape, dtype, data: Float32Array}; other values pass through. */
function decodeArray(a) {
  if (!a || typeof a.b64 !== "string") return a;
  const bin = atob(a.b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return { shape: a.shape, dtype: a.dtype, data: new Float32Array(bytes.buffer) };
}

function decodePayload(p) {
  if (!p || !p.arrays) return p;
  const arrays = {};
  for (const [k, v] of Object.entries(p.arrays)) arrays[k] = decodeArray(v);
  return { ...p, arrays };
}

const makers = { heatmap: createHeatmap, scores: createScores, output: createOutput, queryrow: createQueryRow };

const fx = {
  view: null,
  solos: [],
  longTasks,
  colormap,
  decodePayload,
  /** Build a fresh linked view and show a payload (encoded as sample_data.py does): the finished result, the
   * drawing the tests look at, or with {atStart: true} the step-through where it opens, at step 0. */
  mount(payload, { atStart = false, ...options } = {}) {
    fx.view?.destroy();
    fx.view = createAttentionView(document.getElementById("view"), options);
    fx.view.update(decodePayload(payload));
    if (!atStart) fx.view.stepper?.goTo(Infinity);
    return fx.view.size();
  },
  update(payload) { fx.view.update(decodePayload(payload)); },
  lookupView: null,
  /** Build a fresh soft-lookup view ({temperature}) and show a show_lookup payload (encoded as sample_data.py does). */
  lookup(payload, options = {}) {
    fx.lookupView?.destroy();
    fx.lookupView = createLookupView(document.getElementById("lookup"), options);
    fx.lookupView.update(decodePayload(payload));
  },
  lookupUpdate(payload) { fx.lookupView.update(decodePayload(payload)); },
  /** One component on its own canvas, given anything at all (for bad-input tests). */
  solo(kind, input, options = {}) {
    const fig = document.createElement("figure");
    const canvas = document.createElement("canvas");
    canvas.className = "attn-canvas";
    fig.appendChild(canvas);
    document.getElementById("solo").appendChild(fig);
    if (kind === "table") {
      const t = createTable(fig, { caption: "Test table" });
      t.update(input);
      fx.solos.push(t);
      return fig.querySelector("caption").textContent;
    }
    const c = makers[kind](canvas, options);
    c.update(decodePayload(input));
    fx.solos.push(c);
    return canvas.dataset.message ?? "";
  },
  clearSolos() {
    fx.solos.forEach((c) => c.destroy());
    fx.solos = [];
    document.getElementById("solo").textContent = "";
  },
};
window.fx = fx;

const params = new URLSearchParams(location.search);
if (params.has("sample")) {
  const which = params.get("sample") || "small";
  fetch("sample.json").then((r) => r.json()).then((s) => fx.mount(s[which] ?? s.small));
}
window.fxReady = true;
