// The download's status line: one wording for a cell's run and a live panel (static/js/page/download-line.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import { downloadLine } from "../../static/js/page/download-line.js";

test("before any byte the file is named, then its megabytes of the whole", () => {
  assert.equal(downloadLine("smollm2-live.bin", 0, 96602336), "Getting smollm2-live.bin…");
  assert.equal(downloadLine("smollm2-live.bin", 0, 0), "Getting smollm2-live.bin…");
  assert.equal(downloadLine("smollm2-live.bin", 12345678, 96602336), "Downloading smollm2-live.bin: 12.3 of 96.6 MB…");
});

test("a size not known says only what has come", () => {
  assert.equal(downloadLine("minilm-live.bin", 5e6, 0), "Downloading minilm-live.bin: 5.0 MB…");
});
