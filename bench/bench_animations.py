"""How long do the step-by-step animations take to build? Prints medians; asserts nothing.

For each animation: building every frame (the figure is drawn once per frame) and saving
the GIF plus the folder of frames. Target: build + save <= 3 s each on 2 cores.

Run:  .venv/bin/python bench/bench_animations.py [--repeats 3] [--quick]   (--quick: one run each)
Wall time suffers when other processes share the CPU, so this process's CPU time and the
load average are printed too: on an idle 2-core machine wall time is about the CPU time.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time

import torch

from benchlib import parser, record
from helpers.core.walkthrough import walkthrough_layer
from helpers.figures import animations


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def main(repeats: int = 3) -> None:
    torch.set_num_threads(2)
    walk = walkthrough_layer("classroom", n_heads=12, sentence=animations.DRAW)  # loaded once, as in the deck
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {repeats} runs each; median seconds")
    with tempfile.TemporaryDirectory() as folder:
        for make in (animations.one_head_animation, animations.recombination_animation):
            builds, saves, cpus = [], [], []
            for _ in range(repeats):
                anim, build, cpu_b = timed(lambda: make(walk))
                _, save, cpu_s = timed(lambda: animations.save_animation(anim, folder))
                builds.append(build), saves.append(save), cpus.append(cpu_b + cpu_s)
            total, cpu = statistics.median(b + s for b, s in zip(builds, saves)), statistics.median(cpus)
            print(f"{anim.name:26s} {len(anim.frames):2d} frames  build {statistics.median(builds):.2f}  "
                  f"save {statistics.median(saves):.2f}  total {total:.2f}  (cpu {cpu:.2f})  target <= 3 s: "
                  f"wall {'met' if total <= 3 else 'NOT met'}, cpu {'met' if cpu <= 3 else 'NOT met'}")
            record(f"{anim.name}: build + save (CPU)", cpu, "s", 3.0)


if __name__ == "__main__":
    options = parser(__doc__)
    options.add_argument("--repeats", type=int, default=3)
    args = options.parse_args()
    main(1 if args.quick else args.repeats)
