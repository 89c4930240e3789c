// The soft dictionary lookup with its controls and text: a temperature slider stepping along the
// payload's grid (log-spaced, so equal moves multiply τ by equal factors), the picture
// (lookup.js), the answer and the size of the softmax's Jacobian at that temperature, a live
// sentence for screen readers, and the numbers as a table (key, coordinates, score q·k, weight at τ, value) that
// follows the slider and the focused key. Everything is built inside the given container.

import { createLookup } from "./lookup.js";
import { checkLookup, describeLookup, nearestStep, sig, temperatureText } from "./lookupdata.js";
import { createSummary, createTable } from "./table.js";
import { fmt } from "./canvas.js";
import { viewFrame } from "./viewframe.js";
import { el } from "../dom.js";

const CAPTION = "Each key is a point, labelled k (its index) → its value; the arrow is the query q. " +
  "A dot's area is the key's weight, softmax(q·k / τ), and the dashed ring is a whole weight of 1. " +
  "As τ falls the lookup hardens toward the best key, and the Jacobian's size ‖J‖ toward 0: no gradient reaches the scores. " +
  "Focus the picture and use the arrow keys to move between the keys.";

let uid = 0;
/** How long the slider rests before the live sentence changes. */
const SAY_AFTER_MS = 400;

/**
 * createLookupView(container, {temperature}) -> {update(payload), setStep(i), step(), temperature(),
 *   select(key), lookup, table, element, destroy()}
 * temperature: where the slider starts (the nearest step of the grid); a new payload keeps the
 * slider's temperature.
 */
export function createLookupView(container, options = {}) {
  const id = ++uid;
  const { root, title, message } = viewFrame("attn-view attn-lookup", "Soft dictionary lookup");
  const controls = el("div", "attn-controls attn-lookup-controls");
  const slider = Object.assign(el("input", "attn-slider"), { type: "range", min: "0", max: "0", step: "1", value: "0" });
  slider.id = `attn-lookup-tau-${id}`;
  const sliderLabel = el("label", "", "Temperature τ");
  sliderLabel.htmlFor = slider.id;
  const sliderValue = el("output", "attn-lookup-tau");
  sliderValue.htmlFor = slider.id;
  controls.append(sliderLabel, slider, sliderValue);
  const fig = el("figure", "attn-figure attn-figure-lookup");
  const canvas = el("canvas", "attn-canvas");
  const cap = el("figcaption", "", CAPTION);
  cap.id = `attn-lookup-cap-${id}`;
  canvas.setAttribute("aria-describedby", cap.id);
  fig.append(canvas, cap);
  const stats = el("dl", "attn-stats attn-lookup-stats");
  root.append(title, message, controls, fig, stats);
  // The sentence is for screen readers (the picture and the numbers above say it to the eye): a
  // visible sentence that wraps differently at each temperature would move the page below it.
  const summary = createSummary(root);
  summary.element.classList.add("attn-visually-hidden");
  const details = el("details", "attn-tables");
  details.append(el("summary", "", "Show the numbers as a table"));
  const tableHost = el("div", "attn-table-host attn-table-lookup");
  details.append(tableHost);
  root.append(details);
  container.appendChild(root);

  let data = null; // checkLookup's result
  let step = 0;
  let tau = options.temperature ?? 1; // kept across payloads: the reader's slider stays where it is
  let sayTimer = 0;
  const lookup = createLookup(canvas, { onFocus: (j) => table.select(j) });
  const table = createTable(tableHost, { caption: "Keys, scores and weights", rowHeader: "key", colHeader: "quantity" });

  function showStep() {
    if (!data) return;
    const t = data.temperatures[step];
    slider.value = String(step);
    sliderValue.textContent = temperatureText(t);
    slider.setAttribute("aria-valuetext", temperatureText(t));
    root.dataset.step = String(step);
    lookup.setStep(step);
    // Said once the slider rests: a sentence per step of a drag would queue up in a screen reader.
    clearTimeout(sayTimer);
    const say = () => { if (data) summary.set(describeLookup(data, step)); };
    if (summary.element.textContent) sayTimer = setTimeout(say, SAY_AFTER_MS);
    else say();
    showStats();
    const { N, keys, scores, values } = data;
    const rows = new Float32Array(N * 5); // x, y, score, weight, value per key
    for (let j = 0; j < N; j++) {
      rows.set([keys[2 * j], keys[2 * j + 1], scores[j], data.weights[step * N + j], values[j]], j * 5);
    }
    table.update({
      matrix: { shape: [N, 5], dtype: "float32", data: rows },
      rowLabels: Array.from({ length: N }, (_, j) => `key ${j}`),
      colLabels: ["x", "y", "score q·k", `weight at τ = ${sig(t)}`, "value"],
    });
    table.select(lookup.focused());
  }

  function showStats() {
    stats.textContent = "";
    const add = (term, value, exact) => {
      const dd = el("dd", "", value);
      if (exact !== undefined) dd.dataset.value = String(exact);
      stats.append(el("dt", "", term), dd);
    };
    const answer = data.answers[step];
    add("Answer, weights @ values", fmt(answer, 2), answer);
    if (data.jacobian) {
      const size = data.jacobian[step];
      add("Size of the softmax's Jacobian ‖J‖", sig(size), size);
    }
    const { hard_answer: hard, plain_average: plain, best } = data.stats;
    if (typeof hard === "number" && typeof plain === "number" && Array.isArray(best)) {
      const keysText = best.length === 1 ? `key ${best[0]}'s value` : `the mean value of keys ${best.join(", ")}`;
      add("Its limits", `${fmt(hard, 2)} as τ → 0 (${keysText}, a hard lookup); ${fmt(plain, 2)} as τ → ∞ (the plain average)`);
    }
  }

  function update(payload) {
    try {
      const checked = checkLookup(payload);
      lookup.update(checked);
      title.textContent = checked.title ?? "";
      title.hidden = !checked.title;
      if (!checked.ok) {
        data = null;
        clearTimeout(sayTimer);
        message.hidden = false;
        message.textContent = checked.message;
        summary.set(checked.message);
        slider.disabled = true;
        stats.hidden = true;
        details.hidden = true;
        root.dataset.state = "error";
        return;
      }
      data = checked;
      message.hidden = true;
      slider.disabled = false;
      stats.hidden = false;
      details.hidden = false;
      slider.max = String(data.n - 1);
      step = nearestStep(data.temperatures, tau);
      root.dataset.state = "ok";
      showStep();
    } catch (err) {
      // Last line of defence: say what went wrong instead of throwing into the page.
      message.hidden = false;
      message.textContent = `Cannot draw the lookup: ${err?.message ?? err}`;
      root.dataset.state = "error";
    }
  }

  function setStep(i) {
    if (!data || !Number.isInteger(i)) return;
    step = Math.max(0, Math.min(data.n - 1, i));
    tau = data.temperatures[step];
    showStep();
  }

  slider.addEventListener("input", () => setStep(Number(slider.value)));

  return {
    element: root,
    lookup,
    table,
    update,
    setStep,
    step: () => step,
    temperature: () => (data ? data.temperatures[step] : null),
    select: (j) => { lookup.select(j); table.select(lookup.focused()); },
    destroy() {
      clearTimeout(sayTimer);
      lookup.destroy();
      table.destroy();
      summary.destroy();
      root.remove();
    },
  };
}
