"""Knock-outs: the right head is removed, means are the heads' real outputs, the widget works headless."""

import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

from helpers.analysis import detectors
from helpers.analysis import knockout as A
from helpers.analysis import relations as S
from helpers.core import evaluation
from helpers.core.catalog import manifest
from helpers.core.language import vocabulary
from helpers.core.model import GPT, GPTConfig, LanguageModel, head_weights
from helpers.core.tokenizer import WordTokenizer
from helpers.exercises import head_checks
from helpers.figures import knockout_plots
from helpers.widgets.knockout import KnockoutExplorer

SENTENCE = "list : red mat old fox . again : red mat old"


def tiny_lm(seed=0) -> LanguageModel:
    torch.manual_seed(seed)
    cfg = GPTConfig(vocab_size=len(vocabulary()), n_ctx=64, n_layer=2, n_head=4, n_embd=32)
    return LanguageModel("tiny-random", GPT(cfg).eval(), WordTokenizer(vocabulary()))


def logits(lm, ids, heads=(), mode="zero"):
    with torch.no_grad(), A.knock_out(lm, heads, mode):
        return lm.model(ids).logits


@torch.no_grad()
def by_hand(lm, ids, heads, means=None):
    """The forward pass written out, each removed head's slice of c_proj's input overwritten by hand."""
    model, d = lm.model, lm.config.d_head
    x = model.embed(ids)
    for i, block in enumerate(model.h):
        _, _, z = block.attn(block.ln_1(x))  # (B, H, T, d)
        merged = z.transpose(1, 2).reshape(x.shape)  # the heads side by side: what c_proj reads
        for layer, head in heads:
            if layer == i:
                merged[..., head * d:(head + 1) * d] = 0.0 if means is None else means[layer, head]
        x = x + block.attn.c_proj(merged)
        x = x + block.mlp(block.ln_2(x))
    return model.unembed(x)


def test_parse_and_check_heads():
    lm = tiny_lm()
    assert A.parse_head("L1 H3") == (1, 3) and A.parse_head("1.3") == (1, 3) and A.parse_head(" l0 h2") == (0, 2)
    assert A.check_head_list(lm, ["L1 H3", (0, 2)]) == [(1, 3), (0, 2)]
    with pytest.raises(ValueError, match="'L5 H3'"):
        A.parse_head("five")
    with pytest.raises(ValueError, match="L2 H0 does not exist"):
        A.check_head_list(lm, [(2, 0)])


@pytest.mark.parametrize("mode", ["zero", "mean"])
def test_the_hook_knock_out_equals_overwriting_the_heads_slice_by_hand(mode):
    lm = tiny_lm()
    ids = torch.tensor([lm.tokenizer.encode(SENTENCE)])
    heads = [(1, 3), (0, 0), (1, 1)]
    means = A.cached_head_means(lm) if mode == "mean" else None
    hooked = logits(lm, ids, heads, mode)
    assert torch.allclose(hooked, by_hand(lm, ids, heads, means), atol=1e-6)
    assert not torch.allclose(hooked, logits(lm, ids), atol=1e-4)  # the heads did something


def test_the_hooks_are_gone_after_the_block_even_after_an_error():
    lm = tiny_lm()
    ids = torch.tensor([lm.tokenizer.encode(SENTENCE)])
    plain = logits(lm, ids)
    removal = A.knock_out(lm, [(0, 1), (1, 2)], "mean")
    with pytest.raises(RuntimeError, match="stopped inside"), removal:
        assert not torch.allclose(lm.model(ids).logits, plain, atol=1e-4)
        raise RuntimeError("stopped inside the with block")
    assert torch.equal(logits(lm, ids), plain)
    with removal:  # the same knock-out can be entered again, and leaves nothing behind again
        pass
    assert torch.equal(logits(lm, ids), plain)


def test_bad_heads_or_mode_are_refused_before_the_with_block():
    lm = tiny_lm()
    with pytest.raises(ValueError, match="'zero' or 'mean'"):
        A.knock_out(lm, [], mode="half")
    with pytest.raises(ValueError, match="L2 H0 does not exist"):
        A.knock_out(lm, [(2, 0)])


def test_zero_knock_out_removes_exactly_the_named_head():
    lm = tiny_lm()
    d = lm.config.d_head
    with torch.no_grad():  # make head 2 of layer 1 write nothing: its 8 columns of W_O are zero
        lm.model.h[1].attn.c_proj.weight[:, 2 * d:3 * d] = 0
    ids = torch.tensor([lm.tokenizer.encode(SENTENCE)])
    plain = logits(lm, ids)
    assert torch.allclose(logits(lm, ids, [(1, 2)]), plain, atol=1e-6)  # removing a silent head: no change
    assert not torch.allclose(logits(lm, ids, [(1, 1)]), plain, atol=1e-4)
    assert torch.allclose(logits(lm, ids, []), plain)


def test_head_means_are_the_heads_average_outputs():
    lm = tiny_lm()
    ids = torch.tensor([lm.tokenizer.encode(SENTENCE), lm.tokenizer.encode("the cat sat on the mat because it was tired . the")])
    means = A.head_means(lm, ids)  # (L, H, d)
    with torch.no_grad():  # layer 0 by hand, from the per-head weights
        x = lm.model.h[0].ln_1(lm.model.embed(ids))  # (B, T, D)
        w = head_weights(lm.model, 0)
        v = torch.einsum("btd,hde->bhte", x, w["W_V"]) + w["b_V"][None, :, None]  # (B, H, T, d)
        attn = lm.model(ids).attentions[:, 0]  # (B, H, T, T)
        expected = (attn @ v).mean(dim=(0, 2))  # (H, d)
    assert torch.allclose(means[0], expected, atol=1e-5)


def test_mean_knock_out_with_a_constant_head_changes_nothing():
    lm = tiny_lm()
    with torch.no_grad():  # head 0 of layer 0 gets V = bias only, so its output is always its bias
        lm.model.h[0].attn.c_attn.weight[2 * 32:2 * 32 + 8] = 0
        lm.model.h[0].attn.c_attn.bias[2 * 32:2 * 32 + 8] = torch.linspace(-1, 1, 8)
    ids = torch.tensor([lm.tokenizer.encode(SENTENCE)])
    assert torch.allclose(logits(lm, ids, [(0, 0)], "mean"), logits(lm, ids), atol=1e-5)
    assert not torch.allclose(logits(lm, ids, [(0, 0)], "zero"), logits(lm, ids), atol=1e-4)


def test_forced_accuracy_is_a_fraction_and_checks_the_relation():
    lm = tiny_lm()
    acc = A.forced_accuracy(lm, "induction", n_stories=8)
    assert 0.0 <= acc <= 1.0
    assert A.forced_accuracy(lm, "induction", n_stories=8) == acc  # seeded
    with pytest.raises(ValueError, match="decides no next word"):
        A.forced_accuracy(lm, "previous")


def test_next_word_change_and_bars():
    lm = tiny_lm()
    same = A.next_word_change(lm, SENTENCE, [], top_k=4)
    assert len(same["words"]) == 4 and np.allclose(same["before"], same["after"])
    assert (np.diff(same["before"]) <= 0).all()  # most likely first
    changed = A.next_word_change(lm, SENTENCE, [(0, 1), (1, 2)], top_k=4)
    assert 4 <= len(changed["words"]) <= 8 and not np.allclose(changed["before"], changed["after"])
    fig = knockout_plots.prediction_bars(lm, SENTENCE, ["L0 H1"], top_k=4)
    assert isinstance(fig, Figure) and len(fig.axes[0].containers) == 2


def test_knockout_explorer_headless():
    lm = tiny_lm()
    ex = KnockoutExplorer(lm, SENTENCE, heads=[(0, 1)])
    assert ex.knocked() == [(0, 1)] and ex.image.value and "1 head" in ex.message.value
    ex.heads.value = ("L1 H2", "L0 H3")
    assert ex.knocked() == [(1, 2), (0, 3)] and "2 head" in ex.message.value
    good = ex.change
    ex.sentence.value = "the zebra"
    assert "zebra" in ex.message.value and ex.change is good  # one line, last view kept
    assert ex.sentence.value == SENTENCE and f"still showing “{SENTENCE}”" in ex.message.value
    ex.sentence.value = "the cat"
    ex.clear.click()
    listed = KnockoutExplorer(lm, SENTENCE, heads=[(1, 3), (0, 2)])
    assert list(listed.heads.options[:2]) == ["L1 H3", "L0 H2"] and listed.heads.rows >= 16  # chosen heads in view
    assert len(listed.heads.options) == len(set(listed.heads.options)) == lm.config.n_layer * lm.config.n_head
    assert listed.image.layout.width == f"{listed.frame.canvas.get_width_height()[0]}px"  # shown at its own size
    box = listed.figure.axes[0].get_legend().get_window_extent(listed.frame.canvas.get_renderer())
    assert listed.figure.bbox.contains(*box.p0) and listed.figure.bbox.contains(*box.p1)  # the legend is not cut off
    zero_png = bytes(listed.image.value)
    listed.mode.value = "mean"  # prepared when the widget was built: the picture must still be the right one
    want = A.next_word_change(lm, SENTENCE, [(1, 3), (0, 2)], "mean", listed.top_k)
    np.testing.assert_allclose(listed.change["after"], want["after"], rtol=1e-5)
    assert bytes(listed.image.value) != zero_png and "(mean)" in listed.message.value
    assert ex.heads.value == () and np.allclose(ex.change["before"], ex.change["after"])


def test_knockout_explorer_exports_the_bars_it_shows(tmp_path):
    """Its "Export for slides" writes the bars now shown (PNG, SVG, PDF, caption) and says where."""
    ex = KnockoutExplorer(tiny_lm(), SENTENCE, heads=[(0, 1)], folder=str(tmp_path))
    ex.export_button.click()
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"knockout_bars.{x}" for x in ("pdf", "png", "svg", "txt")]
    assert "Saved 4 files" in ex.status.value and "L0 H1" in (tmp_path / "knockout_bars.txt").read_text()
    (tmp_path / "file").write_text("")
    assert ex.export(tmp_path / "file") == [] and "⚠" in ex.status.value  # one line, not a traceback


# --- the trained classroom model ------------------------------------------------------
needs_classroom = pytest.mark.skipif("classroom" not in manifest(), reason="data/models.json lists no "
                                     "'classroom' model yet (train it with: python -m helpers.train classroom)")
K = 4  # how many heads are removed in each knock-out


@pytest.fixture(scope="module")
def classroom():
    from helpers.core.catalog import load_model

    lm = load_model("classroom")
    return lm, S.relation_scores(lm)["induction"]


@needs_classroom
def test_removing_the_induction_heads_breaks_the_second_copy(classroom):
    lm, table = classroom
    top = [head for head, _ in S.ranked_heads(table, k=K)]
    base = A.forced_accuracy(lm, "induction")
    after = A.forced_accuracy(lm, "induction", top)
    assert base - after >= 0.5, f"removing {top}: accuracy {base:.3f} -> {after:.3f}"


@needs_classroom
def test_removing_random_idle_heads_barely_matters(classroom):
    """The control (see also tests/test_head_analysis.py): random sets of 4 heads scoring < 0.05."""
    lm, table = classroom
    control = A.knockout_control(lm, "induction", table, k=K, draws=3)
    assert control["mean"] >= 0.99 and len(control["heads"]) == 3, control


# --- exercise checks -----------------------------------------------------------------
def test_knockout_prediction_check(capsys):
    lm = tiny_lm()
    measured = head_checks.check_knockout_prediction(lambda: None, lm, "induction", [(0, 0)])
    out = capsys.readouterr().out
    assert "not attempted" in out and "Measured" not in out and f"{measured:.0%}" not in out  # no answer before a guess
    head_checks.check_knockout_prediction(measured, lm, "induction", [(0, 0)])
    assert "✓" in capsys.readouterr().out
    head_checks.check_knockout_prediction(measured + 0.5, lm, "induction", [(0, 0)])
    assert "✗" in capsys.readouterr().out


def test_knockout_summary_removes_the_best_and_random_low_scorers():
    lm = tiny_lm()
    table = np.array([[0.0, 0.01, 0.04, 0.5], [0.02, 0.03, 0.6, 0.9]])
    summary = A.knockout_summary(lm, "induction", table, k=2, draws=3)
    assert list(summary) == ["all heads", "best 2 removed", "control"]
    assert summary["best 2 removed"] == A.forced_accuracy(lm, "induction", [(1, 3), (1, 2)])
    control = summary["control"]
    assert len(control["heads"]) == 3 and all(len(h) == 2 for h in control["heads"])
    assert all(table[h] < 0.05 for heads in control["heads"] for h in heads)  # drawn among the low scorers only
    assert control["min"] <= control["mean"] <= control["max"]
    assert control == A.knockout_control(lm, "induction", table, k=2, draws=3)  # seeded
    assert A.low_scorers(table) == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)]


def test_fast_forced_accuracy_equals_a_full_forward_pass():
    """forced_accuracy reruns only the layers from the first removed head, on the stories that need it."""
    from helpers.core.evaluation import forced_hits

    lm = tiny_lm(seed=3)
    stories = evaluation.held_out_stories(16, evaluation.HELD_OUT_SEED, 64)
    ids = evaluation.story_ids(lm, stories)
    for heads in ([], [(1, 2)], [(0, 1), (1, 3)]):
        full = forced_hits(logits(lm, ids, heads), ids, stories, "induction")
        assert A.forced_accuracy(lm, "induction", heads, n_stories=16) == pytest.approx(full), heads


def test_scores_and_knock_outs_work_with_a_gpt2_shaped_model(tmp_path, monkeypatch):
    """A 12 × 12 stand-in with GPT-2's BPE tokenizer: the path the notebook takes for MODEL = "gpt2"."""
    from test_gpt2_fakes import fake_gpt2_folder

    from helpers.core.gpt2 import load_gpt2

    monkeypatch.setenv("HELPERS_GPT2_VERIFY", "0")  # stand-in files, not the pinned checksums
    lm = load_gpt2(fake_gpt2_folder(tmp_path / "gpt2"))
    tables = detectors.generic_scores(lm, length=10, batch=2)
    assert all(t.shape == (12, 12) for t in tables.values())
    assert detectors.repeated_random_tokens(lm, length=10, batch=1)[0, 0] == lm.tokenizer.bos_id
    assert len(detectors.published_head_ranks(tables)) == 9
    change = A.next_word_change(lm, "When Mary and John went to the store, John gave a drink to", [(9, 9)], "mean")
    assert len(change["words"]) >= 5 and all(isinstance(w, str) for w in change["words"])
    with pytest.raises(ValueError, match="generic detectors"):
        A.forced_accuracy(lm, "induction")
