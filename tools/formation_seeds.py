"""Notebook 08's seeds: train a recipe with snapshots on several seeds and record what forms, and when.

    python tools/formation_seeds.py induction --seeds 22-33 --folder /tmp/seedruns

Each seed's snapshots are written into FOLDER/seedN/ (outside data/, so data/ stays small; a run already
there is read back instead of trained again) and measured by analysis/formation.py; only the summaries
(analysis/formation_seeds.py) go into data/models.json, under "formation_seeds" in the recipe's line.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers import train  # noqa: E402
from helpers.analysis.formation import as_arrays, formation_record, record_formation_seeds, seed_summary  # noqa: E402
from helpers.core.snapshots import load_snapshots, record_snapshots  # noqa: E402


def seed_run(name: str, seed: int, folder: Path) -> dict:
    """The measured record of one seed's snapshot run, training it only when FOLDER holds none."""
    where = folder / f"seed{seed}"
    if not (where / "models.json").is_file():
        where.mkdir(parents=True, exist_ok=True)
        recipe = dataclasses.replace(train.RECIPES[name], seed=seed)
        train.train_snapshots(name, where / f"{name}-snapshots.safetensors", progress=False, recipe=recipe)
    run = load_snapshots(name, where)
    if not run.measured:  # a file of older code kept no measurements: measure and keep them now
        run.measured = formation_record(run)
        record_snapshots(name, run, where / f"{name}-snapshots.safetensors")
    return as_arrays(run.measured)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", choices=list(train.RECIPES))
    parser.add_argument("--seeds", default="22-25", help="a range such as 22-25")
    parser.add_argument("--folder", type=Path, required=True, help="where the seeds' snapshot files go")
    args = parser.parse_args(argv)
    first, _, last = args.seeds.partition("-")
    runs = {}
    for seed in range(int(first), int(last or first) + 1):
        runs[seed] = seed_summary(seed_run(args.name, seed, args.folder))
        print(seed, runs[seed], flush=True)
    record_formation_seeds(args.name, runs)


if __name__ == "__main__":
    main()
