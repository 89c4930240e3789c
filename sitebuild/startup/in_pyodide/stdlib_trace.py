"""Run by stdlib_trace.mjs in Pyodide under Node: records which of the standard library zip's files the
boot, the lesson's Python and the lesson's cells look up (stdlib_trace.mjs says how the build uses it).
The script calls these functions; what they import themselves is in sys.modules, so recorded too."""
import importlib
import sys


class _Recorder:
    """First on sys.meta_path: asks the finders after it, as the import system would, and keeps the entries
    of the zip (under `prefix`) they find."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.found = set()
        self.on = True

    def find_spec(self, fullname, path=None, target=None):
        for finder in sys.meta_path[sys.meta_path.index(self) + 1:]:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find else None
            if spec is not None:
                if self.on and (spec.origin or "").startswith(self.prefix):
                    self.found.add(spec.origin[len(self.prefix):])
                return spec
        return None


_recorder = None


def install_recorder(prefix):
    """Start recording, once Python has booted (the boot's imports are in sys.modules: recorded_entries)."""
    global _recorder
    _recorder = _Recorder(prefix)
    sys.meta_path.insert(0, _recorder)


def import_page_modules():
    """Import every lessonpy module and numpy's that the page imports; return the lessonpy modules skipped
    because they need a package the page does not boot with (matplotlib)."""
    import pkgutil

    import lessonpy
    import numpy, numpy.random, numpy.linalg, numpy.fft  # noqa: E401, F401

    skipped = []
    for module in pkgutil.walk_packages(lessonpy.__path__, "lessonpy."):  # every room's modules
        try:
            importlib.import_module(module.name)
        except ModuleNotFoundError as exc:
            if importlib.util.find_spec(exc.name.partition(".")[0]) is not None:
                raise
            skipped.append(module.name)
    return skipped


def missing_imports(code):
    """The names `code` imports that cannot be found now: packages loaded on demand. Only looked up, not
    imported (the page does not look them up before the cell runs): not recorded."""
    import importlib.util

    from pyodide.code import find_imports

    _recorder.on = False
    try:
        return [name for name in find_imports(code) if importlib.util.find_spec(name) is None]
    finally:
        _recorder.on = True


def recorded_entries():
    """The zip's entries looked up since install_recorder, and those of every module imported before it."""
    prefix = _recorder.prefix
    imported = {m.__spec__.origin[len(prefix):] for m in list(sys.modules.values())
                if getattr(m, "__spec__", None) is not None and (m.__spec__.origin or "").startswith(prefix)}
    return sorted(_recorder.found | imported)
