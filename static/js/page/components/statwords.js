// A view's numbers in words: show_attention's stats (computed in Python, lessonpy.maths.show._stats) as the two or
// three facts worth reading under the picture, a sentence when the weights are not the softmax of the
// scores drawn beside them, and the rest, labelled, for the numbers disclosure. Pure: no DOM.

import { fmt } from "./canvas.js";

const nats = (v) => `${fmt(v, 2)} nats`;

/** The facts shown under the view: [{label, text}], at most three (the mask, the scaling, the entropy). */
export function statFacts(s) {
  if (!s || !Number.isInteger(s.T)) return [];
  const facts = [];
  if (s.masked > 0) {
    facts.push(s.causal
      ? { label: "Causal mask", text: `the ${s.masked} scores above the diagonal are −∞ (grey): each token sees only itself and earlier tokens` }
      : { label: "Mask", text: `${s.masked} scores are −∞ (grey), so their keys get weight 0` });
  }
  if (typeof s.scores_divided_by === "number" && Number.isInteger(s.d_k)) {
    facts.push(s.scores_divided_by === 1
      ? { label: "Scores", text: `Q·Kᵀ not divided by √d_k: your weights are the softmax of the unscaled scores` }
      : { label: "Scores", text: `Q·Kᵀ divided by √d_k = √${s.d_k} = ${fmt(s.scores_divided_by, 2)}` });
  }
  if (typeof s.mean_entropy === "number" && typeof s.even_entropy === "number") {
    const even = s.masked > 0
      ? `each query spread evenly over the keys it may see: ${nats(s.even_entropy)}`
      : `spread evenly over all ${s.T}: log ${s.T} = ${nats(s.even_entropy)}`;
    facts.push({ label: "Mean entropy of a row", text: `${nats(s.mean_entropy)} (all on one key: 0; ${even})` });
  }
  return facts;
}

/** A sentence for weights that are not the softmax of the scores drawn beside them, or "" when they are. */
export function mismatchNote(s) {
  if (!s || s.weights_match_scores !== false) return "";
  return `These weights are not the softmax of these scores: they differ by up to ${fmt(s.weights_gap, 3)}. ` +
    "Were they made from other scores (another scaling, a temperature, or a different mask)?";
}

/** The other numbers, labelled, for the disclosure: [{label, text}]. */
export function statDetails(s) {
  if (!s || !Number.isInteger(s.T)) return [];
  const rows = [{ label: "Positions T", text: String(s.T) }];
  if (Number.isInteger(s.d_k)) rows.push({ label: "Query and key width d_k", text: String(s.d_k) });
  if (Number.isInteger(s.d_v)) rows.push({ label: "Value width d_v", text: String(s.d_v) });
  if (typeof s.log_T === "number") rows.push({ label: "log T, the entropy of an even spread over all T keys", text: nats(s.log_T) });
  if (typeof s.score_min === "number") {
    rows.push({ label: s.masked > 0 ? "Scores not masked" : "Scores", text: `${fmt(s.score_min, 2)} … ${fmt(s.score_max, 2)}, standard deviation ${fmt(s.score_std, 2)}` });
  }
  if (typeof s.weights_gap === "number") {
    rows.push({ label: "Largest |softmax(scores) − weights|", text: fmt(s.weights_gap, 6) });
  }
  return rows;
}
