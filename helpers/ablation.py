"""Knock-out experiments: remove heads and watch what the model can no longer predict.

A head is removed through the model's own forward arguments: head_scale (n_layer, n_head)
of 1 (keep) / 0 (remove), and for mean ablation head_mean (n_layer, n_head, d_head), the
head's average output, which replaces it (so the rest of the network still gets a
typical input from that slot, just not one that depends on the sentence).
"""

from __future__ import annotations

import weakref

import numpy as np
import torch
from matplotlib.figure import Figure

from .attention import mask_future
from .catalog import LanguageModel
from .checks import Case, call_student, check_cases
from .language import FORCED
from .run import run_sentence
from .scores import held_out_stories, previous_token_scores, ranked_heads, repeated_random_tokens, story_ids
from .train import HELD_OUT_SEED, forced_hits
from .views import Frame, show_png

MODES = ("zero", "mean")
_MEANS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # model -> (L, H, d_head)


def head_label(layer: int, head: int) -> str:
    return f"L{layer} H{head}"


def parse_head(label: str) -> tuple[int, int]:
    """'L5 H3' or '5.3' -> (5, 3)."""
    text = str(label).strip().upper().replace("L", "").replace("H", " ").replace(".", " ")
    parts = text.split()
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ValueError(f"Cannot read head {label!r}; write it as 'L5 H3' or '5.3' (layer.head).")
    return int(parts[0]), int(parts[1])


def check_heads(lm: LanguageModel, heads) -> list[tuple[int, int]]:
    """The heads as (layer, head) pairs, each checked against the model's size."""
    cfg = lm.config
    out = []
    for item in heads:
        layer, head = parse_head(item) if isinstance(item, str) else (int(item[0]), int(item[1]))
        if not (0 <= layer < cfg.n_layer and 0 <= head < cfg.n_head):
            raise ValueError(f"Head {head_label(layer, head)} does not exist; {lm.name} has layers "
                             f"0..{cfg.n_layer - 1} and heads 0..{cfg.n_head - 1}.")
        out.append((layer, head))
    return out


@torch.no_grad()
def head_means(lm: LanguageModel, ids: torch.Tensor | None = None) -> torch.Tensor:
    """Each head's output averaged over batch and positions -> (n_layer, n_head, d_head).

    Default input: held-out stories for classroom models, repeated random tokens otherwise.
    A forward hook on every attention layer recomputes weights @ v, the per-head outputs.
    """
    if ids is None:
        try:
            ids = story_ids(lm, held_out_stories(64, HELD_OUT_SEED, min(64, lm.config.n_ctx)))
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
def forced_accuracy(lm: LanguageModel, relation: str, heads_knocked=(), mode: str = "zero",
                    n_stories: int = 128, seed: int = HELD_OUT_SEED) -> float:
    """Next-word accuracy at the positions the relation decides (Story.forced), heads removed.

    E.g. relation "induction": the words of the second copy of a repeated list.
    """
    if relation not in FORCED:
        raise ValueError(f"Relation {relation!r} decides no next word; choose one of {', '.join(FORCED)}.")
    stories = held_out_stories(n_stories, seed, min(64, lm.config.n_ctx))
    ids = story_ids(lm, stories)  # (B, T)
    head_scale, head_mean = knock_out(lm, heads_knocked, mode)
    logits = lm.model(ids, head_scale=head_scale, head_mean=head_mean).logits  # (B, T, vocab)
    return forced_hits(logits, ids, stories, relation)


# --- next-word probabilities before and after --------------------------------------
def _word(lm: LanguageModel, token_id: int) -> str:
    word = lm.tokenizer.decode([token_id])
    word = word[0] if isinstance(word, list) else str(word)
    return repr(word) if word != word.strip() or not word else word  # show GPT-2's leading spaces


def next_word_change(lm: LanguageModel, sentence: str, heads_knocked=(), mode: str = "zero",
                     top_k: int = 5) -> dict:
    """Next-word probabilities with all heads and with `heads_knocked` removed.

    Returns {"words", "before", "after"}: the union of both top-k lists, most likely (before) first.
    """
    head_scale, head_mean = knock_out(lm, heads_knocked, mode)
    before = run_sentence(lm, sentence).next_word_probs()  # (V,)
    after = run_sentence(lm, sentence, head_scale=head_scale, head_mean=head_mean).next_word_probs()
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
    ax.legend(loc="lower right", fontsize=8)
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
        self.figure = Figure(figsize=(7.5, 3.8), layout="constrained")
        self.frame = Frame(self.figure, dpi=96)  # the widgets' shared Agg-to-PNG path
        self._reverting = False
        for control in (self.sentence, self.heads, self.mode):
            control.observe(lambda _: self._reverting or self.update(), names="value")
        self.clear.on_click(lambda _: setattr(self.heads, "value", ()))
        self.widget = w.VBox([self.sentence, w.HBox([self.heads, w.VBox([self.mode, self.clear])]),
                              self.message, self.image])
        self.update()

    def knocked(self) -> list[tuple[int, int]]:
        return [parse_head(label) for label in self.heads.value]

    def update(self) -> None:
        """Redraw for the current controls; bad input shows one line and keeps the last view."""
        try:
            heads = self.knocked()
            change = next_word_change(self.lm, self.sentence.value, heads, self.mode.value, self.top_k)
            self.change = dict(change, sentence=self.sentence.value)
            self.figure.clear()
            _draw_bars(self.change, self.sentence.value, heads, self.mode.value, self.figure.subplots())
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
        removed = ", ".join(head_label(*h) for h in heads) or "none"
        self.message.value = f"{len(heads)} head(s) removed ({self.mode.value}): {removed}"
        self.frame.invalidate()  # new bars: draw the whole figure
        show_png(self.image, self.frame)

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)


# --- summaries and exercise checks ----------------------------------------------------
def knockout_summary(lm: LanguageModel, relation: str, table: np.ndarray, k: int = 4, mode: str = "zero") -> dict:
    """Forced accuracy with all heads, without the k best heads of `table`, and without the k worst."""
    order = [head for head, _ in ranked_heads(table, k=table.size)]
    return {"all heads": forced_accuracy(lm, relation, mode=mode),
            f"best {k} removed": forced_accuracy(lm, relation, order[:k], mode),
            f"worst {k} removed": forced_accuracy(lm, relation, order[-k:], mode)}


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
    if problem:
        print(f"{problem} Measured: {line}.")
    elif bad:
        print(f"✗ knock-out prediction: {bad} Measured: {line}.")
    elif abs(value - measured) <= tolerance:
        print(f"✓ good prediction ({value:.0%}). Measured: {line}.")
    else:
        print(f"✗ you predicted {value:.0%}. Measured: {line}. What else do these heads feed?")
    return measured
