// The √d_k explorer: d_k, the 1/√d_k scaling, temperature and a causal mask. Every change is
// computed in Python (lessonpy.course.attention.widget_payloads.explore, debounced); this only shows the numbers and
// arrays that come back: score range and spread, each row's entropy against log T, and the
// scores / weights pictures sliding from soft to one-hot.
import { createAttentionView } from "../../components/linked.js";
import { withScrollCue } from "../../components/scrollcue.js";
import { LIMITS } from "../../../shared/limits.js";
import { createStatusCaller, el, labelled, num, pythonNote, watchPython } from "../common.js";

const log2 = Math.log2;

export function createExplorer({ section, spec, runtime, calls, initial }) {
  const o = spec.options;
  const controls = el("fieldset", "widget-controls");
  controls.append(el("legend", "", "Settings"));
  const [dkMin, dkMax] = LIMITS.widgets["dk-explorer"].d_k; // powers of two, as the build checks
  const [tMin, tMax] = LIMITS.widgets["dk-explorer"].temperature;
  const dk = Object.assign(el("input"), { type: "range", min: String(log2(dkMin)), max: String(log2(dkMax)), step: "1", value: String(log2(o.d_k)) });
  const dkOut = labelled(controls, dk, "Head size d_k", { output: true });
  const scale = Object.assign(el("input"), { type: "checkbox", checked: o.scale });
  labelled(controls, scale, "Divide the scores by √d_k", { after: true });
  const temp = Object.assign(el("input"), { type: "range", min: String(log2(tMin)), max: String(log2(tMax)), step: "0.25", value: String(log2(o.temperature)) });
  const tempOut = labelled(controls, temp, "Temperature", { output: true });
  const causal = Object.assign(el("input"), { type: "checkbox", checked: o.causal });
  labelled(controls, causal, o.causal_label, { after: true }); // the lesson's words (a default from the build)
  const inputs = [dk, scale, temp, causal];

  const status = el("p", "widget-status");
  status.setAttribute("role", "status");
  const stats = el("dl", "widget-stats");
  const entropy = el("table", "widget-entropy");
  const entropyWrap = el("div", "widget-scroll"); // a phone scrolls the table, not the page
  entropyWrap.tabIndex = 0;
  entropyWrap.setAttribute("role", "region");
  entropyWrap.setAttribute("aria-label", "Entropy of each query row");
  entropyWrap.append(entropy);
  const viewHost = el("div", "widget-view");
  section.append(controls, status, stats, entropyWrap, viewHost);
  withScrollCue(entropyWrap);
  const view = createAttentionView(viewHost, { stepper: false });
  viewHost.querySelector(".attn-view")?.setAttribute("aria-label", "The example's scores and weights");

  const settings = () => ({
    d_k: 2 ** Number(dk.value),
    scale: scale.checked,
    temperature: Math.round(2 ** Number(temp.value) * 1000) / 1000,
    causal: causal.checked,
    T: o.T,
    seed: o.seed,
    target: spec.id,
  });
  function showSettings() {
    const s = settings();
    dkOut.textContent = String(s.d_k);
    dk.setAttribute("aria-valuetext", `d_k = ${s.d_k}`);
    tempOut.textContent = String(s.temperature);
    temp.setAttribute("aria-valuetext", `temperature ${s.temperature}`);
  }

  function render(payload) {
    const { stats: s, ...drawn } = payload; // the numbers are shown below, not in the view's list
    view.update(drawn);
    section.dataset.dk = String(s.d_k);
    section.dataset.scale = String(s.scale);
    section.dataset.causal = String(s.causal);
    stats.textContent = "";
    const add = (term, value) => stats.append(el("dt", "", term), el("dd", "", value));
    add("Scores of the example", `${num(s.score_min, 2)} … ${num(s.score_max, 2)}, standard deviation ${num(s.score_std, 2)}`);
    const ceiling = s.causal ? "; a causal row t can reach at most log(t + 1)" : "";
    add(`Over ${s.n_trials * s.T} rows`, `score std ${num(s.all_score_std, 2)}; mean largest weight ${num(s.mean_max_weight)}; mean entropy ${num(s.mean_entropy)} of log T = ${num(s.log_T)}${ceiling}`);
    add("Nearly one-hot rows (largest weight > 0.9)", `${s.saturated_rows} of ${s.T} in the example, ${Math.round(s.frac_saturated * 100)}% over all rows`);
    renderEntropy(s, payload.tokens ?? []);
  }

  function renderEntropy(s, tokens) {
    entropy.textContent = "";
    // A causal row t sees t + 1 keys, so its entropy's ceiling is log(t + 1), not log T: each bar is
    // drawn against its own row's ceiling (row_max_entropy), which is log T for every row without the mask.
    const against = s.causal
      ? `against the most its row can reach, log(t + 1) for query t, which sees only keys 0 … t (log T = ${num(s.log_T)} for the last)`
      : `against log T = ${num(s.log_T)} (attention spread evenly over all ${s.T} tokens)`;
    const cap = el("caption", "", `Entropy of each query row, ${against}; 0 means one-hot.`);
    const head = el("tr");
    for (const h of ["query", "entropy (nats)", "bar", "largest weight", "row sum"]) {
      const th = el("th", h === "bar" ? "widget-bar-head" : "", h === "bar" ? "" : h);
      th.scope = "col";
      if (h === "bar") th.append(el("span", "visually-hidden", "entropy as a bar"));
      head.append(th);
    }
    const body = el("tbody");
    s.row_entropy.forEach((e, i) => {
      const tr = el("tr");
      tr.dataset.row = String(i);
      const th = el("th", "", tokens[i] ?? String(i));
      th.scope = "row";
      const bar = el("td", "widget-bar-cell");
      const fill = el("span", "widget-bar");
      const most = s.row_max_entropy[i]; // 0 for a causal first row: one key, always one-hot
      fill.style.width = `${most > 0 ? Math.max(0, Math.min(100, (e / most) * 100)) : 0}%`;
      bar.setAttribute("aria-hidden", "true");
      bar.append(fill);
      const max = el("td", "", num(s.max_weight[i]));
      max.dataset.value = String(s.max_weight[i]);
      const sum = el("td", "", num(s.row_sums[i]));
      sum.dataset.value = String(s.row_sums[i]);
      const ent = el("td", "", num(e));
      ent.dataset.value = String(e);
      tr.append(th, ent, bar, max, sum);
      body.append(tr);
    });
    entropy.append(cap, el("thead"), body);
    entropy.tHead.append(head);
  }

  const caller = createStatusCaller(runtime, calls.explore, section, status, (payload) => {
    const s = payload.stats;
    render(payload);
    return `Computed in Python: d_k = ${s.d_k}, ${s.scale ? "scaled by 1/√d_k" : "not scaled"}, temperature ${s.temperature}${s.causal ? ", causal mask" : ""}.`;
  });
  for (const input of inputs) {
    input.addEventListener("input", () => { showSettings(); caller.request(settings()); });
  }

  watchPython(runtime, (state) => {
    const note = pythonNote(state);
    for (const input of inputs) input.disabled = Boolean(note);
    if (note) status.textContent = note;
    else if (section.dataset.state === undefined) {
      status.textContent = "Python is ready: move the controls and it recomputes the example.";
      section.dataset.state = "ready";
    }
  });
  showSettings();
  render(initial);
  return { view };
}
