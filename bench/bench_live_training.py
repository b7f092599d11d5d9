"""How long notebook 08's "Train it yourself" takes: the live cell's whole run, plot redraws included.

    python bench/bench_live_training.py [--seed 23] [--quick]   (--quick: the tiny recipe, seconds)

Runs H.LiveTraining headless exactly as the notebook's cell does (a thread trains the recipe on one core while
the plot is redrawn every steps / 40 steps) and prints the wall time, the steps a second, and where the induction
head formed. On a shared machine wall time includes waiting for the cores.
"""

from __future__ import annotations

import os
import time

import matplotlib

matplotlib.use("Agg")

import helpers as H  # noqa: E402
from benchlib import parser, record  # noqa: E402


def main() -> None:
    options = parser(__doc__)
    options.add_argument("--seed", type=int, default=23)
    args = options.parse_args()
    recipe = "tiny" if args.quick else "induction"
    trainer = H.LiveTraining(H.train_live, recipe, seed=args.seed)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    start = time.perf_counter()
    trainer.start()
    result = trainer.wait()
    seconds = time.perf_counter() - start
    step, head = trainer.formed()
    print(f"{recipe} seed {args.seed}: {len(result['steps'])} steps in {seconds:.0f} s "
          f"({len(result['steps']) / seconds:.0f} steps/s, {trainer.redraws} redraws, load {load:.1f} at start); "
          f"induction head {'H' + str(head) + ' at step ' + str(step) if step is not None else 'not formed'}")
    print(trainer.status.value)
    record("08 live training, whole run", seconds, "s", None, note=f"{recipe}, load {load:.1f}")


if __name__ == "__main__":
    main()
