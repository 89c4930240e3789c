"""Run a reader's cell the way a notebook does, and explain failures in the reader's terms.

The worker calls :func:`run_cell` for every press of Run. Cells of one page share one
namespace, the value of a last bare expression is shown (like a notebook), and a
traceback lists only the reader's own frames: Pyodide's and our machinery's frames
mean nothing to a reader and push the real line off the screen.
"""

from __future__ import annotations

import ast
import linecache
import sys
import traceback
from collections.abc import Callable
from typing import Any, NamedTuple

from .limits import MESSAGE_CHARS, OUTPUT_CHARS, clip

#: Cell source files are named like this, so tracebacks say "cell 2, line 3".
CELL_PREFIX = "<cell "

#: The namespace every cell of the page shares, like a notebook kernel's (the worker runs cells in it;
#: lessonpy.models.live looks in it for the reader's own MiniLM forward pass).
NAMESPACE: dict[str, Any] = {"__name__": "__main__"}


class CellResult(NamedTuple):
    """What one run produced, in plain data the worker can post.

    A NamedTuple, not a dataclass: ``dataclasses`` is not imported by anything else on the way to
    the first output, and importing it costs 10-20 ms in the page's worker.
    """

    ok: bool
    value_repr: str | None = None  # repr of a last bare expression, if any
    error: str | None = None  # the reader-facing traceback text
    error_name: str | None = None  # e.g. "NameError"
    missing_name: str | None = None  # the undefined name of a NameError


#: The result of a run that Stop interrupted (or that was stopped before its code started).
STOPPED = CellResult(ok=False, error="Stopped.", error_name="KeyboardInterrupt")


def cell_filename(cell_id: str) -> str:
    """Name a cell's code for tracebacks and linecache."""
    return f"{CELL_PREFIX}{cell_id}>"


def _register_source(filename: str, code: str) -> None:
    # linecache is where traceback looks up source lines; without this a traceback
    # of exec'd code shows no source line at all.
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)


def _split_last_expression(tree: ast.Module) -> tuple[ast.Module, ast.Expression | None]:
    """Split a module into its body and a final bare expression to display."""
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body.pop()
        return tree, ast.Expression(last.value)
    return tree, None


# ---------------------------------------------------------------------------- exceptions, within the limits
# The reader's code can raise an exception whose message (or class name) is 10**8 characters. Formatting it
# (traceback, f-strings) would copy it more than once, and the page would receive all of it: so its text is
# clipped (lessonpy.runtime.limits.clip) before anything else is made of it. The grader and the live panel use these too.


def exception_name(exc: BaseException) -> str:
    """The class name of *exc*, within MESSAGE_CHARS."""
    return clip(type(exc).__name__)


def exception_message(exc: BaseException) -> str:
    """str(*exc*) within MESSAGE_CHARS (str of an exception holding one string is that string: no copy)."""
    try:
        return clip(str(exc))
    except Exception:  # noqa: BLE001 - the reader's own __str__ may raise
        return "<exception str() failed>"


def _oversized(exc: BaseException) -> tuple[str, str] | None:
    """The full class name and message of *exc* when either is over MESSAGE_CHARS, else None."""
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001 - traceback says "<exception str() failed>" for it
        message = ""
    kind = type(exc)
    name = str(kind.__qualname__)
    if kind.__module__ not in ("__main__", "builtins"):  # as traceback names it
        name = f"{kind.__module__}.{name}"
    return (name, message) if max(len(name), len(message)) > MESSAGE_CHARS else None


def exception_lines(exc: BaseException) -> list[str]:
    """traceback.format_exception_only's lines for *exc*; when its message or name is over MESSAGE_CHARS,
    one line made from the clipped ones instead, so the whole of it is never formatted."""
    big = _oversized(exc)
    if big is None:
        return traceback.format_exception_only(type(exc), exc)
    name, message = big
    return [f"{clip(name)}: {clip(message)}\n" if message else f"{clip(name)}\n"]


def format_exception(exc: BaseException) -> str:
    """The whole traceback of *exc* (traceback.format_exception's) within OUTPUT_CHARS; one whose message or
    name is over MESSAGE_CHARS is formatted without the exceptions chained to it, its own text clipped first."""
    if _oversized(exc) is None:
        return clip("".join(traceback.format_exception(exc)), OUTPUT_CHARS)
    return frames_traceback(exc, lambda filename: True)


def frames_traceback(exc: BaseException, keep: Callable[[str], bool]) -> str:
    """The traceback of *exc* through the frames whose file name *keep* accepts, and its error line, within
    OUTPUT_CHARS (the reader's own frames: the page's and the grader's machinery mean nothing to a reader)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if keep(f.filename)]
    lines = ["Traceback (most recent call last):\n"] if frames else []
    lines += traceback.format_list(frames)
    lines += exception_lines(exc)
    return clip("".join(lines), OUTPUT_CHARS)


def format_reader_traceback(exc: BaseException) -> str:
    """Format *exc* keeping only frames from cell code (and the error line itself)."""
    if isinstance(exc, SyntaxError) and (exc.filename or "").startswith(CELL_PREFIX):
        # A syntax error has no frames worth showing; the caret block says it all.
        return "".join(exception_lines(exc))
    return frames_traceback(exc, lambda filename: filename.startswith(CELL_PREFIX))


def _describe_cell_frames(text: str) -> str:
    # Turn 'File "<cell scores>", line 3' into 'Cell "scores", line 3' for readers.
    return text.replace(f'File "{CELL_PREFIX}', 'Cell "').replace('>", line', '", line')


async def run_cell(code: str, cell_id: str, namespace: dict[str, Any], *,
                   finish: Callable[[], None] | None = None,
                   cleanup: Callable[[], None] | None = None) -> CellResult:
    """Compile and run *code* in *namespace*; never raise for the reader's mistakes.

    *finish* runs after the code, whether it succeeded or failed, inside the part that Stop
    interrupts and whose errors are reported (the page renders the cell's figures there);
    *cleanup* runs whatever happened, even after a Stop (the page closes the figures there,
    so a figure interrupted mid-render does not come back with the next run).
    """
    filename = cell_filename(cell_id)
    _register_source(filename, code)
    try:
        try:
            value = await _execute(code, filename, namespace)
            result = CellResult(ok=True, value_repr=None if value is None else _safe_repr(value))
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - any failure of reader code is reported, not raised
            result = _failure(exc)
        if finish is not None:
            finish()
        return result
    except KeyboardInterrupt:
        return STOPPED
    except BaseException as exc:  # noqa: BLE001 - finish() failed on what the reader's code left behind
        return _failure(exc)
    finally:
        if cleanup is not None:
            try:
                cleanup()
            except KeyboardInterrupt:  # a second Stop landed in the cleanup: finish it all the same
                cleanup()
        sys.stdout.flush()
        sys.stderr.flush()


async def _execute(code: str, filename: str, namespace: dict[str, Any]) -> Any:
    """Run the cell; return the value of a last bare expression (None if there is none)."""
    tree = ast.parse(code, filename=filename, mode="exec")
    body, last = _split_last_expression(tree)
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT  # so `await asyncio.sleep(1)` works in a cell
    body_code = compile(body, filename, "exec", flags=flags)
    last_code = compile(last, filename, "eval", flags=flags) if last else None
    result = eval(body_code, namespace)  # noqa: S307 - running the reader's code is the point
    if result is not None and hasattr(result, "__await__"):
        await result
    value = None
    if last_code is not None:
        value = eval(last_code, namespace)  # noqa: S307
        if value is not None and hasattr(value, "__await__"):
            value = await value
    namespace["_"] = value if value is not None else namespace.get("_")
    return value


def _failure(exc: BaseException) -> CellResult:
    """The reader-facing result of an exception raised by the reader's code."""
    if isinstance(exc, SystemExit):
        # sys.exit() in a cell must not kill the interpreter the whole page shares.
        return CellResult(ok=False, error=f"SystemExit: {short_repr(exc.code)} (the cell stopped; Python is still running)",
                          error_name="SystemExit")
    missing = exc.name if isinstance(exc, NameError) and isinstance(exc.name, str) else None
    text = _describe_cell_frames(format_reader_traceback(exc))
    return CellResult(ok=False, error=text, error_name=exception_name(exc),
                      missing_name=None if missing is None else clip(missing))


#: What input() says in the page, where there is no keyboard prompt to read from.
INPUT_MESSAGE = ("input() is not supported in this page: there is no keyboard prompt here. "
                 "Set the value in the code instead, e.g. name = 'Ada'")


def no_input(prompt: object = "") -> str:
    """Stands in for the builtin input() in the page (Pyodide's would fail with "OSError: [Errno 29]")."""
    raise RuntimeError(INPUT_MESSAGE)


def _safe_repr(value: Any, limit: int = 20_000) -> str:
    """repr() that survives broken __repr__ methods and huge objects."""
    try:
        text = repr(value)
    except Exception as exc:  # noqa: BLE001
        return f"<repr failed: {exception_name(exc)}: {exception_message(exc)}>"
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


class ReaderCells:
    """The reader's cells as code outside the runtime may see them: a function a cell defined, and what the
    reader's code raised. The runtime passes one in (``pyodide_glue.call`` gives it to a function with a
    ``reader`` parameter, the live panel's): the models that call the reader's code import no runtime."""

    def __init__(self, namespace: dict[str, Any] = NAMESPACE) -> None:
        self.namespace = namespace

    def defined(self, name: str, cell: str) -> Any:
        """The function *name* if the cell *cell* defined it (a later cell may have replaced it), else None."""
        found = self.namespace.get(name)
        code = getattr(found, "__code__", None)
        return found if code is not None and code.co_filename == cell_filename(cell) else None

    def raised(self, exc: BaseException) -> tuple[str, int | None, str]:
        """What *exc* is, within MESSAGE_CHARS: its class name, the line of the reader's cell it came from
        (None when it came from none), its message."""
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(CELL_PREFIX)]
        return exception_name(exc), frames[-1].lineno if frames else None, exception_message(exc)


def short_repr(value: Any) -> str:
    """repr(*value*) within MESSAGE_CHARS (sys.exit's code in a message); a long string is clipped before its
    repr is made, so it is not copied whole."""
    return clip(repr(clip(value)) if isinstance(value, str) else _safe_repr(value))


def defined_names(code: str) -> set[str]:
    """Names a cell binds at top level (assignments, imports, defs), for dependency hints."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.add((alias.asname or alias.name).split(".")[0])
    return names
