"""Run a blind set through the real exercise checks: issue 30's (tests/data/blind_round4.py) or issue 51's
(tests/data/blind_round5.py, --round 5; tests/data/blind_round6.py, --round 6, written after round 5's mending).

    python tools/measure_blind.py                 # every entry, then the tables and the totals
    python tools/measure_blind.py --round 5       # round 5: its answers' sources run in a notebook-like namespace
    python tools/measure_blind.py --ex recombine  # one exercise
    python tools/measure_blind.py --json out.json # also write every verdict as data
    python tools/measure_blind.py --quiet         # tables, totals and the lists only

Each entry's verdict is the last line the check prints (the first lines echo what the answer
printed), exactly as tests/test_blind_answers_judged.py reads it. Round 5 stores its judgements in
tools/blind_roundN_judged.json (by entry and verdict-line hash: a changed line is "re-judge"); a ✓ on a
wrong answer is a false pass and a ✗ on a correct one a refusal, whatever was stored. For round 4 the classification column is the
auditor's judgement stored in the entry (`judged`). It is used only while the verdict line is the one
that was judged (`seen`, a hash of it); a line that changed since is shown as "re-judge" (a ✓ on a
wrong answer is a false pass, and on a correct answer ✓/✗ is accepted/refused, whatever was stored).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if "--tree" in sys.argv:  # the helpers (the checks) of another copy of the project, e.g. `git archive HEAD`
    sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--tree") + 1]).resolve()))
else:
    sys.path.insert(0, str(ROOT))

WRONG_CLASSES = ("named", "misnamed", "generic", "false pass")
GENERIC_CODES = ("numbers_differ", "wrong_shape", "raised", "explained")  # lines that name no slip
OK_CLASSES = ("accepted", "refused")


def load_set():
    spec = importlib.util.spec_from_file_location("blind_round4", ROOT / "tests" / "data" / "blind_round4.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["blind_round4"] = module
    spec.loader.exec_module(module)
    return module


class Runner:
    """Calls each check the way its notebook does, on the notebook's own objects."""

    def __init__(self, blind):
        import helpers as H

        self.H, self.blind, self.knockout_moments = H, blind, None
        nb05 = blind.NB05
        self.lm, self.full, self.repeat = nb05["lm"], nb05["full"], nb05["repeat"]
        # 06's check runs its knock-outs for real (a few seconds each): patching the helpers here would be
        # noticed by the checks' integrity guard and show up in the next verdict line

    def verdict(self, ex, fn) -> tuple[str, str, str]:
        """(the last line printed, everything printed, the Verdict's code or "")."""
        H = self.H
        out, err = io.StringIO(), io.StringIO()
        got = None
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                if ex == "previous_word_head":
                    got = H.check_previous_word_head(fn, self.full.attentions)
                elif ex == "predict_induction":
                    got = H.check_induction_prediction(fn, self.repeat)
                elif ex == "knockout":
                    try:  # the Verdict itself; an older tree (--tree) only prints it
                        from helpers.exercises.head_checks import knockout_verdict
                        got = knockout_verdict(fn, self.lm, "induction", [(0, 9)])[0]
                    except ImportError:
                        H.check_knockout_prediction(fn, self.lm, "induction", [(0, 9)])
                elif ex == "multihead":
                    got = H.check_multihead(fn)
                elif ex == "knockout_along" and self.knockout_moments is not None:
                    got = H.check_knockout_along(fn, moments=self.knockout_moments)
                else:
                    got = getattr(H, "check_" + ex)(fn)
            except BaseException as e:  # noqa: BLE001 - a check that raises is a finding too
                print(f"CHECK RAISED {type(e).__name__}: {e}")
        lines = out.getvalue().strip().splitlines()
        return (lines[-1] if lines else "(the check printed nothing)"), out.getvalue(), getattr(got, "code", "")


def classify(entry, line, line_hash, code=""):
    """The class of one verdict. With an expected verdict recorded (`expect`: the code a named wrong
    answer must get, "generic" for an honest unnamed line, "right" for an answer the audit found correct),
    a verdict is judged against it; else against the stored judgement of its line (`seen`/`judged`)."""
    passed = line.startswith("✓")
    expect = entry.get("expect")
    if expect == "right":  # the audit found this "wrong" answer right after all (see blind_round4.AUDITED)
        return "accepted" if passed else "refused"
    if expect and entry["kind"] == "wrong":
        if passed:
            return "false pass"
        if expect == "generic":
            return "generic" if code.split(".", 1)[-1] in GENERIC_CODES else "re-judge"
        want, _, line_seen = expect.partition("#")  # "#hash": a code shared by several lines (".explained")
        return "named" if code == want and (not line_seen or line_hash(line) == line_seen) else "misnamed"
    if entry["kind"] == "ok":  # a right value of the wrong type counts as right when the line says so
        return "accepted" if passed or "the numbers are right" in line else "refused"
    if entry["kind"] == "outside":
        return "passed" if passed else "flagged"
    if passed:
        return "false pass"
    h = line_hash(line)
    if entry["seen"] and entry["seen"] == h and entry["judged"] in WRONG_CLASSES:
        return entry["judged"]
    if entry.get("other", {}).get(h) in WRONG_CLASSES:
        return entry["other"][h]
    return "re-judge"


# --- round 5 ------------------------------------------------------------------------------------------------
ROUND5_CHECKS = {"kv_cache_bytes": "kv_cache", "MyMultiHead": "multihead", "my_prediction": "knockout",
                 "my_knockout_prediction": "knockout_along"}  # the rest: the exercise's own name


def judged_path(number: int) -> Path:
    """Where a round's judgements of its verdict lines are kept (by entry and line hash)."""
    return ROOT / "tools" / f"blind_round{number}_judged.json"


def load_round5(number: int = 5):
    spec = importlib.util.spec_from_file_location(f"blind_round{number}", ROOT / "tests" / "data" / f"blind_round{number}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def round5_function(entry):
    """The answer as typed into its notebook's cell: its source run with that notebook's setup imports."""
    import numpy as np
    import torch

    import helpers as H
    ns = {"__name__": "__main__", "H": H}
    nb = entry["notebook"]
    if nb in ("01", "02", "03", "04", "07"):
        ns["torch"] = torch
    if nb in ("01", "02", "03"):
        ns["nn"] = torch.nn
    if nb in ("05", "06"):
        ns["np"] = np
    exec(compile(entry["source"], f"<round5 {nb} {entry['exercise']}>", "exec"), ns)
    return ns[entry["exercise"]]


def round5_rows(args, line_hash):
    blind, set5 = load_set(), load_round5(args.round)
    judged = json.loads(judged_path(args.round).read_text()) if judged_path(args.round).exists() else {}
    runner, rows, count = Runner(blind), [], {}
    runner.knockout_moments = getattr(set5, "KNOCKOUT_MOMENTS", None)  # the 08 exercise the answers were written for
    for entry in set5.ANSWERS:
        ex = ROUND5_CHECKS.get(entry["exercise"], entry["exercise"])
        count[ex] = count.get(ex, 0) + 1
        key = f"{entry['notebook']}.{entry['exercise']}.{count[ex]}"
        if args.ex and ex not in args.ex:
            continue
        try:
            fn = round5_function(entry)
        except Exception as e:  # noqa: BLE001 - an answer that does not even define: a finding too
            line, full, code = f"SOURCE RAISED {type(e).__name__}: {e}", "", ""
        else:
            line, full, code = runner.verdict(ex, fn)
        passed = line.startswith("✓")
        if entry["correct"]:
            cls = "accepted" if passed else "refused"
        elif passed:
            cls = "false pass"
        else:
            stored = judged.get(key, {})
            cls = stored.get("judged", "re-judge") if stored.get("seen") == line_hash(line) else "re-judge"
        rows.append(dict(id=key, ex=ex, kind="ok" if entry["correct"] else "wrong", desc=entry["label"] or "(correct)",
                         line=line, hash=line_hash(line), code=code, cls=cls, output=full))
    return rows, [e for e in blind.EXERCISES] + ["formation_step", "knockout_along"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ex", action="append", help="only this exercise (repeatable)")
    ap.add_argument("--json", help="write every verdict to this file")
    ap.add_argument("--quiet", action="store_true", help="no per-entry lines")
    ap.add_argument("--tree", help="import helpers from this copy of the project instead of this one "
                                   "(the blind set is always this one's tests/data/blind_round4.py)")
    ap.add_argument("--round", type=int, default=4, choices=(4, 5, 6), help="the blind set: 4 (default), 5 or 6")
    args = ap.parse_args(argv)

    blind = load_set()
    import helpers
    print(f"checks from {Path(helpers.__file__).resolve().parent}")
    if args.round >= 5:
        rows, exercises = round5_rows(args, blind.line_hash)
        return report(rows, exercises, args)
    runner = Runner(blind)
    rows = []
    for entry in blind.A:
        if args.ex and entry["ex"] not in args.ex:
            continue
        t = time.time()
        line, full, code = runner.verdict(entry["ex"], entry["fn"])
        kind = "ok" if entry.get("expect") == "right" else entry["kind"]  # found right by the audit
        row = dict(id=entry["id"], ex=entry["ex"], kind=kind, desc=entry["desc"], line=line,
                   hash=blind.line_hash(line), judged=entry["judged"], seen=entry["seen"],
                   code=code, cls=classify(entry, line, blind.line_hash, code), seconds=round(time.time() - t, 2), output=full)
        rows.append(row)
        if not args.quiet:
            changed = "" if row["cls"] != "re-judge" or not entry["seen"] else "  (verdict changed since judged)"
            print(f"{row['id']:<8} {row['kind']:<5} [{row['cls']}]{changed}\n    {row['desc']}\n    → {line}")

    return report(rows, blind.EXERCISES, args)


def report(rows, exercises, args):
    """The per-exercise table, the totals and the lists of everything not named or accepted."""
    if not args.quiet and args.round >= 5:
        for row in rows:
            print(f"{row['id']:<28} {row['kind']:<5} [{row['cls']}] {row['hash']}\n    {row['desc']}\n    → {row['line']}")
    exercises = [ex for ex in exercises if any(r["ex"] == ex for r in rows)]
    print()
    head = f"{'exercise':<22} {'wrong':>5} " + " ".join(f"{c:>10}" for c in WRONG_CLASSES + ("re-judge",)) \
        + f" | {'ok':>3} " + " ".join(f"{c:>8}" for c in OK_CLASSES)
    print(head)
    print("-" * len(head))
    total = {c: 0 for c in WRONG_CLASSES + ("re-judge",) + OK_CLASSES + ("passed", "flagged")}
    for ex in exercises:
        mine = [r for r in rows if r["ex"] == ex]
        wrong = [r for r in mine if r["kind"] == "wrong"]  # "outside" entries are counted apart
        ok = [r for r in mine if r["kind"] == "ok"]
        counts = {c: sum(r["cls"] == c for r in mine) for c in total}
        for c in total:
            total[c] += counts[c]
        print(f"{ex:<22} {len(wrong):>5} " + " ".join(f"{counts[c]:>10}" for c in WRONG_CLASSES + ("re-judge",))
              + f" | {len(ok):>3} " + " ".join(f"{counts[c]:>8}" for c in OK_CLASSES))
    n_wrong = sum(r["kind"] == "wrong" for r in rows)
    n_ok = sum(r["kind"] == "ok" for r in rows)
    print("-" * len(head))
    print(f"{'total':<22} {n_wrong:>5} " + " ".join(f"{total[c]:>10}" for c in WRONG_CLASSES + ("re-judge",))
          + f" | {n_ok:>3} " + " ".join(f"{total[c]:>8}" for c in OK_CLASSES))
    if n_wrong:
        print("\nwrong answers: " + ", ".join(f"{c} {total[c]} ({total[c] / n_wrong:.0%})"
                                              for c in WRONG_CLASSES + ("re-judge",)) + f" of {n_wrong}")
    if n_ok:
        print(f"correct answers: accepted {total['accepted']}, refused {total['refused']} of {n_ok}")
    outside = [r for r in rows if r["kind"] == "outside"]
    if outside:
        print(f"slips outside what the check judges (not counted above): "
              f"passed {sum(r['cls'] == 'passed' for r in outside)}, flagged {sum(r['cls'] == 'flagged' for r in outside)}"
              f" of {len(outside)}")

    for c in ("misnamed", "generic", "false pass", "re-judge", "refused", "passed", "flagged"):
        listed = [r for r in rows if r["cls"] == c]
        if listed:
            print(f"\n{c.upper()} ({len(listed)}):")
            for r in listed:
                print(f"  {r['id']:<8} {r['ex']}: {r['desc']}\n           → {r['line']}")

    if args.json:
        Path(args.json).write_text(json.dumps(rows, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
