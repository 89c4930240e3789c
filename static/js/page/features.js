// Optional parts of a lesson page (quizzes, exercises, widgets) are separate modules,
// loaded only when the page has them. Each exports init({runtime, lesson, root, cells, cellIds}),
// cellIds being the page's cell ids in page order (from the build).
const FEATURES = [
  // [selector that marks the feature in the page, module URL relative to this file]
];

/** Register a feature module for pages that contain `selector`. */
export function registerFeature(selector, moduleURL) {
  FEATURES.push([selector, moduleURL]);
}

/** Load and start every feature present in `root`; a failing feature never breaks the others. */
export async function initFeatures(context) {
  const started = FEATURES.filter(([selector]) => context.root.querySelector(selector)).map(async ([selector, url]) => {
    try {
      const module = await import(new URL(url, import.meta.url).href);
      await module.init(context);
    } catch (err) {
      console.error(`could not start ${url} (${selector}):`, err);
    }
  });
  await Promise.all(started);
}
