// Which of the site's two variants of Pyodide's archives the worker boots from (sitebuild/startup/archives.py;
// plan.js reads the boot plan with the variants picked here).
// Stored archives with brotli copies are a third smaller than deflated ones, but only if the host
// compresses them: on a host that does not they cost 2-3x the bytes. Hosts decide by the file's
// type (many compress JavaScript but not .zip or .whl), so for each kind of archive the worker
// fetches a small stored probe of that same kind (a few hundred bytes; after the first visit it
// comes from the HTTP cache, and offline from the service worker's cache with its original
// headers) and takes the stored variant only when the probe arrived compressed. Anything else (a
// failed fetch, no Content-Encoding, a site without stored archives) means the deflated variant.

export const DEFLATED = "deflated";
export const STORED = "stored";

/** Whether `response` is a success the host sent compressed (with a Content-Encoding other than identity). */
export function isCompressed(response) {
  const encoding = (response.headers.get("content-encoding") || "identity").trim().toLowerCase();
  return response.ok && encoding !== "identity";
}

/** Whether `url` arrives compressed: the host sent it with a Content-Encoding. */
async function arrivesCompressed(url, fetchFn) {
  try {
    const response = await fetchFn(url);
    await response.arrayBuffer(); // read it all: a body cut short is a failure too
    return isCompressed(response);
  } catch {
    return false;
  }
}

/**
 * Which variant of each kind of archive this visit boots from: `probes` {kind: file} (relative to indexURL,
 * the boot plan's); a kind whose probe arrived compressed gets the stored variant, any other the deflated.
 * @returns {Promise<Object<string, string>>} {kind: "stored" | "deflated"}
 */
export async function pickVariants(indexURL, probes, fetchFn = fetch) {
  const kinds = Object.keys(probes);
  const compressed = await Promise.all(kinds.map((kind) => arrivesCompressed(new URL(probes[kind], indexURL).href, fetchFn)));
  return Object.fromEntries(kinds.map((kind, i) => [kind, compressed[i] ? STORED : DEFLATED]));
}
