// The reader's work as a file (static/js/page/workfile.js): what "Save my work" writes, what "Open saved
// work…" accepts, and the one sentence for what it refuses.
import assert from "node:assert/strict";
import { test } from "node:test";

import { fingerprint } from "../../static/js/page/storage.js";
import {
  FORMAT, VERSION, WorkFileError, notebookEdits, readWork, splitItemName, workFile,
} from "../../static/js/page/workfile.js";

const LESSON = "attention";
const ORIGINALS = { "cell:scores": "scores = Q @ K.T\nprint(scores)\n", "cell:softmax": "w = softmax(scores)", "exercise:params": "def params():\n    ..." };
const originals = (kind, id) => ORIGINALS[`${kind}:${id}`];
const nothingStored = () => null;
const open = (data, { stored = nothingStored } = {}) =>
  readWork(typeof data === "string" ? data : JSON.stringify(data), { lesson: LESSON, originals, stored });

const cellEdit = { code: "print('mine')", base: "abc", from: "def" };
const exercise = { code: "def params():\n    return 4", attempts: 2, solved: false, hints: 1, base: "123" };
const answer = { version: "v9", chosen: [1], correct: true };
const saved = (items, extra = {}) => ({ format: FORMAT, version: VERSION, lesson: LESSON, saved: "2025-01-01T00:00:00.000Z", items, ...extra });

/** `fn` throws a WorkFileError whose sentence matches `pattern` and says nothing changed. */
function refuses(fn, pattern) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof WorkFileError, `not a WorkFileError: ${err}`);
    assert.match(err.message, pattern);
    assert.match(err.message, /nothing was changed/i);
    return true;
  });
}

test("the work file names its format, version, lesson and date, and holds every item, checked", () => {
  const file = workFile(LESSON, [
    { kind: "cell", id: "scores", value: cellEdit }, { kind: "quiz", id: "quiz-rows", value: answer },
    { kind: "cell", id: "junk", value: "an older page's" }, { kind: "widget", id: "w", value: {} },
  ], new Date(Date.UTC(2025, 0, 2, 3, 4, 5)));
  assert.deepEqual(file, {
    format: "attention-lesson-work", version: 1, lesson: LESSON, saved: "2025-01-02T03:04:05.000Z",
    items: { "cell:scores": { code: "print('mine')", base: "abc" }, "quiz:quiz-rows": answer },
  });
});

test("a saved file opens as the items storage keeps, checked, without tabsync's `from`", () => {
  const items = open(saved({ "cell:scores": cellEdit, "exercise:params": exercise, "quiz:quiz-rows": answer }));
  assert.deepEqual(items, {
    "cell:scores": { code: "print('mine')", base: "abc" },
    "exercise:params": exercise,
    "quiz:quiz-rows": answer,
  });
});

test("what a round trip through the file gives back is what was saved", () => {
  const entries = [{ kind: "cell", id: "a:b", value: { code: "x", base: "1" } }, { kind: "exercise", id: "params", value: exercise }];
  const text = JSON.stringify(workFile(LESSON, entries, new Date()));
  assert.deepEqual(open(text), { "cell:a:b": { code: "x", base: "1" }, "exercise:params": exercise });
});

test("optional fields that are wrong fall back, as storage.validated does", () => {
  const items = open(saved({ "exercise:params": { code: "x", attempts: -1, solved: "yes", hints: 1.5, base: 7 } }));
  assert.deepEqual(items["exercise:params"], { code: "x", attempts: 0, solved: false, hints: 0, base: null });
});

test("anything else opens nothing, with one sentence", () => {
  refuses(() => open("not json at all"), /not JSON/);
  refuses(() => open([1, 2]), /neither work saved from this page nor a notebook/);
  refuses(() => open({ format: "something-else", version: 1 }), /neither work saved/);
  refuses(() => open(saved({ "cell:scores": cellEdit }, { version: 2 })), /another version of the page/);
  refuses(() => open(saved({ "cell:scores": cellEdit }, { lesson: "causal-mask" })), /another lesson \(“causal-mask”\)/);
  refuses(() => open(saved([cellEdit])), /damaged/);
  refuses(() => open(saved({ "cell:scores": { code: 5 } })), /item “cell:scores”/);
  refuses(() => open(saved({ "quiz:q": { version: "v", chosen: "1" } })), /item “quiz:q”/);
  refuses(() => open(saved({ "widget:w": { code: "x" } })), /item “widget:w”/);
  refuses(() => open(saved({ "cell:": { code: "x" } })), /damaged/);
  refuses(() => open(saved({})), /holds no work/);
});

test("one bad item refuses the whole file", () => {
  refuses(() => open(saved({ "cell:scores": cellEdit, "exercise:params": "junk" })), /item “exercise:params”/);
});

test("item names split at their first colon, and only into kinds the page keeps", () => {
  assert.deepEqual(splitItemName("cell:a:b"), ["cell", "a:b"]);
  assert.equal(splitItemName("cell"), null);
  assert.equal(splitItemName("toString:x"), null);
  assert.equal(splitItemName("__proto__:x"), null);
});

/** A notebook as "Download with my edits" makes it (sitebuild/pages/notebook.py, applyEdits in notebook.js). */
function notebook(cells, slug = LESSON) {
  return {
    nbformat: 4, nbformat_minor: 5, metadata: { lesson: { slug, title: "Attention" } },
    cells: [
      { cell_type: "markdown", metadata: {}, source: ["# Attention\n"] },
      { cell_type: "code", metadata: { lesson: { setup: true } }, source: "%pip install numpy", outputs: [] },
      ...cells,
    ],
  };
}
const codeCell = (origin, source) => ({ cell_type: "code", metadata: { lesson: origin }, source, outputs: [], execution_count: null });

test("a notebook gives back the code that differs from the page's, exercises without their %%exercise line", () => {
  const nb = notebook([
    codeCell({ cell: "scores" }, ["scores = Q @ K.T\n", "print(scores)"]), // the lesson's own, split in lines
    codeCell({ cell: "softmax" }, "w = my_softmax(scores)\n\n"),
    codeCell({ exercise: "params" }, "%%exercise params\ndef params():\n    return 4"),
    codeCell({ cell: "gone" }, "not on this page"),
  ]);
  assert.deepEqual(notebookEdits(nb, originals), {
    "cell:softmax": "w = my_softmax(scores)",
    "exercise:params": "def params():\n    return 4",
  });
});

test("carriage returns in a file's code open as \n, and a notebook saved with \r\n has no edit for it", () => {
  const crlf = ORIGINALS["cell:scores"].replaceAll("\n", "\r\n");
  assert.deepEqual(notebookEdits(notebook([codeCell({ cell: "scores" }, crlf)]), originals), {});
  assert.deepEqual(notebookEdits(notebook([codeCell({ exercise: "params" }, "%%exercise params\r\ndef f():\r    return 4")]), originals),
    { "exercise:params": "def f():\n    return 4" });
  assert.equal(open(saved({ "cell:scores": { code: "a\r\nb\rc", base: "x" } }))["cell:scores"].code, "a\nb\nc");
});

test("a notebook's edits open in the shapes cells.js and exercises.js store; an exercise keeps its progress", () => {
  const nb = notebook([codeCell({ cell: "softmax" }, "mine"), codeCell({ exercise: "params" }, "%%exercise params\nanswer")]);
  const stored = (kind, id) => (kind === "exercise" && id === "params" ? { code: "old", attempts: 3, solved: true, hints: 2, base: "x", from: "y" } : null);
  assert.deepEqual(open(nb, { stored }), {
    "cell:softmax": { code: "mine", base: fingerprint(ORIGINALS["cell:softmax"]) },
    "exercise:params": { code: "answer", attempts: 3, solved: true, hints: 2, base: fingerprint(ORIGINALS["exercise:params"]) },
  });
  assert.deepEqual(open(nb)["exercise:params"], { code: "answer", attempts: 0, solved: false, hints: 0, base: fingerprint(ORIGINALS["exercise:params"]) });
});

test("a notebook of another lesson, of elsewhere, damaged, or without edits opens nothing", () => {
  refuses(() => open(notebook([codeCell({ cell: "softmax" }, "mine")], "causal-mask")), /another lesson \(“causal-mask”\)/);
  refuses(() => open({ nbformat: 4, metadata: {}, cells: [] }), /not downloaded from this site/);
  refuses(() => open(notebook([codeCell({ cell: "softmax" }, [1, 2])])), /damaged/);
  refuses(() => open(notebook([codeCell({ cell: "scores" }, "scores = Q @ K.T\nprint(scores)")])), /lesson's own code/);
});
