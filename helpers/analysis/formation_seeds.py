"""What changes from seed to seed when the heads form (notebook 08 §4): the formation step, the head, the
bump, measured on snapshot runs of other seeds. Only their numbers are kept, under "formation_seeds" in
the recipe's line of data/models.json (`python tools/formation_seeds.py induction --seeds 22-33`).
"""

from __future__ import annotations

from pathlib import Path

from ..core.catalog import MANIFEST, recorded
from .formation import bump_ratio, formation, list_stretch
from .seeds import record_seeds


def seed_summary(record: dict) -> dict:
    """One run's findings as plain numbers: where and when the induction head forms, the bump, the end, and
    the list accuracy at the end without layer 0's best previous-word head and without its most needed head."""
    curves, knocked = record["curves"], record["knockouts"]
    found = formation(curves)
    prev = found["previous_head"]
    return {"without_previous": round(float(knocked["previous"]["accuracy_without"][-1]), 4),
            "needed_head": list(knocked["heads"]["needed"]),
            "without_needed": round(float(knocked["needed"]["accuracy_without"][-1]), 4),
            "formation_step": found["step"], "head": None if found["head"] is None else list(found["head"]),
            "bump_ratio": round(bump_ratio(curves, found["step"]), 2), "bump": found["bump"],
            "best_previous_score": round(float(curves["previous_list"][:, prev[0], prev[1]].max()), 3),
            "previous_step": found["previous_step"], "previous_first": found["previous_first"],
            "stretch": list_stretch(curves), "final_list_accuracy": round(float(curves["list_accuracy"][-1]), 4),
            "final_loss": round(float(curves["loss"][-1]), 4),
            "final_induction": round(float(curves["induction"][-1].max()), 3)}


def record_formation_seeds(name: str, runs: dict[int, dict], path: Path = MANIFEST) -> None:
    """Store every seed's summary under "formation_seeds" in name's manifest line (one write)."""
    record_seeds(name, "formation_seeds", runs, path)


def formation_seeds(name: str = "induction") -> dict[int, dict]:
    """The recorded seed summaries, by seed ({} when none were recorded)."""
    return {int(seed): numbers for seed, numbers in recorded(name, "formation_seeds").items()}


def seed_findings(runs: dict[int, dict]) -> dict:
    """What holds across the seeds, by code: how many runs grew an induction head, a previous-word head,
    a bump; the range of formation steps; how many different heads formed first."""
    formed = [r for r in runs.values() if r["formation_step"] is not None]
    steps = [r["formation_step"] for r in formed]
    return {"runs": len(runs), "formed": len(formed), "steps": (min(steps), max(steps)) if steps else None,
            "heads": len({tuple(r["head"]) for r in formed}), "bumps": sum(r["bump"] for r in runs.values()),
            "previous_formed": sum(r["previous_step"] is not None for r in runs.values()),
            "previous_first": sum(bool(r.get("previous_first")) for r in runs.values()),
            "previous_steps": _span([r["previous_step"] for r in runs.values() if r["previous_step"] is not None]),
            "knocked_out": _span([r["without_previous"] for r in runs.values()]),
            "stretch": _span([r["stretch"][1] - r["stretch"][0] for r in runs.values() if r.get("stretch")]),
            "best_previous": max((r["best_previous_score"] for r in runs.values()), default=None),
            "final_list_accuracy": _span([r["final_list_accuracy"] for r in runs.values()])}


def _span(values: list) -> tuple | None:
    return (min(values), max(values)) if values else None


def formation_seeds_table(runs: dict[int, dict] | None = None) -> str:
    """A table of the seeds' summaries (what holds across them is said in the notebook's markdown)."""
    runs = formation_seeds() if runs is None else runs
    if not runs:
        return "No seed runs recorded; run `python tools/formation_seeds.py induction --seeds 22-33`."
    lines = [f"{'seed':>4}{'prev. forms':>13}{'ind. forms':>12}{'head':>7}{'lists <5% → ≥90%':>19}{'bump':>7}"
             f"{'lists at end':>14}{'without prev.':>15}"]
    for seed, r in sorted(runs.items()):
        head = "—" if r["head"] is None else f"L{r['head'][0]} H{r['head'][1]}"
        stretch = f"{r['stretch'][0]} → {r['stretch'][1]}" if r.get("stretch") else "—"
        lines.append(f"{seed:>4}{str(r['previous_step']):>13}{str(r['formation_step']):>12}{head:>7}{stretch:>19}"
                     f"{r['bump_ratio']:>6.1f}×{r['final_list_accuracy']:>14.0%}{r['without_previous']:>15.0%}")
    return "\n".join(lines)

