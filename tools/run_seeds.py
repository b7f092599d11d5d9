"""Top up the recorded seed runs of several recipes on several processes, recording each run as it finishes.

    python tools/run_seeds.py heads-1 heads-2 kv-1 kv-12 --seeds 16 --jobs 2

Each run is one `helpers.train.train_seed` call in a worker process (one CPU thread each, as the recipes
say); only this process writes data/models.json, so two runs never write it at once. An interrupted
sweep keeps every run that finished: run the same command again and it trains only what is missing.
heads-12 and kv-12 are one recipe (same layout, same seed; their five recorded seeds are identical), so a
seed trained for one is recorded for both.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from helpers.analysis.seeds import record_seed_run  # noqa: E402
from helpers.core.catalog import MANIFEST  # noqa: E402
from helpers.train import RECIPES, missing_seeds, train_seed  # noqa: E402

SAME_RECIPE = {"heads-12": "kv-12", "kv-12": "heads-12"}


def queue(names: list[str], count: int) -> list[tuple[str, int]]:
    """(recipe, seed) still to train, round-robin over the recipes so every one grows at the same pace."""
    todo, seen = {}, set()
    for name in names:
        twin = SAME_RECIPE.get(name)
        if twin in seen:
            continue  # trained once, recorded for both
        seen.add(name)
        todo[name] = missing_seeds(name, count, MANIFEST)
    out = []
    while any(todo.values()):
        for name, seeds in todo.items():
            if seeds:
                out.append((name, seeds.pop(0)))
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="+", choices=list(RECIPES))
    parser.add_argument("--seeds", type=int, required=True, help="seeds each recipe should have in the end")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    work = queue(args.names, args.seeds)
    print(f"{len(work)} runs to do on {args.jobs} processes", flush=True)
    start = time.perf_counter()
    spawn = multiprocessing.get_context("spawn")  # a fresh interpreter per worker, as on macOS and Windows
    with ProcessPoolExecutor(args.jobs, mp_context=spawn) as pool:
        pending = {pool.submit(train_seed, name, seed): (name, seed) for name, seed in work}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                name, seed = pending.pop(future)
                numbers = future.result()
                for target in filter(None, (name, SAME_RECIPE.get(name))):
                    record_seed_run(target, seed, numbers)
                print(f"{time.perf_counter() - start:7.0f} s  {name} seed {seed}: list {numbers['list_accuracy']:.3f}"
                      f" loss {numbers['held_out_loss']:.4f}", flush=True)


if __name__ == "__main__":
    main()
