// The reader's edits and answers, kept per lesson in localStorage.
// Storage can be full, disabled (private modes) or hold junk from an older version of the
// page: every access is guarded, and a failure only costs persistence, never the page.

const PREFIX = "attn-lesson:v1";

function key(lesson, kind, id) {
  return `${PREFIX}:${lesson}:${kind}:${id}`;
}

/** Read a JSON value, or `fallback` when it is missing, unreadable or not JSON. */
export function load(lesson, kind, id, fallback = null) {
  try {
    const raw = localStorage.getItem(key(lesson, kind, id));
    return raw === null ? fallback : JSON.parse(raw);
  } catch {
    return fallback;
  }
}

/** Store a JSON value; returns false (and keeps the page going) when storage refuses. */
export function save(lesson, kind, id, value) {
  try {
    localStorage.setItem(key(lesson, kind, id), JSON.stringify(value));
    return true;
  } catch {
    return false;
  }
}

export function remove(lesson, kind, id) {
  try {
    localStorage.removeItem(key(lesson, kind, id));
  } catch {
    /* nothing to lose */
  }
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
