"""Brotli sidecars written by the build."""

import brotli

from sitebuild.compress import write_sidecars


def test_sidecars_decompress_to_the_file_and_skip_small_or_archived_files(tmp_path):
    site, cache = tmp_path / "site", tmp_path / "cache"
    (site / "js").mkdir(parents=True)
    big = site / "js" / "big.js"
    big.write_text("export const attention = 'softmax(QK^T / sqrt(d_k)) V';\n" * 400)
    (site / "js" / "tiny.js").write_text("export {};\n")
    (site / "numpy.whl").write_bytes(b"PK" + bytes(range(256)) * 20)
    assert write_sidecars(site, cache) == 1
    assert brotli.decompress((site / "js" / "big.js.br").read_bytes()) == big.read_bytes()
    assert not (site / "js" / "tiny.js.br").exists() and not (site / "numpy.whl.br").exists()
    # A second site with the same file reuses the cached compression.
    (cache / "brotli").joinpath(next((cache / "brotli").iterdir()).name).write_bytes(b"cached")
    other = tmp_path / "other"
    (other / "js").mkdir(parents=True)
    (other / "js" / "big.js").write_bytes(big.read_bytes())
    write_sidecars(other, cache)
    assert (other / "js" / "big.js.br").read_bytes() == b"cached"
