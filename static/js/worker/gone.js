// A page older than its site. Pyodide's folder carries its content's hash in its name, so after a rebuild
// an open tab asks for files that are no longer there, and the server answers 404. Pyodide's loader then
// says only "Failed to load …" and Python "No module named 'micropip'", which tells a reader nothing they
// can act on. The worker's fetches pass through `noticingGone`, which remembers such an answer for a file
// under a versioned folder; a run's imports that met one say what happened and what to do (worker.js).

/**
 * A fetch like `fetchFn` that records in `seen` ({url} or null, the caller's to read and reset) the last
 * URL under one of the folders `versioned()` returns that answered 404. Pyodide fetches its packages with
 * their lock's `integrity`, and the browser then fails a 404 as "Failed to fetch" without its status: a
 * failed fetch there asks the server once more, for the headers only, whether the file is gone.
 */
export function noticingGone(fetchFn, versioned, seen) {
  return async (resource, init) => {
    const url = resource instanceof Request ? resource.url : String(resource);
    const watched = versioned().some((folder) => folder && url.startsWith(folder));
    let response;
    try {
      response = await fetchFn(resource, init);
    } catch (err) {
      if (watched && await isGone(fetchFn, url)) seen.url = url;
      throw err;
    }
    if (watched && response.status === 404) seen.url = url;
    return response;
  };
}

const isGone = (fetchFn, url) => fetchFn(url, { method: "HEAD", cache: "no-store" }).then((r) => r.status === 404, () => false);

/** What a reader reads when a file of this page's version of the site is gone. */
export function siteChanged(url) {
  const name = decodeURIComponent(new URL(url).pathname.split("/").pop());
  return `The site was rebuilt after this page was opened: ${name} is no longer there. Reload the page to ` +
    "get the new version (your edits saved in this browser come back).";
}
