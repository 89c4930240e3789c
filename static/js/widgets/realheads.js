// Every head of a trained model on one sentence: pick a model and a sentence, see the L × H grid of
// patterns (components/headgrid.js), open one in the linked view with its numbers as a table whose
// caption names the model, layer and head (counted from 0). Python (lessonpy.widget_payloads.real_heads)
// sends the shipped weights as one float32 (L, H, T, T) array; the build's picture (before Python
// loads) is one featured head, as stored in the committed data.
import { createHeadGrid } from "../components/headgrid.js";
import { createAttentionView } from "../components/linked.js";
import { createTable } from "../components/table.js";
import { createCaller, el, labelled, num, pythonNote, watchPython } from "./common.js";

/** What each job of lessonpy.realheads.job_scores means, in words. */
const JOBS = {
  previous: "previous token",
  next: "next token",
  same: "same word",
  first: "first token (sink)",
  last: "last token",
  induction: "induction",
};
const jobName = (job) => JOBS[job] ?? job;

/** "layer 0, head 2" for head {layer, head} (the lesson counts from 0, and says so where it names one). */
export const headName = ({ layer, head }) => `layer ${layer}, head ${head}`;

/** The featured entry of {layer, head}, or undefined. */
export const featuredAt = (featured, { layer, head }) => featured.find((f) => f.layer === layer && f.head === head);

/** One head's (T, T) weights out of a (L, H, T, T) array, as a view array (no copy). */
export function headWeights(weights, { layer, head }) {
  const [, H, T] = weights.shape;
  const start = (layer * H + head) * T * T;
  return { shape: [T, T], dtype: "float32", data: weights.data.subarray(start, start + T * T) };
}

export function createRealHeads({ section, spec, runtime, initial }) {
  const models = initial.models;
  const controls = el("div", "widget-controls");
  const modelSelect = el("select");
  for (const m of models) {
    const opt = el("option", "", m.title);
    opt.value = m.name;
    modelSelect.append(opt);
  }
  labelled(controls, modelSelect, "Model");
  const sentenceSelect = el("select", "realheads-sentence");
  labelled(controls, sentenceSelect, "Sentence");
  const status = el("p", "widget-status");
  status.setAttribute("role", "status");
  const tokensLine = el("p", "realheads-tokens");
  const gridFigure = el("figure", "realheads-grid");
  const gridCanvas = el("canvas");
  const gridCaption = el("figcaption");
  gridFigure.append(gridCanvas, gridCaption);
  const featuredList = el("ul", "realheads-featured");
  const openHeading = el("h4", "realheads-open-title");
  const viewHost = el("div", "realheads-view");
  const details = el("details", "realheads-table");
  details.append(el("summary", "", "Show the open head's weights as a table"));
  section.append(controls, status, tokensLine, gridFigure, featuredList, openHeading, viewHost, details);

  let payload = initial; // the current model and sentence (the build's, until Python answers)
  let open = { layer: initial.open.layer, head: initial.open.head };
  let table = null;
  const view = createAttentionView(viewHost, { stepper: false, tables: false });
  viewHost.querySelector(".attn-view")?.removeAttribute("aria-label"); // the heading below names it
  const grid = createHeadGrid(gridCanvas, {
    onSelect: (head) => openHead(head),
    describe: (head) => {
      const f = featuredAt(payload.featured, head);
      return `${headName(head)}${f ? `: the ${jobName(f.job)} head` : ""}`;
    },
  });
  view.store.subscribe((row) => table?.select(row));

  function setSentences() {
    sentenceSelect.textContent = "";
    payload.sentences.forEach((text, i) => {
      const opt = el("option", "", `${i}: ${text}`);
      opt.value = String(i);
      opt.selected = i === payload.sentence;
      sentenceSelect.append(opt);
    });
    modelSelect.value = payload.model;
  }

  function showFeatured() {
    featuredList.textContent = "";
    for (const f of payload.featured) {
      const item = el("li");
      const button = el("button", "realheads-featured-head", `${jobName(f.job)}: ${headName(f)}`);
      button.type = "button";
      button.dataset.layer = String(f.layer);
      button.dataset.head = String(f.head);
      button.addEventListener("click", () => openHead({ layer: f.layer, head: f.head }));
      item.append(button, ` (score ${num(f.score, 2)} over all the sentences)`);
      featuredList.append(item);
    }
  }

  /** The open head's weights: from the grid once Python sent it, else the build's picture. */
  function weightsOf(head) {
    if (payload.arrays?.weights) return headWeights(payload.arrays.weights, head);
    if (payload.open && payload.open.layer === head.layer && payload.open.head === head.head) return payload.open.weights;
    return null;
  }

  function openHead(head) {
    const weights = weightsOf(head);
    if (!weights) return;
    open = { layer: head.layer, head: head.head };
    grid.select(open);
    const f = featuredAt(payload.featured, open);
    const name = `${payload.title}, ${headName(open)} (counted from 0)`;
    openHeading.textContent = `Open: ${name}${f ? `, its ${jobName(f.job)} head` : ""}`;
    view.update({ view: "attention", title: null, tokens: payload.tokens, arrays: { weights } });
    table?.destroy();
    details.querySelector(".attn-table-host")?.remove();
    const host = el("div", "attn-table-host");
    details.append(host);
    table = createTable(host, { caption: `${name}: attention weights as stored (1/255 steps)`, rowHeader: "query", colHeader: "key" });
    table.update({ matrix: weights, rowLabels: payload.tokens, colLabels: payload.tokens });
    table.select(view.store.get());
    section.dataset.open = `${open.layer},${open.head}`;
  }

  function render(next) {
    payload = { ...next, models };
    setSentences();
    showFeatured();
    const { layers: L, heads: H } = payload;
    tokensLine.textContent = `${payload.tokens.length} tokens: ${payload.tokens.join(" ")}`;
    gridCaption.textContent = `${payload.title} on sentence ${payload.sentence}: all ${L * H} heads, ${L} layers × ${H} heads, ` +
      "counted from 0. Each square is one head's pattern (rows: queries, columns: keys; dark 0, yellow 1); " +
      `featured heads have a coloured frame.${payload.causal ? " Grey above the diagonal: a causal model never looks ahead." : ""} ` +
      "The weights are stored in steps of 1/255, so a row sums to 1 within T/510.";
    if (payload.arrays?.weights) {
      grid.update({ weights: payload.arrays.weights, featured: payload.featured, causal: payload.causal });
      section.dataset.heads = String(L * H);
    }
    const keep = open.layer < L && open.head < H && payload.arrays?.weights;
    openHead(keep ? open : { layer: payload.featured[0].layer, head: payload.featured[0].head });
  }

  const caller = createCaller(runtime, "real_heads", {
    delay: 0,
    onResult(reply) {
      render(reply);
      status.textContent = `Computed in Python from the shipped data: ${reply.layers * reply.heads} heads of ${reply.title}.`;
      section.dataset.state = "ready";
    },
    onError(err) {
      status.textContent = `Python could not load the heads: ${err.message ?? err}`;
      section.dataset.state = "error";
    },
    onBusy(busy) { if (busy) { status.textContent = "Loading the heads in Python…"; section.dataset.state = "busy"; } },
  });
  const request = () => caller.request({ model: modelSelect.value, sentence: Number(sentenceSelect.value), target: spec.id });
  modelSelect.addEventListener("change", () => {
    sentenceSelect.value = "0";
    open = { layer: Infinity, head: Infinity }; // a new model opens its first featured head
    request();
  });
  sentenceSelect.addEventListener("change", request);

  // The grid needs the whole (L, H, T, T) array, which only Python sends, after downloading the model's
  // data (about 190 KB): ask once Python is ready and the widget is near the screen, not on every visit.
  let asked = false;
  let near = false;
  let ready = false;
  const askOnce = () => {
    if (asked || !near || !ready) return;
    asked = true;
    request();
  };
  const seen = new IntersectionObserver((items) => {
    if (!items.some((item) => item.isIntersecting)) return;
    near = true;
    seen.disconnect();
    askOnce();
  }, { rootMargin: "50% 0px" });
  seen.observe(section);
  watchPython(runtime, (state) => {
    const note = pythonNote(state);
    ready = !note;
    modelSelect.disabled = sentenceSelect.disabled = Boolean(note);
    if (note) {
      status.textContent = `${note} It shows one featured head as stored in the lesson's data; the grid of every head needs Python.`;
      section.dataset.state = "waiting";
    } else if (!asked) {
      status.textContent = "Python is ready: the grid of every head loads when you scroll here.";
    }
    askOnce();
  });
  render(initial);
  return { grid, view };
}
