"""Seconds per CLI command that only reads: ``bodi --version``, ``studies``, ``show`` (with
and without its plot) and ``export``.

Usage:
    python benchmarks/cli_speed.py --repeats 5

A study of 60 trials on 30 binary parameters is made first (random search); each command then
runs ``--repeats`` times as a new process, and the median and range of its wall time are
printed as a Markdown table.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _study(folder: Path) -> Path:
    import bodi
    from bodi.space import Binary, SearchSpace

    space = SearchSpace([Binary(f"b{i}") for i in range(30)])
    path = folder / "study.db"
    opt = bodi.create_study(bodi.RandomSearch(space, seed=0), storage=path)
    for _ in range(60):
        params = opt.ask()
        opt.tell(params, float(sum(params.values())))
    opt.close()
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bodi-cli-speed-"))
    study = _study(folder)
    bodi = [sys.executable, "-m", "bodi"]
    commands = {
        "bodi --version": [*bodi, "--version"],
        "bodi studies study.db": [*bodi, "studies", str(study)],
        "bodi show study.db --csv -": [*bodi, "show", str(study), "--csv", "-"],
        "bodi show study.db (with its plot)": [*bodi, "show", str(study)],
        "bodi export study.db --optuna optuna.db --replace":
            [*bodi, "export", str(study), "--optuna", str(folder / "optuna.db"), "--replace"],
    }
    print("| command | median s | min-max s |\n|---|---|---|")
    for name, command in commands.items():
        seconds = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            seconds.append(time.perf_counter() - start)
        print(f"| `{name}` | {statistics.median(seconds):.2f} | {min(seconds):.2f}-"
              f"{max(seconds):.2f} |", flush=True)


if __name__ == "__main__":
    main()
