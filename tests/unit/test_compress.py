"""Brotli sidecars written by the build."""

import hashlib
import random
import zipfile

import brotli

from sitebuild import compress
from sitebuild.compress import add_sidecar, write_sidecars


def write_zip(path, compression):
    with zipfile.ZipFile(path, "w", compression) as archive:
        archive.writestr("numpy/__init__.py", "import numpy.linalg  # attention needs matmul\n" * 200)


def test_sidecars_decompress_to_the_file_and_skip_small_or_deflated_files(tmp_path):
    site, cache = tmp_path / "site", tmp_path / "cache"
    (site / "js").mkdir(parents=True)
    big = site / "js" / "big.js"
    big.write_text("export const attention = 'softmax(QK^T / sqrt(d_k)) V';\n" * 400)
    (site / "js" / "tiny.js").write_text("export {};\n")
    (site / "numpy.whl").write_bytes(b"PK" + bytes(range(256)) * 20)  # not an archive at all
    write_zip(site / "deflated.whl", zipfile.ZIP_DEFLATED)
    (site / "stored").mkdir()
    write_zip(site / "stored" / "stdlib.zip", zipfile.ZIP_STORED)
    assert write_sidecars(site, cache) == 2
    assert brotli.decompress((site / "js" / "big.js.br").read_bytes()) == big.read_bytes()
    stored = site / "stored" / "stdlib.zip"
    assert brotli.decompress((site / "stored" / "stdlib.zip.br").read_bytes()) == stored.read_bytes()
    assert not [p.name for p in site.glob("*.br")]  # tiny.js, the deflated wheel, the non-archive
    assert not (site / "js" / "tiny.js.br").exists()
    # A second site with the same file reuses the cached compression.
    key = hashlib.sha256(big.read_bytes()).hexdigest()
    next((cache / "brotli").glob(f"{key}-*")).write_bytes(b"cached")
    other = tmp_path / "other"
    (other / "js").mkdir(parents=True)
    (other / "js" / "big.js").write_bytes(big.read_bytes())
    write_sidecars(other, cache)
    assert (other / "js" / "big.js.br").read_bytes() == b"cached"


def test_a_file_that_came_with_its_sidecar_is_not_read_and_a_known_hash_is_not_computed(tmp_path, monkeypatch):
    site, cache = tmp_path / "site", tmp_path / "cache"
    site.mkdir()
    text = "export const attention = 'softmax(QK^T / sqrt(d_k)) V';\n" * 400
    for name in ("linked.js", "page.js"):
        (site / name).write_text(text)
    (site / "linked.js.br").write_bytes(b"made once, in the cache's folder for it")
    read = []
    real_sha256_file = compress.sha256_file
    monkeypatch.setattr(compress, "sha256_file", lambda path: read.append(path.name) or real_sha256_file(path))
    assert write_sidecars(site, cache) == 2
    assert read == ["page.js"]  # linked.js came with its sidecar
    assert (site / "linked.js.br").read_bytes() == b"made once, in the cache's folder for it"
    # With its sha256 known (the file's folder is named after it), a file's copy comes from the cache unread.
    (site / "same.js").write_text(text)
    assert add_sidecar(site / "same.js", cache, hashlib.sha256(text.encode()).hexdigest())
    assert read == ["page.js"] and (site / "same.js.br").read_bytes() == (site / "page.js.br").read_bytes()


def test_a_file_lacks_its_sidecar_only_where_add_sidecar_would_give_it_one(tmp_path):
    cache = tmp_path / "cache"
    text = tmp_path / "big.js"
    text.write_text("export const attention = 'softmax(QK^T / sqrt(d_k)) V';\n" * 400)
    noise = tmp_path / "noise.js"  # brotli cannot shrink random bytes: no sidecar, rightly
    noise.write_bytes(bytes(random.Random(0).randbytes(4096)))
    tiny = tmp_path / "tiny.js"
    tiny.write_text("export {};\n")
    sha = {path: hashlib.sha256(path.read_bytes()).hexdigest() for path in (text, noise, tiny)}
    assert compress.lacks_sidecar(text, cache, sha[text])  # nothing compressed yet
    assert add_sidecar(text, cache, sha[text]) and not compress.lacks_sidecar(text, cache, sha[text])
    compress.sidecar_of(text).unlink()
    assert compress.lacks_sidecar(text, cache, sha[text])  # lost: the cached copy says it would be smaller
    assert not add_sidecar(noise, cache, sha[noise]) and not compress.lacks_sidecar(noise, cache, sha[noise])
    assert not compress.lacks_sidecar(tiny, cache, sha[tiny])


def test_the_rule_names_everything_that_decides_the_sidecars(monkeypatch):
    rule = compress.rule()
    for change in (("QUALITY", 9), ("MIN_SIZE", 512), ("SUFFIXES", compress.SUFFIXES | {".xml"}),
                   ("ARCHIVES", compress.ARCHIVES | {".tar"})):
        with monkeypatch.context() as patch:
            patch.setattr(compress, *change)
            assert compress.rule() != rule, change
