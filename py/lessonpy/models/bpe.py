"""SmolLM2's byte-level BPE tokenizer (GPT-2's scheme) in pure Python: Pyodide has no ``tokenizers``.

Text -> special tokens (``<|endoftext|>``, ``<|im_start|>``, ...) cut out whole -> the rest split into
pre-tokens by GPT-2's pattern (contractions, a space with a run of letters, of digits or of other
symbols, white space) -> each pre-token's UTF-8 bytes written as printable characters (GPT-2's byte map:
a space is "Ġ", a newline "Ċ") -> merged pair by pair, the pair learned earliest (lowest rank) first, until
no learned pair is left -> token ids. Decoding maps the characters back to bytes.

The vocabulary and merges come from the GGUF file's metadata, shipped beside the live weights as
``smollm2-tokenizer.json`` (``{"tokens": [...], "merges": ["a b", ...], "special": [ids]}``). The tests hold
it to the reference ``tokenizers`` implementation built from the same GGUF on hundreds of strings.
"""

from __future__ import annotations

import json
import re
import unicodedata

#: Unicode's White_Space characters: what the reference's ``\s`` matches (Python's ``str.isspace`` differs on
#: a few control characters, \x1c to \x1f)
WHITE_SPACE = frozenset("\t\n\v\f\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000"
                        + "".join(map(chr, range(0x2000, 0x200B))))
#: GPT-2's pre-token pattern, ``'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+``,
#: written over :func:`classes`' stand-ins (Python's ``re`` has no ``\p{L}``): a letter is "a" (or itself when
#: it is one of the contractions' ASCII letters), a number "0", a space " ", other white space "\t", anything
#: else itself or "!". Matching the stand-ins splits the text where the pattern would.
PATTERN = re.compile(r"'s|'t|'re|'ve|'m|'ll|'d| ?[a-z]+| ?0+| ?[^\s a-z0]+|\s+(?!\S)|\s+")
_KEPT = frozenset("'stremvld")


def _stand_in(ch: str) -> str:
    if ch in _KEPT or ch == " ":
        return ch
    if ch in WHITE_SPACE:
        return "\t"
    kind = unicodedata.category(ch)[0]
    return "a" if kind == "L" else "0" if kind == "N" else "!"


def pre_tokens(text: str) -> list[str]:
    """*text* cut where GPT-2's pattern cuts it: ``"Hello, world!"`` -> ``["Hello", ",", " world", "!"]``."""
    stand_ins = "".join(_stand_in(ch) for ch in text)  # one character for each of text's: same positions
    return [text[m.start():m.end()] for m in PATTERN.finditer(stand_ins)]


def byte_map() -> dict:
    """GPT-2's map of the 256 bytes to printable characters: printable Latin-1 bytes are themselves, the
    others (control characters, space, ...) are shifted to 256 and up, so a token is always visible text."""
    keep = {*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)}
    shifted = [b for b in range(256) if b not in keep]
    return {b: chr(b) for b in keep} | {b: chr(256 + i) for i, b in enumerate(shifted)}


class BPE:
    """``encode(text) -> ids`` and ``decode(ids) -> text`` with a vocabulary (id -> token) and ranked merges."""

    def __init__(self, tokens: list[str], merges: list[str], special=()):
        self.tokens = list(tokens)
        self.ids = {token: i for i, token in enumerate(self.tokens)}
        # keyed by the merge as the file writes it, "a b" (no token holds a space: the byte map writes it "Ġ"):
        # (a, b) tuples of new strings took 9 MB more of Python's memory, which never shrinks in the page
        self.ranks = {merge: rank for rank, merge in enumerate(merges)}
        self.special = {self.tokens[i]: i for i in special}
        # the longest first, so that no special token is cut out of a longer one
        names = sorted(self.special, key=len, reverse=True)
        self._special = re.compile("(" + "|".join(map(re.escape, names)) + ")") if names else None
        self.to_char = byte_map()
        self.to_byte = {c: b for b, c in self.to_char.items()}
        self._cache: dict = {}

    @classmethod
    def from_json(cls, text: str) -> "BPE":
        data = json.loads(text)
        return cls(data["tokens"], data["merges"], data.get("special", ()))

    def merge(self, piece: str) -> list[str]:
        """One pre-token's characters (bytes as GPT-2's characters) merged into tokens by rank."""
        parts = list(piece)
        while len(parts) > 1:
            pairs = [(self.ranks.get(f"{a} {b}", float("inf")), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
            rank, i = min(pairs)
            if rank == float("inf"):
                break
            first, second = parts[i], parts[i + 1]
            merged, j = [], 0
            while j < len(parts):  # merge every occurrence of this pair, left to right
                if j + 1 < len(parts) and parts[j] == first and parts[j + 1] == second:
                    merged.append(first + second)
                    j += 2
                else:
                    merged.append(parts[j])
                    j += 1
            parts = merged
        return parts

    def _encode_plain(self, text: str) -> list[int]:
        ids = []
        for piece in pre_tokens(text):
            if piece not in self._cache:
                chars = "".join(self.to_char[b] for b in piece.encode("utf-8"))
                # 21 bytes never occur in SmolLM2's training text and have no token (\x1d, 0xff, ...): the
                # reference drops them, and so does this
                self._cache[piece] = [self.ids[token] for token in self.merge(chars) if token in self.ids]
            ids += self._cache[piece]
        return ids

    def encode(self, text: str) -> list[int]:
        """The token ids of *text* (no BOS: SmolLM2 adds none)."""
        if self._special is None:
            return self._encode_plain(text)
        ids = []
        for i, part in enumerate(self._special.split(text)):
            ids += [self.special[part]] if i % 2 else self._encode_plain(part)
        return ids

    def token_text(self, i: int) -> str:
        """Token *i* as the text it stands for (a piece of a multi-byte character shows as "�")."""
        return self.decode([i])

    def decode(self, ids) -> str:
        out = bytearray()
        for i in ids:
            token = self.tokens[int(i)]
            if token in self.special:
                out += token.encode("utf-8")
            else:
                out += bytes(self.to_byte[c] for c in token)
        return out.decode("utf-8", errors="replace")
