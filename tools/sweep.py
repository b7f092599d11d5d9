"""Train a recipe with other seeds or settings and check each model against the classroom bars.

    python tools/sweep.py --seeds 1-8                          # the comparison that chose seed 3
    python tools/sweep.py --seeds 11-16 --set lr=6e-3 --device cuda --workers 8

Each run prints one line: the best head per relation, the forced accuracy, the induction
knock-outs and the bars it misses. --out FILE appends the same as JSON lines. Nothing is
written to data/: a run that earns its place is retrained there with `python -m helpers.train`.
The bars are those of the classroom-models and what-each-head-learns issues.
"""

import argparse
import dataclasses
import json
import multiprocessing
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers import train
from helpers.analysis import knockout as ablation  # noqa: E402
from helpers.analysis import relations as scores
from helpers.core.language import FORCED  # noqa: E402
from helpers.core.model import LanguageModel  # noqa: E402
from helpers.core.tokenizer import WordTokenizer  # noqa: E402

FORCED_BAR = 0.95  # next-word accuracy where a relation decides the word
SCORE_BARS = {"previous": 0.9, "induction": 0.9, "resting": 0.8}  # best head's score, per relation
GRAMMAR_BAR = 0.6  # best pronoun or agreement head
KNOCKOUT_BEST, KNOCKOUT_WORST = 50, 5  # points of induction accuracy lost without the best 4 / 4 random idle heads


def seed_list(text: str) -> list[int]:
    """'1-4,9' -> [1, 2, 3, 4, 9]."""
    seeds = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        seeds += range(int(low), int(high or low) + 1)
    return seeds


def overrides(pairs: list[str], recipe: train.Recipe) -> dict:
    """['lr=6e-3', 'relay_steps=800'] -> {'lr': 0.006, 'relay_steps': 800}, typed like the recipe's fields."""
    fields = [f.name for f in dataclasses.fields(recipe) if f.name != "config"]  # config is a dict of sizes
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in fields:
            raise SystemExit(f"--set {pair!r}: give FIELD=VALUE for one of the recipe's fields ({', '.join(fields)}).")
        kind = type(getattr(recipe, key))
        out[key] = value.lower() in ("1", "true", "yes") if kind is bool else kind(value)  # bool("False") is True
    return out


def judge(lm: LanguageModel, info: dict) -> dict:
    """The numbers the bars read, and the bars missed."""
    tables = scores.relation_scores(lm, n_stories=64)
    best = {r: round(float(scores.ranked_heads(tables, r, k=1)[0][1]), 3) for r in tables}
    knockout = ablation.knockout_summary(lm, "induction", tables["induction"], k=4)
    lost_best = 100 * (knockout["all heads"] - knockout["best 4 removed"])
    lost_worst = 100 * (knockout["all heads"] - knockout["control"]["mean"])  # random sets of 4 heads scoring < 0.05
    forced = min(info[f"accuracy_{r}"] for r in FORCED)
    checks = {**{r: best[r] >= bar for r, bar in SCORE_BARS.items()},
              "pronoun or agreement": max(best["pronoun"], best["agreement"]) >= GRAMMAR_BAR,
              "forced accuracy": forced >= FORCED_BAR,
              "knock out best 4": lost_best >= KNOCKOUT_BEST,
              "knock out 4 idle heads": lost_worst < KNOCKOUT_WORST}
    return {"best": best, "forced": forced, "induction_lost_best4": round(lost_best, 1),
            "induction_lost_worst4": round(lost_worst, 1), "held_out_loss": info["held_out_loss"],
            "missed": [name for name, met in checks.items() if not met]}


def run_one(job: tuple) -> dict:
    name, recipe, device = job
    model, info = train.train(name, progress=False, recipe=recipe, device=device)
    lm = LanguageModel(name, model, WordTokenizer(recipe.words))
    return {"recipe": name, "seed": recipe.seed, "train_seconds": info["train_seconds"], **judge(lm, info)}


def line(result: dict) -> str:
    best = " ".join(f"{r} {v:.2f}" for r, v in result["best"].items())
    return (f"seed {result['seed']:>3}: {best} | forced {result['forced']:.3f} | induction knock-outs "
            f"-{result['induction_lost_best4']:.0f}/-{result['induction_lost_worst4']:.0f} points | "
            f"misses: {', '.join(result['missed']) or 'nothing'}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recipe", default="classroom", choices=list(train.RECIPES))
    parser.add_argument("--seeds", type=seed_list, help="e.g. 1-8 or 1,3,5 (default: the recipe's own seed)")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="change a recipe field")
    parser.add_argument("--device", default="cpu", help="cpu, or cuda to explore faster (not for shipped files)")
    parser.add_argument("--workers", type=int, default=1, help="runs at a time, each in its own process")
    parser.add_argument("--out", type=Path, help="append each result to this file as a JSON line")
    args = parser.parse_args(argv)
    base = train.RECIPES[args.recipe]
    changed = dataclasses.replace(base, **overrides(args.set, base))
    jobs = [(args.recipe, dataclasses.replace(changed, seed=s), args.device) for s in args.seeds or [base.seed]]
    with multiprocessing.get_context("spawn").Pool(args.workers) as pool:  # spawn: CUDA cannot fork
        for result in pool.imap(run_one, jobs):
            print(line(result), flush=True)
            if args.out:
                with args.out.open("a") as f:
                    f.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
