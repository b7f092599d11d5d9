"""GPT-2's BPE through our wrapper, built from GPT-2's real vocabulary and merges (offline test data)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from test_gpt2_fakes import gpt2_bpe_files, write_tokenizer_json

from helpers.core.gpt2 import BPETokenizer, drop_first_token

pytest.importorskip("tokenizers")


@pytest.fixture(scope="module")
def tok(tmp_path_factory):
    return BPETokenizer(write_tokenizer_json(tmp_path_factory.mktemp("bpe") / "tokenizer.json"))


def test_test_data_is_gpt2s_vocabulary():
    vocab, _ = gpt2_bpe_files()
    encoder = json.loads(vocab.read_text(encoding="utf-8"))
    assert len(encoder) == 50257 and encoder["<|endoftext|>"] == 50256


def test_i_like_to_draw_has_gpt2s_ids(tok):
    assert tok.encode("I like to draw") == [50256, 40, 588, 284, 3197]
    assert tok.encode("I like to draw", bos=False) == [40, 588, 284, 3197]
    assert len(tok) == 50257 and tok.bos_id == 50256


def test_tokens_are_readable_and_join_back(tok):
    tokens = tok.tokens("I like to draw")
    assert tokens == ["<|endoftext|>", "I", " like", " to", " draw"]
    assert tok.tokens("I like to draw", bos=False) == tokens[1:]
    sentence = "The cat sat on the mat, drawing élan!"
    assert "".join(tok.tokens(sentence, bos=False)) == sentence
    assert tok.decode(tok.encode(sentence)) == tok.tokens(sentence)


def test_tokens_and_ids_line_up(tok):
    sentence = "Attention heads read everything"
    assert len(tok.tokens(sentence)) == len(tok.encode(sentence))


@pytest.mark.parametrize("bad", ["", "   ", None])
def test_empty_sentence_is_one_line_error(tok, bad):
    with pytest.raises(ValueError, match="empty") as err:
        tok.encode(bad)
    assert "\n" not in str(err.value)


def test_vocab_lists_every_token_as_text(tok):
    assert len(tok.vocab) == 50257
    assert tok.vocab[588] == " like" and tok.vocab[50256] == "<|endoftext|>"


def test_a_tokenizer_without_endoftext_is_refused(tmp_path):
    from tokenizers import Tokenizer, models

    path = tmp_path / "tokenizer.json"
    Tokenizer(models.WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]")).save(str(path))
    with pytest.raises(ValueError, match="endoftext"):
        BPETokenizer(path)


# --- drop_first_token: the views' switch for GPT-2's attention sink

def sink_maps(T=5, seed=0):
    """Causal attention maps (2, 3, T, T) whose rows sum to 1."""
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(2, 3, T, T, generator=g)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    return scores.masked_fill(future, float("-inf")).softmax(-1)


def test_hide_blanks_only_the_first_column():
    maps = sink_maps()
    hidden = drop_first_token(maps)
    assert torch.isnan(hidden[..., 0]).all()
    torch.testing.assert_close(hidden[..., 1:], maps[..., 1:])
    assert torch.equal(drop_first_token(maps, fill=0.0)[..., 0], torch.zeros(2, 3, 5))


def test_renormalise_makes_rows_sum_to_one_without_the_first_token():
    maps = sink_maps()
    renorm = drop_first_token(maps, mode="renormalise")
    assert torch.isnan(renorm[..., 0, :]).all(), "row 0 only sees the first token: nothing is left"
    torch.testing.assert_close(renorm[..., 1:, 1:].sum(-1), torch.ones(2, 3, 4))
    ratio = renorm[..., 2, 1] / renorm[..., 2, 2]  # the proportions between the other keys stay
    torch.testing.assert_close(ratio, maps[..., 2, 1] / maps[..., 2, 2])
    assert torch.equal(renorm[..., 1:, 1:].triu(1), torch.zeros(2, 3, 4, 4)), "no attention to the future"


def test_drop_first_token_keeps_numpy_and_rejects_bad_input():
    maps = sink_maps().numpy()
    out = drop_first_token(maps, mode="renormalise", fill=0.0)
    assert isinstance(out, np.ndarray) and out.shape == maps.shape
    assert np.isnan(maps).sum() == 0, "the input is not modified"
    with pytest.raises(ValueError, match="mode"):
        drop_first_token(maps, mode="drop")
    with pytest.raises(ValueError, match="square"):
        drop_first_token(np.ones((3, 4)))
