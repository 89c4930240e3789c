// The live panel's head changes: the reader picks MiniLM heads (or clicks one in MiniLM's grid), says what to do
// to each (knock it out, or multiply its scores before the softmax), and the next live run applies the list to
// every sentence it compares (lessonpy.models.live.heads, `changes`; lessonpy.models.minilm.forward, `knock`). The table shows
// what the model then says: the cosine of the embeddings of the reader's sentence and one they type to compare
// with, then a few fixed others, as trained and with the changes. This file holds the controls, the list and the
// table; Python computes every number (lessonpy.models.live.heads, `compare`).
import { createListTable } from "../../components/table.js";
import { el, labelled, num } from "../common.js";

/** What a reader may do to a head: the value sent to Python ("off", or a factor for its scores) and its words. */
export const CHANGES = [
  { change: "off", label: "knock it out (its output is zero)", short: "knocked out" },
  { change: 0, label: "same weight on every key (scores × 0)", short: "scores × 0, uniform" },
  { change: 0.5, label: "softer (scores × 0.5)", short: "scores × 0.5" },
  { change: 2, label: "sharper (scores × 2)", short: "scores × 2" },
  { change: Math.sqrt(32), label: "without the 1/√d_k (scores × √32 ≈ 5.66)", short: "scores × √32" },
];

const headName = ({ layer, head }) => `layer ${layer}, head ${head}`;

/** "knocked out" or "scores × 2" for a change's value (one Python echoed back, or one of CHANGES). */
export function changeName(change) {
  const known = CHANGES.find((c) => c.change === change);
  return known ? known.short : `scores × ${num(change, 2)}`;
}

/** A list of changes [{layer, head, change}] with (layer, head) set to *change*: at most one entry per head. */
export function withChange(list, { layer, head }, change) {
  const rest = list.filter((c) => c.layer !== layer || c.head !== head);
  return [...rest, { layer, head, change }].sort((a, b) => a.layer - b.layer || a.head - b.head);
}

/**
 * The change the menus' values {layer, head, what} (strings) name, {layer, head, change}, or null when one of
 * them is not an option (a value set from outside the page: nothing to add).
 */
export function pickedChange({ layer, head, what }, layers, heads) {
  const index = (value, n) => (/^\d+$/.test(value) && Number(value) < n ? Number(value) : null);
  const [l, h, w] = [index(layer, layers), index(head, heads), index(what, CHANGES.length)];
  return l === null || h === null || w === null ? null : { layer: l, head: h, change: CHANGES[w].change };
}

/** "layer 0, head 3 knocked out; layer 2, head 1 scores × 0.5", or "none" for no change. */
export function describeChanges(list) {
  return list.length ? list.map((c) => `${headName(c)} ${changeName(c.change)}`).join("; ") : "none";
}

/**
 * What the panel says of the sentence the reader typed to compare with, from a live reply's `similarity.compare`
 * (lessonpy.models.live._comparison): how MiniLM read it, or why it gives no cosine (a reason code, said here in words).
 */
export function describeComparison(compare) {
  if (!compare) return "Nothing typed to compare with: the table compares your sentence with the fixed sentences only.";
  if (compare.problem === "too-long") {
    return `The sentence to compare with makes ${compare.count} tokens and MiniLM reads at most ${compare.limit}: ` +
      "shorten it to see its cosine.";
  }
  if (compare.problem === "no-words") {
    return "The sentence to compare with has no character MiniLM reads (the tokenizer drops them all), so it has " +
      "no vector to compare.";
  }
  return `MiniLM read the sentence to compare with as ${compare.tokens.length} tokens: ${compare.tokens.join(" ")}`;
}

/**
 * createHeadChanges({layers, heads, maxChars, onRun()})
 *   -> {element, runButton, list(), compareText(), pick({layer, head}), show(reply), busy(bool)}
 * pick: the head MiniLM's grid opened (it fills the layer and head choices); show: a live reply's similarities;
 * compareText: the sentence typed to compare with (its box holds at most maxChars, the live sentence's bound);
 * onRun: its own Run button and Enter in that box (the panel's run); busy: disable that button.
 */
export function createHeadChanges({ layers, heads, maxChars, onRun }) {
  const element = el("div", "realheads-changes");
  element.append(el("h5", "", "Change heads, see what the model says"));
  element.append(el("p", "realheads-changes-help",
    "MiniLM turns a sentence into one vector: its tokens' vectors from the last layer, averaged and scaled to " +
    "length 1. It was trained so that sentences of like meaning point the same way, so the cosine of two " +
    "sentences' vectors is what the model says about them. Type a sentence to compare yours with; choose a head " +
    "(or open one in MiniLM's grid), what to do to it, and add it. The next run applies every change to both " +
    "sentences of each pair it compares, and the table shows each cosine as trained and with the changes."));
  const compareRow = el("div", "widget-controls");
  const compareInput = el("input", "realheads-compare-text");
  compareInput.type = "text";
  compareInput.maxLength = maxChars;
  labelled(compareRow, compareInput, "Compare with");
  compareInput.addEventListener("keydown", (ev) => { if (ev.key === "Enter") { ev.preventDefault(); onRun?.(); } });
  const compareNote = el("p", "realheads-compare-note");
  compareNote.setAttribute("aria-live", "polite");
  element.append(compareRow, compareNote);
  const row = el("div", "widget-controls");
  const options = (select, n) => {
    for (let i = 0; i < n; i++) {
      const opt = el("option", "", String(i));
      opt.value = String(i);
      select.append(opt);
    }
  };
  const layerSelect = el("select", "realheads-change-layer");
  options(layerSelect, layers);
  labelled(row, layerSelect, "Layer");
  const headSelect = el("select", "realheads-change-head");
  options(headSelect, heads);
  labelled(row, headSelect, "Head");
  const whatSelect = el("select", "realheads-change-what");
  CHANGES.forEach((c, i) => {
    const opt = el("option", "", c.label);
    opt.value = String(i);
    whatSelect.append(opt);
  });
  labelled(row, whatSelect, "What to do");
  const addButton = el("button", "realheads-change-add", "Add this change");
  addButton.type = "button";
  row.append(addButton);
  const listHost = el("ul", "realheads-changes-list");
  const clearButton = el("button", "realheads-changes-clear", "Remove every change");
  clearButton.type = "button";
  const runButton = el("button", "realheads-changes-run", "Run MiniLM with these changes");
  runButton.type = "button";
  runButton.addEventListener("click", () => onRun?.());
  const listNote = el("p", "realheads-changes-note");
  listNote.setAttribute("aria-live", "polite");
  const tableHost = el("div", "realheads-similarity");
  const table = createListTable(tableHost, {
    caption: "What MiniLM says: cosine of your sentence's vector and others'",
    columns: ["compared with", "as trained", "with the changes", "difference"],
  });
  element.append(row, listNote, listHost, runButton, clearButton, tableHost);

  let list = [];
  function showList() {
    listHost.textContent = "";
    for (const c of list) {
      const item = el("li", "", `${headName(c)}: ${changeName(c.change)} `);
      const remove = el("button", "realheads-change-remove", "Remove");
      remove.type = "button";
      remove.setAttribute("aria-label", `Remove the change of ${headName(c)}`);
      remove.addEventListener("click", () => {
        const next = list.indexOf(c);
        set(list.filter((x) => x !== c));
        // focus stays in the list: on the next entry's Remove, else the last one's, else the Add button
        const buttons = listHost.querySelectorAll(".realheads-change-remove");
        (buttons[Math.min(next, buttons.length - 1)] ?? addButton).focus();
      });
      item.append(remove);
      listHost.append(item);
    }
    clearButton.hidden = runButton.hidden = list.length === 0;
    listNote.textContent = list.length ? `${list.length} changed head${list.length === 1 ? "" : "s"}: every run applies ${list.length === 1 ? "it" : "them"} to every sentence.`
      : "No head is changed: the model runs as trained.";
    element.dataset.changes = String(list.length);
  }
  function set(next) {
    list = next;
    showList();
  }
  addButton.addEventListener("click", () => {
    const picked = pickedChange({ layer: layerSelect.value, head: headSelect.value, what: whatSelect.value }, layers, heads);
    if (picked) set(withChange(list, picked, picked.change)); // a value no option has (devtools) adds nothing
  });
  clearButton.addEventListener("click", () => { set([]); addButton.focus(); });
  showList();

  return {
    element,
    runButton,
    list: () => list.map((c) => ({ ...c })),
    compareText: () => compareInput.value,
    busy(on) { runButton.disabled = on; },
    pick({ layer, head }) {
      layerSelect.value = String(layer);
      headSelect.value = String(head);
    },
    /** A live reply's similarities; its `changes` are the ones it was computed with (the list may have moved on). */
    show(reply) {
      const { self, others, compare } = reply.similarity;
      const row = (label, o) => [label, o.trained, o.changed, o.changed - o.trained];
      const typed = compare && !compare.problem ? [row(`you typed: ${compare.text}`, compare)] : [];
      const rows = [["your sentence itself", 1, self, self - 1], ...typed, ...others.map((o) => row(o.text, o))];
      compareNote.textContent = describeComparison(compare);
      table.update(rows, `What MiniLM says: cosine of your sentence's vector and others', as trained and with the ` +
        `changes (${describeChanges(reply.changes)})`);
      element.dataset.similarity = "shown";
    },
  };
}
