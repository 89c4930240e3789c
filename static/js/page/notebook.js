// "Download with my edits": the build's notebook (sitebuild/pages/notebook.py writes it next to the
// page) with the reader's code as it is on the page put in the cells it belongs to, assembled here
// and saved as a file. What is on the page, not what storage holds: with storage full (or refused)
// the edits live only on the page. Nothing is sent anywhere; without edits it is the lesson's notebook.
import { answerOnPage } from "./exercises.js";

const text = (source) => (Array.isArray(source) ? source.join("") : source); // nbformat splits lines

/**
 * Put the reader's code into `notebook` (changed in place); return how many cells changed.
 * `load(kind, id)` gives {code} of a code cell ("cell") or an exercise ("exercise") as the page
 * has it (or undefined). Each notebook cell names its origin in metadata.lesson.
 */
export function applyEdits(notebook, load) {
  let changed = 0;
  for (const cell of notebook.cells) {
    const origin = cell.metadata?.lesson || {};
    let code = null;
    if (origin.cell) code = load("cell", origin.cell)?.code;
    else if (origin.exercise) {
      const answer = load("exercise", origin.exercise)?.code;
      // keep the cell's first line, the %%exercise magic that hands the answer to its check
      if (typeof answer === "string") code = `${text(cell.source).split("\n", 1)[0]}\n${answer}`;
    }
    if (typeof code !== "string") continue;
    code = code.replace(/\n+$/, "");
    if (code === text(cell.source)) continue;
    cell.source = code;
    cell.outputs = [];
    cell.execution_count = null;
    changed += 1;
  }
  return changed;
}

function saveFile(contents, name) {
  const url = URL.createObjectURL(new Blob([contents], { type: "application/x-ipynb+json" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000); // the download has long started by then
}

/** The code of a code cell or an exercise as it is on the page now: {code}, or undefined. */
function onThePage(cells) {
  return (kind, id) => {
    const code = kind === "cell" ? cells.cells.find((cell) => cell.id === id)?.code : answerOnPage(id);
    return typeof code === "string" ? { code } : undefined;
  };
}

export async function init({ root, cells }) {
  const section = root.querySelector("[data-notebook]");
  const link = section.querySelector(".notebook-download");
  const button = section.querySelector(".notebook-download-edits");
  const status = section.querySelector(".take-home-status");
  button.disabled = false;
  button.addEventListener("click", async () => {
    button.disabled = true;
    status.textContent = "Putting your edits into the notebook…";
    try {
      const response = await fetch(link.href);
      if (!response.ok) throw new Error(`the notebook did not load (HTTP ${response.status})`);
      const notebook = await response.json();
      const changed = applyEdits(notebook, onThePage(cells));
      saveFile(JSON.stringify(notebook, null, 1) + "\n", link.getAttribute("href").replace(/\.ipynb$/, "-my-edits.ipynb"));
      status.textContent = changed
        ? `Saved the notebook with your ${changed} edited cell${changed === 1 ? "" : "s"}.`
        : "You have not changed any code on this page: this is the lesson's own notebook.";
    } catch (err) {
      status.textContent = `Could not make the notebook: ${err.message}. “Download notebook” still works.`;
    } finally {
      button.disabled = false;
    }
  });
}
