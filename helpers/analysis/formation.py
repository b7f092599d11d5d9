"""Watching heads form along training (notebook 08): curves measured on every snapshot, and the step
where the induction heads form, found by code from those curves (Olsson et al. 2022).

Every number is measured on held-out stories: the held-out loss, the share of lists said again, an
in-context score (loss late in a story minus early, Olsson et al.'s definition at our 64 tokens) and
each head's previous-word and induction scores against the language's ground truth (relations.py),
with the fixed-offset baseline of notebook 06 for induction. What changes from seed to seed (08 §4):
only the numbers of other seeds' runs are kept, under "formation_seeds" in the recipe's line of
data/models.json (`python tools/formation_seeds.py induction --seeds 22-33`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from ..core.catalog import MANIFEST, recorded
from ..core.evaluation import N_CTX, forced_hits, held_out_stories, one_thread
from ..core.language import StoryWriter
from ..core.model import GPT, LanguageModel
from ..core.run import read_sentence, run_ids
from ..core.snapshots import SnapshotRun, load_snapshots
from .knockout import forced_accuracy, forced_scores
from .listloss import word_losses
from .relations import TYPE_THRESHOLD, offset_baseline, pair_scores, relation_pairs, relation_scores, scored_stories
from .repeats import REPEAT_SEED
from .seeds import record_seeds

RECIPE = "induction"  # notebook 08's recipe (helpers.train): its lists are said twice with no marker
SENTENCE = "red fox old mat . red fox old mat ."  # the slider's sentence: a list said again, nothing announcing it
N_STORIES = 64  # held-out stories per snapshot, as relation_scores and forced_accuracy use
EARLY, LATE = range(5, 13), range(50, 64)  # token positions: "loss late minus early" (Olsson et al. use 500 vs 50)
THRESHOLD = TYPE_THRESHOLD  # a head has formed when its score reaches the bar at which 05-06 give it a type


@torch.no_grad()
def step_numbers(lm: LanguageModel, n_stories: int = N_STORIES) -> dict:
    """One snapshot's numbers: loss, list accuracy, in-context score, previous / induction tables (L, H)."""
    stories, attn = scored_stories(lm, n_stories)  # one pass for the maps, kept for the knock-outs
    ids, logits, per_word, repeats = word_losses(lm, stories)  # (B, T-1): each word's loss; the list words
    tables = relation_scores(lm, n_stories, relations=("previous", "induction"))
    return {"loss": per_word.mean().item(), "list_accuracy": forced_hits(logits, ids, stories, "induction"),
            "in_context": in_context_score(lm, n_stories), "list_loss": per_word[repeats].mean().item(),
            "other_loss": per_word[~repeats].mean().item(), "list_share": repeats.float().mean().item(),
            "previous": tables["previous"], "previous_list": pair_scores(attn, list_previous_pairs(stories)),
            "induction": tables["induction"]}


def list_previous_pairs(stories) -> list[tuple[int, int, int]]:
    """(story, query, key): from each key an induction head looks for (a word of a list's first copy) back to
    the word before it. A previous-word head is needed exactly there: it writes "I follow X" into that word."""
    return [(b, k, k - 1) for b, s in enumerate(stories) for _, k in s.links["induction"]]


def in_context_score(lm: LanguageModel, n_stories: int = N_STORIES) -> float:
    """Olsson et al.'s in-context score at our 64 tokens: the loss on tokens 50-63 minus the loss on tokens
    5-12, on held-out random words said again and again (their repeated random tokens), where the late window
    lies in a later copy and the early one mostly in the first. Below zero: later words are easier."""
    writer = StoryWriter(REPEAT_SEED)
    _, _, per_word, _ = word_losses(lm, [writer.repeat_story(N_CTX, lm.bos) for _ in range(n_stories)])  # (B, T-1)
    return (per_word[:, [t - 1 for t in LATE]].mean() - per_word[:, [t - 1 for t in EARLY]].mean()).item()


def measure_run(run: SnapshotRun, n_stories: int = N_STORIES) -> dict:
    """Every snapshot's numbers as curves: steps, tokens, loss, list_accuracy, in_context (S,), previous and
    induction (S, L, H), and induction_baseline (the best "always k words back" score on the same stories)."""
    rows = [step_numbers(run.model_at(step), n_stories) for step in run.steps]
    stories, _ = scored_stories(run.model_at(run.steps[-1]), n_stories)
    curves = {key: np.array([r[key] for r in rows]) for key in rows[0]}
    return {"steps": np.array(run.steps), "tokens": np.array(run.steps) * run.tokens_per_step, **curves,
            "induction_baseline": offset_baseline(stories, "induction")[1]}


def shipped_record(name: str = RECIPE) -> dict:
    """What the training command measured on the shipped snapshots (kept in their file): "curves" and
    "knockouts" as numpy arrays. A test measures them again on the file's weights."""
    return as_arrays(load_snapshots(name).measured)


def shipped_curves(name: str = RECIPE) -> dict:
    return shipped_record(name)["curves"]


class Probe:
    """A few held-out stories to score a model while it trains (the live cell): no cache, since the
    model changes between calls. Each call is one forward pass, torch.no_grad, no randomness used."""

    def __init__(self, vocab: list[str], n_stories: int = 32, markers: bool = False):
        self.stories = held_out_stories(n_stories, markers=markers)  # lists written as the recipe trains on them
        ids = {w: i for i, w in enumerate(vocab)}
        self.ids = torch.tensor([[ids[t] for t in s.tokens] for s in self.stories])  # (B, T)
        self.pairs = {r: relation_pairs(self.stories, r) for r in ("previous", "induction")}

    @torch.no_grad()
    def __call__(self, model: GPT) -> dict:
        """{"list_accuracy": share, "previous": (L, H), "induction": (L, H)} for the model as it is now."""
        out = model(self.ids)
        return {"list_accuracy": forced_hits(out.logits, self.ids, self.stories, "induction"),
                **{r: pair_scores(out.attentions, pairs) for r, pairs in self.pairs.items()}}


@torch.no_grad()
def maps_along(run: SnapshotRun, sentence: str) -> tuple[list[str], dict[int, np.ndarray]]:
    """The sentence read by every snapshot: (tokens, {step: maps (L, H, T, T)}), for the slider and the GIF."""
    tokens, ids = read_sentence(run.model_at(run.steps[0]), sentence)
    with one_thread():  # ~31 small runs
        return tokens, {s: run_ids(run.model_at(s), tokens, ids).attentions.numpy() for s in run.steps}


# --- found by code from the curves ----------------------------------------------------
def first_step_above(steps, values, threshold: float = THRESHOLD) -> int | None:
    """The first step whose value reaches `threshold`, or None when none does."""
    hits = np.flatnonzero(np.asarray(values) >= threshold)
    return int(np.asarray(steps)[hits[0]]) if hits.size else None


def first_formed(steps, scores, threshold: float = THRESHOLD) -> tuple[int | None, int | None]:
    """(the first step at which any score reaches threshold, which one is highest then): scores (S, ...) are
    flattened per step, so the index of an (L, H) table is layer * H + head. (None, None) when none does."""
    scores = np.asarray(scores).reshape(len(steps), -1)  # (S, N)
    step = first_step_above(steps, scores.max(1), threshold)
    return step, None if step is None else int(np.argmax(scores[list(steps).index(step)]))


def steepest_rise(steps, values) -> int:
    """The step that ends the interval where the value rises fastest per step (not the same as crossing)."""
    steps, values = np.asarray(steps, dtype=float), np.asarray(values, dtype=float)
    return int(steps[1:][np.argmax(np.diff(values) / np.diff(steps))])


def best_head(curves: dict, key: str, layer: int | None = None) -> tuple[int, int]:
    """The (layer, head) with the highest `key` score at the last snapshot (in `layer` when given)."""
    table = curves[key][-1].copy()  # (L, H)
    if layer is not None:
        table[np.arange(table.shape[0]) != layer] = -np.inf
    layer_, head = np.unravel_index(np.argmax(table), table.shape)
    return int(layer_), int(head)


CURVE_KEYS = ("steps", "induction", "previous_list", "induction_baseline", "loss", "list_accuracy")  # formation reads


def check_curves(curves) -> dict:
    """`curves` when it is a run's curves (a dict with CURVE_KEYS), else one line saying what to pass."""
    missing = [key for key in CURVE_KEYS if key not in curves] if isinstance(curves, dict) else CURVE_KEYS
    if missing:
        got = f"a dict without {', '.join(map(repr, missing))}" if isinstance(curves, dict) else type(curves).__name__
        raise ValueError(f"curves is {got}; pass a training run's curves, e.g. "
                         f"H.shipped_record(\"induction\")[\"curves\"].")
    return curves


def check_found(found) -> dict:
    """`found` when it is what formation(curves) returns, else one line."""
    if not isinstance(found, dict) or not {"head", "previous_head", "step"} <= set(found):
        raise ValueError(f"found is {type(found).__name__ if not isinstance(found, dict) else 'another dict'}; "
                         f"pass what H.formation(curves) returns.")
    return found


def formation(curves: dict, threshold: float = THRESHOLD) -> dict:
    """What the curves show, by code: the induction head that forms first and its step, the layer-0
    previous-word head's step (None: it never reaches the threshold), the order, and the bump."""
    check_curves(curves)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.floating)) or not 0 < threshold < 1:
        raise ValueError(f"threshold={threshold!r} is not a number between 0 and 1; the lessons use {THRESHOLD}.")
    step, first = first_formed(curves["steps"], curves["induction"], threshold)  # first: layer * H + head
    n_head = curves["induction"].shape[2]
    previous = best_head(curves, "previous_list", layer=0)  # scored where the induction head needs it
    previous_step = first_step_above(curves["steps"], curves["previous_list"][:, previous[0], previous[1]], threshold)
    return {"step": step, "head": None if first is None else divmod(first, n_head),
            "beats_baseline": bool(curves["induction"][-1].max() > curves["induction_baseline"]),
            "previous_head": previous, "previous_step": previous_step,
            "previous_first": None if step is None or previous_step is None else previous_step < step,
            "bump": bool(bump_ratio(curves, step) >= BUMP_FACTOR)}  # Olsson et al.'s bump, by code


def list_stretch(curves: dict, low: float = 0.05, high: float = 0.9) -> tuple[int, int] | None:
    """(last step with lists said again under `low`, first step at or above `high`): the stretch in which the
    list game is learned, or None when it never reaches `high`."""
    acc, steps = np.asarray(curves["list_accuracy"]), [int(s) for s in curves["steps"]]
    if not (acc >= high).any():
        return None
    top = int(np.argmax(acc >= high))
    below = np.flatnonzero(acc[:top] < low)
    return (steps[below[-1]] if below.size else steps[0]), steps[top]


BUMP_FACTOR, BUMP_WINDOW = 2.0, 4  # a bump: the loss falls 2× as fast at formation as over 4 intervals each side


def bump_ratio(curves: dict, step: int | None) -> float:
    """How many times as fast the loss falls where the induction head forms (the faster of the two snapshot
    intervals that meet at that step) as over the BUMP_WINDOW intervals on either side (their median)."""
    if step is None:
        return float("nan")
    rates = -np.diff(curves["loss"]) / np.diff(curves["steps"]) * 100  # (S - 1,): nats per 100 steps
    at = list(curves["steps"]).index(step)
    here = rates[max(0, at - 1):at + 1].max()
    around = np.r_[rates[max(0, at - 1 - BUMP_WINDOW):max(0, at - 1)], rates[at + 1:at + 1 + BUMP_WINDOW]]
    return float(here / np.median(around)) if around.size and np.median(around) > 0 else float("inf")


# --- composition: remove the layer-0 head the induction head might read ---------------
def knockout_along(run: SnapshotRun, removed: tuple[int, int], watched: tuple[int, int]) -> dict:
    """At every snapshot, the list accuracy and `watched`'s induction score with all heads and with
    `removed` knocked out (knockout.py's forced runs on the held-out stories)."""
    out = {"steps": np.array(run.steps), "accuracy": [], "accuracy_without": [], "score": [], "score_without": []}
    for step in run.steps:
        lm = run.model_at(step)
        out["accuracy"].append(forced_accuracy(lm, "induction"))
        out["accuracy_without"].append(forced_accuracy(lm, "induction", [removed]))
        out["score"].append(float(forced_scores(lm, "induction")[watched]))  # on the same stories as below
        out["score_without"].append(float(forced_scores(lm, "induction", [removed])[watched]))
    return {key: np.asarray(value) for key, value in out.items()}


def layer0_knockouts(lm: LanguageModel) -> np.ndarray:
    """List accuracy with each layer-0 head removed in turn (H,): which head the list game leans on."""
    return np.array([forced_accuracy(lm, "induction", [(0, h)]) for h in range(lm.config.n_head)])


# --- what the training command keeps in the snapshot file -----------------------------
def formation_record(run: SnapshotRun) -> dict:
    """Everything notebook 08 shows, measured once on a run's snapshots (~1 minute): the curves, and the
    knock-outs along training of layer 0's best previous-word head and of the layer-0 head the list game
    leans on most at the end. Plain lists, for the file's metadata."""
    curves = measure_run(run)
    found = formation(curves)
    watched = found["head"] or best_head(curves, "induction")
    needed = int(np.argmin(layer0_knockouts(run.model_at(run.steps[-1]))))
    knockouts = {"previous": knockout_along(run, found["previous_head"], watched),
                 "needed": knockout_along(run, (0, needed), watched),
                 "heads": {"previous": list(found["previous_head"]), "needed": [0, needed], "watched": list(watched)}}
    return as_lists({"curves": curves, "knockouts": knockouts})


def as_lists(value):
    """numpy arrays (nested in dicts) as lists of floats rounded to 6 digits: JSON, the same every run."""
    if isinstance(value, dict):
        return {k: as_lists(v) for k, v in value.items()}
    if isinstance(value, (np.ndarray, list, tuple)):
        return np.round(np.asarray(value, dtype=float), 6).tolist()
    return round(float(value), 6)


def as_arrays(value, key: str = ""):
    """as_lists undone: lists as numpy arrays, steps and tokens as integers, heads as (layer, head)."""
    if key == "heads":
        return {k: tuple(int(x) for x in v) for k, v in value.items()}
    if isinstance(value, dict):
        return {k: as_arrays(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return np.asarray(value, dtype=np.int64 if key in ("steps", "tokens") else float)
    return value


# --- the numbers the notebook prints and its prose states --------------------------------
def table_steps(curves: dict, found: dict) -> list[int]:
    """The snapshots the table prints: step 0, where the previous-word head forms, the snapshot before the
    induction head forms and the one where it does, halfway from there to the end, the end."""
    steps = list(curves["steps"])
    if found["step"] is None:
        return [steps[i] for i in np.linspace(0, len(steps) - 1, 5).round().astype(int)]
    at = steps.index(found["step"])
    chosen = {steps[0], steps[max(0, at - 1)], steps[at], steps[(at + len(steps) - 1) // 2], steps[-1]}
    return sorted(chosen | ({found["previous_step"]} if found["previous_step"] is not None else set()))


def formation_table(curves: dict, found: dict) -> str:
    """The curves at the table_steps snapshots, as a table (what they show is said in the notebook's markdown,
    checked by tests/claims_08.py)."""
    check_curves(curves)
    check_found(found)
    steps, head = list(curves["steps"]), found["head"] or best_head(curves, "induction")
    prev = found["previous_head"]
    lines = [f"{'step':>5}{'tokens':>11}{'loss':>7}{'lists':>7}{'in-context':>12}"
             f"{f'L{head[0]} H{head[1]} ind.':>13}{f'L{prev[0]} H{prev[1]} prev.':>14}"]
    for s in table_steps(curves, found):
        i = steps.index(s)
        lines.append(f"{s:>5}{int(curves['tokens'][i]):>11,}{curves['loss'][i]:>7.3f}{curves['list_accuracy'][i]:>7.0%}"
                     f"{curves['in_context'][i]:>+12.3f}{curves['induction'][i][head]:>13.2f}"
                     f"{curves['previous_list'][i][prev]:>14.2f}")
    return "\n".join(lines)


# --- other seeds (08 §4) ------------------------------------------------------------------------------------
def seed_summary(record: dict) -> dict:
    """One run's findings as plain numbers: where and when the induction head forms, the bump, the end, and
    the list accuracy at the end without layer 0's best previous-word head and without its most needed head."""
    curves, knocked = record["curves"], record["knockouts"]
    found = formation(curves)
    prev = found["previous_head"]
    return {"without_previous": round(float(knocked["previous"]["accuracy_without"][-1]), 4),
            "needed_head": list(knocked["heads"]["needed"]),
            "without_needed": round(float(knocked["needed"]["accuracy_without"][-1]), 4),
            "formation_step": found["step"], "head": None if found["head"] is None else list(found["head"]),
            "bump_ratio": round(bump_ratio(curves, found["step"]), 2), "bump": found["bump"],
            "best_previous_score": round(float(curves["previous_list"][:, prev[0], prev[1]].max()), 3),
            "previous_step": found["previous_step"], "previous_first": found["previous_first"],
            "stretch": list_stretch(curves), "final_list_accuracy": round(float(curves["list_accuracy"][-1]), 4),
            "final_loss": round(float(curves["loss"][-1]), 4),
            "final_induction": round(float(curves["induction"][-1].max()), 3)}


def record_formation_seeds(name: str, runs: dict[int, dict], path: Path = MANIFEST) -> None:
    """Store every seed's summary under "formation_seeds" in name's manifest line (one write)."""
    record_seeds(name, "formation_seeds", runs, path)


def formation_seeds(name: str = "induction") -> dict[int, dict]:
    """The recorded seed summaries, by seed ({} when none were recorded)."""
    return {int(seed): numbers for seed, numbers in recorded(name, "formation_seeds").items()}


def seed_findings(runs: dict[int, dict]) -> dict:
    """What holds across the seeds, by code: how many runs grew an induction head, a previous-word head,
    a bump; the range of formation steps; how many different heads formed first."""
    formed = [r for r in runs.values() if r["formation_step"] is not None]
    steps = [r["formation_step"] for r in formed]
    return {"runs": len(runs), "formed": len(formed), "steps": (min(steps), max(steps)) if steps else None,
            "heads": len({tuple(r["head"]) for r in formed}), "bumps": sum(r["bump"] for r in runs.values()),
            "previous_formed": sum(r["previous_step"] is not None for r in runs.values()),
            "previous_first": sum(bool(r.get("previous_first")) for r in runs.values()),
            "previous_steps": _span([r["previous_step"] for r in runs.values() if r["previous_step"] is not None]),
            "knocked_out": _span([r["without_previous"] for r in runs.values()]),
            "stretch": _span([r["stretch"][1] - r["stretch"][0] for r in runs.values() if r.get("stretch")]),
            "best_previous": max((r["best_previous_score"] for r in runs.values()), default=None),
            "final_list_accuracy": _span([r["final_list_accuracy"] for r in runs.values()])}


def _span(values: list) -> tuple | None:
    return (min(values), max(values)) if values else None


def formation_seeds_table(runs: dict[int, dict] | None = None) -> str:
    """A table of the seeds' summaries (what holds across them is said in the notebook's markdown)."""
    runs = formation_seeds() if runs is None else runs
    if not isinstance(runs, dict):
        raise ValueError(f"runs is a {type(runs).__name__}; pass what H.formation_seeds() returns, or nothing.")
    if not runs:
        return "No seed runs recorded; run `python tools/formation_seeds.py induction --seeds 22-33`."
    lines = [f"{'seed':>4}{'prev. forms':>13}{'ind. forms':>12}{'head':>7}{'lists <5% → ≥90%':>19}{'bump':>7}"
             f"{'lists at end':>14}{'without prev.':>15}"]
    for seed, r in sorted(runs.items()):
        head = "—" if r["head"] is None else f"L{r['head'][0]} H{r['head'][1]}"
        stretch = f"{r['stretch'][0]} → {r['stretch'][1]}" if r.get("stretch") else "—"
        lines.append(f"{seed:>4}{str(r['previous_step']):>13}{str(r['formation_step']):>12}{head:>7}{stretch:>19}"
                     f"{r['bump_ratio']:>6.1f}×{r['final_list_accuracy']:>14.0%}{r['without_previous']:>15.0%}")
    return "\n".join(lines)

