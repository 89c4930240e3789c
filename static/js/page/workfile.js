// The reader's work as a file ("Save my work" / "Open saved work…" in the take-home section, notebook.js).
// Browsers may delete what a site keeps in storage (Safari after 7 days without a visit): a file on the
// reader's own disk outlives that. Pure functions, no page: tests/js/workfile.test.mjs runs them in Node.
//
// Two kinds of file open: the page's own work file, and the notebook "Download with my edits" makes.
// Both come from the reader's disk, which anyone can edit: every value is checked here, field by field as
// storage.validated does for storage, and a file that is not right opens nothing (WorkFileError says why).
import { codeText } from "./code-text.js";
import { fingerprint, isBoolean, isCount, isObject, isString, splitName, validated } from "./storage.js";

export const FORMAT = "attention-lesson-work";
export const VERSION = 1;
/** Work is a few kilobytes of code and answers; a bigger file is something else and is not even read. */
export const MAX_BYTES = 5 * 1024 * 1024;

/** A file the page will not open; its message is the one sentence the reader sees. */
export class WorkFileError extends Error {}

const isChoiceList = (v) => Array.isArray(v) && v.length <= 64 && v.every((i) => Number.isInteger(i) && i >= 0 && i < 64);
const isVerdict = (v) => v === null || typeof v === "boolean";

/**
 * What each kind of item holds, as cells.js, exercises.js and quiz.js save it: `needs` must pass, the rest
 * are checked with storage.validated. `from` (tabsync.js: the version an edit was made on) is left out on
 * purpose: without it the lesson's other open tabs follow the opened work instead of asking.
 */
const SHAPES = {
  cell: { needs: "code", schema: { code: [isString, null], base: [isString, null] } },
  exercise: {
    needs: "code",
    schema: {
      code: [isString, null], attempts: [isCount(0), 0], solved: [isBoolean, false],
      hints: [isCount(0, 100), 0], base: [isString, null],
    },
  },
  quiz: { needs: "chosen", schema: { version: [isString, null], chosen: [isChoiceList, null], correct: [isVerdict, null] } },
};

/** The name of an item in the file: `<kind>:<id>` (kinds have no colon, ids may). */
export const itemName = (kind, id) => `${kind}:${id}`;

/** [kind, id] of an item's name, or null when it names no kind the page keeps. */
export function splitItemName(name) {
  const parts = splitName(name);
  return parts && Object.hasOwn(SHAPES, parts[0]) ? parts : null;
}

/** The value of one item checked against its kind's shape, or null when its essential field is wrong. */
function checkedValue(kind, value) {
  const shape = SHAPES[kind];
  if (!isObject(value) || !shape.schema[shape.needs][0](value[shape.needs])) return null;
  const checked = validated(value, shape.schema);
  if (typeof checked.code === "string") checked.code = codeText(checked.code); // as storage.load reads it
  return checked;
}

/**
 * The work file of `lesson`: `entries` are storage.items(lesson)'s {kind, id, value}; `now` a Date. Values are
 * checked as opening the file checks them (junk an older page left in storage is left out), so a saved file opens.
 */
export function workFile(lesson, entries, now) {
  const items = {};
  for (const { kind, id, value } of entries) {
    const checked = Object.hasOwn(SHAPES, kind) && id && checkedValue(kind, value);
    if (checked) items[itemName(kind, id)] = checked;
  }
  return { format: FORMAT, version: VERSION, lesson, saved: now.toISOString(), items };
}

/**
 * The items to write into storage, {"<kind>:<id>": value}, from a file's text: our work file of `lesson`, or
 * the notebook of `lesson` with the reader's edits. `originals(kind, id)` gives the page's code of a cell or the
 * starter of an exercise (undefined: not on this page), and `stored(kind, id)` what storage holds now.
 * Throws WorkFileError when the file opens nothing.
 */
export function readWork(text, { lesson, originals, stored }) {
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    throw new WorkFileError("This file is not a saved-work file or a notebook (it is not JSON): nothing was changed.");
  }
  if (isObject(data) && Array.isArray(data.cells) && "nbformat" in data) return notebookItems(data, { lesson, originals, stored });
  if (isObject(data) && data.format === FORMAT) return workItems(data, lesson);
  throw new WorkFileError("This file is neither work saved from this page nor a notebook downloaded from it: nothing was changed.");
}

/** The checked items of our own work file. */
export function workItems(data, lesson) {
  if (data.version !== VERSION) {
    throw new WorkFileError(`This file was saved by another version of the page (format version ${JSON.stringify(data.version)}, this page reads ${VERSION}): nothing was changed.`);
  }
  if (data.lesson !== lesson) {
    throw new WorkFileError(`This file holds work on another lesson (“${String(data.lesson).slice(0, 80)}”): open it on that lesson's page. Nothing was changed.`);
  }
  const given = data.items;
  if (given === null || typeof given !== "object" || Array.isArray(given)) {
    throw new WorkFileError("This file is damaged (it has no list of items): nothing was changed.");
  }
  const items = {};
  for (const [name, value] of Object.entries(given)) {
    const kind = splitItemName(name)?.[0];
    const checked = kind && checkedValue(kind, value);
    if (!checked) throw new WorkFileError(`This file is damaged (its item “${name.slice(0, 80)}” is not what the page saves): nothing was changed.`);
    items[name] = checked;
  }
  if (!Object.keys(items).length) throw new WorkFileError("This file holds no work: nothing was changed.");
  return items;
}

export const sourceText = (source) => (Array.isArray(source) ? source.join("") : source); // nbformat splits lines
const trimEnd = (code) => code.replace(/\n+$/, ""); // as applyEdits in notebook.js writes the code

/**
 * The code of each cell and exercise of the notebook that differs from the page's, {"<kind>:<id>": code}:
 * what "Download with my edits" put in (applyEdits in notebook.js). An exercise's cell starts with its
 * `%%exercise` line, which is not the reader's answer. Cells the page does not have are left out.
 */
export function notebookEdits(notebook, originals) {
  const edits = {};
  for (const cell of notebook.cells) {
    const origin = cell?.metadata?.lesson;
    if (cell?.cell_type !== "code" || !origin || typeof origin !== "object") continue;
    const source = sourceText(cell.source);
    if (typeof source !== "string" || (Array.isArray(cell.source) && !cell.source.every(isString))) {
      throw new WorkFileError("This notebook is damaged (a cell's code is not text): nothing was changed.");
    }
    const [kind, id] = isString(origin.cell) ? ["cell", origin.cell] : isString(origin.exercise) ? ["exercise", origin.exercise] : [];
    const original = kind && originals(kind, id);
    if (typeof original !== "string") continue;
    const text = codeText(source); // a notebook saved with "\r\n" has the page's code all the same
    const code = kind === "exercise" ? text.slice(text.indexOf("\n") + 1 || text.length) : text;
    if (trimEnd(code) !== trimEnd(original)) edits[itemName(kind, id)] = trimEnd(code);
  }
  return edits;
}

/** A notebook's edits in the shapes cells.js and exercises.js store them (an exercise keeps its progress). */
function notebookItems(notebook, { lesson, originals, stored }) {
  const slug = notebook.metadata?.lesson?.slug;
  if (slug !== lesson) {
    throw new WorkFileError(typeof slug === "string"
      ? `This notebook is of another lesson (“${slug.slice(0, 80)}”): open it on that lesson's page. Nothing was changed.`
      : "This notebook was not downloaded from this site's lessons: nothing was changed.");
  }
  const items = {};
  for (const [name, code] of Object.entries(notebookEdits(notebook, originals))) {
    const [kind, id] = splitItemName(name);
    const base = fingerprint(originals(kind, id));
    items[name] = kind === "cell"
      ? { code, base }
      : { ...validated(stored(kind, id), SHAPES.exercise.schema), code, base };
  }
  if (!Object.keys(items).length) {
    throw new WorkFileError("This notebook has the lesson's own code in every cell: there is no edit to open, and nothing was changed.");
  }
  return items;
}
