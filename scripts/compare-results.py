#!/usr/bin/env python3
"""Compare a reproduction's tables with the committed ones, value by value, timing columns aside.

    cargo xtask reproduce all            # rewrites results/ in place
    python3 scripts/compare-results.py [ROOT]   # every results/*/cells.csv and results/slice/*.csv against git's HEAD

`cargo xtask test` checks the slice only (`check-results`); this checks a whole run. The timing columns (`train_s`,
`seconds`, `rounds_per_second`) depend on the machine and the schedule, so they are skipped; every other column
must be the same text. Prints each difference (file, line, column, committed value, new value) and exits 1 if any,
2 if ROOT holds no tables.
"""
import csv
import pathlib
import subprocess
import sys

TIMING = {"train_s", "seconds", "rounds_per_second"}


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    files = sorted(root.glob("results/*/cells.csv")) + sorted(root.glob("results/slice/*.csv"))
    if not files:
        print(f"{root}: no results/*/cells.csv or results/slice/*.csv here (give the repository's root)", file=sys.stderr)
        return 2
    differences = 0
    for f in files:
        rel = f.relative_to(root).as_posix()
        committed = subprocess.run(["git", "-C", str(root), "show", f"HEAD:{rel}"], capture_output=True, text=True)
        if committed.returncode != 0:
            print(f"{rel}: not in HEAD")
            differences += 1
            continue
        old = list(csv.DictReader(committed.stdout.splitlines()))
        new = list(csv.DictReader(f.read_text().splitlines()))
        if len(old) != len(new):
            print(f"{rel}: {len(old)} rows committed, {len(new)} now")
            differences += 1
            continue
        for line, (a, b) in enumerate(zip(old, new), start=2):
            for column in a.keys() | b.keys():
                if column not in TIMING and a.get(column) != b.get(column):
                    print(f"{rel}:{line}: {column}: committed {a.get(column)!r}, now {b.get(column)!r}")
                    differences += 1
    print(f"{len(files)} files, {differences} difference{'' if differences == 1 else 's'} (timing columns aside)")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
