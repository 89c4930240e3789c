"""Pyodide prepared for the pages' start-up: fetched and verified, precompiled, packed into archives,
split, snapshotted, and matplotlib's font cache.

The build meets this wing through two calls: fetch() (Pyodide's whole distribution and the font cache, which
the assets folder carries) and, once the assets and the lesson's wheel are in the site, prepare(), which puts
the site's Pyodide folder and snapshot in place and returns one record (Startup): that folder, the start-up
part of every lesson page's config, and what the service worker keeps of it.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from pathlib import Path

from sitebuild.compress import QUALITY, add_sidecar, sidecar_of
from sitebuild.files import link_or_copy, sha256_file, write_json
from sitebuild.project import PAGE_TO_ROOT
from sitebuild.startup.boot_plan import MODULES_FILE, boot_plan, files_of, page_plan, write_modules
from sitebuild.startup.fontcache import FontCache, build_font_cache
from sitebuild.startup.pyodide_assets import RUNTIME_FILES, copy_into_site, prepare_pyodide, split_stdlib, split_wheels
from sitebuild.startup.snapshot import Snapshot, make_snapshot
from sitebuild.startup.stdlib_split import trace as trace_stdlib

# Packages loaded while the interpreter boots; matplotlib, micropip and friends load on first import.
BOOT_PACKAGES = ["numpy"]
SITE_PACKAGES = ["numpy", "micropip", "matplotlib"]
# The service worker, at the site's root so that its scope is the whole site (it keeps Pyodide's runtime
# and the boot plan's files of the variants the page's worker picked: Startup.precache and .archives).
SERVICE_WORKER = "sw.js"
# What a restore needs only once numpy's libraries have come (static/js/worker/snapshot.js): where each library
# goes, the dlopen handles, the packages loaded; beside the image in snapshot/<key>/, not in every page's
# config (4 KB of each lesson's HTML)
SNAPSHOT_DETAILS = "restore.json"
SNAPSHOT_DETAILS_FIELDS = ("dynlibs", "handles", "loaded")
# When a page restores Python from the build's memory snapshot instead of starting it (README, Speed):
# "always" (the command line's default): a first visit downloads it too, alongside the wasm, unless the
# browser asks to save data or the host sends it uncompressed (snapshot.js, findSnapshot): that visit then
# boots normally; "revisit": once the browser keeps it (the service worker stores it after a first visit,
# which boots normally); "off": never (none is made).
SNAPSHOT_MODES = ("always", "revisit", "off")


@dataclass(frozen=True)
class Pyodide:
    """Pyodide's whole distribution (cached) and matplotlib's font cache made from it (fetch)."""

    whole: Path
    font_cache: FontCache


@dataclass(frozen=True)
class Startup:
    """What prepare() put into the site, as the pages and the service worker need it."""

    folder: str | None  # the site's Pyodide folder (pyodide/<version>-<key>), None when pages load it from a URL
    config: dict  # the start-up part of every lesson page's config, its URLs relative to the page
    precache: list[str]  # the site's start-up files the service worker keeps: Pyodide's runtime, probes, snapshot
    archives: dict  # {kind: {variant: [files]}}: what the service worker keeps of the variant the worker picked
    pyodide_key: str  # names the Pyodide the service worker keeps ("cdn" without one in the site)
    snapshot_key: str | None


class CellFailed(Exception):
    """A lesson's cell failed when the cells ran in page order; *lesson* and *cell* are the caller's objects."""

    def __init__(self, lesson, cell, error: str):
        super().__init__(f"cell {cell.id!r} failed: {error}")
        self.lesson, self.cell, self.error = lesson, cell, error


def fetch(opts) -> Pyodide | None:
    """Pyodide's whole distribution and matplotlib's font cache (from the cache once made), or None when the
    pages load Pyodide from opts.pyodide_url. *opts* is the build's Options."""
    if opts.pyodide_url:
        return None
    whole = prepare_pyodide(opts.root, opts.cache_dir, packages=SITE_PACKAGES, precompile=opts.precompile, log=opts.log)
    # From the whole standard library: matplotlib's imports under Node need more than the core.
    return Pyodide(whole, build_font_cache(whole, opts.cache_dir, opts.log))


def prepare(opts, staging: Path, pyodide: Pyodide | None, lessons: list, wheel: str, worker: str,
            fonts: dict | None) -> Startup:
    """Put the site's Pyodide folder (split for these lessons) and Python's memory snapshot into *staging*, and
    return what the pages and the service worker need of them.

    *lessons*: objects with ``cells`` (each with ``id``, ``code``, ``needs_page``; CellFailed carries the failing
    one); *wheel* and *worker*: the site-relative paths of the lesson's wheel and of Python's worker; *fonts*:
    where the font cache is in the site and belongs in Pyodide ({url, path, kwdoc}), None without one."""
    folder = plan = snapshot = None
    dist = None
    if pyodide:
        dist, rest_modules = split_pyodide(opts, pyodide.whole, lessons, staging / wheel)
        plan = boot_plan(dist, BOOT_PACKAGES, rest_modules, restore=opts.snapshot != "off")
        # Named like the distribution, <version>-<content key>: its files are served as immutable,
        # and a build whose Pyodide files differ (precompiling, packing, the split) must be a new URL.
        folder = f"pyodide/{dist.name}"
        copy_into_site(dist, staging / folder)
        write_modules(plan, staging / folder)
        snapshot = add_snapshot(opts, staging, dist, staging / wheel) if opts.snapshot != "off" else None
    config = page_config(opts, folder, plan, wheel, sha256_file(staging / wheel),
                         worker, fonts, snapshot)
    precache, archives = kept_offline(folder, plan, snapshot)
    return Startup(folder, config, precache, archives, dist.name if dist else "cdn", snapshot["key"] if snapshot else None)


def page_config(opts, folder: str | None, plan: dict | None, wheel: str, wheel_sha256: str, worker: str,
                fonts: dict | None, snapshot: dict | None) -> dict:
    """The start-up part of a lesson page's config, in the order the page's config has always had it."""
    root = PAGE_TO_ROOT
    return {
        "indexURL": f"{root}{folder}/" if folder else opts.pyodide_url,
        # which of Pyodide's files to fetch when (the worker's plan.js): the same on every page; the module
        # lists of the files that come later are a file beside them (boot_plan.write_modules)
        "plan": page_plan(plan) if plan else None,
        "wheelURL": f"{root}{wheel}",
        "wheelSha256": wheel_sha256,  # a kept copy that is not this is dropped (worker.js, fetchChecked)
        "workerURL": f"{root}{worker}",
        "bootPackages": BOOT_PACKAGES,
        "fontCache": {"url": f"{root}{fonts['url']}", "path": fonts["path"]} if fonts else None,
        # the property lists matplotlib writes into its docstrings (lessonpy.runtime.artist_set_docs hands them over)
        "matplotlibDocs": f"{root}{fonts['kwdoc']}" if fonts else None,
        "serviceWorkerURL": f"{root}{SERVICE_WORKER}",
        "snapshot": {**snapshot, "url": f"{root}{snapshot['url']}"} if snapshot else None,
    }


def kept_offline(folder: str | None, plan: dict | None, snapshot: dict | None) -> tuple[list[str], dict]:
    """The start-up files the service worker keeps (site-relative), and the archives' variants it keeps of each
    kind: Pyodide's runtime and probes, and every file of the boot plan in the variants the page's worker picked
    (matplotlib's wheels are left to the HTTP cache)."""
    core, kept = [], {}
    if folder and plan:
        # offline, the kept probes pick the same variants again (and the later files' module lists are read)
        core = [f"{folder}/{name}" for name in [*RUNTIME_FILES, MODULES_FILE, *plan["probes"].values()]]
        kept = {kind: {variant: [f"{folder}/{name}" for name in files_of(files)] for variant, files in variants.items()}
                for kind, variants in plan["kinds"].items()}
    # The snapshot is kept like the other versioned files: a revisit (or a restart) then restores it.
    kept_snapshot = [snapshot["url"], posixpath.join(posixpath.dirname(snapshot["url"]), snapshot["details"])] if snapshot else []
    return core + kept_snapshot, kept


def run_cells(opts, whole: Path, lessons: list, lesson_wheel: Path) -> set[str]:
    """Run each lesson's cells in page order in Pyodide under Node (sitebuild.startup.stdlib_split: cached by the
    cells, the wheel and Pyodide); a cell that fails raises CellFailed, with its traceback. Cells marked
    needs=page run only in the page (the browser tests run them). Return the standard library's entries the
    page imports before each lesson's first outputs."""
    traced: set[str] = set()
    for lesson in lessons:
        cells = [(cell.id, cell.code, cell.needs_page) for cell in lesson.cells]
        report = trace_stdlib(whole, BOOT_PACKAGES, lesson_wheel, cells, opts.cache_dir, opts.log)
        if report["failed"]:
            cell = next(c for c in lesson.cells if c.id == report["failed"]["id"])
            raise CellFailed(lesson, cell, report["failed"]["error"])
        traced.update(report["entries"])
    return traced


def split_pyodide(opts, whole: Path, lessons: list, lesson_wheel: Path) -> tuple[Path, list[str] | None]:
    """The Pyodide folder whose standard library is split in two (sitebuild.startup.stdlib_split): the core, what
    the boot and each lesson's first outputs import (traced under Node, in the run of the cells: run_cells), and
    the rest; with a snapshot, the boot wheels split too (sitebuild.startup.wheel_split: their libraries, which a
    restore reads, and the rest); and the dotted names of the standard library rest's modules (None when it is
    not split: opts.split_stdlib)."""
    dist, modules = whole, None
    traced = run_cells(opts, whole, lessons, lesson_wheel)  # run whether or not the library is split: the check
    if opts.split_stdlib:
        dist, modules = split_stdlib(whole, sorted(traced), opts.cache_dir, opts.log)
    if opts.split_wheels and opts.snapshot != "off":  # what a restore reads of the boot wheels first, and the rest
        dist = split_wheels(dist, BOOT_PACKAGES, opts.cache_dir, opts.log)
    return dist, modules


def add_snapshot(opts, staging: Path, dist: Path, lesson_wheel: Path) -> dict | None:
    """Make (or take from the cache) Python's memory snapshot for exactly these files, copy it into
    snapshot/<key>/ with its restore details beside it (SNAPSHOT_DETAILS), and return the worker's restore
    spec (site-relative URL; `details` names that file, relative to the image), or None without one."""
    snap: Snapshot | None = make_snapshot(dist, BOOT_PACKAGES, lesson_wheel, opts.cache_dir, opts.log)
    if snap is None:
        return None
    target = staging / "snapshot" / snap.key / snap.file.name
    target.parent.mkdir(parents=True)
    link_or_copy(snap.file, target)
    # The sidecar comes from <cache>/brotli/, named after the content and the quality, as the site's other
    # files' do: the snapshot's key does not name compress's rule, so one kept in its folder would outlive it.
    if add_sidecar(target, opts.cache_dir, snap.meta["sha256"]):
        size = sidecar_of(target).stat().st_size  # what a first visit downloads in --snapshot always
        opts.log(f"snapshot: {snap.meta['bytes'] / 1e6:.2f} MB, {size / 1e6:.2f} MB as brotli-{QUALITY} ({snap.key})")
    details = {field: snap.meta[field] for field in SNAPSHOT_DETAILS_FIELDS}
    write_json(target.parent / SNAPSHOT_DETAILS, details)
    return {**{k: v for k, v in snap.meta.items() if k not in details}, "details": SNAPSHOT_DETAILS,
            "key": snap.key, "url": target.relative_to(staging).as_posix(),
            "fetch": "always" if opts.snapshot == "always" else "kept"}
