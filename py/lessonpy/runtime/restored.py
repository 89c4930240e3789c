"""What the page's worker resets after restoring Python from the build's memory snapshot.

The snapshot (sitebuild/startup/snapshot.mjs) is the interpreter's memory as it was on the build
machine, so whatever Python computed once and kept is the build's, not this reader's:

* reseeded from the browser's entropy (os.urandom reads crypto.getRandomValues live): the
  ``random`` module's generator and numpy's global one (``np.random.random`` and friends).
  ``numpy.random.default_rng()`` and ``secrets`` draw fresh entropy at each call already.
* recomputed: the ``time`` module's zone attributes (``timezone``, ``altzone``, ``daylight``,
  ``tzname``), set once at import from the build machine's zone. The clock itself needs
  nothing: ``time.time()`` and ``time.localtime()`` ask the browser at every call.
* re-read: the import system's caches, the standard library zip's directory among them. zipimport
  keeps where each entry sits in the zip; the image was made with the deflated zip, and the page may
  have mounted the stored one (sitebuild/startup/archives.py): the same files at other offsets. Read once
  per zip (``invalidate_caches``), not once per package imported from it.
* NOT resettable: the hash seed of str and bytes. Every dict and set in the image was laid out
  with it, so changing it would corrupt them; it stays the one drawn when the build made the
  snapshot, shared by every reader of that build. It only matters against deliberate hash
  flooding, which nothing here is exposed to.
"""

from __future__ import annotations

import importlib
import random
import sys
import time
import zipimport

# CPython's own step for finding the zone's two offsets: a year (with leap days averaged), and half.
_YEAR_S = (365 * 24 + 6) * 3600


def zone_attributes(now: float | None = None) -> dict:
    """time.timezone, altzone, daylight and tzname as the time module computes them at import
    (CPython's init_timezone): from local time in January and in July of the current year."""
    start = (int(time.time() if now is None else now) // _YEAR_S) * _YEAR_S
    jan, jul = time.localtime(start), time.localtime(start + _YEAR_S // 2)
    jan_zone, jul_zone = -jan.tm_gmtoff, -jul.tm_gmtoff
    if jan_zone < jul_zone:  # the southern hemisphere: daylight saving time is in January
        return {"timezone": jul_zone, "altzone": jan_zone, "daylight": int(jan_zone != jul_zone),
                "tzname": (jul.tm_zone, jan.tm_zone)}
    return {"timezone": jan_zone, "altzone": jul_zone, "daylight": int(jan_zone != jul_zone),
            "tzname": (jan.tm_zone, jul.tm_zone)}


def invalidate_caches() -> None:
    """importlib.invalidate_caches(), reading each zip's directory once. Python 3.12 keeps one
    zipimporter per package imported from a zip (16 for the standard library once numpy is imported)
    and each re-reads the whole directory: 0.1-0.2 s in the browser. Here the first importer of a
    zip reads it and the others get the same (fresh) directory, as they had before: every importer
    must have it, since the modules it loaded read their source and data through it."""
    fresh = {}  # archive -> its directory, read by the first of its importers

    def shared(importer):
        def invalidate():
            if importer.archive in fresh:
                importer._files = fresh[importer.archive]
            else:
                zipimport.zipimporter.invalidate_caches(importer)
                fresh[importer.archive] = importer._files
        return invalidate

    zips = [f for f in list(sys.path_importer_cache.values()) if isinstance(f, zipimport.zipimporter) and hasattr(f, "_files")]
    for importer in zips:
        importer.invalidate_caches = shared(importer)  # found before the class's, by importlib's call below
    try:
        importlib.invalidate_caches()
    finally:
        for importer in zips:
            del importer.invalidate_caches


def reset_after_restore() -> None:
    """Make the restored interpreter this reader's own (see the module's docstring)."""
    invalidate_caches()  # first: anything imported below is then read from the zip as mounted
    import numpy.random

    random.seed()
    numpy.random.seed()
    for name, value in zone_attributes().items():
        setattr(time, name, value)
    # Pyodide puts "" at the front of sys.path when it starts, and once more after a restore.
    if sys.path[:2] == ["", ""]:
        del sys.path[0]
