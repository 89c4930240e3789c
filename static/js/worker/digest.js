// The SHA-256 of bytes, in lower-case hex, as Pyodide's lock and the build's file lists give it.

/** Resolves with `bytes`' SHA-256 in hex, or null outside a secure context (no crypto.subtle there; nor a
 *  service worker or Cache Storage, so nothing kept by the browser needs checking). */
export async function sha256Hex(bytes) {
  if (!globalThis.crypto?.subtle) return null;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
