"""The standard library split in two (sitebuild.startup.stdlib_split) and the page's finder of its rest
(lessonpy.runtime.stdlib_rest), in CPython: small zips of source files stand in for Pyodide's archives."""

from __future__ import annotations

import importlib
import shutil
import sys
import zipfile
from pathlib import Path

import pytest

from lessonpy.runtime import stdlib_rest
from sitebuild.startup.stdlib_split import TraceError, core_entries, module_name, rest_modules, split_archive, trace

REPO = Path(__file__).resolve().parents[2]

# A small "standard library": a top-level module and a package in the core, and in the rest a module
# of that package, top-level modules and a package of its own.
FILES = {
    "corefirst.py": "VALUE = 'core'\n",
    "corepkg/": None,
    "corepkg/__init__.py": "",
    "corepkg/used.py": "VALUE = 'used'\n",
    "corepkg/later.py": "VALUE = 'later'\n",
    "corepkg/py.typed": "",
    "restonly.py": "VALUE = 'rest'\n",
    "restpkg/": None,
    "restpkg/__init__.py": "VALUE = 'restpkg'\n",
    "restpkg/inner.py": "from corepkg import used\nVALUE = 'inner ' + used.VALUE\n",
    "README.txt": "data at the top\n",
}
TRACED = ["corefirst.py", "corepkg/__init__.py", "corepkg/used.py"]


def write_zip(path, files):
    with zipfile.ZipFile(path, "w") as out:
        for name, text in files.items():
            out.writestr(name, "" if text is None else text)


def entries(path):
    with zipfile.ZipFile(path) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def test_module_names_of_entries():
    assert module_name("email/mime/text.pyc") == "email.mime.text"
    assert module_name("email/__init__.pyc") == "email"
    assert module_name("this.py") == "this"
    assert module_name("email/") is None and module_name("pyodide/py.typed") is None


def test_the_core_is_what_was_traced_with_the_folders_and_its_packages_data():
    core = core_entries(list(FILES), TRACED)
    assert core == {*TRACED, "corepkg/", "corepkg/py.typed"}  # no folder of the rest's packages (a namespace)
    assert rest_modules(list(FILES), core) == ["corepkg.later", "restonly", "restpkg", "restpkg.inner"]


def test_a_traced_file_the_archive_does_not_hold_is_an_error():
    with pytest.raises(TraceError, match="notthere.pyc"):
        core_entries(list(FILES), [*TRACED, "notthere.pyc"])


def test_the_two_parts_hold_every_entry_once_and_the_core_folders_in_both(tmp_path):
    write_zip(tmp_path / "whole.zip", FILES)
    core = core_entries(list(FILES), TRACED)
    split_archive(tmp_path / "whole.zip", core, tmp_path / "core.zip", tmp_path / "rest.zip")
    got_core, got_rest = entries(tmp_path / "core.zip"), entries(tmp_path / "rest.zip")
    assert set(got_core) == core
    assert set(got_rest) == set(FILES) - core | {"corepkg/"}
    assert {**got_core, **got_rest} == entries(tmp_path / "whole.zip")
    with zipfile.ZipFile(tmp_path / "rest.zip") as archive:
        assert {info.compress_type for info in archive.infolist()} == {zipfile.ZIP_STORED}


@pytest.fixture()
def split_library(tmp_path, monkeypatch):
    """The small library split and mounted as the page mounts it: the core on sys.path, the rest's bytes
    to be fetched; yields the list of the fetches made. Leaves sys.path, sys.modules and meta_path as they were."""
    write_zip(tmp_path / "whole.zip", FILES)
    core = core_entries(list(FILES), TRACED)
    split_archive(tmp_path / "whole.zip", core, tmp_path / "core.zip", tmp_path / "rest.zip")
    monkeypatch.setattr(stdlib_rest, "CORE", str(tmp_path / "core.zip"))
    monkeypatch.setattr(stdlib_rest, "REST", str(tmp_path / "mounted-rest.zip"))
    monkeypatch.setattr(sys, "path", [str(tmp_path / "core.zip"), *sys.path])
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    fetched = []

    def fetch(url):
        fetched.append(url)
        return (tmp_path / "rest.zip").read_bytes()

    stdlib_rest.install("https://example.invalid/rest.zip", rest_modules(list(FILES), core), fetch)
    yield fetched
    for name in [n for n in sys.modules if n.split(".")[0] in ("corefirst", "corepkg", "restonly", "restpkg")]:
        del sys.modules[name]
    importlib.invalidate_caches()


def test_the_core_imports_without_fetching_the_rest(split_library):
    import corefirst
    import corepkg.used

    assert (corefirst.VALUE, corepkg.used.VALUE) == ("core", "used")
    assert split_library == [] and not stdlib_rest.mounted()


def test_a_package_of_the_rest_imported_first_is_the_rests_not_a_namespace(split_library):
    import restpkg

    assert restpkg.VALUE == "restpkg" and split_library == ["https://example.invalid/rest.zip"]


def test_a_module_of_the_rest_fetches_it_once_and_imports(split_library):
    import restpkg.inner

    assert restpkg.inner.VALUE == "inner used"
    assert split_library == ["https://example.invalid/rest.zip"] and stdlib_rest.mounted()
    import corepkg.later  # a module of a package of the core, in the rest: no second fetch
    import restonly

    assert (corepkg.later.VALUE, restonly.VALUE) == ("later", "rest")
    assert len(split_library) == 1
    assert sys.path.index(stdlib_rest.REST) == sys.path.index(stdlib_rest.CORE) + 1  # right after the core


def test_a_name_the_rest_does_not_hold_fails_as_usual_without_a_fetch(split_library):
    with pytest.raises(ModuleNotFoundError):
        import corepkg.nothere  # noqa: F401
    with pytest.raises(ModuleNotFoundError):
        import nothere_at_all  # noqa: F401
    assert split_library == []


def test_once_the_worker_mounted_the_rest_imports_fetch_nothing(split_library, tmp_path):
    (tmp_path / "mounted-rest.zip").write_bytes((tmp_path / "rest.zip").read_bytes())  # as the worker writes it
    stdlib_rest.mount()
    stdlib_rest.mount()  # a second call (the worker's, after an import's) changes nothing
    import corepkg.later

    assert corepkg.later.VALUE == "later" and split_library == []
    assert sys.path.count(stdlib_rest.REST) == 1


def test_a_failed_download_says_so_and_the_next_import_tries_again(split_library, tmp_path):
    finder = sys.meta_path[-1]
    good = finder.fetch

    def fail():
        raise ImportError("the rest of Python's standard library could not be downloaded (x): HTTP 503")

    finder.fetch = fail
    with pytest.raises(ImportError, match="could not be downloaded"):
        import restonly  # noqa: F401
    assert not stdlib_rest.mounted()
    finder.fetch = good
    import restonly

    assert restonly.VALUE == "rest"


def test_installing_again_replaces_the_finder(split_library):
    stdlib_rest.install("https://example.invalid/other.zip", ["restonly"], lambda url: b"")
    assert sum(isinstance(f, stdlib_rest.RestFinder) for f in sys.meta_path) == 1
    assert sys.meta_path[-1].modules == frozenset({"restonly"})


def test_a_rest_the_worker_wrote_is_read_by_an_import_without_a_download(split_library, tmp_path):
    # the worker's idle download writes the file (no Python) before anything put it on the import path
    (tmp_path / "mounted-rest.zip").write_bytes((tmp_path / "rest.zip").read_bytes())
    assert stdlib_rest.arrived() and not stdlib_rest.mounted()
    import restonly

    assert restonly.VALUE == "rest" and split_library == [] and stdlib_rest.mounted()


# --- the trace, under Node with Pyodide's whole standard library -------------------------------------------

FAILS_CAUGHT = "try:\n    import multiprocessing.synchronize\nexcept ImportError:\n    pass  # no sem_open here\nprint('ok')"


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js not installed")
def test_the_trace_keeps_a_module_whose_import_failed_and_not_one_only_looked_up(built_site, tmp_path):
    # A module found in the zip whose import fails and is caught is looked up again in the page: left to
    # the rest, it would make the finder download the rest before the first output. What a cell imports from
    # the first that needs a package the page does not boot with on is not recorded: that cell and the ones
    # after it still run (the build's run of the cells in page order), with their packages loaded.
    from sitebuild import startup
    from sitebuild.startup.pyodide_assets import prepare_pyodide

    whole = prepare_pyodide(REPO, REPO / ".cache", packages=startup.SITE_PACKAGES, log=lambda _: None)
    wheel = next(built_site.rglob("lessonpy-*.whl"))
    cells = [("caught", FAILS_CAUGHT, False), ("later", "import matplotlib\nimport wave\nprint(wave)", False)]
    report = trace(whole, startup.BOOT_PACKAGES, wheel, cells, tmp_path / "cache", log=lambda _: None)
    assert report["ran"] == ["caught", "later"] and report["failed"] is None
    entries = set(report["entries"])
    assert "multiprocessing/synchronize.pyc" in entries  # looked for, found, failed
    assert "multiprocessing/__init__.pyc" in entries
    assert not {"wave.pyc", "wave.py"} & entries  # imported after the recording stopped
