"""Grading a class, start to end: read the files, grade each notebook in a worker of its own (keeping
each result as it comes, results.py), then know each student's notebooks and lessons and build the table
the files are written from. Nothing of a submission is parsed here: its worker does that.

A student is the key of student_key (submissions.py). Two keys are two students, even when they look
alike: a key that shows the same as another once invisible characters are removed is shown with a
number ("ana (2)") and a note, never merged.
"""

from __future__ import annotations

import ast
import os
import re
import sys
import unicodedata
from pathlib import Path, PurePosixPath

from tqdm import tqdm

from . import results
from .confine import PROJECT, PROJECT_PARTS, Limits, python_files
from .lessons import SETUP_FAILED, lessons
from .results import Row, Table
from .submissions import (DEFAULT_NAME, Submission, collect, in_teams_draft, names_no_student, source_parts,
                          student_key, visible)
from .pool import Job, grade_jobs

RUNTIME = ("/run", "/var/run", "/sys/fs/cgroup")  # local services' sockets; the cgroup a worker is counted in


def _hidden(paths: list[Path], out: Path) -> list[Path]:
    """The folders a worker must not see: where the submissions are, the output folder, the folders that hold
    them (last lesson's class and grades kept beside this one), $HOME."""
    folders = [p.resolve() if p.is_dir() else p.resolve().parent for p in paths] + [out.resolve()]
    kept = [*PROJECT_PARTS, *python_files()]  # a worker must read these: a folder holding one is not hidden whole
    folders += [f.parent for f in folders if f.parent != f.parent.parent and
                not any(k == f.parent or f.parent in k.parents for k in kept)]
    if any(PROJECT in f.parents for f in folders):  # a class kept in the project: the project's other folders
        folders.append(PROJECT)  # (other classes, grades) are hidden, its helpers, notebooks and data are not
    if os.environ.get("HOME"):
        folders.append(Path(os.environ["HOME"]).resolve())
    folders += [Path(p).resolve() for p in RUNTIME if Path(p).is_dir()]  # local sockets: docker.sock, X11, D-Bus
    return list(dict.fromkeys(folders))


def _told_apart(sources: list[str]) -> tuple[list[str], str]:
    """The sources as a note prints them, and what the note then adds: names that print alike (José in NFC and
    in NFD, one with a zero-width space) are written with their character codes, so the teacher can tell which
    file was graded."""
    looks = [unicodedata.normalize("NFC", visible(s)) for s in sources]
    alike = [looks.count(look) > 1 for look in looks]
    return ([ascii(s)[1:-1] if a else s for s, a in zip(sources, alike)],
            " (names that print alike are written as character codes)" if any(alike) else "")


def _jobs(subs: list[Submission], where: Path, again: bool, setting: str = "") -> tuple[list[tuple[Submission, Job, str]], int]:
    """(submission, its job, the key its result is kept under) for each notebook read; how many results were
    kept from before."""
    if again:
        results.forget_kept(where)
    results.remove_leftovers(where)
    if "--anonymous" in setting:  # results a run with names kept here hold file names and cells: not kept now
        results.forget_named(where)
    jobs, reused = [], 0
    for sub in subs:
        if sub.data is None:
            continue
        name = results.kept_name(sub.source, sub.data, setting)
        job = Job(sub.source, sub.data)
        kept = results.load_kept(where, name)
        if kept is not None and _restore(job, kept):
            job.data, reused = None, reused + 1
        jobs.append((sub, job, name))
    return jobs, reused


def _restore(job: Job, kept: dict) -> bool:
    """A kept result back into its job, when it fits the lessons as they are now."""
    lesson, problem = kept.get("lesson"), kept.get("problem")
    if isinstance(problem, str) and problem:
        job.problem = problem
        return True
    if lesson not in lessons() or not isinstance(kept.get("records"), list) or \
            len(kept["records"]) != len(lessons()[lesson].names) or len(kept.get("taken") or []) != len(kept["records"]):
        return False
    job.lesson, job.taken, job.records = lesson, kept["taken"], kept["records"]
    job.protections, job.seconds = list(kept.get("protections") or []), float(kept.get("seconds") or 0)
    job.note = kept["note"] if isinstance(kept.get("note"), str) else ""
    return True


def _names(keys: list[str]) -> dict[str, tuple[str, str]]:
    """key -> (the name shown, a note or ""): invisible characters removed; keys that would then look
    alike are numbered in sorted order, so two students are never one row."""
    shown: dict[str, list[str]] = {}
    for key in sorted(keys, key=lambda k: (visible(k).casefold(), k)):
        shown.setdefault(visible(key).casefold() or "?", []).append(key)
    names = {}
    for group in shown.values():
        for i, key in enumerate(group):
            base = visible(key) or "?"
            name = base if i == 0 else f"{base} ({i + 1})"
            odd = ", ".join(sorted({f"U+{ord(c):04X}" for c in key if c not in base and not c.isspace()}))
            drawn = f" (its characters that draw nothing, {odd}, removed)" if odd else ""
            spellings = sorted({visible(k) for k in group})
            if len(group) > 1 and not drawn and len(spellings) == len(group):  # "ana", "Ana", "ANA"
                note = (f"This file name differs from another's only in capitals ({', '.join(spellings)}): shown as "
                        f"{name!r}, not merged; if they are one student, give their files one name.")
            elif len(group) > 1:
                note = f"This file name looks like another student's{drawn}: shown as {name!r}, not merged."
            else:
                note = f"The file name holds characters that draw nothing ({odd}): not shown." if odd else ""
            names[key] = (name, note)
    with_id: dict[str, list[str]] = {}  # a platform's "Ana Lima (4321)" by its name alone
    for key in keys:
        if (match := WITH_ID.match(visible(key))) is not None and not names_no_student(key):  # not "Untitled0 (1)"
            with_id.setdefault(match.group(1).casefold(), []).append(key)
    for key in keys:  # a loose "Ana Lima_01.ipynb" beside Moodle's Ana Lima (4321): two rows, and a note
        same = with_id.get(visible(key).casefold(), [])
        if same and not names[key][1]:
            names[key] = (names[key][0], f"Another row has this name and a platform's id ({', '.join(same)}): two "
                                         f"rows, not merged; if they are one student, give both files one name.")
    loose: dict[str, list[str]] = {}  # "Ana Lima" and "ana_lima": the same letters, spaced another way (sweep 30)
    for key in keys:
        if not names_no_student(key):
            loose.setdefault(" ".join(re.split(r"[\s_.-]+", visible(key).casefold())).strip(), []).append(key)
    for group in loose.values():
        spelled = sorted({visible(k) for k in group})
        for key in group if len(spelled) > 1 else []:
            if not names[key][1]:
                names[key] = (names[key][0], f"Another row's name differs from this one only in capitals, spaces, _ "
                                             f"or - ({', '.join(spelled)}): separate rows, not merged; if they are "
                                             f"one student, give their files one name.")
    return names


WITH_ID = re.compile(r"(.+) \((\d+)\)")  # a participant's name and id, as student_key writes them


LESSON_NAMED = ("This file has the lesson's own name and no student's: if it is your answer key, leave it out of the "
                "class; else add the student's name to the file's name.")
DEFAULT_NAMED = ("This file has the name Jupyter or Colab gives a new notebook (Untitled0) and no student's: add the "
                 "student's name to the file's name, or give it with --names.")


def _keyed_as_the_files(names: dict[str, str] | None, subs: list[Submission]) -> dict[str, str] | None:
    """The --names rows keyed as the files spell their students: `ANA` in the file names `ana_01`'s student, and so
    does a key written as a file's name (`ana_01.ipynb`) or as a platform's id alone (`4400` for "Bruno Costa (4400)")
    when it fits one student only. Each gave the work one row and the name another, "not submitted" (sweep 29)."""
    if not names:
        return names
    spelled = {}
    for sub in subs:
        spelled.setdefault(sub.student.casefold(), set()).add(sub.student)
    keyed = {}
    for key, name in names.items():
        files = spelled.get(key.casefold(), set())
        if not files and key.strip().isdigit():
            files = {s for group in spelled.values() for s in group if s.endswith(f" ({key.strip()})")}
        elif not files:
            files = spelled.get(student_key(PurePosixPath(key)).casefold(), set())
        found = key if key in files or len(files) != 1 else next(iter(files))
        keyed[key if found in names and found != key else found] = name  # a row of its own keeps its name
    return keyed


def _name_clash(names: dict[str, str] | None, subs: list[Submission]) -> str:
    """A --names name that is also the key of a file the names file has no row for (`s4711,Bruno` beside
    Bruno_01.ipynb): the two students would be one row, one of them not graded; said before grading."""
    given = {visible(name).casefold(): key for key, name in (names or {}).items()}
    for sub in subs:
        other = given.get(visible(sub.student).casefold())
        if names and sub.student not in names and other is not None and not sub.skipped:
            return (f"--names gives {other!r} the name {names[other]!r}, which is also the name {sub.source} gives, "
                    f"and no row names {sub.student!r}: the two students would be one row. Add a row "
                    f"`{sub.student},<name>`, or give {other!r} another name.")
    return ""


def _rows(subs: list[Submission], graded: list[tuple[Submission, Job, str]], names: dict[str, str] | None) -> dict[str, Row]:
    """One row per student with the notebook graded for each lesson (the one whose name sorts last)."""
    handed_in = {(names or {}).get(s.student, s.student) for s in subs if not s.skipped}
    nothing = set((names or {}).values()) - handed_in  # a student of the --names file with no notebook: a row too
    keys = sorted(handed_in | nothing)
    shown = _names(keys)
    rows = {key: Row(shown[key][0]) for key in keys}
    for key, (_, note) in shown.items():
        if note:
            rows[key].notes.append(note)
            rows[key].unnamed.append(note.split(":")[0] + ".")
        if names_no_student(key):  # "01_single_head_attention": the key is the lesson's own file name
            said = DEFAULT_NAMED if DEFAULT_NAME.fullmatch(key) else LESSON_NAMED
            rows[key].notes.append(said)
            rows[key].unnamed.append(said)
        if key in nothing:
            rows[key].notes.append("Named in the --names file, but no notebook of theirs was found.")
            rows[key].unnamed.append("Named in the --names file, but no notebook of theirs was found.")
        elif names and key not in names.values():
            rows[key].notes.append(f"No row of the --names file gives this key a name: add `{key},<name>` to it.")
            rows[key].unnamed.append("No row of the --names file gives this key a name.")
    by_pair: dict[tuple[str, str], list[Job]] = {}
    quiet: list[tuple[str, Submission]] = []
    for sub in subs:
        key = (names or {}).get(sub.student, sub.student)
        if key not in rows or sub.skipped:
            continue
        if sub.quiet:  # a hidden notebook or an autosave: said below, if the student has nothing graded
            quiet.append((key, sub))
            continue
        rows[key].sources.append(sub.source)
        if sub.note:
            rows[key].notes.append(f"{sub.source}: {sub.note}.")
            rows[key].unnamed.append(f"a file: {sub.note}.")
        if sub.problem:
            rows[key].notes.append(f"{sub.source} {sub.problem}.")
            rows[key].unnamed.append(f"a file {sub.problem}.")
    for sub, job, _ in graded:
        key = (names or {}).get(sub.student, sub.student)
        if job.problem:
            rows[key].notes.append(f"{job.source} {job.problem}.")
            rows[key].unnamed.append(f"a notebook {job.problem}.")
        elif job.lesson:
            by_pair.setdefault((key, job.lesson), []).append(job)
            named = re.findall(r"(?:^|[ _-])(\d\d)(?=[ _.-]|$)", source_parts(job.source)[-1])
            if named and named[0] != job.lesson and named[0] in lessons():  # jo_02.ipynb holding lesson 01
                said = (f"its file name says lesson {named[0]}, but its title is lesson {job.lesson}'s: graded as "
                        f"lesson {job.lesson}")
                rows[key].notes.append(f"{job.source}: {said}.")
                rows[key].unnamed.append(f"a notebook: {said}.")
    for sub, job, _ in graded:  # another lesson's exercises pasted in: said only when that lesson is not handed in
        key = (names or {}).get(sub.student, sub.student)
        if job.lesson and job.note and not all((key, n) in by_pair for n in re.findall(r"\(lesson (\d\d)\)", job.note)):
            rows[key].notes.append(f"{job.source} {job.note}.")
            rows[key].unnamed.append(f"a notebook of lesson {job.lesson} {job.note}.")
    for (key, lesson), group in sorted(by_pair.items()):
        group.sort(key=lambda j: upload_order(j.source))
        if len(group) > 1:
            (*others, last), alike = _told_apart([j.source for j in group])
            rows[key].notes.append(f"{len(group)} notebooks of lesson {lesson}: graded {last}; "
                                   f"not graded: {', '.join(others)}{alike}.")
            rows[key].unnamed.append(f"{len(group)} notebooks of lesson {lesson}: graded the one whose file "
                                     f"name sorts last (numbers by value: -10 after -2; a Teams draft in "
                                     f"Working files, a name ending in _old or backup, or a file in an old/ or "
                                     f"backup/ folder before the others).")
        job = group[-1]
        if in_teams_draft(job.source):  # nothing of this lesson in Submitted files: the draft was never turned in
            said = (f"Lesson {lesson} was graded from the Teams draft (Working files): it was never turned in "
                    f"(nothing in Submitted files).")
            rows[key].notes.append(said)
            rows[key].unnamed.append(said)
        for record, taken in zip(job.records, job.taken):
            rows[key].records[f"{lesson} {record['exercise']}"] = dict(record, lesson=lesson, graded=taken["code"],
                                                                      cell=taken.get("cell", ""))  # (--anonymous: none)
    for key, sub in quiet:
        if not rows[key].records:
            rows[key].sources.append(sub.source)
            rows[key].notes.append(f"{sub.source} {sub.problem}.")
            rows[key].unnamed.append(f"a notebook {sub.problem}.")
    return rows


# a copy kept aside, by its name or its folder's ("attention (first try)", "hw1 working copy": sweep 31)
ASIDE = r"old|backup|bak|orig|original|draft|unused|first[ _-]?try|working[ _-]copy|wip|scratch"
FINAL = re.compile(r"(?<![a-z])(?:final|submitted|submission|finished|done|completed?)(?![a-z])", re.I)  # graded
# over a name without such a word ("attention (final version)" over "attention (first try)", sweep 31)
BACKUP = re.compile(rf"[ _.(-]({ASIDE})[ _)-]*\d*$", re.I)  # ana_01_old
BACKUP_FOLDER = re.compile(rf"(?:{ASIDE})s?|archived?|previous|old[ _-]versions?",
                           re.I)  # ana/old/01.ipynb, whose path sorts after ana/01.ipynb (sweep 30)


def upload_order(source: str) -> tuple:
    """Where a student's notebook of a lesson comes among theirs; the last is graded: a Teams draft (Working
    files) or a backup by its name (`ana_01_old`, `ana_01 backup`) or folder (`ana/old/`) before the others, one
    named final or submitted after them, then by name with numbers by value. Compared in NFC, as the student keys
    are: a Mac writes "é" as e + a combining accent, which sorts before "José_01" whatever its number."""
    source = unicodedata.normalize("NFC", source)
    *folders, name = source_parts(source)
    aside = BACKUP.search(name.removesuffix(".ipynb")) or any(BACKUP_FOLDER.fullmatch(f.strip()) for f in folders)
    return not (in_teams_draft(source) or aside), bool(FINAL.search(name)), _by_number(source.removesuffix(".ipynb"))


def _by_number(name: str) -> list[tuple[int, int | str]]:
    """A file name's sort key with its numbers read as numbers: a third upload "_01-10" sorts after "_01-2"."""
    return [(0, int(part)) if i % 2 else (1, part) for i, part in enumerate(re.split(r"(\d+)", name))]


def _anonymised(rows: list[Row]) -> list[Row]:
    """Numbers instead of names, no file names and nothing the student wrote or printed (either may name them):
    no cell, no output, and no error message or line of code their verdicts quote."""
    width = max(2, len(str(len(rows))))  # student 01 …: a spreadsheet sorts them in order up to 99 (and beyond)
    return [Row(f"student {i:0{width}d}", {c: {k: v for k, v in r.items() if k != "cell"} | {
        "printed": "", "line": _unquoted(r["line"]), "graded": _no_strings(r.get("graded", ""))}
        for c, r in row.records.items()}, [], row.unnamed) for i, row in enumerate(rows, 1)]


def _without_names(result: dict) -> dict:
    """A notebook's kept result as --anonymous writes it: no file name, no cell as written, no output, no error
    message or string constant of the student's (`NAME = "Ana Lima"`, nbgrader's first cell)."""
    taken = [{"code": _no_strings(t.get("code", ""))} for t in result.get("taken") or []]
    records = [dict(r, printed="", line=_unquoted(r.get("line", ""))) for r in result.get("records") or []]
    return dict(result, source="", taken=taken, records=records)


def _no_strings(code: str) -> str:
    """The code as graded with every string constant blanked, docstrings and f-strings too (any may hold the
    student's name or address); code that does not parse keeps none of its quoted text."""
    try:
        tree = ast.parse(code or "")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return re.sub(r"""[rbuRBUfF]{0,2}(['"]).*?\1""", "'…'", code or "")
    for node in ast.walk(tree):
        for field, value in ast.iter_fields(node):
            if isinstance(value, ast.JoinedStr) or isinstance(value, ast.Constant) and isinstance(value.value, (str, bytes)):
                setattr(node, field, ast.Constant("…"))
            elif isinstance(value, list):
                value[:] = [ast.Constant("…") if isinstance(v, ast.JoinedStr) or isinstance(v, ast.Constant) and
                            isinstance(v.value, (str, bytes)) else v for v in value]
    return ast.unparse(tree)


def _unquoted(line: str) -> str:
    """A verdict's line without the student's own words: an error's message, a line of their code."""
    line = re.sub(r"(raised [A-Za-z_][\w.]*): .*?(?= \(inputs: |$)", r"\1 (its message is left out: --anonymous)", line)
    return re.sub(r"which only `.*?` sets", "which only a line of the notebook sets", line)


def grade_class(paths: list[Path], out: Path, workers: int = 2, limits: Limits = Limits(),
                anonymous: bool = False, names: dict[str, str] | None = None, progress: bool = True,
                again: bool = False, sandbox: str = "none") -> Table:
    """Grade every notebook not graded before (all with again=True); the table the files are written from."""
    if not hasattr(os, "setsid") or not hasattr(os, "fork"):
        raise ValueError("grading needs a POSIX system (Linux or macOS): on Windows run it in WSL or in the docker "
                         "line of docs/teaching.md, 'Grading a class'.")
    subs, inputs = collect(paths)
    names = _keyed_as_the_files(names, subs)
    if clash := _name_clash(names, subs):
        raise ValueError(clash)
    where = results.kept_folder(Path(out))  # before any worker starts, so a bad --out costs nothing
    # results kept by an --anonymous run hold no file name or cell: a run with names grades again
    graded, reused = _jobs(subs, where, again, f"--timeout {limits.exercise_s:g}" + " --anonymous" * anonymous)
    todo = [job for _, job, _ in graded if job.data is not None]
    keys = {id(job): name for _, job, name in graded}
    if progress and reused:
        print(f"kept {reused} result{'s' * (reused != 1)} from an earlier run in {where} (--again grades "
              f"{'them' if reused != 1 else 'it'} again)" + "; nothing new to grade" * (not todo), file=sys.stderr)
    bar = tqdm(total=len(todo), desc="grading", unit="notebook", file=sys.stderr, disable=not progress or not todo)

    def done(job: Job) -> None:
        if not _setup_failed(job) and not job.retry:  # the grader's fault, mended before a rerun, or a worker
            # that died part-way (perhaps killed from outside): not kept, so the same command grades it again
            results.keep(where, keys[id(job)], _without_names(job.result()) if anonymous else job.result())
        job.data = None  # its bytes are no longer needed here
        bar.update(1)

    try:
        grade_jobs(todo, limits, workers, _hidden(list(map(Path, paths)), Path(out)), done, sandbox)
    finally:
        bar.close()
    failed = sorted({job.problem for job in todo if _setup_failed(job)})
    if failed:  # a gradebook without that lesson's columns would read as complete: none is written
        graded_now = sum(1 for job in todo if not _setup_failed(job))
        raise ValueError(f"{failed[0]}: run `python -m helpers.doctor --grading`, mend what it names, then the same "
                         f"command again (the {graded_now} other notebook{'s' * (graded_now != 1)} graded now "
                         f"{'are' if graded_now != 1 else 'is'} kept, not graded again); no grades were written")
    inputs += [f"{s.source} {s.problem}." for s in subs if s.skipped]
    for line in inputs if progress else []:  # files that are no student's row: said where the teacher looks
        print(f"skipped: {line}", file=sys.stderr)
    again_later = [Path(job.source).name for job in todo if job.retry]
    if progress and again_later:  # else only their rows' lines said so, and a teacher reads the gradebook
        print(f"not kept: {len(again_later)} notebook{'s' * (len(again_later) != 1)} whose grading process ended "
              f"part-way ({', '.join(again_later[:3])}{', …' * (len(again_later) > 3)}): the same command grades "
              f"{'them' if len(again_later) != 1 else 'it'} again", file=sys.stderr)
    rows = _rows(subs, graded, names)
    table = _table(rows, graded, inputs, anonymous, len(todo))
    ran = ("bubblewrap around every worker (the whole file system read-only but its own folders)" if sandbox == "bwrap"
           else "none (the grader's own confinement only)")
    table.protections = [f"sandbox: {ran}"] + table.protections
    return table


def _setup_failed(job: Job) -> bool:
    """The lesson's setup failed in the grader (a missing model): not the student's doing."""
    return bool(job.problem) and SETUP_FAILED in job.problem


def _table(rows: dict[str, Row], graded: list, inputs: list[str], anonymous: bool, fresh: int) -> Table:
    numbers = sorted({job.lesson for _, job, _ in graded if job.lesson})
    columns = [f"{n} {name}" for n in numbers for name in lessons()[n].names]
    ordered = sorted(rows.values(), key=lambda r: (r.student.casefold(), r.student))
    jobs = [job for _, job, _ in graded]
    protections = next((job.protections for job in jobs if job.protections), [])
    setup = next((job.setup for job in jobs if job.setup), {})
    timings = {"setup": setup, "graded": fresh,
               "notebooks": {n: [job.seconds for job in jobs if job.lesson == n] for n in numbers}}
    return Table(columns, _anonymised(ordered) if anonymous else ordered, {c: 1.0 for c in columns}, protections,
                 [] if anonymous else inputs, timings)
