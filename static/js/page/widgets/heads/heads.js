// Multi-head attention: the same input split into H heads, one weights pattern per head, the
// (B, T, C) -> (B, H, T, D) split with its numbers, and the parameter count 4·C², which does not
// change with H, named as in the lesson's `heads` cell (C, W_qkv, W_o). Two heads built by hand
// (lessonpy.course.attention.hand_heads) come first, as they show what specialised heads look like; then the H heads,
// whose projections are random and untrained (the widget says so): the first few, and the rest on
// "Show all", since dozens of near-identical random patterns teach nothing more than four.
// Python (lessonpy.course.attention.widget_payloads.heads) computes all of it; this draws what comes back.
import { createHeatmap } from "../../components/heatmap.js";
import { createSelectionStore } from "../../components/linked.js";
import { createTable } from "../../components/table.js";
import { createStatusCaller, el, labelled, num, pythonNote, watchPython } from "../common.js";

const shape = (dims) => `(${dims.join(", ")})`;
const int = (n) => n.toLocaleString("en");
/** Random heads drawn until the reader asks for all of them. */
const RANDOM_SHOWN = 4;

export function createHeads({ section, spec, runtime, calls, initial }) {
  const o = spec.options;
  const controls = el("div", "widget-controls");
  const select = el("select");
  for (const h of initial.stats.divisors) {
    const opt = el("option", "", `${h} (D = ${o.C / h})`);
    opt.value = String(h);
    opt.selected = h === o.heads;
    select.append(opt);
  }
  labelled(controls, select, "Number of heads H");
  const status = el("p", "widget-status");
  status.setAttribute("role", "status");
  const split = el("p", "heads-split");
  const params = el("p", "heads-params");
  const handNote = el("p", "heads-note heads-note-hand",
    "Built by hand: two heads whose W_q and W_k are written out over one-hot word and position features " +
    "(not learned, and not among the H heads below). They show what a specialised head looks like.");
  const handGrid = el("div", "heads-grid heads-hand");
  const randomNote = el("p", "heads-note heads-note-random");
  const grid = el("div", "heads-grid heads-random");
  const more = el("button", "attn-button heads-more");
  more.type = "button";
  const details = el("details", "heads-tables");
  details.append(el("summary", "", "Show each head's weights as a table"));
  section.append(controls, status, split, params, handNote, handGrid, randomNote, grid, more, details);

  const store = createSelectionStore(null);
  let panels = [];
  let showAll = false;
  let shown = null; // the payload on screen
  store.subscribe((row) => {
    for (const p of panels) { p.map.select(row); p.table.select(row); }
  });
  more.addEventListener("click", () => {
    showAll = !showAll;
    render(shown);
    if (!showAll) more.scrollIntoView({ block: "nearest" }); // the button stays under the reader's finger
  });

  function render(payload) {
    shown = payload;
    const s = payload.stats;
    const { T, C, H, D } = s;
    section.dataset.heads = String(H);
    split.textContent = `Split: x ${shape(s.x_shape)} = (B, T, C) → q ${shape(s.heads_shape)} = (B, H, T, D), ` +
      `since D = C / H = ${C} / ${H} = ${D}. The weights are ${shape(s.weights_shape)}: one ${T}×${T} pattern per head.`;
    const [a, b] = [s.param_shapes.W_qkv, s.param_shapes.W_o];
    params.textContent = `Parameters: 4·C² = 4 × ${C}² = ${int(s.param_count)}. Counted from the weights: ` +
      `W_qkv ${a[0]}×${a[1]} = ${int(a[0] * a[1])} + W_o ${b[0]}×${b[1]} = ${int(b[0] * b[1])} = ${int(s.counted)}, ` +
      `the same for every H: the heads share out the same matrices.`;
    params.dataset.count = String(s.counted);
    for (const p of panels) { p.map.destroy(); p.table.destroy(); }
    grid.textContent = "";
    handGrid.textContent = "";
    for (const t of details.querySelectorAll(".heads-table")) t.remove();
    const tokens = payload.tokens;
    const entropy = (e) => `mean entropy ${num(e, 2)} (log T = ${num(s.log_T, 2)})`;
    // one heatmap (and its table) for pattern h of a (n, T, T) array
    const panel = (host, data, h, name, caption) => {
      const fig = el("figure", "heads-panel");
      const canvas = el("canvas", "attn-canvas");
      fig.append(canvas, el("figcaption", "", caption));
      host.append(fig);
      const weights = { shape: [T, T], dtype: "float32", data: data.subarray(h * T * T, (h + 1) * T * T) };
      const map = createHeatmap(canvas, { onSelect: (row) => store.set(row) });
      map.update({ arrays: { weights }, tokens });
      const tableHost = el("div", "heads-table");
      details.append(tableHost);
      const table = createTable(tableHost, { caption: `${name}: attention weights`, rowHeader: "query", colHeader: "key" });
      table.update({ matrix: weights, rowLabels: tokens, colLabels: tokens });
      return { map, table };
    };
    panels = [];
    const hand = payload.arrays.hand_weights;
    if (hand) {
      s.hand_heads.forEach((head, i) => panels.push(panel(handGrid, hand.data, i, `Built by hand: ${head.name}`,
        `Built by hand, ${head.name}: ${head.description}; ${entropy(head.entropy)}`)));
    }
    const drawn = showAll ? H : Math.min(H, RANDOM_SHOWN);
    for (let h = 0; h < drawn; h++) {
      panels.push(panel(grid, payload.arrays.weights.data, h,
        `Random head ${h + 1} of ${H}`, `Random head ${h + 1} of ${H}: ${entropy(s.head_entropy[h])}`));
    }
    randomNote.textContent = `The H = ${H} heads, random: their projections are random and untrained, so these ` +
      `patterns show how the channels are split, not what a trained head learns` +
      (drawn < H ? `. The first ${drawn} of ${H}:` : ".");
    more.hidden = H <= RANDOM_SHOWN;
    more.textContent = showAll ? `Show the first ${RANDOM_SHOWN} heads` : `Show all ${H} heads`;
    more.setAttribute("aria-expanded", String(showAll));
    store.broadcast();
  }

  const caller = createStatusCaller(runtime, calls.heads, section, status, (payload) => {
    const s = payload.stats;
    render(payload);
    return `Computed in Python: ${s.H} head${s.H > 1 ? "s" : ""} of size ${s.D}.`;
  });
  select.addEventListener("change", () => caller.request({ n_head: Number(select.value), C: o.C, T: o.T, seed: o.seed, target: spec.id }));

  watchPython(runtime, (state) => {
    const note = pythonNote(state);
    select.disabled = Boolean(note);
    if (note) status.textContent = note;
    else if (section.dataset.state === undefined) {
      status.textContent = "Python is ready: choose H and it recomputes the heads.";
      section.dataset.state = "ready";
    }
  });
  render(initial);
  return {};
}
