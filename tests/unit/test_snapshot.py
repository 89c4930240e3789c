"""sitebuild.startup.snapshot: the memory snapshot is named after exactly what it was made from, and a build
that cannot make one says so in one line and ships pages that start Python normally."""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from pathlib import Path

import pytest

from sitebuild import node
from sitebuild.startup import snapshot, snapshot_image
from sitebuild.project import ROOT
from sitebuild.startup.pyodide_assets import LOCK_NAME, RUNTIME_FILES, SITE_PACKAGES_PAGE_PREFIX as SITE_PACKAGES, STDLIB_NAME

WHEEL = "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl"


def fake_dist(folder: Path) -> Path:
    """A Pyodide folder with the right names and wrong bytes (Node cannot make a snapshot from it): the
    runtime, and each archive deflated and in stored/, with a lock of its own (sitebuild.startup.archives)."""
    (folder / "stored").mkdir(parents=True)
    for name in (*RUNTIME_FILES, STDLIB_NAME, WHEEL, f"stored/{STDLIB_NAME}", f"stored/{WHEEL}"):
        (folder / name).write_bytes(name.encode())
    for prefix in ("", "stored/"):
        lock = {"packages": {"numpy": {"file_name": f"{prefix}{WHEEL}", "depends": [], "sha256": "0"}}}
        (folder / prefix / LOCK_NAME).write_text(json.dumps(lock))
    return folder


@pytest.fixture()
def inputs(tmp_path):
    dist = fake_dist(tmp_path / "dist")
    wheel = tmp_path / "lessonpy-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"lessonpy")
    return dist, wheel


def test_the_key_covers_every_input_and_the_node_that_runs_the_script(inputs, tmp_path, monkeypatch):
    dist, wheel = inputs
    read = []
    real_sha256_file = snapshot.sha256_file
    monkeypatch.setattr(snapshot, "sha256_file", lambda path: read.append(path) or real_sha256_file(path))
    key = snapshot.snapshot_key(dist, ["numpy"], wheel, "v20.0.0")
    # Pyodide's files (the runtime, both variants of every archive: the page's worker may restore the
    # snapshot with either) by the folder's content name, which hashes them all: none is read again.
    assert read == [wheel, snapshot.SCRIPT, snapshot.WARM_UP, snapshot.MAKER, snapshot.IMAGE, snapshot.ENV, snapshot.SEAMS]
    assert key == snapshot.snapshot_key(dist, ["numpy"], wheel, "v20.0.0")
    assert snapshot.snapshot_key(dist, ["numpy"], wheel, "v22.0.0") != key
    other_dist = dist.rename(dist.with_name("0.27.7-0123456789abcdef"))  # another content name
    assert snapshot.snapshot_key(other_dist, ["numpy"], wheel, "v20.0.0") != key
    other_dist.rename(dist)
    assert snapshot.snapshot_key(dist, ["numpy", "micropip"], wheel, "v20.0.0") != key
    wheel.write_bytes(b"lessonpy!")
    assert snapshot.snapshot_key(dist, ["numpy"], wheel, "v20.0.0") != key
    wheel.write_bytes(b"lessonpy")
    monkeypatch.setattr(snapshot, "MAKER", wheel)  # another maker's bytes (what it writes to meta.json)
    assert snapshot.snapshot_key(dist, ["numpy"], wheel, "v20.0.0") != key
    monkeypatch.undo()
    monkeypatch.setattr(snapshot, "SCRIPT", wheel)  # another script's bytes
    assert snapshot.snapshot_key(dist, ["numpy"], wheel, "v20.0.0") != key
    monkeypatch.undo()
    monkeypatch.setattr(snapshot, "IMAGE", wheel)  # another format of the file the pages restore
    assert snapshot.snapshot_key(dist, ["numpy"], wheel, "v20.0.0") != key
    monkeypatch.undo()
    monkeypatch.setattr(snapshot, "ENV", wheel)  # another environment (static/js/shared/python-env.mjs)
    assert snapshot.snapshot_key(dist, ["numpy"], wheel, "v20.0.0") != key
    monkeypatch.undo()
    monkeypatch.setattr(snapshot, "WARM_UP", wheel)  # another warm-up (what the image holds imported)
    assert snapshot.snapshot_key(dist, ["numpy"], wheel, "v20.0.0") != key
    monkeypatch.undo()
    monkeypatch.setattr(snapshot, "SEAMS", wheel)  # other hooks into Pyodide (static/js/shared/pyodide-seams.mjs)
    assert snapshot.snapshot_key(dist, ["numpy"], wheel, "v20.0.0") != key


def test_the_page_and_the_snapshot_run_python_in_one_environment():
    # One definition, which the worker and the script import (the key hashes it); no copy of it elsewhere.
    assert snapshot.ENV.read_text(encoding="utf-8").count("MPLBACKEND") == 1
    for user in (snapshot.SCRIPT, snapshot.ENV.parent.parent / "worker" / "boot.js"):
        text = user.read_text(encoding="utf-8")
        assert 'import { PYTHON_ENV } from "' in text and "PYTHON_ENV }" in text, user
        assert "MPLBACKEND" not in text and "/home/pyodide" not in text, user


def test_without_node_the_build_says_so_and_makes_no_snapshot(inputs, tmp_path, monkeypatch):
    dist, wheel = inputs
    monkeypatch.setattr(node.shutil, "which", lambda name: None)
    log = []
    assert snapshot.make_snapshot(dist, ["numpy"], wheel, tmp_path / "cache", log.append) is None
    assert log == ["snapshot: not made (`node` not found on PATH); the pages start Python without it"]


@pytest.mark.slow
def test_when_node_cannot_make_it_the_build_says_why_and_leaves_nothing_behind(inputs, tmp_path):
    dist, wheel = inputs
    log = []
    assert snapshot.make_snapshot(dist, ["numpy"], wheel, tmp_path / "cache", log.append) is None
    assert re.fullmatch(r"snapshot: not made \(snapshot\.mjs exited with 1: snapshot\.mjs: .+\); "
                        r"the pages start Python without it", log[-1], re.S), log
    assert list((tmp_path / "cache" / "snapshot").iterdir()) == []  # no half-made snapshot to reuse


@pytest.mark.slow
def test_the_built_site_names_its_snapshot_after_its_inputs_and_fetches_it_on_a_first_visit(built_site):
    html = (built_site / "lessons" / "attention" / "index.html").read_text(encoding="utf-8")
    config = json.loads(re.search(r'id="page-config">(.*?)</script>', html, re.S).group(1))
    spec = config["snapshot"]
    key = spec["key"]
    # the readers' site (--snapshot always): a first visit fetches it too (a --snapshot revisit build's says "kept")
    assert spec["url"] == f"../../snapshot/{key}/{snapshot.FILE_NAME}" and spec["fetch"] == "always"
    file = built_site / "snapshot" / key / snapshot.FILE_NAME
    data = file.read_bytes()
    assert len(data) == spec["bytes"] and hashlib.sha256(data).hexdigest() == spec["sha256"]
    # The file is the image without the pages the module's own memory holds (sitebuild/startup/snapshot_image.py)...
    wasm = (built_site / "lessons" / "attention" / config["indexURL"] / "pyodide.asm.wasm").read_bytes()
    base = snapshot_image.initial_memory(wasm, spec["memoryBytes"])
    full = snapshot_image.decode(data, base)
    assert snapshot_image.encode(full, len(full) - spec["memoryBytes"], base) == (data, spec["baseSha256"])
    # ...and without the copies of numpy's libraries that dlopen keeps (snapshot.mjs frees them).
    assert b"\0asm\x01\0\0\0" not in full
    # Nothing of the machine that made it: the program's name is fixed (Node's would be snapshot.mjs's path).
    assert str(ROOT).encode() not in full and str(snapshot.SCRIPT.parent).encode() not in full
    assert b"./this.program\0" in full
    # The key is the hash of this site's own files: a page can only name the snapshot made from them.
    pyodide = built_site / "lessons" / "attention" / config["indexURL"]
    wheel = built_site / config["wheelURL"].removeprefix("../../")
    node = snapshot.subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    assert snapshot.snapshot_key(pyodide.resolve(), ["numpy"], wheel, node) == key
    # What the restore reads first is numpy's libraries; the rest of its files come after the first output.
    # (the boot plan's, with the standard library's variants: zips like it)
    stem = WHEEL.removesuffix(".whl")
    stdlib = config["plan"]["kinds"]["stdlib"]
    assert {variant: files["restore"] for variant, files in stdlib.items()} == {
        "deflated": [f"{stem}.libs.zip"], "stored": [f"stored/{stem}.libs.zip"]}
    rest = {variant: files["restored"] for variant, files in stdlib.items()}
    assert [item["file"] for item in rest["deflated"] + rest["stored"]] == [f"{stem}.rest.zip", f"stored/{stem}.rest.zip"]
    assert rest["deflated"][0]["into"] == SITE_PACKAGES and rest["deflated"][0]["unpack"] is True
    assert {"numpy.polynomial", "numpy.testing", "numpy.lib.recfunctions"} <= set(json.loads((pyodide / config["plan"]["modulesFile"]).read_text())[rest["deflated"][0]["modules"]])
    assert "libraries" not in spec and "rests" not in spec  # the plan says which files, the spec what they hold
    # What the restore needs once numpy's libraries are in is beside the image, not in the page (build.py)
    assert not {"dynlibs", "handles", "loaded"} & set(spec) and spec["details"] == "restore.json"
    details = json.loads((file.parent / spec["details"]).read_text(encoding="utf-8"))
    with zipfile.ZipFile(pyodide / stdlib["deflated"]["restore"][0]) as libs:
        assert sorted(SITE_PACKAGES + name for name in libs.namelist()) == sorted(lib["name"] for lib in details["dynlibs"])
    assert details["loaded"] == {"numpy": "default channel"}
    assert all(lib["name"].endswith(".so") for lib in details["dynlibs"]) and details["handles"]
    sw = (built_site / "sw.js").read_text(encoding="utf-8")
    assert f'"snapshotKey": "{key}"' in sw and f'"snapshot/{key}/{snapshot.FILE_NAME}"' in sw
    assert f'"snapshot/{key}/{spec["details"]}"' in sw  # kept offline with it


def test_the_snapshots_sidecar_follows_the_brotli_rule_not_its_key(tmp_path, monkeypatch):
    # The key names the snapshot's inputs, not sitebuild.compress's rule: a sidecar kept in the snapshot's
    # cache folder outlived a change of the quality. It comes from <cache>/brotli/, named by quality.
    import brotli

    import build
    from sitebuild import compress, startup

    cache = tmp_path / "cache"
    data = b"mostly sparse memory " + bytes(64 * 1024) + b"and a little more"
    folder = cache / "snapshot" / "0123456789abcdef"
    folder.mkdir(parents=True)
    (folder / snapshot.FILE_NAME).write_bytes(data)
    made = snapshot.Snapshot(folder / snapshot.FILE_NAME, folder.name,
                             {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data),
                              "dynlibs": [], "handles": [], "loaded": {}})
    monkeypatch.setattr(startup, "make_snapshot", lambda *args: made)
    for quality, staging in ((11, tmp_path / "one"), (5, tmp_path / "two")):
        monkeypatch.setattr(compress, "QUALITY", quality)  # as if sitebuild/compress.py had changed
        staging.mkdir()
        spec = startup.add_snapshot(build.Options(cache_dir=cache, log=lambda _: None), staging, tmp_path, tmp_path)
        sidecar = compress.sidecar_of(staging / spec["url"])
        assert sidecar.read_bytes() == brotli.compress(data, quality=quality)
