"""The colour maps the page and the notebook draw arrays with: one definition, 256 sRGB colours each.

The page (static/js/page/components/colormap.js) draws from its copy, static/js/shared/colormaps.js, which the
build writes from this module (sitebuild/pages/page_copies.py); the notebook (lessonpy.maths.show_mpl) from
:func:`listed`. So one array looks the same in both.

- ``sequential``: weights and other values from a minimum up, such as probabilities in [0, 1]. It is matplotlib's
  viridis (Stéfan van der Walt and Nathaniel Smith, CC0), byte for byte: perceptually even, lighter as values
  grow, readable in greyscale and with the common colour-vision deficiencies. tests/unit/test_colormaps.py holds it
  equal to matplotlib's.
- ``diverging``: signed values around 0 (scores, outputs), symmetric about 0: blue below, white at 0, orange
  above (no red-green pair). Built in OKLab, a space whose lightness axis tracks perceived lightness: the
  lightness falls off nearly symmetrically from the white centre (orange gets a little more light, so it reads
  as orange, not brown), and colours out of the sRGB gamut lose chroma, never lightness. Control points
  (v in -1..1: L, a, b): -1 (0.52, -0.03, -0.135), -0.5 (0.75, -0.025, -0.075), 0 (0.975, 0, 0),
  0.5 (0.78, 0.06, 0.075), 1 (0.58, 0.105, 0.115); interpolated linearly, 256 steps.
"""

from __future__ import annotations

import json

import numpy as np

SIZE = 256

#: 256 sRGB byte triples, hex: index 0 is the map's low end.
TABLES = {
    "sequential": (
    "44015444025645045745055946075a46085c460a5d460b5e470d60470e61471063471164471365481467481668481769"
    "48186a481a6c481b6d481c6e481d6f481f70482071482173482374482475482576482677482878482979472a7a472c7a"
    "472d7b472e7c472f7d46307e46327e46337f463480453581453781453882443983443a83443b84433d84433e85423f85"
    "4240864241864142874144874045884046883f47883f48893e49893e4a893e4c8a3d4d8a3d4e8a3c4f8a3c508b3b518b"
    "3b528b3a538b3a548c39558c39568c38588c38598c375a8c375b8d365c8d365d8d355e8d355f8d34608d34618d33628d"
    "33638d32648e32658e31668e31678e31688e30698e306a8e2f6b8e2f6c8e2e6d8e2e6e8e2e6f8e2d708e2d718e2c718e"
    "2c728e2c738e2b748e2b758e2a768e2a778e2a788e29798e297a8e297b8e287c8e287d8e277e8e277f8e27808e26818e"
    "26828e26828e25838e25848e25858e24868e24878e23888e23898e238a8d228b8d228c8d228d8d218e8d218f8d21908d"
    "21918c20928c20928c20938c1f948c1f958b1f968b1f978b1f988b1f998a1f9a8a1e9b8a1e9c891e9d891f9e891f9f88"
    "1fa0881fa1881fa1871fa28720a38620a48621a58521a68522a78522a88423a98324aa8325ab8225ac8226ad8127ad81"
    "28ae8029af7f2ab07f2cb17e2db27d2eb37c2fb47c31b57b32b67a34b67935b77937b87838b9773aba763bbb753dbc74"
    "3fbc7340bd7242be7144bf7046c06f48c16e4ac16d4cc26c4ec36b50c46a52c56954c56856c66758c7655ac8645cc863"
    "5ec96260ca6063cb5f65cb5e67cc5c69cd5b6ccd5a6ece5870cf5773d05675d05477d1537ad1517cd2507fd34e81d34d"
    "84d44b86d54989d5488bd6468ed64590d74393d74195d84098d83e9bd93c9dd93ba0da39a2da37a5db36a8db34aadc32"
    "addc30b0dd2fb2dd2db5de2bb8de29bade28bddf26c0df25c2df23c5e021c8e020cae11fcde11dd0e11cd2e21bd5e21a"
    "d8e219dae319dde318dfe318e2e418e5e419e7e419eae51aece51befe51cf1e51df4e61ef6e620f8e621fbe723fde725"
    ),
    "diverging": (
    "2f68b73169b7326ab8346bb9356cb9376eba386fbb3970bb3b71bc3c72bd3e73bd3f75be4076bf4277bf4378c04579c1"
    "467ac1487cc2497dc34a7ec34c7fc44d80c44f81c55082c65184c65385c75486c85587c85788c95889ca5a8bca5b8ccb"
    "5c8dcb5e8ecc5f8fcd6190cd6292ce6393cf6594cf6695d06896d06997d16a98d26c9ad26d9bd36f9cd4709dd4719ed5"
    "739fd574a1d676a2d777a3d778a4d87aa5d97ba6d97da8da7ea9da80aadb81abdc82acdc84addd85afdd87b0de88b1df"
    "8ab2df8bb3e08db4e08fb5e090b6e192b7e194b9e295bae297bbe299bce39bbde39cbee49ebfe4a0c0e4a1c1e5a3c2e5"
    "a5c3e6a7c4e6a8c5e6aac7e7acc8e7adc9e8afcae8b1cbe8b2cce9b4cde9b6ceeab8cfeab9d0eabbd1ebbdd2ebbed4eb"
    "c0d5ecc2d6ecc4d7ecc5d8edc7d9edc9daeecadbeeccdceeceddefd0deefd1dfefd3e0f0d5e2f0d7e3f0d8e4f1dae5f1"
    "dce6f1dde7f2dfe8f2e1e9f3e3eaf3e4ebf3e6ecf4e8edf4eaeff4ebf0f5edf1f5eff2f5f1f3f5f2f4f6f4f5f6f6f6f6"
    "f7f6f6f6f5f4f6f3f2f6f2f0f6f1eef6f0ecf6eeeaf6ede8f6ece7f6ebe5f5e9e3f5e8e1f5e7dff5e6ddf5e4dbf5e3d9"
    "f4e2d7f4e1d6f4dfd4f4ded2f4ddd0f4dccef3daccf3d9caf3d8c8f3d7c7f3d5c5f3d4c3f2d3c1f2d1bff2d0bdf2cfbb"
    "f1ceb9f1ccb8f1cbb6f1cab4f1c9b2f0c7b0f0c6aef0c5acf0c4aaefc2a8efc1a7efc0a5efbea3eebda1eebc9feebb9d"
    "eeb99bedb899edb798edb696edb494ecb392ecb290ecb08eebaf8cebae8aebad88eaab86eaaa85eaa983eaa781e9a67f"
    "e9a57de8a47ce8a37ae7a179e6a077e69f76e59e74e59c73e49b71e39a70e3996ee2986de2966be1956ae09468e09367"
    "df9165df9064de8f62dd8e60dd8d5fdc8b5ddc8a5cdb895ada8859da8657d98556d88454d88353d78151d7804fd67f4e"
    "d57e4cd57c4bd47b49d37a47d37946d27844d27642d17541d0743fd0733dcf713bce703ace6f38cd6e36cc6c34cc6b32"
    "cb6a31ca682fca672dc9662bc86529c86326c76224c66122c66020c55e1dc45d1bc45c18c35a15c25911c2580dc15609"
    ),
}


def table(name: str) -> np.ndarray:
    """The map *name* as a (256, 3) uint8 array of sRGB colours."""
    return np.frombuffer(bytes.fromhex(TABLES[name]), dtype=np.uint8).reshape(SIZE, 3)


def listed(name: str):
    """The map *name* as a matplotlib colour map (matplotlib is imported only here: the page draws without it)."""
    from matplotlib.colors import ListedColormap

    return ListedColormap(table(name) / 255.0, name=f"lesson-{name}")


def colormaps_js() -> str:
    """The text of static/js/shared/colormaps.js: each table as a hex string, decoded once by the page."""
    return (
        "// Generated from py/lessonpy/maths/colormaps.py (python3 -m sitebuild.pages.page_copies); do not edit.\n"
        "// The build writes this file into the site from Python, and tests/unit/test_limits.py keeps\n"
        "// this copy (which the component fixture loads straight from the repository) equal.\n"
        "export const COLORMAP_HEX = Object.freeze({\n"
        + "".join(f"  {name}: {json.dumps(hex_)},\n" for name, hex_ in TABLES.items())
        + "});\n"
    )
