// The boot plan (written by sitebuild/startup/boot_plan.py into the page config, which says its format), read
// here and nowhere else: each kind of archive's variant is picked once, by its probe (archives.js), and the
// rest of the worker gets one flat plan of URLs, by when they are needed.

import { pickVariants } from "./archives.js";

/**
 * The plan of this visit: `plan` the page config's, `indexURL` Pyodide's folder (absolute), `readJSON(url)` the
 * worker's read of a versioned JSON file (boot.js), `fetchFn` the probes' fetch.
 * @returns {Promise<{picked: Object<string, string>|null, options: {stdLibURL?: string, lockFileURL?: string},
 *   normal: {name: string, url: string, sha256: string}[], restore: string[],
 *   later: {url: string, modules: string, into: string, unpack: boolean}[], restored: typeof later,
 *   moduleLists: Promise<Object<string, string[]>>}>}
 *   `picked` each kind's variant (said to the page, which asks the service worker to keep those); `options`
 *   loadPyodide's; `normal` the boot packages' wheels a normal start downloads at once; `restore` the
 *   libraries a restore reads; `later` what comes after the first output, `restored` what comes then after
 *   a restore only, each naming its list of modules in `moduleLists`. Without a plan (Pyodide from a CDN): Pyodide's own defaults, nothing of ours.
 */
export async function choosePlan(indexURL, plan, readJSON, fetchFn = fetch) {
  if (!plan) return { picked: null, options: {}, normal: [], restore: [], later: [], restored: [], moduleLists: Promise.resolve({}) };
  // the later files' module lists, a file of the Pyodide folder (boot_plan.py): read while Python starts,
  // needed once it is up (boot.js, installFinders)
  const moduleLists = readJSON(new URL(plan.modulesFile, indexURL).href);
  moduleLists.catch(() => {}); // awaited by the boot, which reports a failure
  const picked = await pickVariants(indexURL, plan.probes, fetchFn);
  const chosen = Object.entries(plan.kinds).map(([kind, variants]) => variants[picked[kind]]);
  const phase = (name) => chosen.flatMap((files) => files[name]);
  const url = (file) => new URL(file, indexURL).href;
  // a later file's modules: the name of its list in moduleLists (one list for both variants, boot_plan.py)
  const later = (item) => ({ url: url(item.file), modules: item.modules, into: item.into, unpack: item.unpack });
  return {
    picked,
    options: Object.fromEntries(phase("start").map((item) => [item.option, url(item.file)])),
    normal: phase("normal").map(({ name, file, sha256 }) => ({ name, url: url(file), sha256 })),
    restore: phase("restore").map(url),
    later: phase("later").map(later),
    restored: phase("restored").map(later),
    moduleLists,
  };
}
