"""Head scores: detectors on synthetic perfect patterns, ground-truth relation tables, plots."""

import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

from helpers.analysis import detectors
from helpers.analysis import relations as S
from helpers.core import evaluation
from helpers.core.language import RELATIONS, Story, vocabulary
from helpers.core.model import GPT, GPTConfig, LanguageModel
from helpers.core.tokenizer import WordTokenizer
from helpers.figures import score_plots

L, H, T = 3, 4, 21


def tiny_lm(n_layer=2, n_head=2, seed=0) -> LanguageModel:
    torch.manual_seed(seed)
    cfg = GPTConfig(vocab_size=len(vocabulary()), n_ctx=64, n_layer=n_layer, n_head=n_head, n_embd=12)
    return LanguageModel("tiny-random", GPT(cfg).eval(), WordTokenizer(vocabulary()))


def pattern(offsets: dict, T: int = T) -> torch.Tensor:
    """(L, H, T, T) maps; head (l, h) in `offsets` looks back offsets[(l, h)] tokens (0 = itself),
    every other head attends to itself."""
    attn = torch.zeros(L, H, T, T)
    for l in range(L):
        for h in range(H):
            back = offsets.get((l, h), 0)
            for t in range(T):
                attn[l, h, t, max(0, t - back) if back != "first" else 0] = 1.0
    return attn


def repeated(period: int = 10) -> torch.Tensor:
    first = torch.randperm(100, generator=torch.Generator().manual_seed(0))[:period]
    return torch.cat([first, first])  # (2 * period,)


def test_previous_token_detector_finds_the_perfect_head_only():
    s = detectors.previous_token_scores(pattern({(1, 2): 1}))
    assert s.shape == (L, H)
    assert s[1, 2] == pytest.approx(1.0)
    assert np.delete(s.ravel(), 1 * H + 2).max() == pytest.approx(0.0)


def test_first_token_detector_finds_the_perfect_head_only():
    s = detectors.first_token_scores(pattern({(2, 0): "first"}))
    assert s[2, 0] == pytest.approx(1.0)
    assert np.delete(s.ravel(), 2 * H).max() == pytest.approx(0.0)
    assert detectors.first_token_scores(pattern({(0, 0): 1}))[0, 0] == pytest.approx(1 / (T - 1))  # only t=1 hits


def test_word_detector_measures_the_weight_on_every_copy_of_the_word():
    tokens = ["<bos>", "a", ".", "b", "c", " .", "d"]  # GPT-2 spells a full stop after a space " ."
    attn = torch.zeros(L, H, 7, 7)
    attn[..., 0] = 1.0  # every head rests on the first token ...
    attn[1, 2] = 0.0
    for t in range(7):
        attn[1, 2, t, 2 if t < 5 else 5] = 1.0  # ... except one, which rests on the latest full stop
    s = detectors.word_scores(attn, tokens, ".")
    assert s.shape == (L, H) and s[1, 2] == pytest.approx(1.0)
    assert np.delete(s.ravel(), 1 * H + 2).max() == pytest.approx(0.0)
    with pytest.raises(ValueError, match="'zebra' is not followed by any query"):
        detectors.word_scores(attn, tokens, "zebra")
    with pytest.raises(ValueError, match="6 tokens do not match"):
        detectors.word_scores(attn, tokens[:-1], ".")


def test_duplicate_token_detector_on_a_repeated_sequence():
    ids = repeated(10)
    attn = pattern({(0, 1): 10, (0, 3): 1, (2, 2): 9}, T=20)  # exact copy, previous token, induction offset
    s = detectors.duplicate_token_scores(attn, ids)
    assert s[0, 1] == pytest.approx(1.0)
    assert s[0, 3] == pytest.approx(0.0) and s[2, 2] == pytest.approx(0.0)


def test_duplicate_token_detector_needs_a_repeat():
    with pytest.raises(ValueError, match="repeats"):
        detectors.duplicate_token_scores(pattern({}, T=5), torch.arange(5))


def test_induction_detector_on_a_repeated_sequence():
    attn = pattern({(1, 1): 9, (0, 1): 10, (2, 3): 1}, T=20)  # induction, duplicate, previous
    s = detectors.induction_pattern_scores(attn, period=10)
    assert s[1, 1] == pytest.approx(1.0)
    assert s[0, 1] == pytest.approx(0.0) and s[2, 3] == pytest.approx(0.0)
    with pytest.raises(ValueError, match="period"):
        detectors.induction_pattern_scores(attn, period=15)


def test_detectors_average_over_a_batch_and_reject_bad_shapes():
    batch = torch.stack([pattern({(0, 0): 1}), pattern({})])  # (2, L, H, T, T)
    assert detectors.previous_token_scores(batch)[0, 0] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="shape"):
        detectors.previous_token_scores(torch.zeros(3, 4, 5))


def test_repeated_random_tokens_are_seeded_distinct_and_said_twice():
    lm = tiny_lm()
    ids = detectors.repeated_random_tokens(lm, length=12, batch=3, seed=5)
    assert ids.shape == (3, 25)
    assert (ids[:, 0] == lm.tokenizer.ids["<bos>"]).all()
    assert torch.equal(ids[:, 1:13], ids[:, 13:])
    assert all(len(set(row[1:13].tolist())) == 12 and 0 not in row[1:].tolist() for row in ids)
    assert torch.equal(ids, detectors.repeated_random_tokens(lm, length=12, batch=3, seed=5))
    with pytest.raises(ValueError, match="length"):
        detectors.repeated_random_tokens(lm, length=40)


def test_generic_scores_of_a_random_model_are_tables_in_range():
    lm = tiny_lm()
    g = detectors.generic_scores(lm, length=10, batch=2)
    assert set(g) == {"previous", "first", "duplicate", "induction"}
    for table in g.values():
        assert table.shape == (2, 2) and (table >= 0).all() and (table <= 1).all()
    assert np.allclose(detectors.induction_scores(lm, length=10, batch=2), g["induction"])


def test_relation_pairs_point_back_to_the_right_words():
    stories = evaluation.held_out_stories(16)
    for relation in RELATIONS:
        triples = S.relation_pairs(stories, relation)
        assert triples, relation
        assert all(0 <= k <= q < len(stories[b].tokens) for b, q, k in triples)
    for b, q, k in S.relation_pairs(stories, "induction"):  # the key holds the word to say next
        assert stories[b].tokens[k] == stories[b].tokens[q + 1]
    with pytest.raises(ValueError, match="choose one of"):
        S.relation_pairs(stories, "rhyme")


def test_pair_scores_give_one_to_a_head_that_follows_the_truth():
    stories = evaluation.held_out_stories(8)
    triples = S.relation_pairs(stories, "agreement")
    attn = torch.zeros(8, L, H, 64, 64)
    for b, q, k in triples:
        attn[b, 2, 1, q, k] = 1.0
    s = S.pair_scores(attn, triples)
    assert s[2, 1] == pytest.approx(1.0)
    assert np.delete(s.ravel(), 2 * H + 1).max() == 0.0


def test_relation_scores_on_a_tiny_model():
    lm = tiny_lm(n_layer=2, n_head=3)
    tables = S.relation_scores(lm, n_stories=8)
    assert list(tables) == list(S.SCORED_RELATIONS)
    for table in tables.values():
        assert table.shape == (2, 3)
        assert np.isfinite(table).all() and (table >= 0).all() and (table <= 1).all()
    assert np.allclose(tables["previous"], S.relation_scores(lm, n_stories=8)["previous"])  # seeded


def test_relation_scores_refuse_a_model_without_the_classroom_words():
    lm = LanguageModel("other", tiny_lm().model, WordTokenizer(["a", "b"]))
    with pytest.raises(ValueError, match="generic detectors"):
        S.relation_scores(lm, n_stories=2)


def test_resting_mask_marks_bos_and_the_latest_full_stop():
    story = Story(tokens=["<bos>", "a", ".", "b", "c", ".", "d"])
    mask = S.resting_mask([story])[0]  # (T, T)
    assert mask[0].sum() == 0  # <bos> has nothing earlier
    assert mask[1].nonzero().flatten().tolist() == [0]  # no full stop yet: <bos> only
    assert mask[2].nonzero().flatten().tolist() == [0, 2]  # a full stop counts from its own position
    assert mask[4].nonzero().flatten().tolist() == [0, 2] and mask[6].nonzero().flatten().tolist() == [0, 5]
    attn = torch.zeros(1, L, H, 7, 7)
    attn[0, 1, 2, torch.arange(7), torch.arange(7)] = 1.0  # every head looks at itself ...
    attn[0, 1, 2, 3:5, 2] = 1.0  # ... one of them rests on the full stop from b and c
    attn[0, 1, 2, 3:5, 3:5] = 0.0
    s = S.resting_scores(attn, [story])
    assert s[1, 2] == pytest.approx(4 / 6)  # queries 2 ('.' itself), 3, 4, 5 ('.') of 6
    assert s[0, 0] == 0.0


def test_fixed_offset_baseline_and_pairs_beyond_the_previous_word():
    story = Story(tokens=["<bos>"] + list("abcdefgh"))
    story.links["object"] = [(3, 2), (5, 4), (8, 6), (6, 3)]  # offsets 1, 1, 2, 3
    assert S.offset_baseline([story], "object") == (1, 0.5)
    assert S.relation_pairs([story], "object", beyond_previous=True) == [(0, 8, 6), (0, 6, 3)]
    k, score = S.offset_baseline([story], "object", beyond_previous=True)
    assert k in (2, 3) and score == 0.5
    story.links["object"] = [(3, 2)]
    assert S.offset_baseline([story], "object", beyond_previous=True)[0] is None


def test_types_put_position_first_then_grammar_then_rest():
    tables = {"previous": np.array([[0.9, 0.1, 0.0, 0.1]]), "resting": np.array([[0.0, 0.8, 0.8, 0.2]]),
              "determiner": np.array([[0.95, np.nan, 0.6, 0.3]])}
    types, best = S.best_head_types(tables)
    # previous beats a higher grammar score; grammar beats resting; resting beats nothing
    assert types.tolist() == [["previous", "resting", "determiner", "none"]]
    assert np.allclose(best, [[0.9, 0.8, 0.6, 0.3]])
    fig = score_plots.plot_head_types(tables)
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == ["previous (1)", "resting (1)", "determiner (1)", "none (1)"]
    assert not fig.axes[0].texts  # no words inside the cells


def test_best_head_types_and_ranking():
    tables = {"previous": np.array([[0.9, 0.1], [0.2, 0.3]]),
              "induction": np.array([[0.1, 0.7], [np.nan, 0.4]])}
    types, best = S.best_head_types(tables, threshold=0.5)
    assert types.tolist() == [["previous", "induction"], ["none", "none"]]
    assert np.allclose(best, [[0.9, 0.7], [0.2, 0.4]])
    ranked = S.ranked_heads(tables, "induction", k=3)
    assert [head for head, _ in ranked] == [(0, 1), (1, 1), (0, 0)]  # NaN comes last
    assert ranked[0][1] == pytest.approx(0.7)
    with pytest.raises(ValueError, match="rhyme"):
        S.ranked_heads(tables, "rhyme")


def test_plots_return_figures():
    tables = {r: np.random.default_rng(0).random((3, 4)) for r in RELATIONS}
    fig = score_plots.plot_score_tables(tables)
    assert isinstance(fig, Figure)
    images = [ax.images[0] for ax in fig.axes if ax.images]
    assert len(images) == len(RELATIONS) and images[0].get_clim() == (0, 1)
    assert isinstance(score_plots.plot_score_tables(tables, relations=["bos"]), Figure)
    assert isinstance(score_plots.plot_ranked(tables, "bos", k=4), Figure)
    assert isinstance(score_plots.plot_head_types(tables), Figure)
    with pytest.raises(ValueError, match="rhyme"):
        score_plots.plot_score_tables(tables, relations=["rhyme"])


# The shipped classroom model's bars per relation are tested in tests/test_core_shipped.py.


def test_published_head_ranks():
    table = np.zeros((12, 12))
    table[4, 11], table[2, 2], table[7, 7] = 0.9, 0.5, 0.7
    rows = detectors.published_head_ranks({"previous": table}, {"previous": [(4, 11), (2, 2)]})
    assert rows == [{"detector": "previous", "head": "L4 H11", "score": 0.9, "rank": 1},
                    {"detector": "previous", "head": "L2 H2", "score": 0.5, "rank": 3}]


# --- GPT-2 small: the detectors recover the heads Wang et al. (2022) published --------
TOP = 12  # "recovered" = among the 12 best of 144 heads for its detector (the top twelfth)


@pytest.fixture(scope="module")
def gpt2_tables():
    from helpers.core import gpt2

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")  # look in the local folders only: tests never download
        try:
            paths = gpt2.download_gpt2(progress=False)
        except gpt2.GPT2Unavailable as err:
            pytest.skip(f"GPT-2 small's weights are not on this machine, and tests never download them: {err}")
    lm = gpt2.load_gpt2(paths["model.safetensors"].parent)
    return detectors.generic_scores(lm, length=40, batch=8, seed=0)


def test_gpt2_detectors_recover_the_published_heads(gpt2_tables):
    rows = detectors.published_head_ranks(gpt2_tables)
    missed = [row for row in rows if row["rank"] > TOP]
    assert not missed, missed
    assert S.ranked_heads(gpt2_tables, "previous", k=1)[0][0] in detectors.PUBLISHED_GPT2_HEADS["previous"]
