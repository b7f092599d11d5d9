"""How long the key/value-head slider (notebook 07) takes to answer, in the kernel.

    python bench/bench_kv_slider.py [--rounds 5] [--quick]   (--quick: one pass over the settings)

Times KVHeadExplorer.set_kv_heads, what the slider calls: look up the run of that setting (every
setting is run and laid out when the explorer is built), put its maps into its grid, blit, write
the PNGs of the grid and the small plot. The browser adds the transfer and the paint: the issue's
budget is 100 ms per move in the browser (bench/bench_browser.py measures that for the other
sliders); the kernel's share is held here to 50 ms. Wall and CPU times are printed, because on a
shared machine wall time includes waiting for a core.
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
    options.add_argument("--rounds", type=int, default=5, help="passes over every slider position")
    args = options.parse_args()
    start = time.perf_counter()
    explorer = H.KVHeadExplorer()
    print(f"first build (runs and lays out every setting): {1000 * (time.perf_counter() - start):.0f} ms")
    counts = explorer.counts
    moves = counts if args.quick else [n for _ in range(args.rounds) for n in counts + counts[::-1]]
    wall, cpu = [], []
    for n in moves:
        w0, c0 = time.perf_counter(), time.process_time()
        if not explorer.set_kv_heads(n):
            raise SystemExit(f"set_kv_heads({n}) failed; is the data complete?")
        wall.append(1000 * (time.perf_counter() - w0))
        cpu.append(1000 * (time.process_time() - c0))
    verdict = "ok" if statistics.median(wall) <= TARGET_MS else f"over the {TARGET_MS:.0f} ms target"
    print(f"set_kv_heads: median {statistics.median(wall):.1f} ms wall ({statistics.median(cpu):.1f} ms CPU), "
          f"max {max(wall):.1f} ms, n={len(wall)}  {verdict}")
    record("07 key/value-head slider move, kernel CPU", statistics.median(cpu), "ms", TARGET_MS,
           note=f"wall {statistics.median(wall):.1f} ms")


if __name__ == "__main__":
    main()
