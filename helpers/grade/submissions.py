"""Reading a class's submissions: .ipynb files, folders of them, and .zip archives, as bytes.

The grading process never parses a notebook: it reads each file's bytes (a zip's entries in memory,
so `../` names, absolute paths and symlinks cannot write anywhere) and hands them to the one worker
that grades them (worker.py), which parses the JSON and the student's code. Every file that cannot
be read is one line in its student's row (an encrypted or damaged zip entry, a .pdf handed in, a
symlink), never an error that stops the class. A zip a student handed in, inside the class's, is opened
as theirs (two levels deep at most). Limits keep a zip bomb out.

Who a file belongs to (the documented rule, `student_key`): inside a folder or zip, the first folder
below it (past folders around the whole class, `_wrappers`, and a folder of several students' files beside
them, `_class_folders`; a folder or zip named on the command line counts as such a first folder when
`names_its_student`), else the file's name; of that, the
platform's whole participant key: Moodle's
"Ana Lima_4321_assignsubmission_file_" is "Ana Lima (4321)", Canvas's "limaana_4321_98765_lesson.ipynb"
is "limaana (4321)", Blackboard's "Lesson01_ana.lima_attempt_<time>_01.ipynb" is "ana.lima"; a folder per lesson
or assignment ("Lesson 01/", "Assignment 1 - Single head/", Teams' "Student Work/Submitted files/") and one of
students' folders with a same-named file in each (`_same_file_in_folders`) are looked through; a Teams student's folder around "Submitted files" and "Working files" is that student's
(classroom.upload_order grades what was submitted over the draft); otherwise a folder's whole name ("team_1"), and a file's name up to the lesson's
number, the first part written with two digits or a word if there is one ("johnson_katherine_01.ipynb"
is "johnson_katherine", "smith_2_01.ipynb" is "smith_2", "ana_1.ipynb" is "ana", "Ana Lima 01 copy.ipynb"
is "Ana Lima", and with the lesson first what follows it, "Lesson 01 - Ana Lima.ipynb", "01_Ana Lima.ipynb" and
"01_single_head_attention - Ana Lima.ipynb" are "Ana Lima", and a name of a lesson's words and numbers only
("hw3_01") is the whole file name;
see `_lesson_at`). Names are
NFC-normalised; control characters become spaces. `--names` maps that key to a name with a CSV of
`key,name` rows.
"""

from __future__ import annotations

import csv
import io
import re
import stat
import struct
import unicodedata
import zipfile
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MAX_NOTEBOOK_BYTES = 100 << 20  # a lesson notebook with its outputs is a few MB; beyond this it is not read
TOO_LARGE = (f"is larger than {MAX_NOTEBOOK_BYTES >> 20} MB: not read (its outputs, most likely: Edit → Clear "
             f"Outputs of All Cells, save, and hand it in again)")
MAX_FILES = 2000  # files in one folder or zip (a class of 300 × 7 lessons fits)
MAX_ZIP_BYTES = 1 << 30  # uncompressed .ipynb bytes in one zip, all entries together
MAX_HANDED_IN_BYTES = 200 << 20  # a zip a student handed in inside the class's: eight lessons are a few MB
MAX_NESTING = 2  # the class's zip > a student's zip > a zip in that: opened; deeper is said, not opened
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
MOODLE = re.compile(r"^(?P<name>.+?)_(?P<id>\d+)_assign(?:submission|feedback)_", re.I)
# Blackboard: "Lesson01_ana.lima_attempt_2026-12-01-10-00-00_01.ipynb", the user name before "_attempt_"; its
# receipt "…_attempt_<time>.txt" beside each submission is the platform's, skipped as NOT_HANDED_IN are
BLACKBOARD = re.compile(r"^(?P<assignment>.+?)_(?P<name>[^_]+)_attempt_\d{4}(?:-\d\d){5}(?:_|$)", re.I)
CANVAS = re.compile(r"^(?P<name>[^_]+)_(?:late_)?(?P<id>\d{3,})_\d{3,}(?:_|$)", re.I)
TEAMS_FOLDERS = ("submitted files", "working files")  # a Teams download: Student/Submitted files/…, the draft beside
LESSON_WORD = r"(?:lesson|notebook|nb|lab|ex|exercise|hw|week)"  # "ana_lesson1", "ana lab 01": the lesson's number
HEADING = re.compile(rb"#\s+(0\d)\s*(?:\xc2\xb7|\\u00b7)")  # "# 01 ·" in a notebook's bytes
FILLERS = "\u115f\u1160\u3164\uffa0"  # Hangul fillers: letters that draw nothing
EMPTY_ZIP = "is a zip that holds no notebook: hand in the lesson's .ipynb"
EMPTY_FOLDER = "is an empty folder: nothing was handed in"  # a Moodle participant's, in a folder or a zip
NOT_REGULAR = "is not a regular file (a pipe, socket or device): not read"
READABLE_ZIP = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
NOT_HANDED_IN = {"thumbs.db", "desktop.ini", "icon\r", "timestamp.txt"}  # files Windows, macOS and nbgrader
# (its submitted/<student>/<lesson>/timestamp.txt) put beside the notebooks: nobody's, skipped without a word


@dataclass
class Submission:
    """One file of one student: its bytes, or why it could not be read."""

    student: str  # the participant key (see student_key)
    source: str  # where it came from: the path, or "archive.zip: entry" (always valid UTF-8)
    data: bytes | None = None
    problem: str = ""  # one line when it could not be read
    skipped: bool = False  # a zip entry whose path escapes the archive: said, never a row of its own
    quiet: bool = False  # a hidden notebook or an autosave: said only when the student has no notebook graded
    note: str = ""  # one line for the teacher about a file that was read (a name read by a guess)


def readable(name: str) -> str:
    """A file name as text that can be written anywhere: bytes that are not UTF-8 read as Windows-1252."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        raw = name.encode("utf-8", "surrogateescape")
        try:
            return raw.decode("cp1252")
        except UnicodeDecodeError:
            return raw.decode("latin-1")


def clean(text: str) -> str:
    """NFC, control characters as spaces, runs of spaces as one: the key two spellings of a name share."""
    text = CONTROL.sub(" ", unicodedata.normalize("NFC", readable(text)))
    return " ".join(text.split())


def visible(text: str) -> str:
    """The name without characters that draw nothing (zero-width, bidi overrides, BOM, soft hyphen, an emoji's
    variation selector), but with the joiner that makes two emoji one picture (👩‍💻)."""
    text = text.replace("\ufe0f", "").replace("\ufe0e", "")  # ❤️ and ❤ are one name
    kept = [c for i, c in enumerate(text) if c not in FILLERS and (unicodedata.category(c) != "Cf" or c == "\u200d"
            and 0 < i < len(text) - 1 and _pictograph(text[i - 1]) and _pictograph(text[i + 1]))]
    return " ".join("".join(kept).split())


def _pictograph(c: str) -> bool:
    return unicodedata.category(c) == "So" or ord(c) >= 0x1F000


# a folder named for a lesson or an assignment and its number ("Lesson 4 - head count", "Assignment 1 - Single
# head", "Week 2 (Classroom)"), or Teams' "Student Work/Submitted files/<student>/": it holds students, it is none
LESSON_FOLDER = re.compile(rf"(?:{LESSON_WORD}|assignment|homework|task|unit|module|session)[ _-]*\d{{1,2}}"
                           rf"(?:[ _(-].*)?|student work|{'|'.join(TEAMS_FOLDERS)}", re.I)


def _lesson_folder(name: str) -> bool:
    return bool(LESSON_FOLDER.fullmatch(clean(name).strip()))


def student_key(relative: PurePosixPath) -> str:
    """The student a file belongs to, by the rule above."""
    while len(relative.parts) > 1 and LESSON_ONLY.fullmatch(clean(relative.parts[0])):  # "Lesson 01/ana_01.ipynb":
        relative = PurePosixPath(*relative.parts[1:])  # a folder per lesson holds the students, it is none of them
    if len(relative.parts) > 1 and _lesson_folder(relative.parts[0]) and \
            not names_no_student(below := student_key(PurePosixPath(*relative.parts[1:]))):
        return below  # ("Lab 1 - Ana Lima/01.ipynb" stays Lab 1 - Ana Lima's: 01 names no one)
    folder = len(relative.parts) > 1 and not relative.parts[0].lower().endswith(".ipynb")  # ("eve_01.ipynb/x.ipynb")
    first = relative.parts[0] if len(relative.parts) > 1 else re.sub(r"\.[A-Za-z0-9]{1,5}$", "", relative.name)
    stem = clean(re.sub(r"\.ipynb$", "", first, flags=re.I))
    for platform in (MOODLE, CANVAS):
        if m := platform.match(stem):
            return f"{m['name'].strip()} ({m['id']})"
    if m := BLACKBOARD.match(stem):
        return m["name"]
    if folder:  # a folder per student or team: its whole name ("team_1" and "team_2" are two)
        return stem or "?"
    whole = stem  # a name that names no student is kept whole: "Untitled0 (1)" and "Untitled0" are two rows
    stem = DUPLICATE.sub("", re.sub(r"^copy of\s+", "", stem, flags=re.I))  # Drive's copy, a second download's (1)
    if (named := LESSON_NAME.sub("", stem)) != stem:  # "ana_single_head_attention", "01_…_attention_ana": ana
        stem = named.strip(" _-") or stem
    stem = re.sub(r"^\d\d_[a-z][a-z0-9_]*\s+-\s+(?=\S)", "", stem)  # "01_single_head_attention - Ana Lima": the lesson's name first
    if rest := re.sub(rf"^{LESSON_WORD}[ _-]*\d{{1,2}}(?=[ _-]|$)[ _-]*", "", stem, flags=re.I):  # "Lesson 01 - Ana Lima"
        stem = rest
    if (m := re.match(r"^\d\d[ _-]+(?=\S)", stem)) and stem[m.end():].casefold() not in LESSON_NAMES:
        stem = stem[m.end():]  # "01_carla": the lesson's number first, then the student ("01_single_…" is the lesson's)
    key = re.sub(r"[ _-]*copy of$", "", stem[:_lesson_at(stem)].rstrip(" _-"), flags=re.I)  # Classroom's "Ana - Copy of 01_…"
    key = DUPLICATE.sub("", key)  # "Ana Lima (1)", "… copy 2"
    key = key.rstrip(" _-") or stem or "?"
    return whole if names_no_student(key) else key  # "hw3_01", "lab2_01": no name in it, so never one row


DUPLICATE = re.compile(r"(?:[ _-]+(?:\(\d+\)|copy(?: \d+| \(\d+\))?))+$", re.I)  # a download's (1), an OS's copy


LESSON_NAMES = {"single_head_attention", "shrinking_the_head", "decompression_and_recombination", "head_count_slider",
                "all_144_heads", "what_each_head_learns", "shared_keys_and_values", "watch_the_heads_learn"}  # tested
LESSON_NAME = re.compile("(?<![^ _-])(?:" + "|".join(n.replace("_", "[ _-]+") for n in sorted(LESSON_NAMES)) +
                         ")(?![^ _-])", re.I)  # a lesson's own name, as a part of a file's name (not "ana_single")
VERSION_WORD = (r"(?:draft|final|old|new|backup|copy|v\d+|version|fixed|done|finished|completed?|submissions?|"
                r"submitted|answers?|solutions?|attempt|try|rev|edited|updated?|latest)")  # "lesson1 final": no name
LESSON_ONLY = re.compile(rf"(?:{LESSON_WORD}|{VERSION_WORD}|\d)(?:{LESSON_WORD}|{VERSION_WORD}|\d|[ _-])*",
                         re.I)  # "01", "hw3", "lab 2_01", "lesson1 draft": no name


def _lesson_at(stem: str) -> int:
    """Where the lesson's number starts in a file's name (its length if none). A part after the first, cut at
    `_`, a space or `-`: two digits or a word with its number ("_01", "_lesson1", " 01", "-01") before a lone
    digit ("_1"), and after `_` before after a space ("smith_2_01" is smith_2's, "Ana Lima 01 copy" Ana Lima's)."""
    parts = list(re.finditer(r"([ _-]+)([^ _-]+)", stem))  # each part after the first, with what comes before
    def strong(i):
        text = parts[i][2]
        return bool(re.fullmatch(rf"{LESSON_WORD}?\d\d|{LESSON_WORD}\d", text, re.I) or re.fullmatch(
            LESSON_WORD, text, re.I) and i + 1 < len(parts) and re.fullmatch(r"\d{1,2}", parts[i + 1][2]))
    for wanted in (lambda i: strong(i) and "_" in parts[i][1], strong,
                   lambda i: parts[i][2].isdigit() and len(parts[i][2]) == 1 and "_" in parts[i][1],
                   lambda i: parts[i][2].isdigit() and len(parts[i][2]) == 1):
        found = next((i for i in range(len(parts)) if wanted(i)), None)
        if found is not None:
            return parts[found].start(2)
    return len(stem)


def csv_rows(path: Path, what: str) -> list[list[str]]:
    """The rows of a small CSV the teacher wrote (--names, --points), or one line saying why it cannot be read."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            text = f.read()
        first, newline, rest = text.partition("\n")
        if re.fullmatch(r"sep=.", first.strip()):  # Excel's line naming the separator
            text = newline + rest  # (kept as a blank line: the line numbers stay the file's)
            rows = list(csv.reader(io.StringIO(text), delimiter=first.strip()[4]))
        elif all(";" in line for line in text.splitlines() if line.strip()) and ";" in text:
            # a spreadsheet set to a language that writes 0,5 saves its CSV with ; between fields (the sniffer
            # reads `attention_weights;2,5` as split at the comma)
            rows = list(csv.reader(io.StringIO(text), delimiter=";"))
        else:
            try:  # the sniffer's separator only: its guess of quoting read "Chen, Bo ""Bobby""" wrong (sweep 27)
                delimiter = csv.Sniffer().sniff(text[:4096], delimiters=",;\t").delimiter
            except csv.Error:
                delimiter = ","
            rows = list(csv.reader(io.StringIO(text), delimiter=delimiter, skipinitialspace=True))
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 text: save it as CSV (UTF-8) with {what} rows.") from None
    except csv.Error as err:
        raise ValueError(f"{path} is not a readable CSV ({err}): write one {what} row per line.") from None
    for number, row in enumerate(rows, 1):
        if len(row) > 1 and row[0].strip() and not any(f.strip() for f in row[1:]):  # "masked_weights," (sweep 26)
            raise ValueError(f"{path}, line {number}: {row[0].strip()!r} has nothing after the comma; write {what} "
                             f"(both fields).")
        if len([f for f in row if f.strip()]) == 1:  # not skipped without a word: it was meant to say something
            raise ValueError(f"{path}, line {number}: {row[0].strip()!r} is one field; write {what} (two fields "
                             f"separated by a comma).")
    return rows


HEADER_WORDS = {"key", "keys", "name", "names", "file", "files", "filename", "student", "students", "id", "user",
                "username", "login", "email", "full", "display", "participant", "of", "the"}  # a --names header's words


def read_names(path: Path | None) -> dict[str, str]:
    """The --names CSV: key,name rows (a first row of header words, `key,name` or `File name,Student name`, is
    skipped). Two keys given one name are refused:
    they would be one row, and one student's work would not be graded."""
    if path is None:
        return {}
    if not Path(path).is_file():
        raise FileNotFoundError(f"{path} is a folder, not a names file: pass a CSV with key,name rows." if Path(path).is_dir()
                                else f"No names file {path}: pass a CSV with key,name rows (key: the name the file gives).")
    rows = [r for r in csv_rows(path, "key,name") if len(r) >= 2 and r[0].strip()]
    names: dict[str, str] = {}
    for i, (key, name, *_) in enumerate(rows):
        words = [set(re.findall(r"[^\W\d_]+", cell.lower())) for cell in (key, name)]
        if i == 0 and all(w and w <= HEADER_WORDS for w in words):  # "key,name", "File name,Student name": a header
            continue
        if "\n" in name or "\n" in key:  # a quote left open swallows the rows after it into one field
            raise ValueError(f"{path}: the row of {key.splitlines()[0]!r} runs over several lines (a quote \" left "
                             f"open?); write one key,name row per line.")
        key, name = clean(key), unicodedata.normalize("NFC", name.strip())
        if key in names and names[key] != name:
            raise ValueError(f"{path}: {key!r} is given two names, {names[key]!r} and {name!r}; keep the one row "
                             f"that names this student.")
        names[key] = name
    if not names:
        raise ValueError(f"{path} has no key,name rows; write one per student (e.g. ana,Ana Lima), or leave --names "
                         f"out to use the names the files give.")
    keys_of: dict[str, list[str]] = {}
    for key, name in names.items():
        keys_of.setdefault(clean(visible(name)).casefold(), []).append(key)  # José (NFC, NFD) and josé are one name
    if shared := next((keys for keys in keys_of.values() if len(keys) > 1), None):
        raise ValueError(f"{path}: {' and '.join(map(repr, shared))} are both named {names[shared[0]]!r}; two students "
                         f"would share one row: give each their own name.")
    return names


def _bad_path(info: zipfile.ZipInfo) -> str:
    """Why an entry's path is refused ("" when it stays inside the archive)."""
    name = info.filename.replace("\\", "/")
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return "has an absolute path: not read"
    return "has a path that climbs out with ../: not read" if ".." in PurePosixPath(name).parts else ""


def _entry_problem(info: zipfile.ZipInfo) -> str:
    """Why a zip entry is not read ("" when it is fine): a path that escapes, a link, encryption, a method."""
    if _bad_path(info):
        return _bad_path(info)
    if stat.S_ISLNK(info.external_attr >> 16):
        return "is a symbolic link: not followed (hand in the notebook itself)"
    if info.flag_bits & 0x1:
        return "is encrypted (password-protected) in the zip: ask for it again without a password"
    if info.compress_type not in READABLE_ZIP:
        return (f"uses a compression method (number {info.compress_type}) Python's zipfile cannot unpack: "
                f"zip it again with the usual method (deflate)")
    return ""


def _read_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[bytes | None, str]:
    """An entry's bytes, or one line saying why they cannot be had (damaged, past the limit)."""
    try:
        with archive.open(info) as f:
            data = f.read(MAX_NOTEBOOK_BYTES + 1)
    except zipfile.BadZipFile as err:
        why = "its CRC check fails" if "CRC" in str(err) else str(err)
        return None, f"is damaged in the zip ({why}): download the submissions again"
    except (zlib.error, EOFError, OSError, RuntimeError, NotImplementedError, ValueError) as err:
        return None, f"cannot be unpacked ({type(err).__name__}: {str(err)[:120]}): download the submissions again"
    if len(data) > MAX_NOTEBOOK_BYTES:
        return None, TOO_LARGE
    return data, ""


def _named(relatives: list[PurePosixPath]) -> set[str]:
    """The students these notebooks and zips name: not a lesson's own file name ("01_single_head_attention"),
    nor a file beside them (notes.txt), nor a hidden or climbing path (`..`)."""
    keys = {student_key(r) for r in relatives if r.suffix.lower() in (".ipynb", ".zip")
            and not any(p.startswith(".") or p == "__MACOSX" for p in r.parts)}
    return {k for k in keys if not names_no_student(k)}


DEFAULT_NAME = re.compile(r"(?:copy of )?untitled\d*(?: \(\d+\))?", re.I)  # a new notebook's name: Jupyter's, Colab's


def names_no_student(key: str) -> bool:
    """A key read from a lesson's own file name ("01_single_head_attention", "hw3_01") or a new notebook's
    ("Untitled0"): no student's name in it."""
    key = DUPLICATE.sub("", re.sub(r"^copy of\s+", "", key, flags=re.I)) or key  # "Copy of Untitled0 (1)"
    rest = LESSON_NAME.sub("", key)
    rest = rest.strip(" _-") if rest != key else key  # "01_single_head_attention" -> "01"; "-2" stays "-2"
    return not rest or bool(LESSON_ONLY.fullmatch(rest) or DEFAULT_NAME.fullmatch(rest))  # not "2024_fred" (B7)


def source_parts(source: str) -> list[str]:
    """A source's folders and file name ("class.zip: Bea Costa/Submitted files/01.ipynb"), / or \\ between them."""
    return re.split(r"[/\\]", source)


def in_teams_draft(source: str) -> bool:
    """A file in a Teams student's "Working files": the draft, graded only when nothing was submitted."""
    return any(part.rsplit(": ", 1)[-1].strip().lower() == TEAMS_FOLDERS[1]  # "Ana.zip: Working files/…" too
               for part in source_parts(source)[:-1])


def _wrappers(relatives: list[PurePosixPath]) -> int:
    """How many leading folders every file shares and no student owns ("Lesson 01 submissions/" around
    Moodle's folders, a folder zipped with the class's files in it): a folder holding students' folders,
    or files of two or more students by their names. One student's folder of lessons stays theirs, and so
    does a folder holding Teams' "Submitted files" and "Working files"."""
    depth = 0
    while relatives and all(len(r.parts) > depth + 1 for r in relatives) and \
            len({r.parts[depth] for r in relatives}) == 1:
        below = [PurePosixPath(*r.parts[depth + 1:]) for r in relatives]
        if not (any(len(r.parts) > 1 for r in below) or len(_named([r for r in below if len(r.parts) == 1])) > 1):
            break
        if any(len(r.parts) > 1 and r.parts[0].strip().lower() in TEAMS_FOLDERS for r in below):
            break
        depth += 1
    return depth


def _class_folders(relatives: list[PurePosixPath]) -> set[str]:
    """Folders beside other files that hold notebooks naming two or more students ("late/" holding "Ana
    Lima_01.ipynb" and "Cy Diaz_01.ipynb"), or one beside a platform's participant folders, or that hold a
    platform's participant folders: looked through as a folder around the whole class is, never one student
    (their work was one row, and one notebook of it graded)."""
    inside: dict[str, list[PurePosixPath]] = {}
    platform_folders = set()
    for r in relatives:
        if len(r.parts) == 2:
            inside.setdefault(r.parts[0], []).append(PurePosixPath(r.parts[1]))
        elif len(r.parts) > 2 and _platforms(r.parts[1]):
            platform_folders.add(r.parts[0])
    # Beside a platform's participant folders, a folder that is not one ("late/") is never a student, even
    # when it holds one student's file.
    fewest = 1 if any(len(r.parts) > 1 and _platforms(r.parts[0]) for r in relatives) else 2
    named = {folder for folder, files in inside.items()
             if len({visible(k).casefold() for k in _named(files)}) >= fewest}
    return {folder for folder in named | platform_folders | _same_file_in_folders(relatives) if not _platforms(folder)}


def _same_file_in_folders(relatives: list[PurePosixPath]) -> set[str]:
    """Folders in which two or more folders each hold a file of the same name ("Homework attention/{Gus Melo,Hana
    Sato}/04_head_count_slider.ipynb"): a folder of students' folders beside other such folders (one per
    assignment), never one student (its students were one row, one notebook graded; sweep 31). Folders named
    for a version, a lesson or Teams ("attempt 2/", "Lesson 1 - attention/", "Submitted files/") do not count."""
    holders: dict[tuple[str, str], set[str]] = {}
    for r in relatives:
        if len(r.parts) > 2 and not LESSON_ONLY.fullmatch(clean(r.parts[1])) and not _lesson_folder(r.parts[1]):
            holders.setdefault((r.parts[0], r.name.casefold()), set()).add(r.parts[1])
    return {folder for (folder, _), inside in holders.items() if len(inside) >= 2}


def _platforms(folder: str) -> bool:
    """A platform's participant folder (Moodle's "Ana Lima_4321_assignsubmission_file_", Canvas's, Blackboard's)."""
    return any(platform.match(clean(folder)) for platform in (MOODLE, CANVAS, BLACKBOARD))


def _below(relative: PurePosixPath, strip: int, through: set[str]) -> PurePosixPath:
    """The path a file's student is read from: below the `strip` folders around the class and a class folder."""
    relative = PurePosixPath(*relative.parts[strip:]) if len(relative.parts) > strip else relative
    return PurePosixPath(*relative.parts[1:]) if len(relative.parts) > 1 and relative.parts[0] in through else relative


def _receipt(name: str) -> bool:
    """Blackboard's receipt of a submission, a .txt beside it: the platform's, not the student's."""
    return name.lower().endswith(".txt") and bool(BLACKBOARD.match(name[:-4]))


def _hidden_notebook(relative: PurePosixPath) -> bool:
    """A notebook a student may have meant to hand in that Jupyter or the OS hid: in .ipynb_checkpoints, or
    named with a leading dot (never a Mac archiver's `__MACOSX/` or `._name` companion, which holds no notebook)."""
    return relative.suffix.lower() == ".ipynb" and "__MACOSX" not in relative.parts and \
        not relative.name.startswith("._") and any(p.startswith(".") for p in relative.parts)


def _hidden(relative: PurePosixPath, source: str, student: str = "") -> Submission:
    """A hidden notebook: a line in its student's row, when that student has no notebook graded (classroom)."""
    why = ("is Jupyter's autosave (in .ipynb_checkpoints), not the notebook itself: hand in the notebook"
           if ".ipynb_checkpoints" in relative.parts else
           "is a hidden file (its name starts with a dot), so it was not graded: hand it in without the dot")
    shown = PurePosixPath(*[part.lstrip(".") or part for part in relative.parts if part != ".ipynb_checkpoints"])
    return Submission(student or student_key(shown), source, None, why, quiet=True)


def _other_file(relative: PurePosixPath, source: str, why: str) -> Submission:
    """A file that is not a notebook, or one that cannot be read: a line in its student's row."""
    return Submission(student_key(relative), source, None, why)


TEACHERS_FILE = re.compile(r"read[ _-]?me|receipts?|instructions?|rubric|roster|grades?|gradebook|index|licen[cs]e|"
                           r"notes|todo|class[ _-]?list", re.I)  # a file beside the class, of no student's


def _not_a_notebook(who: str, source: str, name: str) -> Submission:
    """A file handed in that is not a notebook: a line in its student's row; Moodle's own online-text page
    (`…_assignsubmission_onlinetext_/onlinetext.html`, beside the files) only when nothing of theirs was graded.
    A README.md or receipt.txt beside the students' files, in no student's folder, is no one's: said, no row
    (it was a student "README" with 0 points; sweep 30, WEAK-8)."""
    base = PurePosixPath(PurePosixPath(name.replace("\\", "/")).name)
    if who == student_key(base) and TEACHERS_FILE.fullmatch(base.stem.strip(" _-0123456789")):
        return Submission(who, source, None, "is no student's notebook (a README, receipt or notes file beside the "
                                             "class): not read", skipped=True)
    online = "_assignsubmission_onlinetext_" in source
    return Submission(who, source, None, "is Moodle's online text, not a notebook (hand in the lesson's .ipynb)"
                      if online else f"is {_kind(name)}, not a notebook (hand in the lesson's .ipynb)", quiet=online)


def _kind(name: str) -> str:
    suffix = PurePosixPath(name).suffix.lower()
    return f"a {suffix} file" if suffix else "a file without an extension"


def _zip_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo, label: str, strip: int = 0,
               student: str = "", depth: int = 0, through: set[str] = frozenset()) -> list[Submission]:
    """The submissions of one entry: a notebook, a line saying why not, or a zip's notebooks (`student`: whose
    they are when this archive is a zip a student handed in; `depth`: how many zips it is inside)."""
    name = readable(info.filename)
    relative = PurePosixPath(name.replace("\\", "/").lstrip("/"))
    relative = _below(relative, strip, through)
    source = f"{label}: {name}"
    if _bad_path(info):  # whose file it is cannot be trusted: said, never a row of its own
        return [Submission(student or student_key(PurePosixPath(relative.name)), source, None, _bad_path(info),
                           skipped=not student)]  # in a student's own zip it is a line in their row
    who = student or student_key(relative)
    problem = _entry_problem(info)
    if problem:
        return [Submission(who, source, None, problem)]
    if "__MACOSX" in name or any(p.startswith(".") for p in relative.parts):
        return [_hidden(relative, source, student)] if _hidden_notebook(relative) else []  # the archiver's own files
    if relative.name.casefold() in NOT_HANDED_IN or _receipt(relative.name):
        return []
    if name.lower().endswith(".zip"):
        return _handed_in_zip(archive, info, source, who, depth + 1)
    if not name.lower().endswith(".ipynb"):
        return [_not_a_notebook(who, source, name)]
    data, problem = _read_entry(archive, info)
    return [Submission(who, source, data, problem, note=_guessed_name(info))]


def _guessed_name(info: zipfile.ZipInfo) -> str:
    """A line when an entry's name has letters beyond ASCII, the zip does not mark it UTF-8 and it is not UTF-8
    either: it is then read in the zip standard's code page 437, which is right for old Windows zippers and wrong
    for one that wrote Latin-1."""
    if info.flag_bits & 0x800 or info.filename.isascii() or info.filename != info.orig_filename:
        return ""
    return ("its name is read in code page 437, as the zip standard says when a zip does not mark its names UTF-8: "
            "if the student's name looks wrong, give it with --names")


def _handed_in_zip(archive: zipfile.ZipFile, info: zipfile.ZipInfo, source: str, student: str,
                   depth: int) -> list[Submission]:
    """A zip a student handed in (inside the class's zip): its notebooks are that student's, read in memory
    under their own limits; a zip nested deeper than MAX_NESTING is said, not opened."""
    if depth > MAX_NESTING:
        return [Submission(student, source, None, "is a zip inside a zip inside the zip: not opened (hand in the "
                                                  "lesson's .ipynb)")]
    data, problem = _read_entry(archive, info)
    if problem:
        return [Submission(student, source, None, problem)]
    try:
        inner = _open_zip(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as err:
        return [Submission(student, source, None, f"is not a readable zip ({str(err)[:120]}): hand in the .ipynb files")]
    with inner:
        infos = [i for i in inner.infolist() if not i.is_dir()]
        if len(infos) > MAX_FILES or sum(i.file_size for i in infos if i.filename.lower().endswith(".ipynb")) > \
                MAX_HANDED_IN_BYTES:
            return [Submission(student, source, None, f"unpacks to more than {MAX_FILES} files or "
                                                      f"{MAX_HANDED_IN_BYTES >> 20} MB of notebooks: not read")]
        found = [sub for i in infos for sub in _zip_entry(inner, i, source, student=student, depth=depth)]
    return found or [Submission(student, source, None, EMPTY_ZIP)]


def read_zip(path: Path, in_folder: PurePosixPath | None = None, several: bool = False) -> tuple[list[Submission], list[str]]:
    """The files in a zip (read in memory); a one-line ValueError for an archive past the limits (a zip
    bomb) or not a zip. Each entry that cannot be read is a Submission with its problem. `in_folder`: where a
    zip found in a folder lies; one whose notebooks name no student, or one, is that student's own (`_owner`).
    `several`: a zip named on the command line beside other zips or folders (names_its_student)."""
    label = readable(path.name)
    if not path.is_file():
        raise ValueError(f"{label} {NOT_REGULAR}.")
    try:
        archive = _open_zip(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as err:
        raise ValueError(f"{label} is not a readable zip ({err}); download the submissions again.") from None
    with archive:
        infos = [i for i in archive.infolist() if not i.is_dir()]
        if len(infos) > MAX_FILES:
            raise ValueError(f"{label} holds {len(infos)} files, more than {MAX_FILES}: not read (a zip bomb?); "
                             f"split the class into several zips.")
        if sum(i.file_size for i in infos if i.filename.lower().endswith(".ipynb")  # one too large is its row's
               and i.file_size <= MAX_NOTEBOOK_BYTES) > MAX_ZIP_BYTES:
            raise ValueError(f"{label} unpacks to more than {MAX_ZIP_BYTES >> 20} MB of notebooks: not read "
                             f"(a zip bomb?); split the class into several zips.")
        relatives = [PurePosixPath(readable(i.filename).replace("\\", "/").lstrip("/")) for i in infos]
        counted = [r for r in relatives if not any(p == "__MACOSX" or p.startswith(".") for p in r.parts)
                   and r.name.casefold() not in NOT_HANDED_IN]  # a Mac's __MACOSX/ and .DS_Store are no one's
        strip = _wrappers(counted)
        through = _class_folders([_below(r, strip, set()) for r in counted])
        owner = _owner([PurePosixPath(*r.parts[strip:]) for r in relatives], in_folder) if in_folder else \
            student_key(PurePosixPath(label)) if names_its_student(label[:-4], relatives, several) else ""
        found = [sub for info in infos for sub in _zip_entry(archive, info, label, strip, owner, through=through)]
        folders = {readable(i.filename).rstrip("/").split("/")[-1] for i in archive.infolist() if i.is_dir()}
        found += [Submission(student_key(PurePosixPath(name)), f"{label}: {name}/", None,
                             EMPTY_FOLDER) for name in sorted(folders)
                  if MOODLE.match(name) and not any(f"/{name}/" in f"/{r}" for r in relatives)]
        if owner and not found:
            found = [Submission(owner, label, None, EMPTY_ZIP)]
    for name, count in Counter(sub.source for sub in found).items():  # one name twice: say which entry is which
        if count > 1:
            for n, sub in enumerate((sub for sub in found if sub.source == name), 1):
                sub.source = f"{name} (entry {n} of {count} with this name)"
    return found, []


def _owner(relatives: list[PurePosixPath], where: PurePosixPath) -> str:
    """The student a zip in a folder belongs to by its own name ("ana.zip" holding 01_single_head_attention.ipynb),
    or "" for a class's download, whose files name two or more students or a platform's participant."""
    named = _named(relatives)
    if len(named) > 1 or any(n.endswith(")") for n in named):  # "Ana Lima (4321)": Moodle's or Canvas's folders
        return ""
    return student_key(where)


def _open_zip(path: Path | io.BytesIO) -> zipfile.ZipFile:
    try:
        archive = zipfile.ZipFile(path)
    except UnicodeDecodeError:  # an entry marked UTF-8 whose name is not: one name must not cost the class
        raw = path.getvalue() if isinstance(path, io.BytesIO) else path.read_bytes()
        archive = zipfile.ZipFile(io.BytesIO(_unmark_bad_names(raw)))
    for info in archive.infolist():  # a Mac's zipper writes UTF-8 names without the mark ("José" read "Jose╠ü")
        if not info.flag_bits & 0x800 and not info.filename.isascii():
            try:  # orig_filename stays as read: zipfile checks it against the entry's own header
                info.filename = info.orig_filename.encode("cp437").decode("utf-8")
            except UnicodeError:
                pass
    return archive


def _unmark_bad_names(raw: bytes) -> bytes:
    """The zip's bytes with the UTF-8 mark cleared on each entry whose name is not UTF-8, so zipfile reads that
    name in the zip standard's code page 437 (zipfile has no option for it: it refuses the whole archive)."""
    raw = bytearray(raw)
    end = raw.rfind(b"PK\x05\x06")  # the end of the central directory: its entry count and where it starts
    if end < 0 or end + 22 > len(raw):
        return bytes(raw)
    count, _, at = struct.unpack_from("<HII", raw, end + 10)
    for _ in range(count):
        if raw[at:at + 4] != b"PK\x01\x02" or at + 46 > len(raw):
            break
        name, extra, comment = struct.unpack_from("<HHH", raw, at + 28)
        local, = struct.unpack_from("<I", raw, at + 42)
        try:
            bytes(raw[at + 46:at + 46 + name]).decode("utf-8")
        except UnicodeDecodeError:  # the mark is bit 11 of the flags, in the entry's central and local headers
            for flags_at in (at + 8, local + 6) if local + 8 <= len(raw) else (at + 8,):
                struct.pack_into("<H", raw, flags_at, struct.unpack_from("<H", raw, flags_at)[0] & ~0x800)
        at += 46 + name + extra + comment
    return bytes(raw)


def _read_file(path: Path, relative: PurePosixPath) -> Submission:
    source = readable(str(path))
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # reading a pipe (FIFO) would wait for ever
            return Submission(student_key(relative), source, None, NOT_REGULAR)
        if path.stat().st_size > MAX_NOTEBOOK_BYTES:
            return Submission(student_key(relative), source, None, TOO_LARGE)
        return Submission(student_key(relative), source, path.read_bytes())
    except OSError as err:
        return Submission(student_key(relative), source, None, f"cannot be read ({err.strerror or type(err).__name__})")


def _folder_entry(path: Path, relative: PurePosixPath) -> tuple[list[Submission], list[str]]:
    if path.is_symlink():
        return [_other_file(relative, readable(str(path)), "is a symbolic link: not followed (hand in the file itself)")], []
    if not path.is_file():
        return [_other_file(relative, readable(str(path)), NOT_REGULAR)], []
    if path.suffix.lower() == ".zip":
        try:
            return read_zip(path, relative)
        except ValueError as err:  # one bad archive among many: said in its owner's row, and the others are read
            what = str(err).removeprefix(f"{readable(path.name)} ").split("; ")[0]  # the class-download advice cut
            return [_other_file(relative, readable(str(path)), f"{what}: ask the student for the .ipynb files")], []
    if path.suffix.lower() == ".ipynb":
        return [_read_file(path, relative)], []
    return [_not_a_notebook(student_key(relative), readable(str(path)), path.name)], []


def names_its_student(name: str, relatives: list[PurePosixPath], several: bool) -> bool:
    """A folder or zip named on the command line whose own name is its student's (its files' paths are read
    below it): a platform's participant folder, a Teams student's (Submitted files/ inside), or one whose
    notebooks name no student (`ana/01_single_head_attention.ipynb`) when it holds one notebook or several
    were named (`class/*`: each student's folder was read as the lesson's file name, the class one row)."""
    notebooks = [r for r in relatives if r.suffix.lower() in (".ipynb", ".zip")]
    if _platforms(name) or any(len(r.parts) > 1 and r.parts[0].strip().lower() in TEAMS_FOLDERS for r in relatives):
        return True
    return (several or len(notebooks) == 1) and all(len(r.parts) == 1 for r in notebooks) and not _named(notebooks)


def read_folder(folder: Path, several: bool = False) -> tuple[list[Submission], list[str]]:
    """Every file below a folder (symlinks not followed, hidden files and checkpoints skipped), zips opened.
    `several`: other folders or zips were named beside it (names_its_student)."""
    files, hidden, participants = [], [], []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if any(part.startswith(".") or part == "__MACOSX" for part in relative.parts):
            if _hidden_notebook(PurePosixPath(relative.as_posix())) and path.is_file():
                hidden.append((path, PurePosixPath(readable(relative.as_posix()))))
            continue
        if path.name.casefold() in NOT_HANDED_IN or _receipt(path.name):
            continue
        if path.is_symlink() or not path.is_dir():  # a pipe or socket too: said in its row, never read
            files.append((path, PurePosixPath(readable(relative.as_posix()))))
        elif MOODLE.match(path.name):  # a participant's folder: one that stays empty is a row that says so
            participants.append(path)
    if len(files) > MAX_FILES:
        raise ValueError(f"{folder} holds {len(files)} files, more than {MAX_FILES}: grade it in parts.")
    where = folder.resolve()
    if where.name.strip().lower() in TEAMS_FOLDERS:  # a Teams student's "Submitted files" named alone: the student's
        own = PurePosixPath(readable(where.parent.name), readable(where.name))  # is the folder around it
        files, hidden = [(p, own / r) for p, r in files], [(p, own / r) for p, r in hidden]
    elif names_its_student(readable(where.name), [r for _, r in files], several):
        own = PurePosixPath(readable(where.name))
        files, hidden = [(p, own / r) for p, r in files], [(p, own / r) for p, r in hidden]
    found, notes = [], []
    strip = _wrappers([relative for _, relative in files])
    through = _class_folders([_below(relative, strip, set()) for _, relative in files])
    for path, relative in files:
        subs, more = _folder_entry(path, _below(relative, strip, through))
        found += subs
        notes += more
    found += [_hidden(_below(r, strip, through), readable(str(path))) for path, r in hidden]
    with_files = {parent for path, _ in files for parent in path.parents}
    found += [Submission(student_key(PurePosixPath(readable(p.name))), readable(str(p)), None,
                         EMPTY_FOLDER) for p in participants if p not in with_files]
    return found, notes


def collect(paths: list[Path]) -> tuple[list[Submission], list[str]]:
    """Every submission named on the command line (files, folders, zips) and the notes on what was skipped."""
    found, notes = [], []
    named = _distinct(list(map(Path, paths)))
    several = sum(p.is_dir() or p.suffix.lower() == ".zip" for p in named) > 1  # `class/*`: a folder or zip each
    for path in named:
        if not path.exists() and not path.is_symlink():
            raise FileNotFoundError(f"No submission {readable(str(path))}: pass .ipynb files, folders of them or .zip archives.")
        if path.is_dir():
            subs, more = read_folder(path, several)
        elif path.suffix.lower() == ".zip":
            subs, more = read_zip(path, several=several)
        elif path.suffix.lower() == ".ipynb":
            subs, more = [_read_file(path, PurePosixPath(readable(path.name)))], []
        elif len(named) > 1 and (_receipt(path.name) or path.name.casefold() in NOT_HANDED_IN):
            continue  # `bb/*` names Blackboard's receipts too: skipped, as in a folder (sweep 29, B4)
        elif len(named) > 1:
            subs, more = [_not_a_notebook(student_key(PurePosixPath(readable(path.name))), readable(str(path)),
                                          path.name)], []
        else:
            raise ValueError(f"{readable(str(path))} is not an .ipynb, a folder or a .zip: pass the students' notebooks.")
        found += subs
        notes += more
    if not any(not s.skipped for s in found):
        raise ValueError(f"no notebook to grade in {', '.join(readable(str(p)) for p in paths)}"
                         + (f" ({notes[0]})" if notes else "") + ": pass the students' .ipynb files.")
    return found, notes


def _distinct(paths: list[Path]) -> list[Path]:
    """Each input once: a path named twice, or a file or folder inside a folder also named, would have its
    notebooks graded twice."""
    folders = {p.resolve() for p in paths if p.is_dir()}
    seen, kept = set(), []
    for path in paths:
        where = path.resolve()
        if where not in seen and not any(parent in folders for parent in where.parents):
            seen.add(where)
            kept.append(path)
    return kept


def lessons_in(datas: list[bytes]) -> list[str]:
    """The lessons these notebooks seem to be, from their bytes: only a guess, to preload their setups."""
    return sorted({m.decode() for data in datas for m in HEADING.findall(data)})
