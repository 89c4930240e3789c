// A file's download in a status line, in the same words wherever the page shows one: a cell's run that needs a
// live model's files (cells.js) and a live panel (widgets/live-download.js). Nothing come yet: the file is named;
// then its megabytes so far, and of how many when the size is known.

/** "Getting NAME…" before any byte has come, then "Downloading NAME: 12.3 of 96.6 MB…". */
export function downloadLine(name, loaded, total) {
  if (!loaded) return `Getting ${name}…`;
  const mb = (bytes) => (bytes / 1e6).toFixed(1);
  return `Downloading ${name}: ${mb(loaded)}${total ? ` of ${mb(total)}` : ""} MB…`;
}
