// A JSON file the build wrote beside the lesson page (build.py: the widgets' data, WIDGET_DATA; the far
// formulas' MathML, LATER_MATHS), fetched once, when first needed, by whoever needs it first.
import { isObject } from "./storage.js";

/** The file could not be had; the message says why, in words that follow "its data …" or stand alone. */
export class PageFileError extends Error {}

// A JSON object ({...}) is what every page file is at its top (storage.js holds the one definition).
export { isObject };

/**
 * The file at `url` (`what` names it in an error: "widget data"), fetched once: `get()` resolves to its
 * contents, `now()` returns them once they have come (else null). A download that fails is asked for
 * again by the next `get()`, so a reader who comes back online gets it without a reload. So is a file that
 * is not what the build wrote (not JSON, or JSON that `valid` refuses: a proxy's or a portal's page, a
 * stale copy), in the same words: for the reader it did not download, and the next try may get the real one.
 */
export function pageFile(url, what, { fetchFn = (u) => fetch(u), valid = isObject } = {}) {
  let pending = null;
  let contents = null;
  const notIt = () => new PageFileError("its data did not download (what came is not the page's file); reload the page to try again");
  const download = async () => {
    if (!url) throw new PageFileError(`the page names no file of ${what}`);
    let response;
    try {
      response = await fetchFn(url);
    } catch {
      throw new PageFileError("its data did not download (the connection failed); reload the page to try again");
    }
    if (!response.ok) throw new PageFileError(`its data did not download (HTTP ${response.status}); reload the page to try again`);
    let body;
    try {
      body = await response.json();
    } catch {
      throw notIt();
    }
    if (!valid(body)) throw notIt();
    contents = body;
    return contents;
  };
  return {
    get() {
      pending ??= download();
      pending.catch(() => { pending = null; });
      return pending;
    },
    now: () => contents,
  };
}
