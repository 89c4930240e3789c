"""sitebuild/pages/placeholders.py: each top-level block of a lesson says what decides its height (prose, code,
lines, parts, table rows), which site.css turns into its size while the browser skips it."""

from __future__ import annotations

from sitebuild.pages.placeholders import with_sizes


def test_prose_counts_its_drawn_characters_and_each_paragraph_or_heading_is_a_part():
    body = '<h2 id="a">Two &amp; three</h2>\n<p>One <em>two</em>\n   three</p>\n<hr>\n'
    assert with_sizes(body) == (
        '<h2 style="--chars: 11; --parts: 1" id="a">Two &amp; three</h2>\n'
        '<p style="--chars: 13; --parts: 1">One <em>two</em>\n   three</p>\n<hr style="--chars: 0">\n')


def test_code_counts_its_lines_and_characters_apart_from_prose():
    body = ('<div class="cell"><pre><code>x = 1 &lt; 2\ny\n</code></pre><div class="out">done</div></div>'
            '<pre>a\nbb</pre>')
    assert with_sizes(body) == (
        '<div style="--chars: 4; --code: 10; --lines: 2" class="cell"><pre><code>x = 1 &lt; 2\ny\n</code></pre>'
        '<div class="out">done</div></div><pre style="--chars: 0; --code: 3; --lines: 2">a\nbb</pre>')


def test_text_that_is_not_drawn_is_not_counted():
    # a script's data, a hidden element, a closed <details>'s body (its summary shows), a formula's TeX source
    body = ('<section><script type="application/json">{"k": 1}</script><p hidden>later</p></section>'
            '<details class="aside"><summary>More</summary><p>inside</p></details>'
            '<details open><summary>A</summary><p>shown</p></details>'
            '<p><math><mi>x</mi><annotation encoding="application/x-tex">x</annotation></math></p>')
    assert with_sizes(body) == (
        '<section style="--chars: 0"><script type="application/json">{"k": 1}</script><p hidden>later</p></section>'
        '<details style="--chars: 4; --parts: 1" class="aside"><summary>More</summary><p>inside</p></details>'
        '<details style="--chars: 6; --parts: 2" open><summary>A</summary><p>shown</p></details>'
        '<p style="--chars: 1; --parts: 1"><math><mi>x</mi><annotation encoding="application/x-tex">x</annotation>'
        '</math></p>')


def test_a_table_counts_its_rows_and_an_existing_style_keeps_its_own_declarations():
    body = ('<div class="table-scroll"><table><tr><td>a</td></tr><tr><td>b</td></tr></table></div>'
            '<section style="color: red"><p>x</p></section>')
    assert with_sizes(body) == (
        '<div style="--chars: 2; --rows: 2" class="table-scroll"><table><tr><td>a</td></tr><tr><td>b</td></tr>'
        '</table></div><section style="--chars: 1; --parts: 1; color: red"><p>x</p></section>')


def test_nested_void_elements_and_self_closing_tags_keep_the_depth_right():
    body = '<p>a<br>b<img src="x.png"/>c</p><p>dd</p>'
    assert with_sizes(body) == ('<p style="--chars: 3; --parts: 1">a<br>b<img src="x.png"/>c</p>'
                                '<p style="--chars: 2; --parts: 1">dd</p>')


def test_a_far_formulas_stand_in_counts_as_the_characters_its_mathml_draws():
    """Its TeX stands in only until the reader nears it (math_later.py): the block is sized for the formula."""
    maths = {"k1": "<math><msub><mi>d</mi><mi>k</mi></msub><mo>&lt;</mo><mn>8</mn></math>"}
    body = '<p>So <code class="math-later" data-math="k1">d_k &lt; 8</code>.</p>'
    assert with_sizes(body, maths) == ('<p style="--chars: 8; --parts: 1">So <code class="math-later" '
                                       'data-math="k1">d_k &lt; 8</code>.</p>')  # "So " "dk<8" "."
    # a key the file does not have is text like any other
    assert with_sizes(body, {}).startswith('<p style="--chars: 11;')
