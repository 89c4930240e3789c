"""Course-independent maths and drawing: attention itself (``attention``), what the page's views are sent
(``show``, ``lookup``) and their matplotlib twins outside the page (``show_mpl``, ``lookup_mpl``,
``notebook``: the downloaded notebook's ``%load_ext``), the shared colour maps (``colormaps``), seeded draws
(``score_draws``), and grading: the one grading core (``grading``) and what every attention exercise checks
first (``answers``). It imports itself and ``runtime`` (the page's door and limits), never a model or a course.
"""
