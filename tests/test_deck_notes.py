"""Every caption and speaker note of the deck states the number the notebook prints for the same fact.

Each check recomputes the fact the way the notebook cell does (the same helper, the same arguments, the
same rounding) and finds it in the slide's caption; the notebooks' calls are read from their source, so
a notebook that changes its call fails here until the deck follows.
"""

import ast
import json
from pathlib import Path

import numpy as np
import pytest

import helpers as H
from helpers.analysis import headcount
from helpers.analysis.captions import types_caption
from helpers.core.catalog import manifest
from helpers.figures import deck
from helpers.figures.animations import build_animations

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif("classroom" not in manifest(), reason="data/models.json lists no classroom model")


def source(name: str) -> str:
    nb = json.loads((ROOT / "notebooks" / name).read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")


def walkthrough_calls(name: str) -> list[dict]:
    """The arguments of every H.walkthrough_layer(...) call in a notebook, MODEL resolved to its value."""
    tree = ast.parse("\n".join(line for line in source(name).splitlines() if not line.lstrip().startswith("%")))
    model = next(n.value.value for n in ast.walk(tree) if isinstance(n, ast.Assign)
                 and getattr(n.targets[0], "id", "") == "MODEL")
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "walkthrough_layer":
            args = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
            args["model"] = model if getattr(node.args[0], "id", "") == "MODEL" else ast.literal_eval(node.args[0])
            calls.append(args)
    return calls


@pytest.fixture(scope="module")
def models():
    return deck.Models()  # the deck's own data: notebook 06's 64 held-out stories


@pytest.fixture(scope="module")
def notes(models):
    return deck.build_captions(models=models)


@pytest.mark.parametrize("name", ["01_single_head_attention.ipynb", "02_shrinking_the_head.ipynb",
                                  "03_decompression_and_recombination.ipynb"])
def test_the_deck_reads_the_walkthrough_as_notebooks_01_to_03_do(name):
    calls = [call for call in walkthrough_calls(name) if call.get("sentence", deck.DRAW) == deck.DRAW]
    assert calls, f"{name} no longer reads {deck.DRAW!r}; the deck's slides 01-03 show that sentence"
    for call in calls:  # each call on the deck's sentence must read it as the deck does (model, <bos>)
        call.pop("n_heads", None)
        call.setdefault("sentence", deck.DRAW)
        assert call == deck.WALK, f"{name} calls walkthrough_layer({call}); set deck.WALK to match"


def test_01_draws_largest_weight(models, notes):
    """01 prints "'draw' gives its largest weight, 0.43, to 'like'" and that the weights add up to 1.00."""
    walk = models.walk(1)
    row = walk.head(0).weights[-1]
    best = int(row.argmax())
    said = f"{row[best]:.2f}, to '{walk.tokens[best]}'"
    assert said in notes["01_one_head"] and said in notes["01_where_draw_looks"]
    assert f"sum to {row.sum():.2f}" in notes["01_where_draw_looks"]
    steps = next(a for a in build_animations(models.walk(1), models.walk(12)) if a.name == "one_head_steps")
    assert f"{row[best]:.2f} of its weight to '{walk.tokens[best]}'" in steps.caption  # the animation's notes


def test_03_the_recombination_animation_states_what_03_prints(models):
    """03 §4 prints that the heads' decompressed sum equals concat · W_O to float rounding (below 1e-4); the
    animation's notes give the same comparison's largest difference, with the layer's b_O added to both."""
    code = source("03_decompression_and_recombination.ipynb")
    assert "largest difference below 1e-4 (float rounding only)" in code and "H.recombination_animation(walk)" in code
    anim = next(a for a in build_animations(models.walk(1), models.walk(12)) if a.name == "twelve_heads_recombining")
    steps = models.walk(12).steps()
    difference = float((steps.concat @ steps.recombination - sum(steps.per_head)).abs().max())
    assert difference < 1e-4
    said = float(anim.caption.split("largest difference ")[1].split(")")[0])
    assert said < 1e-4 and "concat · W_O + b_O" in anim.caption


def test_02_heads_whose_largest_weight_is_on_i(models, notes):
    """02 prints "heads whose largest weight from 'draw' is on 'I': [...]" and the head size 768 / 12 = 64."""
    walk = models.walk(12)
    weights = walk.steps().weights
    draw, i = len(walk.tokens) - 1, walk.tokens.index("I")
    n = len([k for k in range(walk.n_heads) if int(weights[k, draw].argmax()) == i])
    assert f"'I' ({n} head{'s' if n > 1 else ''})" in notes["02_twelve_heads"]
    D = walk.residual.shape[-1]
    assert f"the {D} numbers of 'draw' into a query of {D // walk.n_heads}" in notes["02_shrunk_query"]


def test_03_recombination_shape(models, notes):
    """03 prints "recombination: [768, 768] = 12 blocks of [64, 768]"."""
    walk = models.walk(12)
    W_O = H.recombination_matrix(walk.W_O)
    blocks = list(walk.W_O[0].shape)
    assert f"[{W_O.shape[0]} × {W_O.shape[1]}] recombination: {walk.n_heads} blocks of [{blocks[0]} × {blocks[1]}]" \
        in notes["03_recombination"]


def test_04_losses_and_repeats(notes):
    """04 prints each model's held-out loss (.3f) and "list repeated correctly" (.0%), and the merged losses."""
    losses = H.loss_by_heads()
    repeats = {h: H.load_variant(h).info["accuracy_induction"] for h in losses}
    text = notes["04_head_count_results"]
    assert f"between {min(losses.values()):.3f} and {max(losses.values()):.3f}" in text
    assert f"{repeats[1]:.0%}".replace("%", " %") in text and f"{repeats[12]:.0%}".replace("%", " %") in text
    assert f"held-out loss {H.merged_loss(3):.3f}, against {losses[4]:.3f}" in notes["04_merged_heads"]
    assert headcount.MERGE_SOURCE == 12


def test_05_resting_heads_on_draw(models, notes):
    """05 §3 prints how many heads put more than half on '<bos>' and the most resting head with its share."""
    assert "H.first_token_scores(run.attentions)" in source("05_all_144_heads.ipynb")
    run = H.run_sentence(models.classroom, deck.DRAW)
    first = H.first_token_scores(run.attentions)
    l, h = np.unravel_index(first.argmax(), first.shape)
    assert f"{(first > 0.5).sum()} of the 144 heads" in notes["05_all_heads_draw"]
    assert f"L{l} H{h}, puts {first[l, h]:.2f}" in notes["05_all_heads_draw"]


def test_05_induction_match_on_the_list(models, notes):
    """05 §10 prints "6 repeated words; L9 H6 puts 0.66 of their attention where the prediction says"."""
    assert "H.induction_match(repeat.attentions, repeat.tokens)" in source("05_all_144_heads.ipynb")
    run = H.run_sentence(models.classroom, deck.LIST)
    table, rows = H.induction_match(run.attentions, run.tokens)
    assert np.allclose(H.induction_prediction(run.tokens), H.induction_match.__globals__["induction_targets"](run.tokens))
    (l, h), s = H.ranked_heads(table, k=1)[0]
    assert (l, h) == models.best("induction")  # the head the slides frame and zoom into
    for name in ("05_all_heads_list", "05_induction_head", "05_token_links"):
        assert f"L{l} H{h}" in notes[name] and f"{s:.2f} of the attention of the {len(rows)} repeated" in notes[name]


def test_06_table_and_types(models, notes):
    """06 §4 prints the report's scores and baselines (.2f) and the type counts (H.head_types)."""
    assert "H.head_types(classroom)" in source("06_what_each_head_learns.ipynb")
    assert "H.head_types(classroom)" in source("05_all_144_heads.ipynb")
    assert "H.plot_head_types(types)" in source("06_what_each_head_learns.ipynb")
    report = {row["relation"]: row for row in H.relation_report(models.classroom)}
    for r in ("agreement", "pronoun", "induction"):
        assert f"{report[r]['score']:.2f} vs {report[r]['baseline']:.2f}" in notes["06_score_tables"]
    assert "determiner (0.98)" not in notes["06_score_tables"]
    types, _ = H.head_types(models.classroom)
    assert (models.types == types).all() and notes["06_head_types"] == types_caption(types)
    counts = H.type_counts(types)
    for t in ("previous", "offset", "resting", "agreement", "pronoun", "induction"):
        assert f"{counts[t]} {t}" in notes["06_head_types"]
    assert f"{counts['none']} get no type" in notes["06_head_types"]


def test_06_the_slides_type_map_counts_what_the_notebook_counts(models):
    """The legend of the deck's head-type figure holds the notebook's counts (the issue: 11/95 vs 12/94)."""
    fig = deck.build_figures([s for s in deck.SLIDES if s.name == "06_head_types"], models)[0][1]
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == [f"{t} ({n})" for t, n in H.type_counts(models.types).items()]


def test_07_loss_list_and_cache_as_the_notebook_prints_them(notes):
    """07 §4 prints each variant's loss (.3f), list accuracy (.0%) and cache bytes from H.kv_results()."""
    assert "for n, r in H.kv_results().items():" in source("07_shared_keys_and_values.ipynb")
    results = H.kv_results()
    for n in (12, 1):
        r = results[n]
        assert (f"{n} key/value head{'s' * (n > 1)}: held-out loss {r['held_out_loss']:.3f}, list said again "
                f"{r['list_accuracy']:.0%}, {r['cache_bytes_per_token']} bytes") in notes["07_shared_keys_and_values"]


def test_08_the_formation_slide_says_what_08_finds_and_how_far_it_holds(notes):
    """08 finds the step with H.formation(curves) and states the seeds with H.formation_seeds_table()."""
    code = source("08_watch_the_heads_learn.ipynb")
    assert "H.formation(curves)" in code and "H.formation_seeds_table()" in code
    curves = H.shipped_record()["curves"]
    found = H.formation(curves)
    head = f"L{found['head'][0]} H{found['head'][1]}"
    previous = f"L{found['previous_head'][0]} H{found['previous_head'][1]}"
    nb = json.loads((ROOT / "notebooks" / "08_watch_the_heads_learn.ipynb").read_text(encoding="utf-8"))
    prose = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert f"**{head}**" in prose and f"**step {found['step']}**" in prose
    caption = notes["08_heads_forming"]
    assert (f"the previous-word head {previous} reaches 0.5 at step {found['previous_step']}, then the induction "
            f"head {head} reaches 0.5 at step {found['step']}") in caption
    assert f"lists said again rise to {curves['list_accuracy'][-1]:.0%}" in caption
    runs = [line.split() for line in H.formation_seeds_table().splitlines()[1:]]
    first = sum(int(r[1]) < int(r[2]) for r in runs)  # the previous-word head's step before the induction head's
    assert f"over {len(runs)} seeds the previous-word head came first in {first}" in caption


def test_every_slide_has_a_check_here():
    checked = {"01_one_head", "01_where_draw_looks", "02_twelve_heads", "02_shrunk_query", "03_recombination",
               "04_head_count_results", "04_merged_heads", "05_all_heads_draw", "05_all_heads_list",
               "05_induction_head", "05_token_links", "06_score_tables", "06_head_types",
               "07_shared_keys_and_values", "08_heads_forming"}
    assert {s.name for s in deck.SLIDES} <= checked, "a new slide needs its caption checked against its notebook here"
