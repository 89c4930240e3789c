// The reader's edits and answers, kept per lesson in localStorage.
// Storage can be full, disabled (private modes) or hold junk from an older version of the
// page: every access is guarded, and a failure only costs persistence, never the page.
import { codeText } from "./code-text.js";

const PREFIX = "attn-lesson:v1";

/** Where a lesson's values start: every key of the lesson is this followed by `<kind>:<id>`. */
function lessonPrefix(lesson) {
  return `${PREFIX}:${lesson}:`;
}

function key(lesson, kind, id) {
  return `${lessonPrefix(lesson)}${kind}:${id}`;
}

/** A stored JSON value, its editor's text (`code`) with "\n" line ends (code-text.js): stored by hand or by an older page. */
function parse(raw) {
  const value = JSON.parse(raw);
  if (typeof value?.code === "string") value.code = codeText(value.code);
  return value;
}

/** Read a JSON value, or `fallback` when it is missing, unreadable or not JSON. */
export function load(lesson, kind, id, fallback = null) {
  try {
    const raw = localStorage.getItem(key(lesson, kind, id));
    return raw === null ? fallback : parse(raw);
  } catch {
    return fallback;
  }
}

let onFailure = null; // told once, the first time storage refuses a write
let failed = false;

/**
 * Call `handler(reason)` the first time a write fails, with reason "full" (the quota is used
 * up) or "unavailable" (storage is turned off or blocked): the page tells the reader once.
 */
export function onSaveFailure(handler) {
  onFailure = handler;
}

function refused(err) {
  if (failed) return;
  failed = true;
  onFailure?.(err?.name === "QuotaExceededError" ? "full" : "unavailable");
}

/** Store a JSON value; returns false (and keeps the page going) when storage refuses. */
export function save(lesson, kind, id, value) {
  try {
    localStorage.setItem(key(lesson, kind, id), JSON.stringify(value));
    askToKeep();
    return true;
  } catch (err) {
    refused(err);
    return false;
  }
}

/** Forget a value; returns false when storage refuses. */
export function remove(lesson, kind, id) {
  try {
    localStorage.removeItem(key(lesson, kind, id));
    return true;
  } catch (err) {
    refused(err);
    return false;
  }
}

/** [kind, id] of an item's name "kind:id", or null when it has no kind or no id. Kinds have no colon; an id may. */
export function splitName(name) {
  const colon = name.indexOf(":");
  return colon > 0 && colon < name.length - 1 ? [name.slice(0, colon), name.slice(colon + 1)] : null;
}

/**
 * Everything `lesson` keeps, as [{kind, id, value}] (for "Save my work"). Values that are not JSON
 * are left out: they would be ignored on load too.
 */
export function items(lesson) {
  const prefix = lessonPrefix(lesson);
  const found = [];
  try {
    for (let i = 0; i < localStorage.length; i++) {
      const name = localStorage.key(i);
      if (!name?.startsWith(prefix)) continue;
      const parts = splitName(name.slice(prefix.length));
      if (!parts) continue;
      try {
        found.push({ kind: parts[0], id: parts[1], value: parse(localStorage.getItem(name)) });
      } catch {
        // junk under our prefix: skipped, as load() would
      }
    }
  } catch {
    // storage turned off: nothing is kept
  }
  return found;
}

// Browsers may delete what a site keeps (to free space; Safari after 7 days without a visit). Where the
// browser grants it, persistent storage is spared the first kind. Asked once, at the first save, not at
// load: Firefox asks the reader, and a prompt for a page they have not used yet makes no sense.
let asked = null; // the browser's answer: a Promise of true (granted) or false
const keptHandlers = [];

function askToKeep() {
  if (asked) return;
  asked = Promise.resolve()
    .then(() => globalThis.navigator?.storage?.persist?.())
    .then((granted) => granted === true, () => false);
  asked.then((granted) => granted && keptHandlers.forEach((handler) => handler()));
}

/**
 * Call `handler()` once the browser keeps this site's storage persistently: at once if it did so before
 * (asking whether is silent), or when it grants the page's request at the first save. Only what the page
 * says depends on it.
 */
export function whenKept(handler) {
  keptHandlers.push(handler);
  Promise.resolve()
    .then(() => globalThis.navigator?.storage?.persisted?.())
    .then((kept) => kept === true && handler(), () => {});
}

/**
 * Call `onChange(value)` when another tab of this site changes the value (null: removed).
 * Browsers fire "storage" only in the other tabs, never in the one that wrote.
 */
export function watch(lesson, kind, id, onChange) {
  const wanted = key(lesson, kind, id);
  globalThis.addEventListener?.("storage", (event) => {
    if (event.key !== wanted) return;
    let value = null;
    try {
      value = event.newValue === null ? null : parse(event.newValue);
    } catch {
      value = null;
    }
    onChange(value);
  });
}

/** A short, stable fingerprint of a text (to notice that a lesson's original code changed). */
export function fingerprint(text) {
  let h = 0x811c9dc5; // FNV-1a: tiny and good enough to tell versions apart
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16);
}

/**
 * A stored object checked field by field: each field of `schema` is [check, fallback], and a
 * stored value that fails its check (or is missing, or the whole thing is not an object) is
 * replaced by the fallback. Storage outlives versions of the page and can be edited by hand.
 */
export function validated(saved, schema) {
  const source = isObject(saved) ? saved : {};
  return Object.fromEntries(Object.entries(schema).map(([name, [check, fallback]]) => [
    name, check(source[name]) ? source[name] : fallback,
  ]));
}

/** A JSON object ({...}), not null and not an array. */
export const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
export const isString = (v) => typeof v === "string";
export const isBoolean = (v) => typeof v === "boolean";
/** An integer from `min` to `max` inclusive. */
export const isCount = (min, max = Number.MAX_SAFE_INTEGER) => (v) => Number.isInteger(v) && v >= min && v <= max;
