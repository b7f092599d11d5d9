"""Knock-out experiments: remove heads and watch what the model can no longer predict.

A head is removed through the model's own forward arguments: head_scale (n_layer, n_head)
of 1 (keep) / 0 (remove), and for mean ablation head_mean (n_layer, n_head, d_head), the
head's average output, which replaces it (so the rest of the network still gets a
typical input from that slot, just not one that depends on the sentence).
"""

from __future__ import annotations

import operator
import random
import weakref

import numpy as np
import torch
from matplotlib.figure import Figure

from .attention import mask_future
from .catalog import LanguageModel
from .checks import Case, call_student, check_cases
from .language import FORCED
from .run import run_sentence
from .scores import (held_out_stories, one_thread, pair_scores, previous_token_scores, ranked_heads,
                     relation_pairs, repeated_random_tokens, residual_stream, story_ids)
from .train import HELD_OUT_SEED, forced_hits
from .views import Frame, show_png
from .widgetguard import guard_selections

MODES = ("zero", "mean")
LOW_SCORE = 0.05  # a head scoring below this for a relation does not look at it
# Notebook 06's knock-out demo: the 4 best induction heads removed, "fox" (0.99) is no longer the
# top word (tests/test_head_analysis.py). Longer lists keep enough copying to survive, e.g.
# "list : red mat old fox . again : red mat old" still says "fox" (0.87).
KNOCKOUT_SENTENCE = "list : bed fox mat . again : bed"
_MEANS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # model -> (L, H, d_head)
_FORCED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # model -> {(relation, ...): run}


def head_label(layer: int, head: int) -> str:
    return f"L{layer} H{head}"


def parse_head(label: str) -> tuple[int, int]:
    """'L5 H3' or '5.3' -> (5, 3)."""
    text = str(label).strip().upper().replace("L", "").replace("H", " ").replace(".", " ")
    parts = text.split()
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ValueError(f"Cannot read head {label!r}; write it as 'L5 H3' or '5.3' (layer.head).")
    return int(parts[0]), int(parts[1])


def _whole(x) -> bool:
    """A whole number of any integer type (int, numpy or torch integers), but not True/False."""
    try:
        operator.index(x)
    except TypeError:
        return False
    return not isinstance(x, bool)


def check_heads(lm: LanguageModel, heads) -> list[tuple[int, int]]:
    """The heads as (layer, head) pairs, each checked against the model's size."""
    cfg = lm.config
    example = "e.g. [(3, 4), (5, 1)] or ['L3 H4']"
    if isinstance(heads, (str, bytes)) or not hasattr(heads, "__iter__") or (
            isinstance(heads, tuple) and len(heads) == 2 and all(map(_whole, heads))):
        raise ValueError(f"heads={heads!r} must be a list of (layer, head) pairs, {example}.")
    out = []
    for item in heads:
        if isinstance(item, str):
            layer, head = parse_head(item)
        elif isinstance(item, (tuple, list)) and len(item) == 2 and all(map(_whole, item)):
            layer, head = int(item[0]), int(item[1])
        else:
            raise ValueError(f"{item!r} in heads is not a (layer, head) pair of whole numbers; {example}.")
        if not (0 <= layer < cfg.n_layer and 0 <= head < cfg.n_head):
            raise ValueError(f"Head {head_label(layer, head)} does not exist; {lm.name} has layers "
                             f"0..{cfg.n_layer - 1} and heads 0..{cfg.n_head - 1}.")
        out.append((layer, head))
    return out


@torch.no_grad()
def head_means(lm: LanguageModel, ids: torch.Tensor | None = None) -> torch.Tensor:
    """Each head's output averaged over batch and positions -> (n_layer, n_head, d_head).

    Default input: 16 held-out stories for classroom models, repeated random tokens otherwise.
    A forward hook on every attention layer recomputes weights @ v, the per-head outputs.
    """
    if ids is None:
        try:
            # 16 stories = 1024 positions per head: plenty for a mean, and 4 times cheaper than 64
            ids = story_ids(lm, held_out_stories(16, HELD_OUT_SEED, min(64, lm.config.n_ctx)))
        except ValueError:
            ids = repeated_random_tokens(lm, length=min(20, (lm.config.n_ctx - 1) // 2))
    means = []

    def keep_mean(attn, args, output):
        x, weights = args[0], output[1]  # x (B, T, D) after ln_1; weights (B, H, T, T)
        B, T, D = x.shape
        v = attn.c_attn(x).split(D, dim=-1)[2].view(B, T, attn.n_head, attn.d_head).transpose(1, 2)
        means.append((weights @ v).mean(dim=(0, 2)))  # (B, H, T, d) -> (H, d)

    hooks = [block.attn.register_forward_hook(keep_mean) for block in lm.model.h]
    try:
        with one_thread():
            lm.model(ids)
    finally:
        for hook in hooks:
            hook.remove()
    return torch.stack(means)  # (L, H, d)


def _cached_means(lm: LanguageModel) -> torch.Tensor:
    if lm.model not in _MEANS:
        _MEANS[lm.model] = head_means(lm)
    return _MEANS[lm.model]


def knock_out(lm: LanguageModel, heads, mode: str = "zero"):
    """The forward arguments that remove `heads`: (head_scale (L, H), head_mean (L, H, d) or None).

    mode "zero" silences a head; "mean" replaces its output by its average output.
    """
    if mode not in MODES:
        raise ValueError(f"Unknown mode {mode!r}; choose 'zero' or 'mean'.")
    cfg = lm.config
    head_scale = torch.ones(cfg.n_layer, cfg.n_head)
    for layer, head in check_heads(lm, heads):
        head_scale[layer, head] = 0.0
    return head_scale, (_cached_means(lm) if mode == "mean" else None)


@torch.no_grad()
def _forced_run(lm: LanguageModel, relation: str, n_stories: int, seed: int) -> dict:
    """What every knock-out of one relation shares, computed once per model and kept: the stories
    that hold words the relation decides, cut after the last such word, and the residual stream
    entering each layer with every head present. A knock-out then reruns only the layers from its
    first removed head up (the layers below it cannot tell), on only these stories."""
    cache = _FORCED.setdefault(lm.model, {})
    if (relation, n_stories, seed) not in cache:
        stories, xs = residual_stream(lm, n_stories, seed)  # the pass the score tables use: all heads present
        ids = story_ids(lm, stories)  # (B, T); a model without the classroom words stops here
        rows = [b for b, s in enumerate(stories) if s.forced[relation]]
        end = max((max(stories[b].forced[relation]) for b in rows), default=0) + 1  # a causal model: cut freely
        cache[(relation, n_stories, seed)] = {"stories": [stories[b] for b in rows], "ids": ids[rows, :end],
                                              "xs": [x[rows, :end] for x in xs], "results": {}}
    return cache[(relation, n_stories, seed)]


def forced_accuracy(lm: LanguageModel, relation: str, heads_knocked=(), mode: str = "zero",
                    n_stories: int = 64, seed: int = HELD_OUT_SEED) -> float:
    """Next-word accuracy at the positions the relation decides (Story.forced), heads removed.

    E.g. relation "induction": the words of the second copy of a repeated list. Each answer is
    kept per model, so asking again (a check after a notebook cell) costs nothing.
    """
    return _knocked(lm, relation, heads_knocked, mode, n_stories, seed)[0]


def forced_scores(lm: LanguageModel, relation: str, heads_knocked=(), mode: str = "zero",
                  n_stories: int = 64, seed: int = HELD_OUT_SEED) -> np.ndarray:
    """Every head's score for the relation (L, H), heads removed: its mean attention on the true
    keys, as relation_scores measures it, on the stories whose words the relation decides. From
    the same pass as forced_accuracy: does removing a head change where the others look?"""
    return _knocked(lm, relation, heads_knocked, mode, n_stories, seed)[1]


@torch.no_grad()
def _knocked(lm: LanguageModel, relation: str, heads_knocked, mode: str, n_stories: int, seed: int):
    """(accuracy, score table) with heads removed: one pass, kept per model."""
    if relation not in FORCED:
        raise ValueError(f"Relation {relation!r} decides no next word; choose one of {', '.join(FORCED)}.")
    heads = tuple(sorted(set(check_heads(lm, heads_knocked))))
    head_scale, head_mean = knock_out(lm, heads, mode)
    run = _forced_run(lm, relation, n_stories, seed)
    if (heads, mode) not in run["results"]:
        # below the first removed head nothing changes: start there, with the scores of a pass with every head
        first = min((layer for layer, _ in heads), default=0)
        table = _knocked(lm, relation, (), "zero", n_stories, seed)[1].copy() if heads else \
            np.full((lm.config.n_layer, lm.config.n_head), np.nan)
        triples = relation_pairs(run["stories"], relation)  # rows of this batch; all lie before its cut
        x = run["xs"][first]  # (B', T', D)
        with one_thread():  # small products: see scores.one_thread
            for i in range(first, lm.config.n_layer):
                x, weights = lm.model.h[i](x, head_scale[i], None if head_mean is None else head_mean[i])
                if triples:
                    table[i] = pair_scores(weights[:, None], triples)[0]  # (B', 1, H, T', T') -> (H,)
            logits = lm.model.ln_f(x) @ lm.model.wte.weight.T  # tied unembedding, as in GPT.forward
        hits = forced_hits(logits, run["ids"], run["stories"], relation) if run["stories"] else 0.0
        run["results"][(heads, mode)] = (hits, table)
    return run["results"][(heads, mode)]


# --- next-word probabilities before and after --------------------------------------
def _word(lm: LanguageModel, token_id: int) -> str:
    word = lm.tokenizer.decode([token_id])
    word = word[0] if isinstance(word, list) else str(word)
    return repr(word) if word != word.strip() or not word else word  # show GPT-2's leading spaces


def next_word_change(lm: LanguageModel, sentence: str, heads_knocked=(), mode: str = "zero",
                     top_k: int = 5, before: torch.Tensor | None = None) -> dict:
    """Next-word probabilities with all heads and with `heads_knocked` removed.

    Returns {"words", "before", "after"}: the union of both top-k lists, most likely (before) first.
    `before`: the all-heads probabilities (V,) if already known (the knock-out widget keeps them).
    """
    head_scale, head_mean = knock_out(lm, heads_knocked, mode)
    if before is None:
        before = run_sentence(lm, sentence).next_word_probs()  # (V,)
    after = before if bool((head_scale == 1).all()) else run_sentence(  # nothing removed: nothing to rerun
        lm, sentence, head_scale=head_scale, head_mean=head_mean).next_word_probs()
    ids = list(dict.fromkeys(before.topk(top_k).indices.tolist() + after.topk(top_k).indices.tolist()))
    ids.sort(key=lambda i: (-before[i].item(), -after[i].item()))
    return {"words": [_word(lm, i) for i in ids], "before": before[ids].numpy(), "after": after[ids].numpy()}


def prediction_bars(lm: LanguageModel, sentence: str, heads_knocked=(), top_k: int = 5,
                    mode: str = "zero", ax=None) -> Figure:
    """Grouped bars: the next-word probabilities before and after the knock-out."""
    change = next_word_change(lm, sentence, heads_knocked, mode, top_k)
    return _draw_bars(change, sentence, check_heads(lm, heads_knocked), mode, ax)


def _draw_bars(change: dict, sentence: str, heads: list, mode: str, ax=None) -> Figure:
    if ax is None:
        ax = Figure(figsize=(6, 0.35 * len(change["words"]) + 1.4), layout="constrained").subplots()
    y = np.arange(len(change["words"]))
    removed = ", ".join(head_label(*h) for h in heads[:6]) + (" ..." if len(heads) > 6 else "") or "nothing"
    ax.barh(y - 0.2, change["before"], height=0.4, color="#0072B2", label="all heads")
    ax.barh(y + 0.2, change["after"], height=0.4, color="#E69F00", label=f"without {removed} ({mode})")
    ax.set_yticks(y, change["words"])
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("probability of the next word")
    ax.set_title(f"{sentence} ...", fontsize=9)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize=9, ncol=2, frameon=False)  # clear of the bars
    return ax.figure


class KnockoutExplorer:
    """Pick heads to remove; the prediction bars redraw. Use .widget in a notebook."""

    def __init__(self, lm: LanguageModel, sentence: str, heads=(), mode: str = "zero", top_k: int = 5):
        import ipywidgets as w

        self.lm, self.top_k = lm, top_k
        cfg = lm.config
        chosen = [head_label(*h) for h in check_heads(lm, heads)]
        # The chosen heads head the list, so they are in view when it opens (not 3 of 4 below the fold).
        labels = chosen + [head_label(l, h) for l in range(cfg.n_layer) for h in range(cfg.n_head)
                           if head_label(l, h) not in chosen]
        self.sentence = w.Text(value=sentence, description="sentence", continuous_update=False,
                               layout=w.Layout(width="95%"))
        self.heads = w.SelectMultiple(options=labels, value=chosen, rows=16, description="knock out")
        _cached_means(lm)  # computed once now (~0.5 s), so switching to "mean" answers at once
        self.mode = w.ToggleButtons(options=list(MODES), value=mode, description="mode")
        self.clear = w.Button(description="clear")
        self.message = w.Label(value="")
        self.image = w.Image(format="png")
        self.change = None  # the last good next_word_change
        self.figure = Figure(figsize=(7.5, 3.8))
        self._before: dict = {}  # sentence -> next-word probabilities with all heads
        self._shown: dict = {}  # (sentence, heads, mode) -> (change, PNG), for the current sentence
        self.frame = Frame(self.figure, dpi=96)  # the widgets' shared Agg-to-PNG path
        self._reverting = False
        for control in (self.sentence, self.heads, self.mode):
            control.observe(lambda _: self._reverting or self.update(), names="value")
        self.clear.on_click(lambda _: setattr(self.heads, "value", ()))
        self.widget = w.VBox([self.sentence, w.HBox([self.heads, w.VBox([self.mode, self.clear])]),
                              self.message, self.image])
        for widget, name in ((self.heads, "knockout-heads"), (self.mode, "knockout-mode"),
                             (self.image, "knockout-bars"), (self.message, "knockout-message")):
            widget.add_class(name)  # names for the browser tests
        guard_selections(self.widget, lambda line: setattr(self.message, "value", line))
        self.update()
        with one_thread():  # the other mode for the chosen heads, ready before the class asks for it
            other = MODES[1 - MODES.index(self.mode.value)]
            key = (self.sentence.value, tuple(self.knocked()), other)
            if self.change is not None and key not in self._shown:
                self._shown[key] = self._draw(self.knocked(), self.sentence.value, other)

    def knocked(self) -> list[tuple[int, int]]:
        return [parse_head(label) for label in self.heads.value]

    def update(self) -> None:
        """Redraw for the current controls; bad input shows one line and keeps the last view."""
        with one_thread():
            self._update()

    def _update(self) -> None:
        try:
            heads, text = self.knocked(), self.sentence.value
            key = (text, tuple(heads), self.mode.value)
            if key not in self._shown:
                self._shown[key] = self._draw(heads, text)
        except ValueError as err:
            shown = self.change["sentence"] if self.change else None
            if shown is not None and self.sentence.value != shown:
                self._reverting = True  # the box shows what the bars show; nothing to redraw
                try:
                    self.sentence.value = shown
                finally:
                    self._reverting = False
            self.message.value = f"⚠ {err} (still showing “{shown}”)" if shown else f"⚠ {err}"
            return
        self.change, png = self._shown[key]
        removed = ", ".join(head_label(*h) for h in heads) or "none"
        self.message.value = f"{len(heads)} head(s) removed ({self.mode.value}): {removed}"
        show_png(self.image, self.frame, png)

    def _draw(self, heads, text: str, mode: str | None = None) -> tuple[dict, bytes]:
        """The change and its bars as PNG for one (sentence, heads, mode); kept, so going back is instant."""
        mode = mode or self.mode.value
        if text not in self._before:  # the all-heads run depends only on the sentence: once per sentence
            self._before = {text: run_sentence(self.lm, text).next_word_probs()}
            self._shown.clear()
        change = dict(next_word_change(self.lm, text, heads, mode, self.top_k, before=self._before[text]),
                      sentence=text)
        self.figure.clear()
        # fixed margins instead of a layout engine (a redraw costs a third of the time); room below
        # for the x label and the legend that _draw_bars puts under the bars
        _draw_bars(change, text, heads, mode, self.figure.add_axes((0.14, 0.27, 0.83, 0.65)))
        self.frame.invalidate()  # new bars: draw the whole figure
        return change, self.frame.png()

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)


# --- summaries and exercise checks ----------------------------------------------------
def low_scorers(table: np.ndarray, below: float = LOW_SCORE) -> list[tuple[int, int]]:
    """Every head whose score in `table` is below `below`: heads that do not look at the relation."""
    return [(int(l), int(h)) for l, h in zip(*np.nonzero(np.nan_to_num(table, nan=0.0) < below))]


def knockout_control(lm: LanguageModel, relation: str, table: np.ndarray, k: int = 4, draws: int = 6,
                     below: float = LOW_SCORE, mode: str = "zero", seed: int = 0) -> dict:
    """The control for a knock-out of k heads: `draws` seeded random sets of k heads, each drawn
    among the heads scoring below `below`. Returns {"heads", "accuracy", "mean", "min", "max"}.

    The bottom of a ranking is many near-zero scores in an order set by chance, so "the k worst"
    is one arbitrary set; several random draws show how much removing *some* k idle heads costs."""
    pool = low_scorers(table, below)
    rng = random.Random(seed)
    heads = [sorted(rng.sample(pool, min(k, len(pool)))) for _ in range(draws)]
    accuracy = [forced_accuracy(lm, relation, h, mode) for h in heads]
    return {"heads": heads, "accuracy": accuracy, "mean": float(np.mean(accuracy)),
            "min": float(min(accuracy)), "max": float(max(accuracy))}


def knockout_summary(lm: LanguageModel, relation: str, table: np.ndarray, k: int = 4, mode: str = "zero",
                     draws: int = 6) -> dict:
    """Forced accuracy with all heads, without the k best heads of `table`, and the control:
    k random low scorers removed, `draws` times (see knockout_control)."""
    best = [head for head, _ in ranked_heads(table, k=k)]
    return {"all heads": forced_accuracy(lm, relation, mode=mode),
            f"best {k} removed": forced_accuracy(lm, relation, best, mode),
            "control": knockout_control(lm, relation, table, k, draws, mode=mode)}


def _detector_case(L: int, H: int, T: int, seed: int) -> Case:
    g = torch.Generator().manual_seed(seed)
    attn = mask_future(torch.randn(L, H, T, T, generator=g)).softmax(-1)  # (L, H, T, T) causal maps
    attn[L - 1, H - 1] = torch.diag_embed(torch.ones(T - 1), offset=-1)[:T, :T] + torch.eye(T) * (torch.arange(T) == 0)
    diag = attn.diagonal(offset=-1, dim1=-2, dim2=-1)  # (L, H, T-1)
    expected = torch.as_tensor(previous_token_scores(attn)).float()
    return Case((attn,), expected, {
        "you looked at the token after (t + 1); in a causal model that weight is always 0.":
            attn.diagonal(offset=1, dim1=-2, dim2=-1).mean(-1),
        "you scored each token's attention to itself (t, t) instead of to t - 1.": attn.diagonal(dim1=-2, dim2=-1).mean(-1),
        "you summed over the queries instead of averaging (a score should lie in 0..1).": diag.sum(-1),
        "you divided by T, counting the first token, which has no previous token.": diag.sum(-1) / T,
        "you took the largest weight instead of the mean over the queries.": diag.amax(-1),
        "the axes are swapped: return (layer, head), not (head, layer).": expected.T,
    }, label=f"attn [{L} × {H} × {T} × {T}]")


def check_previous_token_detector(student_fn) -> None:
    """student_fn(attn (L, H, T, T)) -> (L, H): mean attention from each token to the one before it."""
    check_cases("previous-token detector", student_fn, [_detector_case(3, 4, 9, 7), _detector_case(2, 3, 6, 17)],
                shape_hint="Average attn[l, h, t, t - 1] over t = 1 .. T-1 for each (layer, head).")


def read_prediction(guess) -> tuple[float | None, str | None]:
    """A prediction as a fraction 0..1, or one line saying how to write it."""
    if isinstance(guess, str):
        return None, f"write the prediction as a number between 0 and 1 (e.g. 0.5 for 50 %), not the text {guess!r}."
    if isinstance(guess, bool) or not isinstance(guess, (int, float, np.floating, np.integer)):
        return None, f"expected a number between 0 and 1, got {type(guess).__name__}."
    value = float(guess)
    if not np.isfinite(value):
        return None, f"the prediction is {value}; write a number between 0 and 1."
    if 1 < value <= 100:
        return None, f"{value:g} looks like a percentage; write it as a fraction between 0 and 1 ({value / 100:g})."
    if not 0 <= value <= 1:
        return None, f"{value:g} is not an accuracy; write a number between 0 and 1."
    return value, None


def check_knockout_prediction(predicted, lm: LanguageModel, relation: str, heads, mode: str = "zero",
                              tolerance: float = 0.15) -> float:
    """Measure the accuracy after the knock-out and compare it with the student's prediction.
    Prints one line; returns the measured accuracy (assign it: `measured = ...`)."""
    guess, problem = call_student("knock-out prediction", predicted, plain_answer_ok=True)
    measured = forced_accuracy(lm, relation, heads, mode)
    base = forced_accuracy(lm, relation)
    line = f"{relation} accuracy: {base:.0%} with all heads, {measured:.0%} without {len(heads)} head(s)"
    value, bad = (None, None) if problem else read_prediction(guess)
    if problem:  # the measured number would give the answer away before a prediction
        print(problem)
    elif bad:
        print(f"✗ knock-out prediction: {bad} Measured: {line}.")
    elif abs(value - measured) <= tolerance:
        print(f"✓ good prediction ({value:.0%}). Measured: {line}.")
    else:
        print(f"✗ you predicted {value:.0%}. Measured: {line}. What else do these heads feed?")
    return measured
