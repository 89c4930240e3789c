// The attention view's numbers in words (statwords.js): a few labelled facts under the picture, the rest for the
// disclosure, and a sentence only when the weights are not the softmax of the scores beside them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mismatchNote, statDetails, statFacts } from "../../static/js/page/components/statwords.js";

const PLAIN = { T: 6, log_T: Math.log(6), mean_entropy: 1.2345, even_entropy: Math.log(6), masked: 0, causal: false,
  d_k: 8, d_v: 8, scores_divided_by: Math.sqrt(8), weights_match_scores: true, weights_gap: 1e-8,
  score_min: -1.5, score_max: 2.25, score_std: 0.8 };
const CAUSAL = { ...PLAIN, masked: 15, causal: true, even_entropy: 1.0965, scores_divided_by: undefined };

const text = (facts) => facts.map(({ label, text: t }) => `${label}: ${t}`);

test("under an unmasked view: the scaling and the entropy against log T, in nats", () => {
  assert.deepEqual(text(statFacts(PLAIN)), [
    "Scores: Q·Kᵀ divided by √d_k = √8 = 2.83",
    "Mean entropy of a row: 1.23 nats (all on one key: 0; spread evenly over all 6: log 6 = 1.79 nats)",
  ]);
});

test("under a causal view: the mask first, and the entropy against what each query may see", () => {
  const facts = text(statFacts(CAUSAL));
  assert.equal(facts.length, 2);
  assert.match(facts[0], /^Causal mask: the 15 scores above the diagonal are −∞ \(grey\)/);
  assert.match(facts[1], /each query spread evenly over the keys it may see: 1\.10 nats/);
  assert.doesNotMatch(facts.join(" "), /log T|log 6/); // log T is not a causal row's ceiling
  assert.match(text(statFacts({ ...CAUSAL, causal: false }))[0], /^Mask: 15 scores are −∞/);
  assert.ok(statFacts(PLAIN).length <= 3 && statFacts({ ...CAUSAL, scores_divided_by: 1 }).length === 3);
});

test("the weights and scores agree: no sentence; they do not: how far, in words", () => {
  assert.equal(mismatchNote(PLAIN), "");
  assert.equal(mismatchNote({ T: 3 }), ""); // weights alone: nothing to compare
  assert.match(mismatchNote({ ...PLAIN, weights_match_scores: false, weights_gap: 0.3125 }),
    /^These weights are not the softmax of these scores: they differ by up to 0\.313\./);
});

test("the rest is labelled for the disclosure, and no stats show nothing", () => {
  const labels = statDetails(PLAIN).map((r) => r.label);
  assert.deepEqual(labels, ["Positions T", "Query and key width d_k", "Value width d_v",
    "log T, the entropy of an even spread over all T keys", "Scores", "Largest |softmax(scores) − weights|"]);
  assert.deepEqual(statFacts(null), []);
  assert.deepEqual(statDetails(undefined), []);
});
