"""How long the head-count slider takes to answer, in the kernel (target: median <= 50 ms).

    python bench/bench_slider.py [--rounds 5] [--quick]   (--quick: one pass, one sentence pair)

Times HeadCountExplorer.set_heads and .set_merge, which are what the sliders call: run the
model (or merge the heads), put the new maps into the existing image, write one PNG. The
held-out loss of every merged model is computed once when the explorer is built (part of
the first-build time), so the first visit of a merge group is reported separately only to
show that it costs no more than later ones. Wall-clock and CPU times are printed, because
on a shared machine wall time includes waiting for a core.
"""

from __future__ import annotations

import statistics
import time

import matplotlib

matplotlib.use("Agg")

import helpers as H  # noqa: E402
from benchlib import parser, record  # noqa: E402

TARGET_MS = 50.0


def timed(fn, values) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds for fn(v) for each v."""
    wall, cpu = [], []
    for v in values:
        w0, c0 = time.perf_counter(), time.process_time()
        if not fn(v):
            raise SystemExit(f"{fn.__name__}({v!r}) failed; is the data complete?")
        wall.append(1000 * (time.perf_counter() - w0))
        cpu.append(1000 * (time.process_time() - c0))
    return wall, cpu


def report(name: str, wall: list[float], cpu: list[float]) -> None:
    record(f"04 head-count explorer: {name}, kernel CPU", statistics.median(cpu), "ms", TARGET_MS,
           note=f"wall {statistics.median(wall):.1f} ms")
    verdict = "ok" if statistics.median(wall) <= TARGET_MS else f"over the {TARGET_MS:.0f} ms target"
    print(f"{name:<34} median {statistics.median(wall):6.1f} ms wall ({statistics.median(cpu):6.1f} ms CPU)  "
          f"max {max(wall):6.1f} ms  n={len(wall)}  {verdict}")


def main() -> None:
    options = parser(__doc__)
    options.add_argument("--rounds", type=int, default=5, help="passes over every slider position")
    args = options.parse_args()
    if args.quick:
        args.rounds = 1

    t0 = time.perf_counter()
    explorer = H.HeadCountExplorer()
    print(f"HeadCountExplorer() first build: {time.perf_counter() - t0:.2f} s (loads the six models and scores the "
          f"merged ones, once per kernel)")
    counts = explorer.counts
    groups = list(explorer.merge_slider.options)

    wall, cpu = timed(explorer.set_merge, groups[1:])  # first visit of each group
    report("merge control, first visit", wall, cpu)
    moves = [h for _ in range(args.rounds) for h in counts + counts[::-1]]
    report("head slider move", *timed(explorer.set_heads, moves))
    merges = [g for _ in range(args.rounds) for g in groups + groups[::-1]]
    report("merge control move", *timed(explorer.set_merge, merges))
    sentences = ["the cat near the dogs is tired .", H.SENTENCE] * args.rounds
    report("new sentence (both views)", *timed(explorer.set_sentence, sentences))


if __name__ == "__main__":
    main()
