// A failed Python call shows the reader its traceback's last line, without the exception's module path.
import { test } from "node:test";
import assert from "node:assert/strict";
import { pythonErrorName, pythonMessage } from "../../static/js/page/widgets/common.js";

const traceback = (last) => new Error(`Traceback (most recent call last):\n  File "/lib/python3.12/site-packages/x.py", line 3, in f\n    raise E\n${last}\n`);

test("the last line of a traceback, class named without its module", () => {
  assert.equal(pythonMessage(traceback("lessonpy.models.live.ForwardError: your forward raised KeyError: 'x'")),
    "ForwardError: your forward raised KeyError: 'x'");
  assert.equal(pythonMessage(traceback("ValueError: type a sentence first")), "ValueError: type a sentence first");
});

test("a message that is not a traceback stays as it is", () => {
  assert.equal(pythonMessage(new Error("the worker stopped")), "the worker stopped");
  assert.equal(pythonMessage("a.b: c"), "a.b: c");
});

test("the class of what Python raised, without its module; none for a failure that is no traceback", () => {
  assert.equal(pythonErrorName(traceback("lessonpy.models.realheads.DataMissing: could not download minilm.npz from https://x/: HTTP 404")),
    "DataMissing");
  assert.equal(pythonErrorName(traceback("KeyboardInterrupt")), "KeyboardInterrupt");
  assert.equal(pythonErrorName(new Error("DataMissing: a message from the page")), null);
  assert.equal(pythonErrorName(undefined), null);
});
