"""What importing the package costs, measured with `python -X importtime` in fresh interpreters.

    python bench/bench_imports.py [--repeat 5] [--quick]   (--quick: three of the lines, once each)

Prints the median wall time of each import line, and what each one costs on top of `import torch`
(a difference of two fresh processes: about ±0.1 s of noise). The figure recorded is what
`import helpers` itself takes after torch in one process (-X importtime), the median of the repeats.
It also prints whether matplotlib and ipywidgets were loaded. Targets (the package-in-layers issue):
`import helpers` costs at most 0.5 s on top of `import torch`, and `import helpers.core` loads
neither matplotlib nor ipywidgets.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchlib import parser, record

ROOT = Path(__file__).resolve().parent.parent
LINES = {
    "torch": "import torch",
    "helpers": "import torch, helpers",
    "helpers.core": "import torch, helpers.core.run, helpers.core.walkthrough",
    "helpers.train": "import torch, helpers.train",
    "a notebook's first figure": "import torch, helpers as H; H.plot_attention",
    "a notebook's first widget": "import torch, helpers as H; H.Explorer",
}
QUICK = ("torch", "helpers", "a notebook's first widget")
PROBE = "; import sys; print(int('matplotlib' in sys.modules), int('ipywidgets' in sys.modules))"


def timed(code: str) -> tuple[float, str]:
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code + PROBE], cwd=ROOT, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, out.stdout.split()


def import_times(code: str) -> list[tuple[int, str]]:
    """(cumulative microseconds, module) of every import `code` made, from -X importtime, in one process."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True)
    rows = []
    for line in out.stderr.splitlines()[1:]:
        parts = line.removeprefix("import time:").split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))  # nested imports keep their leading spaces
    return rows


def self_time_top(code: str, n: int = 5) -> list[tuple[int, str]]:
    """The n most expensive top-level modules (cumulative microseconds)."""
    return sorted((us, m.strip()) for us, m in import_times(code) if not m.startswith("  "))[::-1][:n]


def helpers_own_seconds(code: str = "import torch, helpers") -> float:
    """What `import helpers` itself took after torch, in the same process (its cumulative -X importtime
    line): one process and no interpreter start, unlike the difference of two processes' wall times
    (~1.3 s each, ±0.1 s apart from run to run)."""
    return next(us for us, m in import_times(code) if m.strip() == "helpers") / 1e6


def main() -> None:
    options = parser(__doc__)
    options.add_argument("--repeat", type=int, default=5)
    args = options.parse_args()
    medians = {}
    for name, code in LINES.items():
        if args.quick and name not in QUICK:
            continue
        runs = [timed(code) for _ in range(1 if args.quick else args.repeat)]
        medians[name] = statistics.median(t for t, _ in runs)
        mpl, widgets = runs[-1][1]
        extra = medians[name] - medians["torch"]
        print(f"{name:28s} {medians[name]:6.2f} s   (+{extra:5.2f} s on top of torch)   "
              f"matplotlib {'yes' if mpl == '1' else 'no '}   ipywidgets {'yes' if widgets == '1' else 'no'}")
    own = statistics.median(helpers_own_seconds() for _ in range(1 if args.quick else args.repeat))
    print(f"`import helpers` itself, after torch in the same process (-X importtime): {1000 * own:.1f} ms "
          "(the facade loads its layers on first use)")
    record("import helpers, on top of import torch (-X importtime)", 1000 * own, "ms", 500.0)
    if args.quick:
        return
    print("\nlargest imports in `import torch, helpers as H; H.Explorer` (cumulative, -X importtime):")
    for us, module in self_time_top(LINES["a notebook's first widget"]):
        print(f"  {us / 1e6:6.2f} s  {module}")


if __name__ == "__main__":
    main()
