// Which of the site's two variants of Pyodide's archives the worker boots from (sitebuild/startup/archives.py).
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
 * The loadPyodide options naming the archives to boot from, and which variant each kind is.
 * @param {string} indexURL  Pyodide's folder (absolute)
 * @param {Object<string, {deflated: string, stored: string, probe: string}>|null} choices
 *   per kind ("stdlib", "wheels"), paths relative to indexURL (the page config's `archives`)
 *   and for the stdlib, when the build split it, `rest`: {deflated, stored, modules} (its second archive); for
 *   the wheels `boot`: {deflated, stored: [{name, file, sha256}]}, the boot packages' wheels as each lock names them
 * @returns {Promise<{options: {stdLibURL?: string, lockFileURL?: string}, picked: Object<string, string>|null,
 *   rest: {url: string, modules: string[]}|null, boot: {name: string, url: string, sha256: string}[]}>}
 *   rest: the standard library's rest in the variant picked; boot: the boot packages' wheels in it
 */
export async function pickArchives(indexURL, choices, fetchFn = fetch) {
  if (!choices) return { options: {}, picked: null, rest: null, boot: [] }; // Pyodide's own files (a CDN): its defaults
  const kinds = Object.keys(choices);
  const compressed = await Promise.all(kinds.map((kind) => arrivesCompressed(new URL(choices[kind].probe, indexURL).href, fetchFn)));
  const picked = Object.fromEntries(kinds.map((kind, i) => [kind, compressed[i] ? STORED : DEFLATED]));
  const url = (kind) => new URL(choices[kind][picked[kind]], indexURL).href;
  const options = {};
  if (choices.stdlib) options.stdLibURL = url("stdlib");
  if (choices.wheels) options.lockFileURL = url("wheels");
  const split = choices.stdlib?.rest;
  const rest = split ? { url: new URL(split[picked.stdlib], indexURL).href, modules: split.modules } : null;
  const boot = (choices.wheels?.boot?.[picked.wheels] ?? []).map(({ name, file, sha256 }) => ({ name, url: new URL(file, indexURL).href, sha256 }));
  return { options, picked, rest, boot };
}
