// The residual-stream chart's pure parts without a browser: the log scale's powers of ten around the lengths (a
// missing write, the embedding's, is no length), the depth rows' names (layers counted from 0 after the
// embedding) and one row's numbers in words.
import { test } from "node:test";
import assert from "node:assert/strict";
import { decades, describeRow, probability, rowName, tokenText } from "../../static/js/page/widgets/residual-stream/layers.js";

test("the scale spans whole powers of ten around every length, ignoring the embedding's missing writes", () => {
  assert.deepEqual(decades([2.9, null, null, 30.8, 20605]), [0, 5]);
  assert.deepEqual(decades([0.05, 0.2]), [-2, 0]);
  assert.deepEqual(decades([10, 10]), [1, 2]); // one value: still a decade wide
  assert.deepEqual(decades([null, 0]), [0, 1]); // nothing to draw: a scale all the same
});

test("row 0 is the embedding, row r the stream after layer r - 1", () => {
  assert.equal(rowName(0), "embedding");
  assert.equal(rowName(30), "layer 29");
});

test("a row in words: what the layer wrote, the stream's length, the lens's tokens", () => {
  const rows = [
    { attn: null, mlp: null, stream: 2.912, top: [[" of", 1]] },
    { attn: 89.54, mlp: 493.15, stream: 609.49, top: [[" Italy", 0.74512], [" the", 0.0955]] },
  ];
  assert.equal(describeRow(rows, 0), `embedding: the token's embedding; the stream's length 2.9; the lens reads ${tokenText(" of")} 1.000`);
  assert.equal(describeRow(rows, 1), "layer 0: attention wrote 89.5, the MLP 493.1; the stream's length 609.5; " +
    `the lens reads ${tokenText(" Italy")} 0.745, ${tokenText(" the")} 0.096`);
  assert.equal(tokenText(" a\n"), "\u2068␣a⏎\u2069");
  // long streams in plain digits; a lens's tail is not written as a probability of 0
  assert.match(describeRow([{ attn: null, mlp: null, stream: 20605, top: [[",", 4.5e-57]] }], 0), /length 20605\.0; the lens reads \S+ < 0\.001$/);
  assert.equal(probability(0.0005), "0.001");
});
