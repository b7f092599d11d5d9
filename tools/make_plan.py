"""The teacher's 2 × 90-minute plan, computed from the notebooks, so its minutes can be recomputed after an edit.

    python tools/make_plan.py           # rewrite the plan between the plan markers of docs/teaching.md
    python tools/make_plan.py --check   # exit 1 if the guide's plan is stale or a session runs over 90 minutes
    python tools/make_plan.py --print   # print the plan, write nothing

Reading minutes are measured: the core-path words before each exercise (tools/reading_load.py's counting rules,
"Going further" left out) divided by 130 words a minute. Exercise minutes are the table below: a student's time,
set by the guide's author after solving each exercise from its notebook (see EXERCISES' notes); a class adjusts them
here and reruns this script. The fixed slots (opening, break, questions at the projector) are set, not measured.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import reading_load as RL  # noqa: E402

GUIDE = ROOT / "docs" / "teaching.md"
START, END = "<!-- plan:start -->", "<!-- plan:end -->"
SESSION_LENGTH = 90


@dataclass(frozen=True)
class Exercise:
    """One exercise: a student's minutes, whether it is done in class, and what a student needs for it."""
    minutes: int
    in_class: bool
    needs: str


# Keyed by the function (or class) the exercise cell defines. Minutes: a student who has read the section.
EXERCISES = {
    "attention_weights": Exercise(8, True, "two lines; which axis the softmax runs over and d = Q.shape[-1]"),
    "masked_weights": Exercise(7, True, "two calls the prompt names (triu, masked_fill); mask before softmax"),
    "weighted_sum": Exercise(3, True, "one product, weights @ V"),
    "one_head": Exercise(8, True, "three projections, then Exercise 1 again with d from the matrices"),
    "split_heads": Exercise(7, True, "reshape, then transpose; the hint gives the order"),
    "merge_heads": Exercise(6, True, "split_heads backwards: transpose first, then reshape"),
    "recombine": Exercise(7, True, "one batched product and a sum over heads (or a loop)"),
    "MyMultiHead": Exercise(20, False, "the steps of 01-03 in one forward, with a batch axis: about 10 lines"),
    "concat_shape": Exercise(3, True, "a shape from arithmetic"),
    "head_size_and_params": Exercise(7, True, "the per-head count of section 2 with its biases; paper first"),
    "previous_word_head": Exercise(8, True, "a diagonal below the main one, a mean, an argmax in two axes"),
    "predict_induction": Exercise(12, False, "a loop over queries with a search for the earlier copy"),
    "my_prediction": Exercise(5, True, "a guess and a sentence of why; the check shows the measured number"),
    "kv_cache_bytes": Exercise(7, True, "a product of five numbers read from a config dict"),
    "grouped_attention": Exercise(12, True, "repeat_interleave (or an index per query head), then 01's steps"),
    "formation_step": Exercise(5, True, "a loop that returns the first step at 0.5"),
    "my_knockout_prediction": Exercise(5, True, "two guesses; the check shows the measured numbers"),
}

OPENING = {"01": (5, "The sentence \"I like to draw\" and the question of the day: how does *draw* take in "
                     "the other words?"),
           "04": (3, "Recap: heads of 64 read all 768 numbers; the recombination is twelve decompressions summed.")}
BREAK_MINUTES, PROJECTOR_MINUTES = 5, 3
SESSIONS = (("Session 1: how one layer works (01 → 03)", ("01", "02", "03"), "01"),
            ("Session 2: what the heads do (04 → 06)", ("04", "05", "06"), "04"))
OPTIONAL = ("07", "08")


@dataclass
class Segment:
    """The core-path reading before one exercise (or after the last), and that exercise."""
    notebook: str
    sections: list
    words: int
    exercise: str | None


def notebook_path(number: str) -> Path:
    """The notebook file whose name starts with its number."""
    found = sorted((ROOT / "notebooks").glob(f"{number}_*.ipynb"))
    if not found:
        raise FileNotFoundError(f"No notebook {number}_*.ipynb in notebooks/; check the number.")
    return found[0]


def core_cells(path: Path) -> list[tuple[str, str]]:
    """(cell type, core text) per cell, with reading_load's rule: 'Going further' sections and navigation out."""
    out, skip_level = [], None
    for cell in json.loads(path.read_text())["cells"]:
        src = "".join(cell["source"])
        if cell["cell_type"] != "markdown":
            out.append((cell["cell_type"], "" if skip_level is not None else src))
            continue
        if "NAVIGATION" in src:
            continue
        kept = []
        for line in src.split("\n"):
            m = re.match(r"^(#{1,6})\s+(.*)", line.strip())
            if m:
                level = len(m.group(1))
                if skip_level is not None and level <= skip_level:
                    skip_level = None
                if skip_level is None and re.search(r"going further", m.group(2), re.I):
                    skip_level = level
            if skip_level is None:
                kept.append(line)
        out.append(("markdown", "\n".join(kept)))
    return out


def words_in(markdown: str) -> int:
    """Prose words of some core-path markdown, counted exactly as tools/reading_load.py counts a notebook."""
    text = RL.clean(markdown)
    heads = sum(len(RL.words_of(line)) for line in text.split("\n") if re.match(r"^\s*#{1,6}\s", line))
    body = "\n".join(line for line in text.split("\n") if not re.match(r"^\s*#{1,6}\s", line))
    return heads + sum(len(RL.words_of(s)) for b in RL.blocks(body) for s in RL.sentences(b))


def exercise_in(code: str) -> str | None:
    """The exercise a code cell holds: it defines a name of EXERCISES and calls a check (check_...)."""
    if not re.search(r"\bcheck_\w+\(", code):
        return None
    names = re.findall(r"^(?:def|class)\s+(\w+)", code, re.M)
    return next((n for n in names if n in EXERCISES), None)


def segments(number: str) -> list[Segment]:
    """A notebook's core path cut at its exercises: the words read before each one, and the sections they span."""
    out, section, markdown, spanned = [], None, [], []
    for kind, text in core_cells(notebook_path(number)):
        if kind == "markdown":
            for m in re.finditer(r"^##\s+(\d+)\.", text, re.M):
                section = int(m.group(1))
                spanned.append(section)
            markdown.append(text)
        elif exercise_in(text):
            out.append(Segment(number, spanned or [section], words_in("\n\n".join(markdown)), exercise_in(text)))
            markdown, spanned = [], []
    out.append(Segment(number, spanned or [section], words_in("\n\n".join(markdown)), None))
    return out


def sections_label(numbers: list) -> str:
    """'§1–4', '§5', or '' for no numbered section."""
    numbers = sorted({n for n in numbers if n is not None})
    if not numbers:
        return ""
    return f"§{numbers[0]}" if len(numbers) == 1 else f"§{numbers[0]}–{numbers[-1]}"


def reading_minutes(words: int) -> float:
    return words / RL.WORDS_PER_MINUTE


@dataclass
class Row:
    minutes: float
    notebook: str
    what: str
    detail: str


def notebook_rows(number: str) -> tuple[list[Row], list[str]]:
    """A notebook's rows in class (reading, then its exercise) and the exercises it leaves as homework."""
    rows, homework = [], []
    for seg in segments(number):
        read = reading_minutes(seg.words)
        where = f"{number} {sections_label(seg.sections)}".strip()
        if seg.exercise is None:
            if seg.words:
                rows.append(Row(read, where, "Read and run the cells", f"{seg.words:,} words: {read:.1f}"))
            continue
        ex = EXERCISES[seg.exercise]
        if ex.in_class:
            rows.append(Row(read + ex.minutes, where, f"Read and run, then exercise `{seg.exercise}`",
                            f"{seg.words:,} words: {read:.1f} + exercise {ex.minutes}"))
        else:
            rows.append(Row(read, where, f"Read and run; exercise `{seg.exercise}` is homework",
                            f"{seg.words:,} words: {read:.1f}"))
            homework.append(f"`{seg.exercise}` ({number}, {ex.minutes} min)")
    rows.append(Row(PROJECTOR_MINUTES, number, "At the projector: this notebook's questions (slide outline below)",
                    f"set: {PROJECTOR_MINUTES}"))
    return rows, homework


def session_rows(notebooks: tuple, break_after: str) -> tuple[list[Row], list[str]]:
    minutes, text = OPENING[notebooks[0]]
    rows, homework = [Row(minutes, "—", text, f"set: {minutes}")], []
    for number in notebooks:
        more, home = notebook_rows(number)
        rows += more
        homework += home
        if number == break_after:
            rows.append(Row(BREAK_MINUTES, "—", "Break", f"set: {BREAK_MINUTES}"))
    return rows, homework


def session_table(rows: list[Row]) -> str:
    """The rows with start–end minutes; boundaries are the running sum rounded, so the rows add up exactly."""
    lines = ["| minutes | notebook | do | minutes from |", "|---|---|---|---|"]
    clock = 0.0
    for r in rows:
        start, clock = round(clock), clock + r.minutes
        lines.append(f"| {start}–{round(clock)} | {r.notebook} | {r.what} | {r.detail} |")
    return "\n".join(lines)


def session_total(rows: list[Row]) -> int:
    return round(sum(r.minutes for r in rows))


def notebook_load(number: str) -> dict:
    """Reading and exercise minutes of a whole notebook (class and homework alike)."""
    segs = segments(number)
    words = sum(s.words for s in segs)
    exercises = [s.exercise for s in segs if s.exercise]
    return {"words": words, "read": reading_minutes(words), "exercises": exercises,
            "exercise_minutes": sum(EXERCISES[e].minutes for e in exercises)}


def totals_table(numbers: tuple) -> tuple[str, float]:
    lines = ["| notebook | core words | reading (min) | exercises (min) | total (min) |", "|---|---|---|---|---|"]
    total = 0.0
    for n in numbers:
        load = notebook_load(n)
        both = load["read"] + load["exercise_minutes"]
        total += both
        lines.append(f"| {n} | {load['words']:,} | {load['read']:.0f} | "
                     f"{' + '.join(str(EXERCISES[e].minutes) for e in load['exercises'])} = {load['exercise_minutes']} "
                     f"| {both:.0f} |")
    return "\n".join(lines), total


def exercise_table() -> str:
    """Each exercise's minutes, where it is done, and what a student needs for it: the table a class adjusts."""
    lines = ["| exercise | notebook | minutes | done | what a student needs |", "|---|---|---|---|---|"]
    for number in ("01", "02", "03", "04", "05", "06") + OPTIONAL:
        for seg in segments(number):
            if seg.exercise:
                ex = EXERCISES[seg.exercise]
                done = "optional" if number in OPTIONAL else "in class" if ex.in_class else "homework"
                lines.append(f"| `{seg.exercise}` | {number} | {ex.minutes} | {done} | {ex.needs} |")
    return "\n".join(lines)


def hours(minutes: float) -> str:
    m = round(minutes)
    return f"{m} min" if m < 60 else f"{m // 60} h {m % 60:02d} min"


def plan() -> tuple[str, list[int]]:
    """The markdown between the markers, and each session's minutes."""
    parts, totals = [], []
    for title, notebooks, break_after in SESSIONS:
        rows, homework = session_rows(notebooks, break_after)
        totals.append(session_total(rows))
        parts += [f"**{title}.** {totals[-1]} of {SESSION_LENGTH} minutes.", "", session_table(rows), "",
                  ("Homework: " + ", ".join(homework) + ".") if homework else "No homework from this session.", ""]
    core, core_total = totals_table(("01", "02", "03", "04", "05", "06"))
    extra, extra_total = totals_table(OPTIONAL)
    fixed = sum(m for m, _ in OPENING.values()) + BREAK_MINUTES * len(SESSIONS) + PROJECTOR_MINUTES * 6
    parts += [f"**The whole of 01–06**, class and homework: {hours(core_total)} of reading and exercises, "
              f"{hours(core_total + fixed)} with the openings, breaks and projector slots.", "", core, "",
              f"**07 and 08 (optional, or homework)**: {hours(extra_total)} more.", "", extra, "",
              "**The exercise minutes**, set as described above:", "", exercise_table()]
    return "\n".join(parts).rstrip() + "\n", totals


def replace_block(text: str, block: str) -> str:
    if START not in text or END not in text:
        raise ValueError(f"docs/teaching.md has no {START} … {END} markers; add them where the plan goes.")
    head, rest = text.split(START, 1)
    return head + START + "\n" + block + rest[rest.index(END):]


def current_block(text: str) -> str:
    return text.split(START, 1)[1].split(END, 1)[0].lstrip("\n")


def main(argv=None) -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = args.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 if the guide's plan is stale or runs over")
    mode.add_argument("--print", action="store_true", help="print the plan, write nothing")
    a = args.parse_args(argv)
    block, totals = plan()
    over = [f"session {i + 1}: {t} min" for i, t in enumerate(totals) if t > SESSION_LENGTH]
    if a.print:
        print(block)
    elif a.check:
        if current_block(GUIDE.read_text()) != block:
            print("docs/teaching.md: the plan is stale; run python tools/make_plan.py")
            return 1
    else:
        GUIDE.write_text(replace_block(GUIDE.read_text(), block))
        print(f"wrote the plan into {GUIDE.name}: sessions of {', '.join(map(str, totals))} min")
    if over:
        print(f"over {SESSION_LENGTH} minutes: " + "; ".join(over) + " (move an exercise to homework in EXERCISES)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
