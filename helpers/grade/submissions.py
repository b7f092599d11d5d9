"""Reading a class's submissions safely: .ipynb files, folders of them, and .zip archives.

Nothing is extracted to disk: a zip's entries are read into memory, so `../` names, absolute paths
and symlinks cannot write anywhere (such entries are skipped, and said). Limits keep a zip bomb out.
Only the cells' types, sources and metadata are kept; outputs are dropped as the file is read.

Who a file belongs to (the documented rule): inside a folder or zip, the first folder below it,
else the file's name; of that, the part before the first "_" (Moodle's "Ana Lima_4321_assignsubmission_file",
Canvas's "limaana_4321_98765_lesson.ipynb"), or the whole name without ".ipynb" when it has no "_".
`--names` maps that to a name with a CSV of `key,name` rows.
"""

from __future__ import annotations

import csv
import json
import re
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MAX_NOTEBOOK_BYTES = 100 << 20  # a lesson notebook with its outputs is a few MB; beyond this it is not read
MAX_FILES = 2000  # .ipynb files in one folder or zip (a class of 300 × 7 lessons fits)
MAX_ZIP_BYTES = 1 << 30  # uncompressed .ipynb bytes in one zip, all entries together
MAX_CELLS = 20_000
CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass
class Submission:
    """One notebook of one student, or why it could not be read."""

    student: str
    source: str  # where it came from: the path, or "archive.zip: entry"
    cells: list[dict] | None = None
    problem: str = ""  # one line when it could not be read or graded
    lesson: str = ""  # the lesson's number, once known


def student_key(relative: PurePosixPath) -> str:
    """The student a file belongs to, by the rule above."""
    first = relative.parts[0] if len(relative.parts) > 1 else relative.name
    first = first[:-6] if first.lower().endswith(".ipynb") else first
    key = first.split("_", 1)[0] if "_" in first else first
    return CONTROL.sub(" ", key).strip() or CONTROL.sub(" ", first).strip() or "?"


def read_names(path: Path | None) -> dict[str, str]:
    """The --names CSV: key,name rows (a header row `key,name` is allowed)."""
    if path is None:
        return {}
    if not Path(path).is_file():
        raise FileNotFoundError(f"No names file {path}: pass a CSV with key,name rows (key: the name the file gives).")
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = [r for r in csv.reader(f) if len(r) >= 2 and r[0].strip()]
    return {key.strip(): name.strip() for key, name, *_ in rows if (key.strip(), name.strip()) != ("key", "name")}


def cells_of(data: bytes) -> tuple[list[dict] | None, str]:
    """(the cells: type, source, metadata; or None and one line saying why the notebook cannot be read)."""
    try:
        nb = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None, "is not a notebook (not JSON: truncated or damaged); open it in Jupyter and save it again"
    if not isinstance(nb, dict) or not isinstance(nb.get("cells", nb.get("worksheets")), list):
        return None, "is JSON but not a notebook (no cells); hand in the lesson's .ipynb file"
    major = nb.get("nbformat")
    if major != 4:
        return None, (f"is a notebook of nbformat {major} (this grader reads nbformat 4); open it in Jupyter "
                      f"(version 4 or later) and save it again")
    if len(nb["cells"]) > MAX_CELLS:
        return None, f"has {len(nb['cells'])} cells, more than {MAX_CELLS}; hand in the lesson's notebook"
    cells = []
    for cell in nb["cells"]:
        if not isinstance(cell, dict):
            continue
        source = cell.get("source", "")
        source = "".join(s for s in source if isinstance(s, str)) if isinstance(source, list) else str(source)
        meta = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
        cells.append({"cell_type": str(cell.get("cell_type", "")), "source": source, "metadata": meta})
    return cells, ""


def _from_bytes(data: bytes, relative: PurePosixPath, source: str) -> Submission:
    cells, problem = cells_of(data)
    return Submission(student_key(relative), source, cells, problem)


def _bad_entry(info: zipfile.ZipInfo) -> str:
    """Why a zip entry is skipped ("" when it is fine)."""
    name = info.filename.replace("\\", "/")
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return "an absolute path"
    if ".." in PurePosixPath(name).parts:
        return "a path that climbs out with ../"
    if stat.S_ISLNK(info.external_attr >> 16):
        return "a symbolic link"
    return ""


def read_zip(path: Path) -> tuple[list[Submission], list[str]]:
    """The notebooks in a zip (read in memory) and one line per entry skipped; a one-line ValueError
    for an archive past the limits (a zip bomb) or not a zip."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as err:
        raise ValueError(f"{path.name} is not a readable zip ({err}); download the submissions again.") from None
    with archive:
        infos = [i for i in archive.infolist() if not i.is_dir()]
        if len(infos) > MAX_FILES:
            raise ValueError(f"{path.name} holds {len(infos)} files, more than {MAX_FILES}: not read (a zip bomb?); "
                             f"split the class into several zips.")
        notebooks = [i for i in infos if i.filename.lower().endswith(".ipynb") and "__MACOSX" not in i.filename]
        if sum(i.file_size for i in notebooks) > MAX_ZIP_BYTES:
            raise ValueError(f"{path.name} unpacks to more than {MAX_ZIP_BYTES >> 20} MB of notebooks: not read "
                             f"(a zip bomb?); split the class into several zips.")
        found, notes = [], []
        for info in notebooks:
            why = _bad_entry(info)
            if why:
                notes.append(f"{path.name}: skipped the entry {info.filename!r}: {why}.")
                continue
            with archive.open(info) as f:
                data = f.read(MAX_NOTEBOOK_BYTES + 1)
            relative = PurePosixPath(info.filename.replace("\\", "/"))
            sub = _from_bytes(data, relative, f"{path.name}: {info.filename}")
            if len(data) > MAX_NOTEBOOK_BYTES:
                sub.cells, sub.problem = None, f"is larger than {MAX_NOTEBOOK_BYTES >> 20} MB: not read"
            found.append(sub)
    return found, notes


def _read_file(path: Path, relative: PurePosixPath) -> Submission:
    if path.stat().st_size > MAX_NOTEBOOK_BYTES:
        return Submission(student_key(relative), str(path), None, f"is larger than {MAX_NOTEBOOK_BYTES >> 20} MB: not read")
    return _from_bytes(path.read_bytes(), relative, str(path))


def read_folder(folder: Path) -> tuple[list[Submission], list[str]]:
    """Every .ipynb below a folder (symlinks not followed, checkpoints skipped), and the zips in it."""
    found, notes, files = [], [], []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if path.is_symlink() or any(part.startswith(".") for part in relative.parts):
            continue
        if path.suffix.lower() in (".ipynb", ".zip") and path.is_file():
            files.append((path, relative))
    if len(files) > MAX_FILES:
        raise ValueError(f"{folder} holds {len(files)} notebooks, more than {MAX_FILES}: grade it in parts.")
    for path, relative in files:
        if path.suffix.lower() == ".zip":
            try:
                subs, more = read_zip(path)
            except ValueError as err:  # one bad archive among many: said, and the others are read
                subs, more = [], [str(err)]
            found += subs
            notes += more
        else:
            found.append(_read_file(path, PurePosixPath(relative.as_posix())))
    return found, notes


def collect(paths: list[Path]) -> tuple[list[Submission], list[str]]:
    """Every submission named on the command line (files, folders, zips) and the notes on what was skipped."""
    found, notes = [], []
    for path in map(Path, paths):
        if not path.exists():
            raise FileNotFoundError(f"No submission {path}: pass .ipynb files, folders of them or .zip archives.")
        if path.is_dir():
            subs, more = read_folder(path)
        elif path.suffix.lower() == ".zip":
            subs, more = read_zip(path)
        elif path.suffix.lower() == ".ipynb":
            subs, more = [_read_file(path, PurePosixPath(path.name))], []
        else:
            raise ValueError(f"{path} is not an .ipynb, a folder or a .zip: pass the students' notebooks.")
        found += subs
        notes += more
    if not found:
        raise ValueError(f"no notebook to grade in {', '.join(map(str, paths))}"
                         + (f" ({notes[0]})" if notes else "") + ": pass the students' .ipynb files.")
    return found, notes
