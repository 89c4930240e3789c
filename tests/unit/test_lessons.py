"""Reading lesson sources: cells, front matter, and errors reported as file:line."""

import re

import pytest

from sitebuild.pages.lessons import LessonError, read_lesson, read_lessons
from sitebuild.pages.markup import code_standin, json_for_script
from sitebuild.pages.render import render_lesson_body


def write(tmp_path, text, name="demo.md"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


GOOD = """---
title: Demo
order: 2
---
## First part
Text.

```python run id=one
x = 1
```

```python
static = True
```

```python run id=two
y = x + 1
```
"""


def test_cells_are_collected_in_order_with_ids(tmp_path):
    lesson = read_lesson(write(tmp_path, GOOD))
    assert lesson.title == "Demo" and lesson.slug == "demo"
    assert [(c.id, c.code, c.line) for c in lesson.cells] == [("one", "x = 1", 8), ("two", "y = x + 1", 16)]
    assert lesson.headings == [(2, "first-part", "First part")]


def test_rendered_cells_carry_data_cell_and_their_source(tmp_path):
    html = render_lesson_body(read_lesson(write(tmp_path, GOOD)))
    assert html.count('data-cell="') == 2 and 'data-cell="one"' in html
    assert '<code>x = 1</code></pre>' in html  # the code once, as the editor's stand-in
    assert 'class="highlight"' in html and "static" in html  # the static block is highlighted
    assert "cell-output" not in html  # the output region: cells.js makes it at the cell's first output


def test_the_data_files_a_lessons_cells_read_are_listed_in_the_front_matter(tmp_path):
    from sitebuild.project import ROOT
    text = GOOD.replace("order: 2\n", "order: 2\ndata:\n  - static/data/realheads/minilm.npz\n")
    assert read_lesson(write(tmp_path, text)).data == [(ROOT / "static/data/realheads/minilm.npz").resolve()]
    assert read_lesson(write(tmp_path, GOOD)).data == []


@pytest.mark.parametrize("code", [
    "x = 1",
    '\nx = """a\n\nb"""  # <not a tag> & more\n\n',  # leading and trailing blank lines, a string over lines
    "\n".join(f"line_{i} = {i}" for i in range(12)),
])
def test_an_editors_stand_in_is_the_code_as_one_text(code):
    import html as html_module
    import re

    standin = code_standin(code)
    assert len(re.findall(r"<[a-z]", standin)) == 2  # <pre><code>: no element per line or per token
    text = html_module.unescape(re.sub(r"<[^>]+>", "", standin))
    assert text == code  # selecting, copying or searching it finds exactly the code
    lines = code.count("\n") + 1
    assert f'style="--digits: {len(str(lines))}"' in standin  # the gutter's width, as CodeMirror sizes it


def test_json_for_script_cannot_close_the_script_tag():
    text = json_for_script({"code": "print('</script><script>alert(1)</script>')"})
    assert "</script" not in text and "<\\/script" in text


@pytest.mark.parametrize("text, line, fragment", [
    ("no front matter\n", 1, "title"),
    ("---\ntitle: [unclosed\n---\n", 2, "not valid YAML"),
    ("---\n- a list\n---\n", 1, "mapping"),
    ("---\ntitle: T\nslug: Bad Slug\n---\n", 1, "slug"),
    ("---\ntitle: T\ndata: static/data/realheads/minilm.npz\n---\n", 1, "data: must be a list"),
    ("---\ntitle: T\ndata: [static/data/nope.npz]\n---\n", 1, "data: static/data/nope.npz: no such file"),
    ("---\ntitle: T\ndata: [py/lessonpy/models/minilm.py]\n---\n", 1, "must be under static/"),
    ("---\ntitle: T\ndata: [static/../../etc/passwd]\n---\n", 1, "must be under static/"),
    ("---\ntitle: T\n---\n\n```python run id=9bad\nx\n```\n", 5, "cell id"),
    ("---\ntitle: T\n---\n\n```python run id=a\nx\n```\n\n```python run id=a\ny\n```\n", 9, "already used"),
    ("---\ntitle: T\n---\n\n```python run id=e\n\n```\n", 5, "empty"),
    # an id is where the reader's edits are saved: a position would move them when cells are inserted
    ("---\ntitle: T\n---\n\n```python run\nx = 1\n```\n", 5,
     "a runnable cell needs an id (```python run id=NAME): the reader's edits are saved under it"),
    # `run` on another language used to be dropped without a word
    ("---\ntitle: T\n---\n\n```py run id=a\nx = 1\n```\n", 5,
     "only python fences can run: write ```python run id=a, not ```py run"),
    ("---\ntitle: T\n---\n\n```javascript run id=a\nx = 1\n```\n", 5, "only python fences can run"),
    # an unclosed fence used to swallow the rest of the file as code
    ("---\ntitle: T\n---\n\n```python run id=a\nx = 1\n\n## Next part\nText.\n", 5,
     "this ``` fence is never closed: add a line ``` where its code ends"),
    ("---\ntitle: T\n---\n\n- item\n\n  ````text\n  ```\n  still code\n", 7,
     "this ```` fence is never closed"),
    ("---\ntitle: T\n---\n\n~~~\ncode\n``` \n", 5, "this ~~~ fence is never closed"),
    # an unclosed fence in the middle: it swallowed the prose and the next cell's opening line (closed by that
    # cell's closing fence), and the next cell vanished
    ("---\ntitle: T\n---\n\n```python run id=a\nx = 1\n\nProse.\n\n```python run id=b\ny = 2\n```\n", 5,
     "this ``` fence is not closed before line 10, which opens the next one: add a line ``` where its code ends"),
    ("---\ntitle: T\n---\n\n~~~python run id=a\nx = 1\n~~~~ text\nz\n~~~\n", 5, "not closed before line 7"),
    ("---\ntitle: T\n---\n\n```python run id=\"unclosed\nx\n```\n", 5, "fence options"),
    # asides: a title (all a closed one shows), a closing :::, no aside or heading inside
    ("---\ntitle: T\n---\n\n::: aside\nText.\n:::\n", 5, "an aside needs a title"),
    ("---\ntitle: T\n---\n\n::: aside Side road\nText.\n\n## Next part\n", 5, "this aside is never closed"),
    ("---\ntitle: T\n---\n\n::: aside Outer\n:::: aside Inner\nx\n::::\n:::\n", 6,
     "an aside cannot hold another aside (the one on line 5 is open)"),
    ("---\ntitle: T\n---\n\n::: aside Side road\n## Inside\n:::\n", 6, "a heading inside the aside of line 5"),
])
def test_mistakes_are_reported_as_file_and_line(tmp_path, text, line, fragment):
    path = write(tmp_path, text)
    with pytest.raises(LessonError) as info:
        read_lesson(path)
    assert str(info.value).startswith(f"{path}:{line}: ")
    assert fragment in info.value.message


def test_closed_fences_of_every_kind_are_fine(tmp_path):
    text = ("---\ntitle: T\n---\nA line\u2028separator and a form\x0cfeed are not line breaks.\n\n````markdown\n```python\nx\n```\n````\n\n> ```\n> quoted\n> ```\n\n"
            "- item\n\n  ~~~\n  listed\n  ~~~~\n\n```\nlast, closed at the end of the file\n```")
    lesson = read_lesson(write(tmp_path, text))
    assert lesson.cells == []


def test_non_utf8_source_is_reported(tmp_path):
    path = tmp_path / "bad.md"
    path.write_bytes(b"---\ntitle: \xff\n---\n")
    with pytest.raises(LessonError, match="not UTF-8"):
        read_lesson(path)


def test_duplicate_slugs_and_order(tmp_path):
    write(tmp_path, "---\ntitle: B\norder: 1\n---\n", "b.md")
    write(tmp_path, "---\ntitle: A\norder: 2\n---\n", "a.md")
    assert [l.title for l in read_lessons(tmp_path)] == ["B", "A"]
    write(tmp_path, "---\ntitle: C\nslug: a\n---\n", "c.md")
    with pytest.raises(LessonError, match="also used"):
        read_lessons(tmp_path)


ASIDE = """---
title: Asides
---
## Part

Before.

::: aside A common *mistake*: `N(0, 1)`
Inside, with a cell:

```python run id=inside
x = 1
```
:::

After.
"""


def test_an_aside_is_a_closed_details_whose_cells_are_the_lessons_cells(tmp_path):
    lesson = read_lesson(write(tmp_path, ASIDE), maths=False)
    assert [c.id for c in lesson.cells] == ["inside"]
    html = render_lesson_body(lesson)
    start = html.index('<details class="aside">')
    assert "<summary>A common <em>mistake</em>: <code>N(0, 1)</code></summary>" in html[start:]
    body = html[start:html.index("</details>", start)]
    assert "Inside, with a cell:" in body and 'data-cell="inside"' in body
    assert "After." in html[html.index("</details>", start):]
    assert ":::" not in html


def test_a_longer_fence_may_show_a_fence_and_a_closing_line_inside_is_code(tmp_path):
    # how Markdown nests: the outer fence is longer than any it shows; and a bare ``` inside ```` is code
    text = ("---\ntitle: T\n---\n\n````markdown\n```python run id=a\nx = 1\n```\n````\n\n"
            "```python run id=b\ny = 2\n```\n")
    lesson = read_lesson(write(tmp_path, text))
    assert [cell.id for cell in lesson.cells] == ["b"]


# ---------------------------------------------------------------------------- what runs where, and numbers in code

def test_a_cell_marked_needs_page_is_left_to_the_page(tmp_path):
    """needs=page: the build's run and the CPython tests skip the cell; the browser tests run it."""
    from sitebuild.pages.lessons import runs_outside_the_page

    lesson = read_lesson(write(tmp_path, GOOD.replace("```python run id=two", "```python run id=two needs=page")))
    assert [(c.id, c.needs_page) for c in lesson.cells] == [("one", False), ("two", True)]
    assert [c.id for c in runs_outside_the_page(lesson.cells)] == ["one"]


def test_an_unknown_needs_value_is_refused_at_its_line(tmp_path):
    path = write(tmp_path, GOOD.replace("```python run id=two", "```python run id=two needs=browser"))
    with pytest.raises(LessonError, match=r"demo\.md:16: needs=browser is not known: needs=page"):
        read_lesson(path)


def test_a_cell_that_needs_live_files_carries_them_when_the_site_ships_them(tmp_path):
    """files=: the page puts those live models' files into Python's file system before the run
    (sitebuild.pages.cell_files); the cell carries each shipped model's files, folder and listing call."""
    import html as html_lib
    import json

    text = GOOD.replace("```python run id=two", "```python run id=two needs=page files=smollm2,minilm")
    lesson = read_lesson(write(tmp_path, text))
    assert [c.files for c in lesson.cells] == [(), ("smollm2", "minilm")]
    weights = {"w.gguf": {"size": 3, "sha256": "ab" * 32}}
    site = {"smollm2_files": weights, "smollm2_url": "../../data/smollm2-live/", "live_files": None, "live_url": None}
    body = render_lesson_body(lesson, site=site)
    found = re.search(r'data-cell="two"[^>]*data-files="([^"]*)"', body)
    assert found, "the cell that needs files carries them"
    assert json.loads(html_lib.unescape(found.group(1))) == [
        {"call": ["lessonpy.models.next_token", "files"], "url": "../../data/smollm2-live/", "files": weights}]
    # MiniLM is not shipped: it is left out, and a site with neither leaves the attribute out (Python says why)
    assert body.count("data-files=") == 1
    assert "data-files=" not in render_lesson_body(lesson, site={})


@pytest.mark.parametrize("option, message", [
    ("needs=page files=gpt2", r"demo\.md:16: files=gpt2 is not known: files= takes one or more of minilm"),
    ("files=smollm2", r"demo\.md:16: files=smollm2 needs needs=page too"),
])
def test_a_wrong_files_option_is_refused_at_its_line(tmp_path, option, message):
    path = write(tmp_path, GOOD.replace("```python run id=two", f"```python run id=two {option}"))
    with pytest.raises(LessonError, match=message):
        read_lesson(path)


@pytest.mark.parametrize("fence", ["python run id=three", "python", "text"])
def test_a_number_placeholder_inside_code_is_refused_at_its_own_line(tmp_path, fence):
    """{{ num.x }} is filled in prose and maths only: in code the reader would run the braces as written."""
    body = GOOD + f"\n```{fence}\na = 1\nprint({{{{ num.std }}}})\n```\n"
    path = write(tmp_path, body)
    line = body.splitlines().index("print({{ num.std }})") + 1
    with pytest.raises(LessonError, match=rf"demo\.md:{line}: {{{{ num\.std }}}} inside code"):
        read_lesson(path)


NUMBERS_MODULE = '''
def numbers():
    return {"std": "1.00"}

CELL_PRINTS = %s
'''


@pytest.mark.parametrize("prints, says", [
    ({"nowhere": ["std"]}, "CELL_PRINTS names cells the lesson does not have: nowhere"),
    ({"one": ["mean"]}, "CELL_PRINTS names numbers that numbers() does not return: mean"),
    ({"one": "std"}, "CELL_PRINTS must be a dict from cell id to a list of number names"),
])
def test_a_cell_prints_declaration_that_names_no_cell_or_no_number_is_refused_at_the_numbers_line(tmp_path, prints, says):
    (tmp_path / "demo_prints.py").write_text(NUMBERS_MODULE % repr(prints), encoding="utf-8")
    path = write(tmp_path, GOOD.replace("order: 2\n", "order: 2\nnumbers: demo_prints\n"))
    with pytest.raises(LessonError, match=rf"demo\.md:4: .*{re.escape(says)}"):
        read_lesson(path)


def test_the_cell_prints_declaration_is_read_with_the_lesson(tmp_path):
    (tmp_path / "demo_prints_ok.py").write_text(NUMBERS_MODULE % repr({"one": ["std"]}), encoding="utf-8")
    lesson = read_lesson(write(tmp_path, GOOD.replace("order: 2\n", "order: 2\nnumbers: demo_prints_ok\n")))
    assert lesson.prints == {"one": ["std"]}
