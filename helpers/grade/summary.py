"""What the class did, counted: per exercise the share right, each named mistake with its count, its
line from the catalogue and one example; the generic and raised answers grouped; who did not attempt
it; and the three mistakes to address first. The report page and its figure are drawn from this.

The three to address first: the named mistakes ranked by students × (1 + the share of the graded
exercises that come after theirs), so a mistake early in the course, which later lessons build on,
counts up to twice; ties go to the earlier exercise, then to the code in alphabetical order.
"""

from __future__ import annotations

from collections import Counter

from ..exercises.catalogue import engine_codes, entries
from .results import NOT_SUBMITTED, RIGHT, Table, column_text

GROUPS = {"generic": "generic", "raised": "raised", "too slow": "too slow", "not attempted": "not attempted"}


def catalogue_lines() -> dict[str, str]:
    """Full code ("attention_weights.sqrt_of_T") -> the line the check prints for it (its fix included)."""
    lines = {f"{e.key}.{code}": says for e in entries() for code, says in e.mistakes + e.pairs}
    engine = {code: meaning for code, (_, meaning) in engine_codes().items()}
    return lines | {f"*.{code}": meaning for code, meaning in engine.items()}


def _says(record: dict, lines: dict[str, str]) -> str:
    code = record["code"]
    short = code.removeprefix(record["key"] + ".")
    return lines.get(code) or lines.get(f"*.{short}") or record["line"]


def _grouped(records: list[dict]) -> list[dict]:
    """Verdict lines with how many students got each, most first."""
    return [{"line": line, "count": n} for line, n in Counter(r["line"] for r in records).most_common()]


def exercise_facts(table: Table, column: str, lines: dict[str, str]) -> dict:
    """One exercise: counts, named mistakes (code, count, line, example), grouped others, who did not attempt."""
    shown = {row.student: column_text(row.records.get(column)) for row in table.rows}
    handed = [row for row in table.rows if shown[row.student] != NOT_SUBMITTED]
    named = Counter(shown[r.student] for r in handed if shown[r.student] not in GROUPS and shown[r.student] != RIGHT)
    mistakes = []
    for code, count in sorted(named.items(), key=lambda kv: (-kv[1], kv[0])):
        first = next(r.records[column] for r in handed if shown[r.student] == code)
        mistakes.append({"code": code, "count": count, "says": _says(first, lines), "example": first.get("graded", "")})
    by_group = {g: [r.records[column] for r in handed if shown[r.student] == g] for g in GROUPS}
    right = sum(shown[r.student] == RIGHT for r in handed)
    return {"column": column, "lesson": column.split(" ", 1)[0], "name": column.split(" ", 1)[1],
            "handed_in": len(handed), "right": right, "right_share": right / len(handed) if handed else 0.0,
            "mistakes": mistakes, "generic": _grouped(by_group["generic"]), "raised": _grouped(by_group["raised"]),
            "too_slow": len(by_group["too slow"]), "not_attempted": [r.student for r in handed
                                                                       if shown[r.student] == "not attempted"],
            "not_submitted": len(table.rows) - len(handed)}


def top_three(exercises: list[dict]) -> list[dict]:
    """The three named mistakes to address first (see the module's rule)."""
    n = len(exercises)
    ranked = [(m["count"] * (1 + (n - 1 - i) / n), i, ex, m) for i, ex in enumerate(exercises) for m in ex["mistakes"]]
    ranked.sort(key=lambda t: (-t[0], t[1], t[3]["code"]))
    return [{"column": ex["column"], "code": m["code"], "count": m["count"], "handed_in": ex["handed_in"],
             "says": m["says"], "example": m["example"], "weight": round(score, 3)} for score, _, ex, m in ranked[:3]]


def summary(table: Table) -> dict:
    """Every number the report shows, from the table."""
    lines = catalogue_lines()
    exercises = [exercise_facts(table, c, lines) for c in table.columns]
    return {"students": len(table.rows), "exercises": exercises, "top": top_three(exercises),
            "protections": table.protections}
