"""Notebook 07's numbers: the KV cache of published configs, parameters per layer, the kv-N variants,
map similarity within and across groups, and the mean-pooled conversion of kv-12."""

import pytest
import torch

import helpers as H
from helpers.analysis import kvcache, kvheads
from helpers.analysis.kvcache import kv_cache_bytes_per_token, kv_cache_rows
from helpers.analysis.kvheads import kv_attention_params, load_kv_variant
from helpers.core.catalog import manifest
from helpers.core.model import GPT, GPTConfig, LanguageModel
from helpers.train import RECIPES

KIB = 1024


@pytest.mark.parametrize("name,kib", [("Llama 2 7B", 512), ("Llama 3 8B", 128), ("GPT-2 small", 36),
                                      ("Mistral 7B", 128), ("Llama 2 70B", 320), ("Gemma 2B", 18),
                                      ("Qwen2-7B", 56)])
def test_cache_per_token_of_the_published_configs(name, kib):
    """The issue's examples (512 KiB, 128 KiB, 36 KiB in 16-bit), computed from the config numbers."""
    row = next(r for r in kv_cache_rows() if r["model"] == name)
    assert row["bytes per token"] == kib * KIB and row["KiB per token"] == kib


def test_published_heads_are_the_config_files_numbers():
    heads = {c.name: (c.n_head, c.n_kv_head) for c in kvcache.PUBLISHED}
    assert heads == {"Llama 3 8B": (32, 8), "Mistral 7B": (32, 8), "Llama 2 70B": (64, 8), "Gemma 2B": (8, 1),
                     "Qwen2-7B": (28, 4), "GPT-2 small": (12, 12), "Llama 2 7B": (32, 32)}
    assert all("/" in c.source for c in kvcache.PUBLISHED)  # each names the repository of its config.json


def test_an_8000_token_context():
    """07 §1: Llama 2 7B keeps 3.9 GiB of keys and values for 8,000 tokens, Llama 3 8B a quarter."""
    rows = {r["model"]: r for r in kv_cache_rows(8000)}
    assert round(rows["Llama 2 7B"]["GiB per context"], 2) == 3.91
    assert round(rows["Llama 3 8B"]["GiB per context"], 2) == 0.98
    assert rows["Llama 2 7B"]["GiB per context"] == 4 * rows["Llama 3 8B"]["GiB per context"]
    assert round(rows["GPT-2 small"]["GiB per context"], 2) == 0.27
    assert "3.91" in H.kv_cache_table() and "GiB for 8,000 tokens" in H.kv_cache_table()


def test_cache_formula_and_its_one_line_errors():
    assert kv_cache_bytes_per_token(2, 3, 8) == 2 * 2 * 3 * 8 * 2
    assert kv_cache_bytes_per_token(12, 12, 64, bytes_per_number=4) == 73728
    for bad in ({"n_layer": 0}, {"n_kv_head": 1.5}, {"bytes_per_number": True}):
        kwargs = {"n_layer": 2, "n_kv_head": 3, "d_head": 8, **bad}
        with pytest.raises(ValueError) as err:
            kv_cache_bytes_per_token(**kwargs)
        assert "\n" not in str(err.value)


@pytest.mark.parametrize("n_kv", [1, 2, 3, 4, 6, 12])
def test_attention_parameters_per_layer_match_a_counted_layer(n_kv):
    model = GPT(GPTConfig(vocab_size=10, n_layer=1, n_head=12, n_embd=96, n_kv_head=n_kv))
    counted = sum(p.numel() for p in model.h[0].attn.parameters())
    assert kv_attention_params(96, 12, n_kv) == counted
    assert kv_attention_params(96, 12, 12) == H.attention_param_count(96, 12) == 37_248


def test_bad_kv_counts_get_one_line():
    for bad, words in ((5, "does not divide the 12 query heads"), (0, "out of range"), (2.5, "not a whole number")):
        with pytest.raises(ValueError, match=words) as err:
            load_kv_variant(bad)
        assert "choose one of 1, 2, 3, 4, 6, 12" in str(err.value) and "\n" not in str(err.value)


def test_groups_are_neighbours_as_in_the_model():
    assert [kvheads.group_of(h, 3) for h in range(12)] == [0] * 4 + [1] * 4 + [2] * 4
    assert [kvheads.group_of(h, 12) for h in range(12)] == list(range(12))


# --- the trained variants ------------------------------------------------------------------------------
def test_every_variant_has_heads_12s_recipe_but_its_key_value_heads():
    """Same seed, stories, steps and settings as notebook 04's heads-12; kv-12 is that recipe exactly."""
    assert [H.variant_name(n) for n in H.KV_COUNTS] == ["kv-1", "kv-2", "kv-3", "kv-4", "kv-6", "kv-12"]
    twelve = dict(RECIPES["heads-12"].__dict__, note="")
    for n in H.KV_COUNTS:
        recipe = dict(RECIPES[f"kv-{n}"].__dict__, note="")
        assert recipe["config"] == {**twelve["config"], "n_kv_head": n}
        assert {k: v for k, v in recipe.items() if k != "config"} == {k: v for k, v in twelve.items() if k != "config"}
    assert GPTConfig(vocab_size=9, **RECIPES["kv-12"].config) == GPTConfig(vocab_size=9, **RECIPES["heads-12"].config)


def test_every_variant_is_shipped_with_its_setting_and_records():
    shipped = manifest()
    for n in H.KV_COUNTS:
        entry = shipped[H.variant_name(n)]
        assert entry["config"].get("n_kv_head", 12) == n and entry["config"]["n_head"] == 12
        assert entry["command"] == f"python -m helpers.train {H.variant_name(n)}"
        lm = load_kv_variant(n)
        assert lm.config.n_kv_head == n and lm is load_kv_variant(n)  # loaded once
        info = entry["info"]
        assert {"held_out_loss", "accuracy_induction", "seed"} <= set(info) and info["seed"] == 22
    results = H.kv_results()
    assert list(results) == list(H.KV_COUNTS)
    assert [r["cache_bytes_per_token"] for r in results.values()] == [64, 128, 192, 256, 384, 768]
    table = H.kv_results_table()
    assert len(table.splitlines()) == 7 and "kv-12" in table and "kv-1 " in table


# --- within and across groups -----------------------------------------------------------------------------
def test_group_similarity_on_made_up_maps():
    T = 4
    same = torch.eye(T).expand(1, 1, 4, T, T).clone()  # 4 heads with identical maps
    sims = kvheads.group_similarity(same, 2)
    assert (sims["within"], sims["across"], sims["within_by_layer"]) == (1.0, 1.0, [1.0])
    maps = same.clone()
    maps[:, :, 2:] = torch.tril(torch.ones(T, T)) / torch.arange(1, T + 1)[:, None]  # heads 2, 3: uniform
    sims = kvheads.group_similarity(maps, 2)
    assert sims["within"] == 1.0 and sims["across"] < 0.6


# --- mean pooling -------------------------------------------------------------------------------------------
def test_pooling_to_12_changes_nothing_and_pooling_equal_heads_is_exact():
    lm = load_kv_variant(12)
    ids = torch.tensor([lm.tokenizer.encode(kvheads.SENTENCE)])
    same = H.pooled_model(lm, 12)
    assert torch.equal(same(ids).logits, lm.model(ids).logits)
    # make each group's key and value heads equal first: pooling them must then be exact
    model = GPT(lm.config)
    model.load_state_dict(lm.model.state_dict())
    with torch.no_grad():
        for block in model.h:
            W, b = block.attn.c_attn.weight, block.attn.c_attn.bias  # (3D, D), (3D,)
            for start in (96, 192):
                for g in range(3):
                    rows = slice(start + g * 32, start + g * 32 + 32)
                    W[rows] = W[start + g * 32:start + g * 32 + 8].repeat(4, 1)
                    b[rows] = b[start + g * 32:start + g * 32 + 8].repeat(4)
    tied = LanguageModel(name="tied", model=model, tokenizer=lm.tokenizer)
    pooled = H.pooled_model(tied, 3)
    assert pooled.config.n_kv_head == 3
    assert torch.allclose(pooled(ids).logits, model(ids).logits, atol=1e-5)


def test_pooling_refuses_a_grouped_model():
    with pytest.raises(ValueError, match="already shares keys and values"):
        H.pooled_model(load_kv_variant(3), 1)


def test_recorded_pooled_results_are_what_the_shipped_file_measures():
    recorded = manifest()["kv-12"]["kv_pooled"]
    assert set(recorded) == {str(n) for n in H.KV_COUNTS}
    lm = load_kv_variant(12)
    for n in (12, 3):
        assert kvheads.measure_pooled(lm, n) == pytest.approx(recorded[str(n)], abs=1e-4)
    assert recorded["12"]["held_out_loss"] == manifest()["kv-12"]["info"]["held_out_loss"]


def test_pooling_on_text_is_generic_and_agrees_with_the_recorded_pooling_on_kv_12():
    """The measurement §5 runs on GPT-2 works on any multi-head model: on kv-12, pooling to 12 moves nothing and
    the loss falls back to the model's own; fewer key/value heads move the maps and raise the loss."""
    lm = load_kv_variant(12)
    results = H.pooling_on_text(lm, text=kvheads.SENTENCE, sentence=kvheads.SENTENCE)
    assert list(results) == list(H.KV_COUNTS)
    assert results[12]["mean_change"] == 0 and results[12]["loss"] == kvheads.text_loss(lm, kvheads.SENTENCE)[0]
    assert all(results[n]["loss"] > results[12]["loss"] and results[n]["mean_change"] > 0.1 for n in (1, 2, 3, 4, 6))
    assert results[1]["map_change"].shape == (2, 12)
    assert "kv-12 mean-pooled, NOT retrained" in H.pooling_table(results, "kv-12")


def test_a_map_that_did_not_move_moved_exactly_nothing_and_others_move_one_minus_their_overlap():
    """Rows of softmax sum to 1 only to within float32 rounding (which differs between kinds of CPU), so
    "moved" is measured as Σ max(0, before − after): exactly 0 for the same map, 1 − overlap otherwise."""
    maps = torch.randn(3, 4, 9, 9, generator=torch.Generator().manual_seed(0)).softmax(-1)
    assert (maps.sum(-1) != 1).any()  # the rounding this guards against is there
    assert torch.equal(kvheads.map_moved(maps, maps.clone()), torch.zeros(3, 4, 9))
    other = maps.flip(-1)
    torch.testing.assert_close(kvheads.map_moved(maps, other), 1 - kvheads.map_overlap(maps, other), atol=1e-6, rtol=0)
