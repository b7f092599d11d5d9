"""How long the training-step slider (notebook 08) takes to answer, in the kernel.

    python bench/bench_training_slider.py [--rounds 3] [--quick]   (--quick: one pass over a few steps)

Times TrainingStepExplorer.set_step, what the slider calls: every step's maps were computed when the
explorer was built, so a move puts that step's mosaic into the grid, moves the curves' marker lines,
blits both figures and writes their PNGs and the score table. The browser adds the transfer and the
paint (the issue's budget is 100 ms per move in the browser; tests/test_accessibility_browser.py prints
the key-to-picture time). Wall and CPU times are printed: on a shared machine wall includes waiting.
"""

from __future__ import annotations

import statistics
import time

import matplotlib

matplotlib.use("Agg")

import helpers as H  # noqa: E402
from benchlib import parser, record  # noqa: E402

TARGET_MS = 50.0


def main() -> None:
    options = parser(__doc__)
    options.add_argument("--rounds", type=int, default=3, help="passes over every snapshot step")
    args = options.parse_args()
    start = time.perf_counter()
    explorer = H.TrainingStepExplorer()
    print(f"first build (runs the sentence through every snapshot): {1000 * (time.perf_counter() - start):.0f} ms")
    steps = explorer.steps
    moves = steps[::6] if args.quick else [s for _ in range(args.rounds) for s in steps + steps[::-1]]
    wall, cpu = [], []
    for step in moves:
        w0, c0 = time.perf_counter(), time.process_time()
        if not explorer.set_step(step):
            raise SystemExit(f"set_step({step}) failed; is data/induction-snapshots.safetensors there?")
        wall.append(1000 * (time.perf_counter() - w0))
        cpu.append(1000 * (time.process_time() - c0))
    verdict = "ok" if statistics.median(wall) <= TARGET_MS else f"over the {TARGET_MS:.0f} ms target"
    print(f"set_step: median {statistics.median(wall):.1f} ms wall ({statistics.median(cpu):.1f} ms CPU), "
          f"max {max(wall):.1f} ms, n={len(wall)}  {verdict}")
    record("08 training-step slider move, kernel CPU", statistics.median(cpu), "ms", TARGET_MS,
           note=f"wall {statistics.median(wall):.1f} ms")


if __name__ == "__main__":
    main()
