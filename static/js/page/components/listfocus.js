// Keyboard focus along a list of n items (a strip's heads, a lookup's keys): one definition of which keys
// move it and where it stops, for every component whose items are one after another.

/**
 * The item focused after `key` from `focus` among `n` items: `forward` and `back` name the keys that step
 * (each stops at its end), Home and End jump; null when the key does not move focus (the caller lets it be).
 */
export function stepFocus(focus, key, n, { forward = ["ArrowDown"], back = ["ArrowUp"] } = {}) {
  if (forward.includes(key)) return Math.min(n - 1, focus + 1);
  if (back.includes(key)) return Math.max(0, focus - 1);
  if (key === "Home") return 0;
  if (key === "End") return n - 1;
  return null;
}
