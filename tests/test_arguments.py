"""One validator for layer, head, head-count and index arguments, and the bugs it fixed."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import helpers as H
from helpers.analysis import headcount as S
from helpers.core.arguments import is_whole_number, whole_number
from helpers.core.attention import check_heads
from helpers.core.model import GPTConfig
from helpers.core.weights import checked_config
from helpers.core.multihead import MultiHead
from helpers.core.walkthrough import walkthrough_layer
from helpers.figures.headcount_plots import plot_merge_example
from helpers.figures.mosaic import head_mosaic, mosaic_cell


def one_line(err) -> str:
    text = str(err.value)
    assert "\n" not in text
    return text


# --- the validator ----------------------------------------------------------------------------------
@pytest.mark.parametrize("value", [4, np.int64(4), np.int32(4), torch.tensor(4), torch.tensor(4, dtype=torch.int32)])
def test_every_integer_type_is_accepted_as_a_plain_int(value):
    got = whole_number(value, "n_heads", low=1)
    assert got == 4 and type(got) is int
    assert is_whole_number(value)


@pytest.mark.parametrize("value", [12.0, 2.5, np.float64(3.0), True, np.bool_(True), torch.tensor(True), "4",
                                   None, torch.tensor(4.0), torch.tensor([4]), np.array([4])])
def test_non_integers_are_refused_with_one_line_naming_argument_and_value(value):
    assert not is_whole_number(value)
    with pytest.raises(ValueError) as err:
        whole_number(value, "layer", 0, 11, valid="this model has layers 0..11")
    text = one_line(err)
    assert text.startswith(f"layer={value!r} ") and "this model has layers 0..11" in text


def test_out_of_range_names_the_argument_the_value_and_the_range():
    with pytest.raises(ValueError) as err:
        whole_number(12, "layer", 0, 11, valid="this model has layers 0..11")
    assert one_line(err) == "layer=12 is out of range; this model has layers 0..11."
    with pytest.raises(ValueError, match=r"head=-1 is out of range; use a whole number from 0 to 3\."):
        whole_number(np.int64(-1), "head", 0, 3)
    with pytest.raises(ValueError, match="n_heads=0 is out of range; it must be a positive whole number, e.g. 1"):
        whole_number(0, "n_heads", low=1, example="1 or 12")


# --- mosaic_cell: a negative layer gave a misaligned block, layer L an empty one ----------------------
def test_mosaic_cell_refuses_layers_and_heads_outside_the_grid():
    maps = np.random.default_rng(0).random((12, 12, 5, 5))
    mosaic = head_mosaic(maps)
    np.testing.assert_array_equal(mosaic_cell(mosaic, np.int64(11), torch.tensor(3), 5), maps[11, 3])
    for layer, head, word in [(-1, 0, "layer=-1"), (12, 0, "layer=12"), (0, 12, "head=12"), (0, -1, "head=-1")]:
        with pytest.raises(ValueError) as err:
            mosaic_cell(mosaic, layer, head, 5)
        text = one_line(err)
        assert word in text and ("layers 0..11" in text or "heads 0..11" in text)
    with pytest.raises(ValueError, match="layer=1.0"):
        mosaic_cell(mosaic, 1.0, 0, 5)
    with pytest.raises(ValueError, match="not a grid of 4 × 4"):
        mosaic_cell(mosaic, 0, 0, 4)


# --- numpy and tensor head counts are accepted everywhere ---------------------------------------------
@pytest.mark.parametrize("n", [np.int64(4), torch.tensor(4)])
def test_numpy_and_tensor_head_counts_are_accepted_everywhere(n):
    assert check_heads(96, n) == 24 and type(check_heads(96, n)) is int
    assert S.head_shapes(96, n, 5) == S.head_shapes(96, 4, 5)
    assert all(type(x) is int for shape in S.head_shapes(96, n, np.int64(5)).values() for x in shape)
    assert S.load_variant(n) is S.load_variant(4)
    layer = MultiHead(16, n)
    assert layer.head_size == 4 and layer(torch.rand(2, 3, 16)).shape == (2, 3, 16)


def test_load_variant_loads_each_model_once_whatever_the_integer_type():
    S.load_variant(4)
    hits = S._load_variant.cache_info()
    S.load_variant(np.int64(4))
    S.load_variant(torch.tensor(4))
    after = S._load_variant.cache_info()
    assert after.misses == hits.misses and after.currsize == hits.currsize


@pytest.mark.parametrize("bad", [True, 4.0, "4"])
def test_load_variant_still_refuses_bools_floats_and_text(bad):
    with pytest.raises(ValueError, match="choose one of") as err:
        S.load_variant(bad)
    one_line(err)


# --- checked_config (sizes from a file or a recipe): bools and floats were stored as sizes -----------------
@pytest.mark.parametrize("field", ["vocab_size", "n_ctx", "n_layer", "n_head", "n_embd"])
@pytest.mark.parametrize("bad", [True, 4.0, 2.5, "4"])
def test_gpt_config_refuses_bools_and_floats_for_every_size(field, bad):
    sizes = {"vocab_size": 8, "n_ctx": 8, "n_layer": 2, "n_head": 4, "n_embd": 16}
    with pytest.raises(ValueError) as err:
        checked_config(**{**sizes, field: bad})
    assert f"{field}={bad!r}" in one_line(err) and "positive integer" in one_line(err)


def test_gpt_config_stores_numpy_sizes_as_plain_ints():
    config = checked_config(vocab_size=np.int64(8), n_head=np.int64(4), n_embd=torch.tensor(16), n_layer=2)
    assert config == GPTConfig(vocab_size=8, n_head=4, n_embd=16, n_layer=2)
    assert all(type(v) is int for k, v in config.to_dict().items() if k not in ("mlp", "ln_eps"))


# --- walkthrough_layer(n_heads=12.0) looked for "walkthrough-12.0" --------------------------------------
@pytest.mark.parametrize("bad", [12.0, True, "12"])
def test_walkthrough_refuses_a_head_count_that_is_not_a_whole_number(bad):
    with pytest.raises(ValueError) as err:
        walkthrough_layer("classroom", n_heads=bad)
    text = one_line(err)
    assert f"n_heads={bad!r}" in text and "walkthrough-" not in text


# --- the slider: np.int64 group sizes crashed set_merge ---------------------------------------------------
@pytest.fixture(scope="module")
def explorer():
    return H.HeadCountExplorer(heads=4)


def test_slider_accepts_numpy_integers_and_refuses_bad_values_with_one_line(explorer):
    assert explorer.set_merge(np.int64(3)) is True
    assert explorer.merge == 3 and type(explorer.merge) is int
    assert explorer.set_heads(np.int64(2)) is True and explorer.heads == 2 and type(explorer.heads) is int
    for bad in (3.0, True, "3", 5):
        assert explorer.set_merge(bad) is False
        assert "choose one of" in explorer.status.value and "\n" not in explorer.status.value
    assert explorer.merge == 3
    for bad in (4.0, True, 5):
        assert explorer.set_heads(bad) is False
        assert "choose one of" in explorer.status.value
    assert explorer.heads == 2


# --- plot_merge_example(layer=-1) drew "L-1" ----------------------------------------------------------------
@pytest.mark.parametrize("layer, word", [(-1, "layer=-1"), (2, "layer=2"), (1.0, "layer=1.0")])
def test_plot_merge_example_refuses_a_layer_outside_the_model(layer, word):
    with pytest.raises(ValueError) as err:
        plot_merge_example(layer=layer)
    text = one_line(err)
    assert word in text and "layers 0..1" in text
