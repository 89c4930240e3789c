"""sitebuild/pages/placeholders.py: each top-level block of a lesson says how much text (and how many table rows)
it holds, which site.css turns into its size while the browser skips it."""

from __future__ import annotations

from sitebuild.pages.placeholders import with_text_lengths


def test_each_top_level_element_gets_its_texts_length_as_the_browser_counts_it():
    body = ('<h2 id="a">Two &amp; three</h2>\n<p>One <em>two</em> three</p>\n'
            '<div class="cell" data-cell="x"><pre><code>x = 1 &lt; 2\n</code></pre></div>\n<hr>\n')
    assert with_text_lengths(body) == (
        '<h2 style="--chars: 11" id="a">Two &amp; three</h2>\n<p style="--chars: 13">One <em>two</em> three</p>\n'
        '<div style="--chars: 10" class="cell" data-cell="x"><pre><code>x = 1 &lt; 2\n</code></pre></div>\n'
        '<hr style="--chars: 0">\n')


def test_a_table_counts_its_rows_and_an_existing_style_keeps_its_own_declarations():
    body = ('<div class="table-scroll"><table><tr><td>a</td></tr><tr><td>b</td></tr></table></div>'
            '<section style="color: red"><script type="application/json">{"k": 1}</script></section>')
    assert with_text_lengths(body) == (
        '<div style="--chars: 2; --rows: 2" class="table-scroll"><table><tr><td>a</td></tr><tr><td>b</td></tr>'
        '</table></div><section style="--chars: 8; color: red"><script type="application/json">{"k": 1}</script>'
        '</section>')


def test_nested_void_elements_and_self_closing_tags_keep_the_depth_right():
    body = '<p>a<br>b<img src="x.png"/>c</p><p>dd</p>'
    assert with_text_lengths(body) == '<p style="--chars: 3">a<br>b<img src="x.png"/>c</p><p style="--chars: 2">dd</p>'
