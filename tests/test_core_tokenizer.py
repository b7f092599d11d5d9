import pytest

from helpers.core.language import vocabulary
from helpers.core.tokenizer import BOS, WordTokenizer, split_words


@pytest.fixture(scope="module")
def tok():
    return WordTokenizer(vocabulary())


def test_the_walkthrough_sentence(tok):
    assert tok.tokens("I like to draw") == [BOS, "I", "like", "to", "draw"]
    assert tok.tokens("I like to draw", bos=False) == ["I", "like", "to", "draw"]
    assert tok.decode(tok.encode("I like to draw")) == tok.tokens("I like to draw")
    assert tok.encode("I like to draw")[0] == 0  # <bos> is id 0


def test_case_and_punctuation_rules():
    assert split_words("i LIKE to Draw.") == ["I", "like", "to", "draw", "."]
    assert split_words("list:red cup") == ["list", ":", "red", "cup"]


@pytest.mark.parametrize("bad", ["", "   ", "\n\t"])
def test_empty_sentences_are_refused(tok, bad):
    with pytest.raises(ValueError, match="empty"):
        tok.tokens(bad)


def test_unknown_words_are_listed_with_suggestions(tok):
    with pytest.raises(ValueError) as err:
        tok.tokens("I like to drow elephants")
    message = str(err.value)
    assert "'drow'" in message and "draw" in message and "'elephants'" in message
    assert "GPT-2" in message and "\n" not in message


def test_duplicate_vocabulary_is_refused():
    with pytest.raises(ValueError, match="twice"):
        WordTokenizer(["a", "b", "a"])
