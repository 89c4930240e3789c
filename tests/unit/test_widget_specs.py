"""Every widget's one home, its folder's spec.yml (sitebuild/pages/widget_specs.py): every spec has every part, what it
names exists, the copies made from the specs are current, a malformed spec is refused at its line, and a new widget
needs its folder and nothing else (a fixture widget, built into a lesson and its notebook)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lessonpy.runtime import limits
from sitebuild.pages import widget_specs
from sitebuild.pages.lessons import LessonError, read_lessons
from sitebuild.pages.notebook import lesson_notebook
from sitebuild.pages.page_copies import PYTHON_COPIES, StaleCopy, check_python_copies, copy_text
from sitebuild.pages.render import render_lesson
from sitebuild.pages.widget_specs import PARTS, SpecError, WIDGETS_DIR, load_specs

ROOT = Path(__file__).resolve().parents[2]
SPECS = widget_specs.specs()
EXPORTED = r"export (?:async )?function {}\b"


def test_every_widget_folder_has_a_spec_and_the_specs_are_the_widgets():
    folders = sorted(p.name for p in WIDGETS_DIR.iterdir() if p.is_dir())
    assert folders == sorted(SPECS)
    assert {"attention-view", "step-through", "dk-explorer", "heads", "real-heads", "lookup-view"} <= set(SPECS)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_spec_states_every_part_or_takes_it_from_the_one_it_is_like(name):
    import yaml
    raw = yaml.safe_load((WIDGETS_DIR / name / "spec.yml").read_text("utf-8"))
    for part, inherited in PARTS.items():
        assert part in raw or (inherited and "like" in raw), f"{name}'s spec has no {part}"
    spec = SPECS[name]
    assert spec.label.strip() and spec.note.strip()
    assert spec.receives in (*widget_specs.RECEIVES, None)
    assert "title" in spec.options  # every widget takes a title


@pytest.mark.parametrize("name", sorted(SPECS))
def test_what_a_spec_names_exists(name):
    spec = SPECS[name]
    for ref in filter(None, (spec.prerender, spec.check, spec.build_options, *spec.calls.values())):
        assert callable(widget_specs.python(ref)), ref
    module = (WIDGETS_DIR / spec.module).read_text("utf-8")
    assert re.search(EXPORTED.format(spec.export), module), f"{spec.module} exports no {spec.export}"
    # the module calls Python only through its spec's calls (ctx.calls), never by a module path of its own
    folder = WIDGETS_DIR / spec.module.split("/")[0]
    source = "".join(p.read_text("utf-8") for p in folder.glob("*.js"))
    assert set(re.findall(r"\bcalls\.(\w+)", source)) <= set(spec.calls), f"{name} calls what its spec does not name"
    assert not re.search(r"runtime\.call\(\s*\"", source), f"{name} spells a Python module path itself"


@pytest.mark.parametrize("name", sorted(SPECS))
def test_a_widgets_first_picture_comes_from_its_specs_prerender(name):
    payload = widget_specs.prerender(name, {o: v.default for o, v in SPECS[name].options.items()}, target="t")
    assert payload["target"] == "t"


def test_the_generated_index_loads_every_widget_by_a_literal_import_or_a_preload():
    index = copy_text(Path("js") / "page" / "widgets" / "index.js")
    for name, spec in SPECS.items():
        assert (WIDGETS_DIR / spec.module).is_file()
        literal = f'import("./{spec.module}")' in index
        assert literal != spec.preload, name  # esbuild splits only a literal import()
        assert f"{json.dumps(name)}: {{ load: async () =>" in index
    # the views on Lesson 4's first screen come with widget-loader.js, as linked.js did before
    assert SPECS["attention-view"].preload and SPECS["step-through"].module == SPECS["attention-view"].module


@pytest.mark.parametrize("path", sorted(PYTHON_COPIES), ids=str)
def test_lessonpys_copy_of_the_limits_is_the_specs(path):
    assert (ROOT / path).read_text("utf-8") == copy_text(path), f"{path} is stale: run `python3 -m sitebuild.pages.page_copies`"
    assert limits.WIDGET_LIMITS == {name: {k: tuple(r) for k, r in spec.limits.items()}
                                    for name, spec in SPECS.items() if spec.own_limits and spec.limits}


def test_like_shares_the_limits_and_adds_its_options():
    view, steps = SPECS["attention-view"], SPECS["step-through"]
    assert steps.limits == view.limits and not steps.own_limits and "step-through" not in limits.WIDGET_LIMITS
    assert list(steps.options) == [*view.options, "interval"]
    assert (steps.prerender, steps.receives) == (view.prerender, view.receives) and steps.export != view.export


def test_each_widgets_own_stylesheet_is_bundled_right_after_what_they_share():
    import build
    sheets = build.page_sheets()
    own = [f"../js/page/widgets/{spec.style}" for spec in SPECS.values() if spec.style]
    assert own and "../js/page/widgets/heads/widget.css" in own
    at = sheets.index("widgets.css") + 1
    assert sheets[at:at + len(set(own))] == list(dict.fromkeys(own))
    assert [s for s in sheets if not s.startswith("../")] == build.PAGE_SHEETS


def test_the_widgets_own_rules_reach_the_pages_stylesheet_in_cascade_order(tmp_path):
    import shutil

    import build
    from sitebuild.bundle import bundle_css
    static = tmp_path / "static"
    shutil.copytree(ROOT / "static", static, ignore=shutil.ignore_patterns("data"))
    sheets = [s for s in build.page_sheets() if (static / "css" / s).is_file()]  # the maths' and Pygments' are made
    bundle = bundle_css(ROOT, static / "css", sheets, "page.css").read_text("utf-8")
    marks = [".widget-status-line{", ".heads-grid{", ".realheads-grid{", ".table-scroll"]  # widgets.css, theirs, lesson.css
    positions = [bundle.find(mark) for mark in marks]
    assert all(p >= 0 for p in positions) and positions == sorted(positions), positions


def test_the_build_refuses_a_stale_copy_of_the_limits(tmp_path):
    for path in PYTHON_COPIES:
        (tmp_path / path).parent.mkdir(parents=True)
        (tmp_path / path).write_text("{}\n", encoding="utf-8")
    with pytest.raises(StaleCopy, match="page_copies"):
        check_python_copies(tmp_path)


# ---------------------------------------------------------------------------- a spec's mistakes, at its line

GOOD = """\
label: Demo
note: a demo.
module: demo.js
export: createDemo
preload: false
style: null
receives: null
prerender: lessonpy.course.attention.widget_payloads:prerender_lookup
check: null
build_options: null
calls: {}
limits:
  n: [1, 9]
options:
  title: {kind: text}
  n: {kind: int, default: 3, range: n}
"""


def folder_with(tmp_path, spec: str) -> Path:
    (tmp_path / "demo").mkdir(parents=True, exist_ok=True)
    (tmp_path / "demo" / "spec.yml").write_text(spec, encoding="utf-8")
    (tmp_path / "demo" / "demo.js").write_text("export function createDemo() { return {}; }\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("change, line, message", [
    (("check: null\n", ""), 1, "the spec has no 'check'"),
    (("range: n}", "range: m}"), 16, "names no limit of this widget: 'm'"),
    (("kind: int,", "kind: integer,"), 16, "needs a kind"),
    (("prerender_lookup", "prerender_pie"), 8, "does not exist"),
    (("module: demo.js", "module: gone.js"), 3, "is not a file"),
    (("receives: null", "receives: figures"), 7, "receives must be one of attention, lookup"),
    (("n: [1, 9]", "n: [9, 1]"), 13, "limit n must be [lowest, highest]"),
    (("preload: false\n", "preload: false\ncolour: red\n"), 6, "unknown part 'colour'"),
    (("style: null", "style: gone.css"), 6, "style 'demo/gone.css' is not a file"),
    (("prerender: lessonpy.course.attention.widget_payloads:prerender_lookup", "prerender: null"), 8,
     "prerender must name a lessonpy function"),
    (("preload: false", "preload: later"), 5, "preload must be true or false"),
    (("note: a demo.\n", "note: [\n"), 4, "not valid YAML"),
])
def test_a_malformed_spec_is_refused_at_its_line(tmp_path, change, line, message):
    with pytest.raises(SpecError) as err:
        load_specs(folder_with(tmp_path, GOOD.replace(*change)))
    assert isinstance(err.value, LessonError)  # the build reports it as it reports a lesson's mistakes
    assert f"spec.yml:{line}:" in str(err.value) and message in str(err.value), str(err.value)


# ---------------------------------------------------------------------------- a new widget: its folder, nothing else

def test_a_new_widget_needs_only_its_folder(tmp_path, monkeypatch):
    """A widget the project has never heard of, in a folder of its own: the fence is checked against its spec, the
    page names it by its label and gets its first picture from its prerender, the notebook says its note, and the
    generated copies list its module and limits."""
    widgets = {**SPECS, **load_specs(folder_with(tmp_path / "widgets", GOOD))}
    monkeypatch.setattr(widget_specs, "specs", lambda: widgets)
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    (lessons / "w.md").write_text("---\ntitle: W\n---\n\nText.\n\n```widget demo id=d\nn: 9\n```\n", encoding="utf-8")
    [lesson] = read_lessons(lessons)
    rendered = render_lesson(lesson)
    assert 'data-widget="demo" data-widget-id="d"' in rendered.html and 'aria-label="Demo"' in rendered.html
    assert rendered.widgets["d"]["options"] == {"title": None, "n": 9}
    assert rendered.widgets["d"]["initial"]["view"] == "lookup"  # the prerender its spec names
    notebook = lesson_notebook(lesson, "lessonpy.whl")
    assert any("**On the page:** a demo." in cell.source for cell in notebook.cells)
    assert '"demo": { load: async () => (await import("./demo/demo.js")).createDemo' in widget_specs.widgets_index_js(widgets)
    assert json.loads(widget_specs.widget_limits_json(widgets))["demo"] == {"n": [1, 9]}
    (lessons / "w.md").write_text("---\ntitle: W\n---\n\n```widget demo id=d\nn: 10\n```\n", encoding="utf-8")
    with pytest.raises(LessonError, match=r"w.md:6: widget demo 'd': n must be between 1 and 9, got 10"):
        render_lesson(read_lessons(lessons)[0])
