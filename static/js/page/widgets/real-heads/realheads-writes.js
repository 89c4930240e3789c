// What the open head writes, beside where it looks: the same pattern with each key's weight times the size of
// what that key passes on through the head, ‖v_j W_O^h‖ (Kobayashi et al., 2020), divided by the head's largest
// on the sentence. Python computes it (lessonpy.models.head_writes.written: the grid's arrays.written, the
// build's open.written); this draws it on the plain pattern's colour scale, with a table of the same numbers,
// and follows the linked view's selected query row. The reader's own sentence (the live panel) has none: a
// sentence says so instead of a picture.
import { fmt, shortLabel } from "../../components/canvas.js";
import { createTable } from "../../components/table.js";
import { createTokenMatrix } from "../../components/tokenmatrix.js";
import { hiddenCells } from "../../components/validate.js";
import { el } from "../common.js";

/** What the matrix draws, and the rules its input is checked by (validate.js checkInput). */
const WRITES_INPUT = Object.freeze({ key: "written", name: "what the head writes", square: true });

/** The caption: what each cell is, and why the rows are not rescaled (head_writes.written says the same). */
const CAPTION = "Each key's attention weight times ‖v W_O‖, the length of what that key passes on through this " +
  "head's value and its slice of the output projection (Kobayashi et al., 2020), divided by the head's longest on " +
  "this sentence: 1 is all the weight on the key that passes on most. Rows are not rescaled to sum to 1, so a " +
  "dark row is a query the head adds little to, and a key bright above but dark here takes weight and passes on little.";

/**
 * createWritesView(parent, {onSelect}) -> {update({written, tokens, causal, name}), select(row), element}
 * written: the open head's (T, T) array, or null (the reader's live sentence: nothing shipped to weight it by).
 */
export function createWritesView(parent, { onSelect }) {
  const element = el("div", "realheads-writes");
  const heading = el("h5", "realheads-writes-title", "What the open head writes");
  const figure = el("figure", "realheads-writes-figure");
  const canvas = el("canvas", "attn-canvas");
  figure.append(canvas, el("figcaption", "", CAPTION));
  const none = el("p", "realheads-writes-none",
    "What a head writes is shipped for the lesson's sentences only: pick one above to see it beside the pattern.");
  none.hidden = true;
  const details = el("details", "realheads-writes-table");
  details.append(el("summary", "", "Show what the open head writes as a table"));
  element.append(heading, figure, none, details);
  parent.append(element);

  const matrix = createTokenMatrix(canvas, WRITES_INPUT, {
    rowAxis: "query", colAxis: "key", map: "sequential", range: [0, 1], pool: "max", legendLabel: "weight × size",
    maskedText: "", maskedNote: "Grey cells are keys after the query, which a causal model never sees.", onSelect,
  }, (r, c, v, labels) => `${shortLabel(labels[r], 16)} → ${shortLabel(labels[c], 16)}\n` +
    (v === -Infinity ? "masked" : `weight × size ${fmt(v, 3)}`));
  let table = null;
  let row = null;

  return {
    element,
    update({ written, tokens, causal, name }) {
      table?.destroy();
      table = null;
      details.querySelector(".attn-table-host")?.remove();
      figure.hidden = details.hidden = !written;
      none.hidden = Boolean(written);
      element.dataset.state = written ? "shown" : "none";
      if (!written) return;
      matrix.update({ written, tokens, hidden: hiddenCells(tokens.length, causal, null) });
      const host = el("div", "attn-table-host");
      details.append(host);
      table = createTable(host, { caption: `${name}: weight × ‖v W_O‖, divided by the head's longest`,
        rowHeader: "query", colHeader: "key" });
      table.update({ matrix: written, rowLabels: tokens, colLabels: tokens });
      if (row !== null) { matrix.select(row); table.select(row); }
    },
    select(next) {
      row = next;
      matrix.select(next);
      table?.select(next);
    },
  };
}
