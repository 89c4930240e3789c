// The residual-stream widget's check of what it is given (static/js/page/widgets/residual-stream/payload.js): the
// build's, a live run's or a cell's payload passes; a wrong shape, a missing lens or show_residual_stream's refusal
// fails with one sentence instead of breaking the chart.
import { test } from "node:test";
import assert from "node:assert/strict";
import { checkStreamPayload, lensProblem } from "../../static/js/page/widgets/residual-stream/payload.js";

/** Two layers over three tokens, the lens at the last position. */
function payload() {
  const top = [[" a", 0.5], ["b", 0.25]];
  return {
    view: "residual-stream", tokens: ["<|endoftext|>", "a", "b"], layers: 2, position: 2, reader: true, key: 7,
    norms: { attn: [[1, 2, 3], [4, 5, 6]], mlp: [[1, 1, 1], [2, 2, 2]], stream: [[1, 1, 1], [2, 3, 4], [5, 6, 7]] },
    lens: { 2: { top: [top, top, top], final: " a", rank: [3, 1, 0], p: [0.1, 0.2, 0.5] } },
  };
}

test("a well-formed payload passes", () => {
  assert.deepEqual(checkStreamPayload(payload()), { ok: true });
});

test("show_residual_stream's refusal is said as it came", () => {
  assert.deepEqual(checkStreamPayload({ view: "residual-stream", error: "stream: expected a 3-D array" }),
    { ok: false, message: "stream: expected a 3-D array" });
});

test("each broken part is named in one sentence", () => {
  const cases = [
    [(p) => { p.norms.attn = [[1, 2, 3]]; }, "the lengths attn need 2 rows of 3 numbers, none negative"],
    [(p) => { p.norms.stream[0][1] = -1; }, "the lengths stream need 3 rows of 3 numbers, none negative"],
    [(p) => { p.norms.mlp[1][0] = NaN; }, "the lengths mlp need 2 rows of 3 numbers, none negative"],
    [(p) => { p.position = 3; }, "position 3 is not one of the 3 tokens"],
    [(p) => { p.lens = { 1: p.lens[2] }; }, "it has no lens at position 2"],
    [(p) => { p.lens[2].rank = [0, 0]; }, "at position 2, the lens needs 3 ranks"],
    [(p) => { p.lens[2].top[1] = [["x", 1.5]]; }, "at position 2, the lens needs 3 rows of top tokens with their probabilities"],
    [(p) => { p.layers = 65; }, "expected 1 to 64 layers, got 65"],
    [(p) => { p.tokens = "abc"; }, "expected a list of tokens"],
  ];
  for (const [spoil, why] of cases) {
    const p = payload();
    spoil(p);
    assert.deepEqual(checkStreamPayload(p), { ok: false, message: `Cannot draw the residual stream: ${why}.` });
  }
});

test("a lens on its own: the reply to a picked position", () => {
  assert.equal(lensProblem(payload().lens[2], 3), null);
  assert.equal(lensProblem(undefined, 3), "it has no lens there");
  assert.equal(lensProblem({ ...payload().lens[2], final: 4 }, 3), "the lens names no prediction");
});
