"""Word-level tokens for the classroom language.

Rules, in the order they are applied:
1. Punctuation . , ! ? : ; | becomes a token of its own.
2. Words are split on white space and lower-cased, except the pronoun "I",
   which is always written "I".
3. A start-of-sequence token ``<bos>`` is put in front (switch off with ``bos=False``);
   the classroom models were trained with it and rest their attention on it.
"""

from __future__ import annotations

import difflib
import re
import unicodedata

BOS = "<bos>"
PUNCTUATION = ".,!?:;|"
_PUNCT_RE = re.compile(f"([{re.escape(PUNCTUATION)}])")
MAX_NAMED = 5  # unknown words named in an error; the rest are counted


def split_words(sentence: str) -> list[str]:
    """Split a sentence into word tokens by the rules above (no <bos>)."""
    if not isinstance(sentence, str):
        raise ValueError(f"Expected a sentence as text, got {type(sentence).__name__}; pass a string.")
    words = _PUNCT_RE.sub(r" \1 ", sentence).split()
    if not words:
        raise ValueError("The sentence is empty; type a few words, e.g. 'I like to draw'.")
    if BOS in (w.lower() for w in words):
        raise ValueError(f"Leave {BOS} out of the sentence: the start token is put in front for you (bos=True).")
    return ["I" if w.lower() == "i" else w.lower() for w in words]


def visible(word: str) -> str:
    """The word with invisible characters (zero-width spaces, control codes) shown as <U+200B>."""
    return "".join(c if c.isprintable() and unicodedata.category(c)[0] not in "CZ" else f"<U+{ord(c):04X}>"
                   for c in word)


class WordTokenizer:
    """Maps words to ids and back for a fixed vocabulary."""

    def __init__(self, vocab: list[str]):
        if len(set(vocab)) != len(vocab):
            raise ValueError("The vocabulary lists a word twice; each word needs one id.")
        self.vocab = list(vocab)
        self.ids = {w: i for i, w in enumerate(self.vocab)}

    def __len__(self) -> int:
        return len(self.vocab)

    def tokens(self, sentence: str, bos: bool = True) -> list[str]:
        """The tokens the model will read, checked against the vocabulary."""
        words = split_words(sentence)
        unknown = [w for w in dict.fromkeys(words) if w not in self.ids]
        if unknown:
            raise ValueError(self._unknown_message(unknown))
        return ([BOS] if bos else []) + words

    def encode(self, sentence: str, bos: bool = True) -> list[int]:
        return [self.ids[t] for t in self.tokens(sentence, bos=bos)]

    def decode(self, ids) -> list[str]:
        return [self.vocab[int(i)] for i in ids]

    def _unknown_message(self, unknown: list[str]) -> str:
        """One line however much was pasted: the first few words with a hint each, then the count."""
        hints = [self._hint(w) for w in unknown[:MAX_NAMED]]
        more = f" and {len(unknown) - MAX_NAMED} more" if len(unknown) > MAX_NAMED else ""
        examples = ", ".join(w for w in ("cat", "dog", "draw", "tired") if w in self.ids) or ", ".join(self.vocab[1:5])
        return (
            f"Unknown word(s) for this model: {'; '.join(hints)}{more}. "
            f"Use words of the classroom language (e.g. {examples}) or switch to GPT-2 small."
        )

    def _hint(self, word: str) -> str:
        if word in PUNCTUATION:
            return f"'{word}' (drop the '{word}')"
        shown = visible(word)
        if shown != word:
            return f"'{shown}' (remove the invisible character)"
        close = difflib.get_close_matches(word, self.vocab, n=3)
        return f"'{word}'" + (f" (did you mean {', '.join(close)}?)" if close else "")
