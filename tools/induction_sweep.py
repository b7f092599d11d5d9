"""Issue 50's sweep: which laptop-sized recipe grows a previous-word head in layer 0 before an induction head
in layer 1, on repeats with no marker?

    python tools/induction_sweep.py rand-attn4 --seed 0        # one run, one thread, appended to the record
    python tools/induction_sweep.py --list                     # the recipes and what is recorded
    python tools/induction_sweep.py --table                    # the recorded runs as data/README.md's table

Every run measures the model at about a dozen steps and at the end: the best layer-0 previous-word score
(held-out stories, as notebooks 06 and 08 score it), the best layer-1 induction score on marker-free repeats
and in the list game's format (analysis/repeats.py), the best layer-1 score on random words said twice
(detectors.induction_scores), the repeat loss and the share of marker-free second copies said right. No
weights are written: the record is tools/induction_sweep.json, {recipe: {seed: run}}, rewritten atomically
after each run. data/README.md's section "Induction recipe sweep (issue 50)" is its table.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from helpers.analysis.detectors import induction_scores  # noqa: E402
from helpers.analysis.formation import list_previous_pairs  # noqa: E402
from helpers.analysis.relations import pair_scores, relation_pairs  # noqa: E402
from helpers.analysis.repeats import repeat_numbers, repeat_run  # noqa: E402
from helpers.core.evaluation import held_out_stories, one_thread, story_ids  # noqa: E402
from helpers.core.model import LanguageModel  # noqa: E402
from helpers.core.tokenizer import WordTokenizer  # noqa: E402
from helpers.train import RECIPES, Recipe, train  # noqa: E402

RECORD = Path(__file__).with_name("induction_sweep.json")
THRESHOLD = 0.5  # a head has formed when its score reaches this (notebooks 05-08)
# helpers.train's "induction" recipe (notebook 08) is `half-attn4@tokens=4000000`, the row where the circuit formed
BASE = RECIPES["heads-12"]  # 2 layers, width 96, 2M tokens = 976 steps of 32 stories

ATTN_ONLY = dict(n_layer=2, n_embd=96, mlp=False)
SWEEP: dict[str, Recipe] = {
    # the first probe: heads-12 with the list's markers removed
    "nomark-12": replace(BASE, list_markers=False, note="heads-12, lists said twice with no marker"),
    # Olsson et al.'s setting: every story is random words said again and again, attention only
    "rand-attn4": replace(BASE, config=dict(ATTN_ONLY, n_head=4), repeat_chance=1.0,
                          note="attention-only, 4 heads of 24, every story a repeated random sequence"),
    "rand-attn2": replace(BASE, config=dict(ATTN_ONLY, n_head=2), repeat_chance=1.0,
                          note="attention-only, 2 heads of 48, every story a repeated random sequence"),
    # half the stories repeated random words, the rest the language with marker-free lists
    "half-attn4": replace(BASE, config=dict(ATTN_ONLY, n_head=4), repeat_chance=0.5, list_markers=False,
                          list_chance=1.0, note="attention-only, 4 heads of 24, half repeated random sequences, "
                                                "half stories with a marker-free list"),
    "half-12": replace(BASE, repeat_chance=0.5, list_markers=False,
                       note="heads-12 layout (MLP), half repeated random sequences, half marker-free lists"),
    # the classroom model's way to a previous-word head: 400 steps of relay games alone first (then half
    # the stories hold one), here with marker-free lists
    "relay-nomark-12": replace(BASE, list_markers=False, relay_chance=0.5, relay_steps=400,
                               note="heads-12, 400 relay-only steps first, relays in half the stories, "
                                    "marker-free lists"),
    "relay-nomark-attn4": replace(BASE, config=dict(ATTN_ONLY, n_head=4), list_markers=False, relay_chance=0.5,
                                  relay_steps=400, note="attention-only, 4 heads of 24, 400 relay-only steps "
                                                        "first, relays in half the stories, marker-free lists"),
    "relaymix-nomark-12": replace(BASE, list_markers=False, relay_chance=0.5,
                                  note="heads-12, relays in half the stories from the start, marker-free lists"),
    "relay-half-attn4": replace(BASE, config=dict(ATTN_ONLY, n_head=4), repeat_chance=0.5, list_markers=False,
                                list_chance=1.0, relay_chance=0.5, relay_steps=400,
                                note="attention-only, 4 heads of 24, 400 relay-only steps first, then half repeated "
                                     "random sequences, half stories with a marker-free list and a relay in half"),
    "half-mlp4": replace(BASE, config=dict(n_layer=2, n_head=4, n_embd=96), repeat_chance=0.5, list_markers=False,
                         list_chance=1.0, note="2 layers with MLP, 4 heads of 24, half repeated random sequences"),
}


def flexible(name: str) -> Recipe:
    """A recipe by name, with optional suffixes: NAME@lr=1e-3@tokens=3000000@repeat_chance=0.3 ..."""
    base, *changes = name.split("@")
    if base not in SWEEP:
        raise SystemExit(f"unknown recipe {base!r}; choose one of {', '.join(SWEEP)}")
    fields = {}
    for change in changes:
        key, value = change.split("=")
        fields[key] = type(getattr(SWEEP[base], key))(float(value) if "." in value or "e" in value else int(value))
    return replace(SWEEP[base], **fields)


class Watcher:
    """on_step for helpers.train.train: measures the model at the chosen steps (after that many updates)."""

    def __init__(self, recipe: Recipe, every: int):
        self.tokenizer = WordTokenizer(recipe.words)
        self.bos, self.every, self.rows, self.start = recipe.bos, every, [], time.perf_counter()
        self.stories = held_out_stories(64)
        self.pairs = relation_pairs(self.stories, "previous")

    def __call__(self, step, steps, loss, model):
        done = step + 1
        if done % self.every == 0 or done == steps:
            model.eval()
            self.rows.append({"step": done, "seconds": round(time.perf_counter() - self.start, 1),
                              "train_loss": round(loss, 4), **measure(self, model)})
            model.train()


@torch.no_grad()
def measure(w: Watcher, model) -> dict:
    lm = LanguageModel("sweep", model, w.tokenizer, {}, bos=w.bos)
    with one_thread():
        attn = model(story_ids(lm, w.stories)).attentions
    previous = pair_scores(attn, w.pairs)  # (L, H)
    free, marked = repeat_numbers(lm, markers=False), repeat_numbers(lm, markers=True)
    rand = induction_scores(lm)
    # the previous-word score where the circuit works: on the marker-free repeats, from each key of the
    # first copy (the token after a word) back to that word, in layer 0 (as notebook 08 scores it)
    stories, out = repeat_run(lm, markers=False, n_stories=64)
    on_repeats = pair_scores(out.attentions, list_previous_pairs(stories))[0]  # (H,)
    head = np.unravel_index(free["scores"][1].argmax(), free["scores"][1].shape)[0]
    return {"previous_l0": round(float(previous[0].max()), 3), "previous_head": int(previous[0].argmax()),
            "previous_l0_repeats": round(float(on_repeats.max()), 3), "previous_head_repeats": int(on_repeats.argmax()),
            "induction_l1": round(float(free["scores"][1].max()), 3), "induction_head": int(head),
            "induction_l1_markers": round(float(marked["scores"][1].max()), 3),
            "random_l1": round(float(rand[1].max()), 3), "repeat_loss": round(free["loss"], 3),
            "repeat_accuracy": round(free["accuracy"], 3), "list_accuracy_markers": round(marked["accuracy"], 3)}


def first_step(rows: list[dict], key: str) -> int | None:
    return next((r["step"] for r in rows if r[key] >= THRESHOLD), None)


def summary(rows: list[dict], info: dict) -> dict:
    prev, ind = first_step(rows, "previous_l0"), first_step(rows, "induction_l1")
    prev_rep = first_step(rows, "previous_l0_repeats") if "previous_l0_repeats" in rows[-1] else None
    return {"previous_step": prev, "induction_step": ind, "previous_step_repeats": prev_rep,
            "circuit": prev is not None and ind is not None and prev < ind,
            "circuit_repeats": prev_rep is not None and ind is not None and prev_rep < ind,
            "final": rows[-1], "held_out_loss": info.get("held_out_loss"), "train_seconds": info["train_seconds"]}


def save(record: dict) -> None:
    fd, tmp = tempfile.mkstemp(dir=RECORD.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    os.replace(tmp, RECORD)


def table(record: dict) -> str:
    """One markdown row per recorded run, in the order they were recorded ("n/a": a run recorded before the
    previous-word score at list words was measured)."""
    rows = ["| recipe | seed | steps | s | previous L0, stories (end) | formed at | previous L0, list words (end) "
            "| formed at | induction L1, no marker (end) | formed at | with markers | random words | repeat loss "
            "| repeat said right | previous first |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, seeds in record.items():
        for seed, run in seeds.items():
            f, measured = run["final"], "previous_l0_repeats" in run["final"]
            on_lists = f"{f['previous_l0_repeats']:.2f} | {run['previous_step_repeats'] or '–'}" if measured else "n/a | n/a"
            before = measured and None not in (run["previous_step_repeats"], run["induction_step"]) and \
                run["previous_step_repeats"] < run["induction_step"]  # strictly: a tie between measurements is not "first"
            first = ("yes" if before else "no") if measured else "n/a"
            rows.append(f"| `{name}` | {seed} | {run['steps']} | {run['train_seconds']:.0f} | {f['previous_l0']:.2f} "
                        f"| {run['previous_step'] or '–'} | {on_lists} | {f['induction_l1']:.2f} "
                        f"| {run['induction_step'] or '–'} | {f['induction_l1_markers']:.2f} | {f['random_l1']:.2f} "
                        f"| {f['repeat_loss']:.2f} | {f['repeat_accuracy']:.0%} | {first} |")
    return "\n".join(rows)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", nargs="?", help="a recipe of SWEEP, optionally NAME@field=value@...")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--measures", type=int, default=12, help="measurements along the run")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--table", action="store_true")
    args = parser.parse_args(argv)
    record = json.loads(RECORD.read_text()) if RECORD.exists() else {}
    if args.table:
        print(table(record))
        return
    if args.list or not args.name:
        for name, recipe in SWEEP.items():
            print(f"{name:>12}: {recipe.note}; recorded seeds {sorted(record.get(name, {}))}")
        return
    recipe = replace(flexible(args.name), seed=args.seed, threads=1)
    steps = recipe.tokens // (recipe.batch * 64)
    watcher = Watcher(recipe, max(1, steps // args.measures))
    _, info = train(args.name, progress=False, recipe=recipe, on_step=watcher)
    run = {"recipe": {k: v for k, v in asdict(recipe).items() if k != "note"}, "steps": steps,
           "curve": watcher.rows, **summary(watcher.rows, info)}
    record = json.loads(RECORD.read_text()) if RECORD.exists() else {}  # again: another run may have written
    record.setdefault(args.name, {})[str(args.seed)] = run
    save(record)
    final = run["final"]
    print(f"{args.name} seed {args.seed}: previous-word head (L0) at step {run['previous_step']}, induction (L1, "
          f"no marker) at step {run['induction_step']}; circuit {run['circuit']}; end: previous {final['previous_l0']}, "
          f"induction {final['induction_l1']} (markers {final['induction_l1_markers']}, random {final['random_l1']}), "
          f"repeat loss {final['repeat_loss']}, {run['train_seconds']} s", flush=True)


if __name__ == "__main__":
    main()
