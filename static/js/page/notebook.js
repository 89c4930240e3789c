// "Download with my edits": the build's notebook (sitebuild/pages/notebook.py writes it next to the
// page) with the reader's code as it is on the page put in the cells it belongs to, assembled here
// and saved as a file. What is on the page, not what storage holds: with storage full (or refused)
// the edits live only on the page. Nothing is sent anywhere; without edits it is the lesson's notebook.
// "Save my work" and "Open saved work…" keep what storage holds in a file of the reader's (workfile.js):
// browsers may delete a site's storage, Safari after 7 days without a visit.
import { answerOnPage, starterOnPage } from "./exercises.js";
import * as storage from "./storage.js";
import { MAX_BYTES, WorkFileError, readWork, sourceText, splitItemName, workFile } from "./workfile.js";

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
      if (typeof answer === "string") code = `${sourceText(cell.source).split("\n", 1)[0]}\n${answer}`;
    }
    if (typeof code !== "string") continue;
    code = code.replace(/\n+$/, "");
    if (code === sourceText(cell.source)) continue;
    cell.source = code;
    cell.outputs = [];
    cell.execution_count = null;
    changed += 1;
  }
  return changed;
}

function saveFile(contents, name, type = "application/x-ipynb+json") {
  const url = URL.createObjectURL(new Blob([contents], { type }));
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

/** The lesson's own code of a code cell, or an exercise's starter, on this page: a string, or undefined. */
function originalOnThePage(cells) {
  return (kind, id) => (kind === "cell" ? cells.cells.find((cell) => cell.id === id)?.original : starterOnPage(id));
}

/** The sentence of the take-home section where the browser keeps the site's storage persistently (storage.js). */
const KEPT = "This browser has agreed not to delete what this site keeps to free space, but it may still delete it "
  + "by other rules (Safari after 7 days without a visit): save your work to a file to keep it.";

/**
 * Write every item ({"<kind>:<id>": value}) into storage, or none: when storage refuses one, the ones
 * already written get their old values back, so a reload would show what the page shows now.
 */
function writeAll(lesson, items) {
  const written = [];
  for (const [name, value] of Object.entries(items)) {
    const [kind, id] = splitItemName(name);
    const before = storage.load(lesson, kind, id);
    if (!storage.save(lesson, kind, id, value)) {
      for (const item of written.reverse()) {
        if (item.before === null) storage.remove(lesson, item.kind, item.id);
        else storage.save(lesson, item.kind, item.id, item.before);
      }
      return false;
    }
    written.push({ kind, id, before });
  }
  return true;
}

/** "Save my work": storage's items of this lesson as a file; returns what the status line says. */
function saveWork(lesson) {
  const work = workFile(lesson, storage.items(lesson), new Date());
  const count = Object.keys(work.items).length;
  if (!count) {
    return "Nothing is saved yet: the file would be empty. Edit a cell, try an exercise or answer a quiz first.";
  }
  const name = `${lesson}-my-work.json`;
  saveFile(JSON.stringify(work, null, 1) + "\n", name, "application/json");
  return `Saved your work (${count} item${count === 1 ? "" : "s"}) as ${name}: “Open saved work…” brings it back, in this browser or another.`;
}

/**
 * "Open saved work…": put a file's work into storage and reload, so every cell, exercise and quiz restores
 * itself as on any visit. Returns what the status line says; a file that opens nothing changes nothing.
 */
async function openWork(file, lesson, cells) {
  if (file.size > MAX_BYTES) {
    return `This file is too big to be saved work (${(file.size / 2 ** 20).toFixed(1)} MB; the page opens files up to ${MAX_BYTES / 2 ** 20} MB): nothing was changed.`;
  }
  let items;
  try {
    const stored = (kind, id) => storage.load(lesson, kind, id);
    items = readWork(await file.text(), { lesson, originals: originalOnThePage(cells), stored });
  } catch (err) {
    if (err instanceof WorkFileError) return err.message;
    return `Could not read this file (${err.message}): nothing was changed.`;
  }
  if (!writeAll(lesson, items)) {
    return "This browser's storage refused the work (it is full, or turned off): nothing was changed, and the page is as it was.";
  }
  location.reload();
  return "Opening your saved work…";
}

export async function init({ root, cells, lesson }) {
  const section = root.querySelector("[data-notebook]");
  const link = section.querySelector(".notebook-download");
  const button = section.querySelector(".notebook-download-edits");
  const status = section.querySelector(".take-home-status");
  const saveButton = section.querySelector(".work-save");
  const openInput = section.querySelector(".work-open-input");
  storage.whenKept(() => {
    section.querySelector(".take-home-keep").textContent = KEPT;
  });
  saveButton.disabled = false;
  saveButton.addEventListener("click", () => {
    status.textContent = saveWork(lesson);
  });
  openInput.disabled = false;
  openInput.addEventListener("change", async () => {
    const file = openInput.files?.[0];
    openInput.value = ""; // choosing the same file again is a new change
    if (!file) return;
    status.textContent = "Reading the file…";
    status.textContent = await openWork(file, lesson, cells);
  });
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
