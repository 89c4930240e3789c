// The worker's last guard on text: no string it posts is longer than LIMITS.OUTPUT_CHARS, whatever Python sent
// (lessonpy.runtime.limits.clip cuts where Python makes its texts; a path that forgot would otherwise reach the page).
import { LIMITS } from "../shared/limits.js";

/**
 * `text` within `limit` characters: its start and its end, the middle replaced by LIMITS.CUT_MARK saying how many
 * characters were cut; the same cut as lessonpy.runtime.limits.clip, where Python makes its texts (tests/unit/test_limits.py and
 * tests/js/clip.test.mjs hold one example each, the same).
 */
export function clipText(text, limit) {
  if (text.length <= limit) return text;
  const keep = Math.max(0, limit - LIMITS.CUT_MARK_ROOM);
  const head = keep - Math.floor(keep / 2);
  const mark = LIMITS.CUT_MARK.replace("{chars}", (text.length - keep).toLocaleString("en"));
  return text.slice(0, head) + mark + text.slice(text.length - (keep - head));
}

/**
 * `message` with every string in it (in its plain objects, arrays and Maps; typed arrays are not looked into)
 * clipped to LIMITS.OUTPUT_CHARS, in place: the worker's last guard on what it posts, so no text reaches the page
 * longer than that even if a path of Python's forgot to clip it (a 10**8-character message crashed the tab).
 */
export function clipStrings(message) {
  if (typeof message === "string") return clipText(message, LIMITS.OUTPUT_CHARS);
  if (Array.isArray(message)) message.forEach((value, i) => { message[i] = clipStrings(value); });
  else if (message instanceof Map) message.forEach((value, key) => message.set(key, clipStrings(value)));
  else if (message && typeof message === "object" && [Object.prototype, null].includes(Object.getPrototypeOf(message))) {
    for (const key of Object.keys(message)) message[key] = clipStrings(message[key]);
  }
  return message;
}
