"""Wheels installed without Python (static/js/worker/install.js): matplotlib and every package it depends on are
unpacked by JavaScript, on a started interpreter and on a restored one, into exactly the files, installer
records, data files and loaded libraries that Pyodide's own unpack_buffer gives the same wheels.
Real Chromium, real Pyodide."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from browser import RUN_TIMEOUT_MS
from booting import boot, boot_normally
from pages import Cell, open_lesson

pytestmark = pytest.mark.browser

# Python's own unpack refuses from now on: every install that follows must unpack without it.
REFUSE = """
import pyodide._package_loader as package_loader
python_unpack = package_loader.unpack_buffer
def refuse(*args, **kwargs):
    raise RuntimeError("Python's unpack_buffer was used")
package_loader.unpack_buffer = refuse
print("refusing")
"""

# The same wheels again, unpacked by Python into a folder of their own, file by file against site-packages.
COMPARE = """
import matplotlib, fontTools, PIL, kiwisolver, contourpy, dateutil, pytz, cycler, six, packaging, pyparsing
import matplotlib.pyplot as plt, matplotlib.ft2font
package_loader.unpack_buffer = python_unpack
import os
import pyodide_js
from js import XMLHttpRequest, Object
site = "/lib/python3.12/site-packages/"
data_file = os.path.exists("/share/man/man1/ttx.1")  # fonttools' manual page (install_datafiles), before Python's copy
loaded_libs = set(Object.keys(pyodide_js._module.LDSO.loadedLibsByName))
lock = pyodide_js._api.lockfile_packages
files = libs = 0
for name in ["matplotlib", "fonttools", "pillow", "kiwisolver", "contourpy", "python-dateutil", "pytz", "cycler",
             "six", "packaging", "pyparsing", "matplotlib-pyodide"]:
    package = getattr(lock, name)  # keyed by canonical name; loadedPackages by the package's own ("Pillow")
    assert package.name in pyodide_js.loadedPackages.object_keys(), name
    file_name = package.file_name
    request = XMLHttpRequest.new()
    request.open("GET", pyodide_js._api.config.indexURL + file_name, False)
    request.responseType = "arraybuffer"
    request.send()
    ref = "/tmp/reference/" + name + "/"
    dynlibs = python_unpack(request.response, filename=file_name, extract_dir=ref, calculate_dynlibs=True,
                            installer="pyodide.loadPackage", source="pyodide")
    for folder, _, names in os.walk(ref):
        for each in names:
            path = os.path.join(folder, each)
            if path.endswith("matplotlib/fontlist.json"):
                continue  # the build's font cache took its place (worker.js, prepareMatplotlib)
            with open(path, "rb") as theirs, open(site + path[len(ref):], "rb") as ours:
                assert theirs.read() == ours.read(), path
            files += 1
    for lib in dynlibs:
        assert site + lib[len(ref):] in loaded_libs, lib
        libs += 1
print("same", files > 1000, libs >= 15, data_file)
"""


def test_matplotlib_and_its_dependencies_unpack_without_python_as_python_would(boot_context, site_url):
    how, context = boot_context
    page = open_lesson(context, site_url)
    assert boot(page)["from"] == how
    expect(Cell(page, "setup").run(REFUSE)).to_contain_text("refusing")
    # The idle preload, or else this run's imports, install the packages; either way without Python's unpack.
    out = Cell(page, "scores").run(COMPARE)
    expect(out).to_contain_text("same True True True", timeout=RUN_TIMEOUT_MS)


# numpy's wheel, as the page's lock names it, unpacked again by Python into a folder of its own and compared
# with what the boot left in site-packages, file by file, and its libraries with those loaded.
COMPARE_NUMPY = """
import os
import pyodide_js
import pyodide._package_loader as package_loader
from js import XMLHttpRequest, Object
site = "/lib/python3.12/site-packages/"
file_name = pyodide_js._api.lockfile_packages.numpy.file_name
request = XMLHttpRequest.new()
request.open("GET", pyodide_js._api.config.indexURL + file_name, False)
request.responseType = "arraybuffer"
request.send()
ref = "/tmp/reference/numpy/"
dynlibs = package_loader.unpack_buffer(request.response, filename=file_name, extract_dir=ref,
                                       calculate_dynlibs=True, installer="pyodide.loadPackage", source="pyodide")
loaded_libs = set(Object.keys(pyodide_js._module.LDSO.loadedLibsByName))
files = 0
for folder, _, names in os.walk(ref):
    for each in names:
        path = os.path.join(folder, each)
        with open(path, "rb") as theirs, open(site + path[len(ref):], "rb") as ours:
            assert theirs.read() == ours.read(), path
        files += 1
assert all(site + lib[len(ref):] in loaded_libs for lib in dynlibs), dynlibs
print("numpy same", files > 200, len(dynlibs) >= 15)
"""


def test_a_normal_boot_unpacks_numpy_without_python_as_python_would(fresh_context, site_url):
    # The boot package's wheel is unpacked by JavaScript as bootstrap ends (loadPyodideUnpacking), before
    # Pyodide's install goes on: the worker's marks name it, before Python is up, and the files are Python's.
    boot_normally(fresh_context, site_url)
    page = open_lesson(fresh_context, site_url)
    assert boot(page)["from"] == "start"
    steps = [name for name, _ in page.evaluate("lessonPage.runtime.timings")]
    unpacked = [name for name in steps if name.startswith("numpy-") and name.endswith(".whl unpacked")]
    assert len(unpacked) == 1 and steps.index(unpacked[0]) < steps.index("python up"), steps
    expect(Cell(page, "setup").run(COMPARE_NUMPY)).to_contain_text("numpy same True True", timeout=RUN_TIMEOUT_MS)
