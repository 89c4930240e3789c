"""BERT's uncased WordPiece tokenizer in pure Python (Pyodide has no ``tokenizers``), as MiniLM-L6 uses it.

Text -> normalise (drop control characters, spaces around CJK characters, lower case, strip accents)
-> split on white space and punctuation -> each word greedily into the longest pieces in the vocabulary
("##" marks a piece that continues a word; a word with no split becomes [UNK]) -> [CLS] ... [SEP].
It matches the reference ``tokenizers`` implementation of the model's ``tokenizer.json``; the tests hold
it to that on accents, CJK, emoji, zero-width characters, punctuation and unknown words.
"""

from __future__ import annotations

import unicodedata

#: longer words are [UNK] outright, as in the reference
MAX_WORD_CHARS = 100
#: MiniLM was trained on at most 128 pieces ([CLS] and [SEP] included)
MAX_TOKENS = 128


class TokenizerError(ValueError):
    """The text cannot be tokenised as asked (for example: too long for the model)."""


class TooManyTokens(TokenizerError):
    """The text makes more tokens than the model reads: ``count`` of them, ``limit`` at most (a caller may say
    it in its own words from these, not from the message)."""

    def __init__(self, count: int, limit: int):
        super().__init__(f"the text makes {count} tokens; the model reads at most {limit}: shorten it")
        self.count, self.limit = count, limit


def _is_cjk(cp):
    """The CJK Unified Ideographs blocks BERT puts spaces around (not Japanese kana nor Korean hangul)."""
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def _is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:  # all ASCII non-alphanumerics
        return True
    return unicodedata.category(ch).startswith("P")


def normalise(text: str) -> str:
    """Clean, space out CJK characters, lower-case and strip accents, as BERT's uncased normaliser does."""
    out = []
    for ch in text:
        cp = ord(ch)
        if ch in " \t\n\r" or unicodedata.category(ch) == "Zs":
            out.append(" ")
        elif cp == 0 or cp == 0xFFFD or unicodedata.category(ch).startswith("C"):
            continue  # control and format characters (zero-width joiners among them) vanish
        elif _is_cjk(cp):
            out.append(f" {ch} ")
        else:
            out.append(ch)
    text = unicodedata.normalize("NFD", "".join(out).lower())
    return "".join(ch for ch in text if unicodedata.category(ch) != "Mn")


def words(text: str) -> list[str]:
    """Split normalised text on white space, and make every punctuation character a word of its own."""
    out = []
    for chunk in text.split():
        word = ""
        for ch in chunk:
            if _is_punctuation(ch):
                if word:
                    out.append(word)
                out.append(ch)
                word = ""
            else:
                word += ch
        if word:
            out.append(word)
    return out


class WordPiece:
    """``WordPiece(vocab_text)`` from the lines of vocab.txt (the line number is the id)."""

    def __init__(self, vocab_text: str):
        self.vocab = {}
        for i, line in enumerate(vocab_text.split("\n")):
            token = line.rstrip("\r")
            if token and token not in self.vocab:
                self.vocab[token] = i
        self.tokens_by_id = {i: t for t, i in self.vocab.items()}
        missing = [t for t in ("[CLS]", "[SEP]", "[UNK]") if t not in self.vocab]
        if missing:
            raise TokenizerError(f"not a BERT vocabulary: no {', '.join(missing)}")

    def pieces(self, word: str) -> list[str]:
        """Greedy longest-match-first: 'tokenisation' -> ['token', '##isation'] (or ['[UNK]'])."""
        if len(word) > MAX_WORD_CHARS:
            return ["[UNK]"]
        out, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    break
                end -= 1
            else:
                return ["[UNK]"]  # no piece fits here: the whole word is unknown
            out.append(piece)
            start = end
        return out

    def tokenize(self, text: str) -> list[str]:
        """The pieces of *text*, without [CLS] and [SEP]."""
        return [p for w in words(normalise(text)) for p in self.pieces(w)]

    def encode(self, text: str, max_tokens: int = MAX_TOKENS) -> tuple[list[int], list[str]]:
        """Token ids and tokens of *text* as the model reads it: [CLS] pieces... [SEP]."""
        tokens = ["[CLS]", *self.tokenize(text), "[SEP]"]
        if len(tokens) > max_tokens:
            raise TooManyTokens(len(tokens), max_tokens)
        return [self.vocab[t] for t in tokens], tokens
