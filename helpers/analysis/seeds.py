"""Trained variants compared across training seeds: a result is a distribution, not one run.

One trained model is one draw. Notebooks 04 and 07 compare variants (head counts, key/value heads),
so each variant's recipe is trained on SEEDS seeds (`python -m helpers.train kv-3 --seeds 16`); the
numbers of every seed are recorded under "seeds" in its data/models.json line (the weights of the
recipe's own seed are the shipped file; the other seeds keep only their numbers, so data/ stays
small). A comparison is then stated only as far as the seeds agree:
- `spread(name, key)`: every seed's value, and their mean;
- `learned`, `paired_wins`: counts over the seeds; `binomial_interval` (exact) and `bootstrap_interval` (for a
  mean) say how far a count or a mean carries to the recipe;
- `rate_text`, `mean_text`: the one formatter of those numbers, so a notebook, the guide and the
  tests print the same "9 of 16 runs (30–80 %)".
"""

from __future__ import annotations

import math
import platform
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ..core.catalog import MANIFEST, manifest, recorded, write_manifest
from ..core.model import LanguageModel
from .listloss import loss_on_list_words

SEEDS = 16  # runs per recipe: the recipe's own seed and the next 15
KEYS = ("held_out_loss", "list_accuracy", "list_loss", "other_loss")
HIGHER_IS_BETTER = {"held_out_loss": False, "list_accuracy": True, "list_loss": False, "other_loss": False}


def seeds_of(first: int, n: int = SEEDS) -> list[int]:
    """The seeds a recipe is trained on: its own seed and the next n - 1."""
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 50:
        raise ValueError(f"--seeds {n!r}: give a whole number of runs from 1 to 50, e.g. --seeds 5.")
    return list(range(first, first + n))


def seed_numbers(lm: LanguageModel, info: dict) -> dict:
    """What a seed's run records: the held-out loss and list accuracy of training's own evaluation, the
    loss split into list words and the others, and the CPU kernels that computed it (another kind of
    CPU sums in another order, and ends elsewhere: data/README.md)."""
    split = loss_on_list_words(lm)
    return {"held_out_loss": info["held_out_loss"], "list_accuracy": info["accuracy_induction"],
            "list_loss": round(split["list_loss"], 4), "other_loss": round(split["other_loss"], 4),
            "cpu": torch.backends.cpu.get_cpu_capability(), "cpu_kind": cpu_kind(),
            "torch": torch.__version__.split("+")[0]}


def cpu_kind(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The CPU, as far as it decides the order of a float sum: its maker, family and model, and its
    vector instructions. torch's kernel set ("AVX512") is not enough: MKL picks its own code by maker
    and instructions, and heads-1's seed 12 ended elsewhere on an AMD AVX-512 CPU than on the AVX-512
    machine that recorded it (data/README.md)."""
    try:
        first = cpuinfo.read_text().split("\n\n")[0]  # the first core's block; the others repeat it
    except OSError:  # not Linux
        return f"{platform.system()} {platform.machine()} {platform.processor()}".strip()
    fields = dict(line.split(":", 1) for line in first.splitlines() if ":" in line)
    field = {k.strip(): v.strip() for k, v in fields.items()}
    vector = sorted(f for f in field.get("flags", "").split() if f.startswith(("avx", "amx", "fma")))
    return (f"{field.get('vendor_id', '?')} family {field.get('cpu family', '?')} model {field.get('model', '?')}"
            f" ({field.get('model name', '?')}): {' '.join(vector)}")


def record_seed_run(name: str, seed: int, numbers: dict, path: Path = MANIFEST) -> None:
    """Store one seed's numbers under "seeds" in name's manifest line, beside the seeds already there."""
    record_seeds(name, "seeds", {seed: numbers}, path, keep=True)


def record_seeds(name: str, key: str, runs: dict[int, dict], path: Path = MANIFEST, keep: bool = False) -> None:
    """Store {seed: numbers} under `key` in name's manifest line, by seed, beside the seeds already there
    (keep) or instead of them; the manifest is written in one step."""
    entries = manifest(path)
    if name not in entries:
        raise ValueError(f"{path} has no line for {name!r}: train it first (python -m helpers.train {name}).")
    runs = ({int(s): n for s, n in entries[name].get(key, {}).items()} if keep else {}) | runs
    entries[name][key] = {str(s): n for s, n in sorted(runs.items())}
    write_manifest(entries, path)


def seed_runs(name: str) -> dict[int, dict]:
    """The recorded seed runs of a shipped variant, by seed ({} when none were recorded)."""
    return {int(seed): numbers for seed, numbers in recorded(name, "seeds").items()}


@dataclass(frozen=True)
class Spread:
    """One number of one variant over its seeds."""

    name: str
    key: str
    values: dict[int, float]  # seed -> value

    @property
    def mean(self) -> float:
        return sum(self.values.values()) / len(self.values)


def spread(name: str, key: str) -> Spread:
    """key (one of KEYS) over every recorded seed of the shipped variant `name`."""
    if key not in KEYS:
        raise ValueError(f"Unknown measurement {key!r}; choose one of {', '.join(KEYS)}.")
    runs = seed_runs(name)
    if not runs:
        raise ValueError(f"{name} has no seed runs recorded in data/models.json; record them with "
                         f"`python -m helpers.train {name} --seeds {SEEDS}`.")
    return Spread(name, key, {seed: numbers[key] for seed, numbers in runs.items()})


# --- rates with their intervals: what a sentence about runs may say ------------------------------------------
LEARNED = 0.5  # a run "learned the list game" when it says more than half of a list's second copy right
LEVEL = 0.95
MANY = 16  # runs before a sentence may say "all" or "none" of a recipe's runs


def binomial_interval(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """The exact (Clopper–Pearson) interval for a rate of k successes in n runs. Bisection on the binomial tail
    in plain Python: the one formula we need does not justify scipy as a dependency."""
    if not 0 <= k <= n or n < 1:
        raise ValueError(f"{k} of {n}: need 0 <= k <= n and n >= 1.")
    alpha = (1 - level) / 2

    def at_least(j: int, p: float) -> float:  # P(X >= j) for X ~ Binomial(n, p): rises with p
        return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(j, n + 1))

    def solve(j: int, target: float) -> float:  # the p where P(X >= j) = target
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if at_least(j, mid) < target else (lo, mid)
        return (lo + hi) / 2

    low = 0.0 if k == 0 else solve(k, alpha)  # the smallest p under which k or more is still likely enough
    high = 1.0 if k == n else solve(k + 1, 1 - alpha)  # the largest p under which k or fewer is
    return low, high


def bootstrap_interval(values, level: float = LEVEL, resamples: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """A percentile bootstrap interval for the mean over seeds (seeded: the same numbers every run)."""
    x = np.asarray(list(values), dtype=float)
    means = np.random.default_rng(seed).choice(x, size=(resamples, len(x))).mean(1)
    return float(np.quantile(means, (1 - level) / 2)), float(np.quantile(means, (1 + level) / 2))


def learned(name: str, at_least: float = LEARNED) -> tuple[int, int]:
    """(runs that learned the list game, runs) over name's recorded seeds."""
    values = spread(name, "list_accuracy").values.values()
    return sum(v >= at_least for v in values), len(values)


def paired_wins(a: Spread, b: Spread) -> tuple[int, int]:
    """(seeds on which a is better than b, seeds both ran): the same seed gives both the same stories."""
    sign = 1 if HIGHER_IS_BETTER[a.key] else -1
    shared = sorted(set(a.values) & set(b.values))
    return sum(sign * (a.values[s] - b.values[s]) > 0 for s in shared), len(shared)


def failed_runs(name: str, below: float = LEARNED) -> list[int]:
    """The seeds whose run said a list again correctly less than `below` of the time (had not learned the
    list game)."""
    return [seed for seed, value in spread(name, "list_accuracy").values.items() if value < below]


# --- the words for them: one formatter, so the notebooks, the guide and the tests print the same numbers --------
def rate_text(k: int, n: int) -> str:
    """'9 of 16 runs (30–80 %)'. All or none reads 'all 16 of our 16 runs (79–100 %)' only from MANY runs on:
    fewer carry no "all" or "none" about a recipe, so they read '4 of 4 runs (40–100 %)'."""
    low, high = binomial_interval(k, n)
    many = n >= MANY
    count = f"all {n} of our {n} runs" if k == n and many else f"none of our {n} runs" if k == 0 and many \
        else f"{k} of {n} runs"
    return f"{count} ({100 * low:.0f}–{100 * high:.0f} %)"


def mean_text(values, percent: bool = False) -> str:
    """'90 % (88–92 %)' or '1.599 (1.596–1.602)': the mean over seeds and its 95 % bootstrap interval."""
    values = list(values)
    mean, (low, high) = sum(values) / len(values), bootstrap_interval(values)
    if percent:
        return f"{100 * mean:.0f} % ({100 * low:.0f}–{100 * high:.0f} %)"
    return f"{mean:.3f} ({low:.3f}–{high:.3f})"


# --- tables of a whole family (notebooks 04 and 07 print these; the figures draw the same numbers) -------
SHIPPED_KEYS = {"held_out_loss": "held_out_loss", "list_accuracy": "accuracy_induction"}  # ours: info's


def shipped_number(name: str, key: str) -> float:
    """The shipped file's own number (one older run of the recipe's seed, the one the maps and sliders
    show): held_out_loss or list_accuracy from its "info"."""
    if key not in SHIPPED_KEYS:
        raise ValueError(f"The shipped file records only {', '.join(SHIPPED_KEYS)}, not {key!r}.")
    return float(recorded(name, "info")[SHIPPED_KEYS[key]])


def seed_values(names, key: str) -> dict[str, dict[int, float]]:
    """key for every recorded seed of each of `names` that has seed runs, {name: {seed: value}}."""
    return {name: spread(name, key).values for name in names if seed_runs(name)}


def family_range(names, key: str) -> tuple[float, float]:
    """The lowest and highest value of key over every seed of every one of `names`."""
    values = [v for name in names for v in spread(name, key).values.values()]
    return min(values), max(values)


def seed_table(names) -> str:
    """Every variant over its seeds: runs that learned the list game, and each number's mean with its 95 %
    interval (bootstrap over seeds), beside the shipped file's own run."""
    names = list(names)
    lines = [f"{'model':<9}{'runs':>5}{'learned the list game':>24}{'list said again':>18}{'held-out loss':>22}"
             f"{'loss, other words':>22}   shipped file: list, loss"]
    for name in names:
        k, n = learned(name)
        low, high = binomial_interval(k, n)
        acc, loss, other = (spread(name, key).values.values() for key in ("list_accuracy", "held_out_loss",
                                                                          "other_loss"))
        lines.append(f"{name:<9}{n:>5}{f'{k} ({100 * low:.0f}–{100 * high:.0f} %)':>24}{mean_text(acc, True):>18}"
                     f"{mean_text(loss):>22}{mean_text(other):>22}   "
                     f"{100 * shipped_number(name, 'list_accuracy'):.0f} %, {shipped_number(name, 'held_out_loss'):.3f}")
    return "\n".join(lines)
