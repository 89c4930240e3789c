"""A boot wheel split for the snapshot's restore (sitebuild/startup/wheel_split.py), the restore spec's files
(sitebuild/startup/snapshot.py) and the finder of a package's rest (lessonpy.runtime.stdlib_rest.FolderRest), in CPython:
a small wheel of source files and a stand-in library stands in for numpy's."""

from __future__ import annotations

import importlib
import io
import json
import sys
import zipfile

import pytest

from lessonpy.runtime import stdlib_rest
from sitebuild import compress
from sitebuild.startup import archives, wheel_split
from sitebuild.startup.boot_plan import MODULES_FILE, boot_plan, files_of, page_plan, write_modules
from sitebuild.startup.pyodide_assets import split_wheels

# A package in memory after a restore (fakepkg, fakepkg.core with its library), and in the rest a
# subpackage and a module the image did not import, a data file and the metadata.
WHEEL = {
    "fakepkg/__init__.py": "VALUE = 'init'\n",
    "fakepkg/core/__init__.py": "",
    "fakepkg/core/_lib.cpython-312-wasm32-emscripten.so": b"\0asm library",
    "fakepkg/_top.cpython-312-wasm32-emscripten.so": b"\0asm another",
    "fakepkg/later.py": "VALUE = 'later'\n",
    "fakepkg/poly/__init__.py": "from fakepkg.poly.inner import VALUE\n",
    "fakepkg/poly/inner.py": "VALUE = 'poly'\n",
    "fakepkg/core/data.txt": "data\n",
    "fakepkg-1.0.dist-info/METADATA": "Name: fakepkg\nVersion: 1.0\n",
    "fakepkg-1.0.dist-info/RECORD": "",
}
WHEEL_NAME = "fakepkg-1.0-cp312-cp312-pyodide_2024_0_wasm32.whl"


def write_wheel(path, files=WHEEL):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("fakepkg/", "")  # a folder entry: no part holds it
        for name, data in files.items():
            out.writestr(name, data)
    return path


def entries(path):
    with zipfile.ZipFile(path) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def test_every_file_of_the_wheel_is_in_exactly_one_part_the_libraries_in_libs(tmp_path):
    parts = wheel_split.split_cached(write_wheel(tmp_path / WHEEL_NAME), "0" * 64, tmp_path / "cache")
    libs, rest = entries(parts["libs"]), entries(parts["rest"])
    assert set(libs) == {name for name in WHEEL if name.endswith(".so")}
    assert set(libs) | set(rest) == set(WHEEL) and not set(libs) & set(rest)
    assert {**libs, **rest} == {name: data.encode() if isinstance(data, str) else data for name, data in WHEEL.items()}
    assert parts["libs"].name == "fakepkg-1.0-cp312-cp312-pyodide_2024_0_wasm32.libs.zip"
    assert wheel_split.rest_modules(parts["rest"]) == ["fakepkg", "fakepkg.core", "fakepkg.later", "fakepkg.poly",
                                                       "fakepkg.poly.inner"]


def test_the_split_is_made_once_per_content(tmp_path):
    wheel = write_wheel(tmp_path / WHEEL_NAME)
    first = wheel_split.split_cached(wheel, "1" * 64, tmp_path / "cache")
    stamp = first["rest"].stat().st_mtime_ns
    assert wheel_split.split_cached(wheel, "1" * 64, tmp_path / "cache") == first
    assert first["rest"].stat().st_mtime_ns == stamp
    assert wheel_split.split_cached(wheel, "2" * 64, tmp_path / "cache")["rest"] != first["rest"]


def fake_dist(tmp_path, with_library=True):
    """A Pyodide folder as assemble() leaves it: a lock naming the boot wheel, its hashes beside it."""
    from sitebuild.startup.pyodide_assets import LOCK_NAME, assemble
    from sitebuild.files import sha256_file

    files = dict(WHEEL) if with_library else {k: v for k, v in WHEEL.items() if not k.endswith(".so")}
    src = tmp_path / "src"
    src.mkdir()
    wheel = write_wheel(src / WHEEL_NAME, files)
    lock = src / LOCK_NAME
    lock.write_text(json.dumps({"packages": {"fakepkg": {"name": "fakepkg", "file_name": WHEEL_NAME, "depends": [],
                                                         "sha256": "d" * 64}}}))
    std = src / "python_stdlib.zip"
    with zipfile.ZipFile(std, "w") as out:
        out.writestr("os.py", "")
    stored = src / "stored-lock.json"
    stored.write_text(json.dumps({"packages": {"fakepkg": {"name": "fakepkg", "file_name": f"stored/{WHEEL_NAME}",
                                                           "depends": [], "sha256": "5" * 64}}}))
    named = {WHEEL_NAME: wheel, f"stored/{WHEEL_NAME}": wheel, LOCK_NAME: lock, f"stored/{LOCK_NAME}": stored,
             "python_stdlib.zip": std, "stored/python_stdlib.zip": std}
    return assemble(named, {name: sha256_file(path) for name, path in named.items()}, tmp_path / "cache", lambda *_: None)


def test_the_distribution_gets_both_parts_in_both_variants_and_keeps_the_wheel(tmp_path):
    whole = fake_dist(tmp_path)
    dist = split_wheels(whole, ["fakepkg"], tmp_path / "cache", lambda *_: None)
    stem = WHEEL_NAME.removesuffix(".whl")
    for name in (WHEEL_NAME, f"{stem}.libs.zip", f"{stem}.rest.zip", f"stored/{stem}.libs.zip", f"stored/{stem}.rest.zip"):
        assert (dist / name).is_file(), name
    assert compress.is_stored_archive(dist / f"stored/{stem}.libs.zip")
    assert archives.unpacked(dist / f"{stem}.rest.zip") == archives.unpacked(dist / f"stored/{stem}.rest.zip")
    plan = boot_plan(dist, ["fakepkg"], None, restore=True)
    stdlib, wheels = plan["kinds"]["stdlib"], plan["kinds"]["wheels"]
    # both parts go with the standard library's variant (zips, like it): the libraries for a restore, the
    # rest after its first output, unpacked into site-packages; the service worker keeps them all
    assert {variant: files["restore"] for variant, files in stdlib.items()} == {
        "deflated": [f"{stem}.libs.zip"], "stored": [f"stored/{stem}.libs.zip"]}
    modules = ["fakepkg", "fakepkg.core", "fakepkg.later", "fakepkg.poly", "fakepkg.poly.inner"]
    assert stdlib["stored"]["restored"] == [{"file": f"stored/{stem}.rest.zip", "modules": f"{stem}.rest.zip",
                                             "into": "/lib/python3.12/site-packages/", "unpack": True}]
    assert plan["modules"] == {f"{stem}.rest.zip": modules}  # one list for both variants
    # a page carries the plan without the lists, which are a file of the Pyodide folder its worker reads
    page = page_plan(plan)
    assert "modules" not in page and page["modulesFile"] == MODULES_FILE and page["kinds"] == plan["kinds"]
    assert json.loads(write_modules(plan, tmp_path).read_text()) == plan["modules"]
    assert files_of(stdlib["stored"]) == ["stored/python_stdlib.zip", f"stored/{stem}.libs.zip", f"stored/{stem}.rest.zip"]
    assert wheels["deflated"]["restore"] == [] and stdlib["deflated"]["later"] == []  # no standard library rest here
    # without a snapshot there is nothing to restore, and nothing of it to fetch or keep
    plain = boot_plan(dist, ["fakepkg"], None, restore=False)["kinds"]["stdlib"]["stored"]
    assert files_of(plain) == ["stored/python_stdlib.zip"]


def test_the_page_starts_the_boot_wheels_download_as_each_lock_names_them(tmp_path):
    # the worker downloads them while Python boots (worker.js), checked against the lock's sha256 (downloads.js)
    dist = split_wheels(fake_dist(tmp_path), ["fakepkg"], tmp_path / "cache", lambda *_: None)
    wheels = boot_plan(dist, ["fakepkg"], None, restore=True)["kinds"]["wheels"]
    assert {variant: files["normal"] for variant, files in wheels.items()} == {
        "deflated": [{"file": WHEEL_NAME, "name": "fakepkg", "sha256": "d" * 64}],
        "stored": [{"file": f"stored/{WHEEL_NAME}", "name": "fakepkg", "sha256": "5" * 64}]}
    assert [item["file"] for item in wheels["stored"]["start"]] == ["stored/pyodide-lock.json"]


def test_a_wheel_without_libraries_is_not_split_and_a_restore_reads_the_whole_wheels(tmp_path):
    whole = fake_dist(tmp_path, with_library=False)
    dist = split_wheels(whole, ["fakepkg"], tmp_path / "cache", lambda *_: None)
    assert not list(dist.glob("*.libs.zip"))
    kinds = boot_plan(dist, ["fakepkg"], None, restore=True)["kinds"]
    assert {variant: files["restore"] for variant, files in kinds["wheels"].items()} == {
        "deflated": [WHEEL_NAME], "stored": [f"stored/{WHEEL_NAME}"]}  # with the lock's variant
    assert all(not files["restore"] and not files["restored"] for files in kinds["stdlib"].values())


# --- the finder of a package's rest -----------------------------------------------------------------------


@pytest.fixture()
def restored_package(tmp_path, monkeypatch):
    """fakepkg as a restore leaves it: imported (its package and core), only the libraries on disk, and
    FolderRest serving the rest into tmp/site-packages; yields the URLs fetched."""
    site = tmp_path / "site-packages"
    parts = wheel_split.split_cached(write_wheel(tmp_path / WHEEL_NAME), "3" * 64, tmp_path / "cache")
    with zipfile.ZipFile(parts["libs"]) as libs:
        libs.extractall(site)
    monkeypatch.setattr(sys, "path", [str(site), *sys.path])
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    # what the image holds: the package and its core in memory, from files the page no longer has
    with zipfile.ZipFile(parts["rest"]) as rest:
        (site / "fakepkg" / "core").mkdir(parents=True, exist_ok=True)
        for name in ("fakepkg/__init__.py", "fakepkg/core/__init__.py"):
            (site / name).write_bytes(rest.read(name))
        import fakepkg.core  # noqa: F401
        for name in ("fakepkg/__init__.py", "fakepkg/core/__init__.py"):
            (site / name).unlink()
    importlib.invalidate_caches()
    fetched = []

    def fetch(url):
        fetched.append(url)
        return parts["rest"].read_bytes()

    stdlib_rest.install("https://example.invalid/stdlib-rest.zip", ["restonly"], fetch)
    stdlib_rest.add_folder("https://example.invalid/fakepkg.rest.zip", wheel_split.rest_modules(parts["rest"]), str(site),
                           fetch)
    yield {"fetched": fetched, "site": site, "rest": parts["rest"]}
    for name in [n for n in sys.modules if n.split(".")[0] == "fakepkg"]:
        del sys.modules[name]
    importlib.invalidate_caches()


def test_a_module_of_the_rest_downloads_it_once_and_imports(restored_package):
    import fakepkg.poly

    assert fakepkg.poly.VALUE == "poly"
    assert restored_package["fetched"] == ["https://example.invalid/fakepkg.rest.zip"]
    import fakepkg.later  # unpacked with the rest: no second download

    assert fakepkg.later.VALUE == "later" and len(restored_package["fetched"]) == 1
    assert (restored_package["site"] / "fakepkg" / "core" / "data.txt").read_text() == "data\n"


def test_files_the_worker_wrote_are_read_without_a_download(restored_package):
    # the worker's idle download unpacks the rest (no Python) after the path finders cached their folders
    with pytest.raises(ImportError):
        importlib.import_module("fakepkg.nothere")  # not the rest's: no download, the usual error
    assert restored_package["fetched"] == []
    with zipfile.ZipFile(io.BytesIO(restored_package["rest"].read_bytes())) as rest:
        rest.extractall(restored_package["site"])
    import fakepkg.poly.inner

    assert fakepkg.poly.inner.VALUE == "poly" and restored_package["fetched"] == []


def test_a_failed_download_says_what_is_missing_and_the_next_import_tries_again(restored_package):
    finder = sys.meta_path[-1]
    rest = finder.folders[0]
    good = rest.fetch

    def fail():
        raise ImportError("the rest of fakepkg's files could not be downloaded (x): HTTP 503")

    rest.fetch = fail
    with pytest.raises(ImportError, match="fakepkg's files could not be downloaded"):
        import fakepkg.later  # noqa: F401
    rest.fetch = good
    import fakepkg.later

    assert fakepkg.later.VALUE == "later"


def test_the_standard_librarys_rest_is_served_by_the_same_finder(restored_package):
    assert sum(isinstance(f, stdlib_rest.RestFinder) for f in sys.meta_path) == 1
    assert sys.meta_path[-1].modules == frozenset({"restonly"})


def test_messages_name_the_archive():
    assert stdlib_rest.what("https://x/pyodide/k/stored/python_stdlib_rest.zip") == "the rest of Python's standard library"
    assert stdlib_rest.what("https://x/numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.rest.zip") == "the rest of numpy's files"
