// The real-heads widget's ablation view: what SmolLM2 loses on repeated random tokens when one head is knocked
// out (lessonpy.models.ablation, computed at build time by sitebuild.realheads.ablate). One bar per head, for the heads
// that cost most and the ones the lesson names (framed), then one repeated sequence token by token, with the
// tokens the model gets wrong as it is and without the top induction and previous-token heads. The data are fixed,
// so the build computes them (lessonpy.models.ablation.payload, in the widget's first payload) and the view is drawn whole
// with the widget: asked of Python when it came near, it arrived as the reader read, and pushed the page down.
// A bar's head name is a button that opens that head in the grid above (onOpen). Data that cannot be drawn (a
// page whose entry lacks them, or has them malformed) leave this view to a sentence; the rest of the widget works.
import { createListTable } from "../../components/table.js";
import { el, num } from "../common.js";

const headName = ({ layer, head }) => `layer ${layer}, head ${head}`;

/** "without layer 18, head 6 (the induction test's best)" for a run's knocked head, or "as it is". */
function runName(knocked) {
  return knocked ? `without ${headName(knocked)} (the ${knocked.test} test's best)` : "as it is";
}

/** A token split into its leading whitespace and the rest, so a strike-through covers the word, not the space. */
export function splitLeadingSpace(token) {
  const text = String(token);
  const lead = /^\s*/.exec(text)[0];
  return [lead, text.slice(lead.length)];
}

/**
 * The view, drawn from `payload` (lessonpy.models.ablation.payload, decoded), at the end of `host`.
 * onOpen({layer, head}): a bar's button was pressed (none: the names are plain text).
 */
export function createAblationView(host, payload, { onOpen } = {}) {
  const section = el("section", "realheads-ablation");
  section.append(el("h4", "realheads-ablation-title", "Knock one head out (SmolLM2)"));
  const status = el("p", "widget-status realheads-ablation-status");
  const bars = el("ul", "realheads-ablation-bars");
  const example = el("div", "realheads-ablation-example");
  const details = el("details", "realheads-ablation-table");
  details.append(el("summary", "", "Show every head's loss increase as a table"));
  const table = createListTable(details, {
    caption: "Loss increase when each head is knocked out",
    columns: ["head", "loss increase (nats)"],
  });
  section.append(status, bars, example, details);
  host.append(section);

  function showBars(payload) {
    bars.textContent = "";
    const top = Math.max(...payload.heads.map((h) => h.increase), 1e-9);
    for (const h of payload.heads) {
      const item = el("li", h.names.length ? "realheads-ablation-bar named" : "realheads-ablation-bar");
      item.dataset.layer = String(h.layer);
      item.dataset.head = String(h.head);
      const text = `${headName(h)}${h.names.length ? `: ${h.names.join(", ")}` : ""}`;
      const label = el(onOpen ? "button" : "span", "realheads-ablation-label", text);
      if (onOpen) { // the whole bar takes a click or a tap; its button, the keyboard (its click bubbles up)
        label.type = "button";
        label.setAttribute("aria-label", `Open ${text} in the grid above`);
        item.addEventListener("click", () => onOpen({ layer: h.layer, head: h.head }));
        item.classList.add("opens");
      }
      const track = el("span", "realheads-ablation-track");
      const fill = el("span", "realheads-ablation-fill");
      fill.style.width = `${Math.max(0, h.increase / top) * 100}%`;
      track.append(fill);
      item.append(label, track, el("span", "realheads-ablation-value", `${h.increase >= 0 ? "+" : ""}${num(h.increase, 2)} nats`));
      bars.append(item);
    }
  }

  function showExample(payload) {
    example.textContent = "";
    const { context, tokens, runs } = payload.example;
    example.append(el("p", "realheads-ablation-context",
      `One of the sequences: ${context.length - 1} random tokens, then the same again; the model predicts each next token ` +
      "of the second copy. Struck-through tokens are the ones its top guess gets wrong (the guess follows).",
    ));
    for (const run of runs) {
      const line = el("p", "realheads-ablation-run");
      line.append(el("strong", "", `${runName(run.knocked)}: `));
      const wrong = run.wrong.filter(Boolean).length;
      tokens.forEach((token, i) => {
        const span = el("span", "realheads-ablation-token", run.wrong[i] ? "" : token);
        if (run.wrong[i]) { // the leading space stays outside the strike: "·cactus" struck reads as a word, not "-cactus"
          const [lead, word] = splitLeadingSpace(token);
          span.append(lead, el("del", "", word));
        }
        span.title = `p(right token) = ${num(run.p_correct[i], 2)}; top guess ${JSON.stringify(run.top_text[i])}`;
        line.append(span);
        if (run.wrong[i]) line.append(el("ins", "realheads-ablation-guess", run.top_text[i]));
      });
      line.append(el("span", "realheads-ablation-count", ` (${wrong} of ${tokens.length} wrong)`));
      example.append(line);
    }
  }

  function render(payload) {
    showBars(payload);
    showExample(payload);
    const { data, shape } = payload.arrays.increase;
    const rows = [];
    for (let i = 0; i < data.length; i++) rows.push([headName({ layer: Math.floor(i / shape[1]), head: i % shape[1] }), data[i]]);
    table.update(rows, `SmolLM2: loss increase (nats) on the second copy when each head is mean-ablated, over ${payload.draws} sequences`);
    status.textContent = `Without any head knocked out the model's loss on the second copy is ${num(payload.baseline, 2)} nats ` +
      `(mean over ${payload.draws} sequences of ${payload.n} random tokens written twice). Each bar is how much it rises ` +
      "when that one head's output is replaced by its average (mean-ablation); the framed heads are the ones the lesson names.";
    section.dataset.state = "ready";
  }

  try {
    render(payload);
  } catch (err) {
    // Last line of defence: this part says why it is missing instead of failing the whole widget.
    bars.textContent = example.textContent = "";
    details.hidden = true;
    console.warn("real-heads: the ablation data cannot be drawn", err);
    status.textContent = "The knock-out results are missing from this page's data, or are not in the form it " +
      "expects, so this part is left out. The grid and the heads above work without it.";
    section.dataset.state = "error";
  }
  return { element: section };
}
