"""lessonpy.runtime.restored: what the worker resets after restoring Python from the build's snapshot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from lessonpy.runtime import restored

PY = Path(__file__).resolve().parents[2] / "py"
# Zones with daylight saving in July (north), in January (south), none at all, and a half-hour offset.
ZONES = ["UTC", "America/New_York", "Australia/Sydney", "Asia/Kolkata", "Europe/Berlin"]
COMPARE = """
import json, sys, time
from lessonpy.runtime.restored import zone_attributes
print(json.dumps([zone_attributes(), {k: getattr(time, k) for k in ("timezone", "altzone", "daylight", "tzname")}]))
"""


def zip_on_path(archive: Path, files: dict, monkeypatch):
    """Put a zip of `files` ({name: source}, deflated) first on sys.path, with the import caches restored
    after the test; returns write(compression), which lays the same files out anew."""
    def write(compression):
        with zipfile.ZipFile(archive, "w", compression) as out:
            for name, source in files.items():
                out.writestr(name, source)

    write(zipfile.ZIP_DEFLATED)
    monkeypatch.setattr(sys, "path", [str(archive), *sys.path])
    monkeypatch.setattr(sys, "path_importer_cache", dict(sys.path_importer_cache))
    return write


@pytest.mark.parametrize("zone", ZONES)
def test_zone_attributes_are_what_the_time_module_computes_at_import(zone):
    # A fresh CPython in that zone: its time module computed them at import, as the build's did.
    env = {**os.environ, "TZ": zone, "PYTHONPATH": str(PY)}
    out = subprocess.run([sys.executable, "-c", COMPARE], env=env, capture_output=True, text=True, check=True).stdout
    ours, module = json.loads(out)
    assert ours == module


def test_reset_reseeds_both_generators_and_restores_the_zone(monkeypatch):
    np = pytest.importorskip("numpy")
    import random

    random.seed(1)
    np.random.seed(1)
    frozen = (random.random(), np.random.random())
    random.seed(1)
    np.random.seed(1)
    monkeypatch.setattr(time, "timezone", 12345)  # as if frozen from another machine
    monkeypatch.setattr(time, "tzname", ("XXX", "YYY"))
    monkeypatch.setattr(sys, "path", ["", "", *sys.path])
    restored.reset_after_restore()
    assert (random.random(), np.random.random()) != frozen
    assert time.timezone == restored.zone_attributes()["timezone"] != 12345
    assert time.tzname != ("XXX", "YYY")
    assert sys.path[:2] != ["", ""]


def test_reset_rereads_a_zip_on_sys_path_laid_out_anew(tmp_path, monkeypatch):
    # As after a restore with the other archive variant: the same files, stored instead of deflated.
    pytest.importorskip("numpy")
    modules = {f"snapmod_{i}.py": f"VALUE = {i}\n" + "# padding\n" * 50 * i for i in range(3)}
    write = zip_on_path(tmp_path / "lib.zip", modules, monkeypatch)
    for name in modules:
        monkeypatch.delitem(sys.modules, name[:-3], raising=False)
    import snapmod_0  # noqa: F401  (the zip's directory is now cached, with the deflated offsets)

    write(zipfile.ZIP_STORED)
    restored.reset_after_restore()
    import snapmod_2

    assert snapmod_2.VALUE == 2
    for name in modules:
        sys.modules.pop(name[:-3], None)


def test_invalidation_reads_each_zip_once_and_gives_every_importer_of_it_the_new_layout(tmp_path, monkeypatch):
    # One zipimporter per package imported from a zip (the standard library's: 16 once numpy is imported).
    import zipimport

    archive = tmp_path / "pkgs.zip"
    files = {"snappkg/__init__.py": "", "snappkg/sub/__init__.py": "", "snappkg/sub/leaf.py": "LEAF = 1\n" + "# pad\n" * 40}
    write = zip_on_path(archive, files, monkeypatch)
    import snappkg.sub.leaf

    importers = [f for f in sys.path_importer_cache.values() if isinstance(f, zipimport.zipimporter) and f.archive == str(archive)]
    assert len(importers) >= 2  # the zip's own and its packages'
    write(zipfile.ZIP_STORED)
    reads = []
    read_directory = zipimport._read_directory
    monkeypatch.setattr(zipimport, "_read_directory", lambda path: reads.append(path) or read_directory(path))
    restored.invalidate_caches()

    # each zip read once (zips other tests of this process left on the path are read too, once each)
    assert reads.count(str(archive)) == 1 and len(reads) == len(set(reads))
    assert all(f._files is importers[0]._files for f in importers)
    assert "invalidate_caches" not in vars(importers[0])  # the class's own again
    assert snappkg.sub.leaf.__loader__.get_source("snappkg.sub.leaf") == files["snappkg/sub/leaf.py"]  # new offsets
    for name in ("snappkg.sub.leaf", "snappkg.sub", "snappkg"):
        sys.modules.pop(name, None)
