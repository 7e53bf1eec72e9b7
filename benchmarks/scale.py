"""Seconds per BODi ``ask()`` and peak memory as the dimension ``d`` and the data size ``n`` grow.

Usage:
    python benchmarks/scale.py                                  # CPU, 2 threads, the full grid
    python benchmarks/scale.py --dims 60,250 --n 100,500        # a part of the grid
    python benchmarks/scale.py --device cuda --dtype float32    # on a GPU
    python benchmarks/scale.py --max-model-points 500           # a smaller local model
    python benchmarks/scale.py --dims 4000 --n 100 --redo       # re-measure after a change
    python benchmarks/scale.py --problem ackley --dims 200,1000 --n 300,500   # mixed spaces
    python benchmarks/scale.py --kernel hed --dims 1000 --n 1000   # bodi 0.1's default kernel

Each cell (d, n) runs in a fresh process: a binary planted problem with ``d`` variables
(``--problem planted``, the default) or the mixed Ackley with ``d`` binary and 3 continuous
parameters (``--problem ackley``), a BODi with its defaults (the ``hed*hamming`` kernel, m = 128,
trust region, incumbent-relative dictionary, a model of at most ``max_model_points`` = 1000 trials
nearest the region's centre) told ``n`` observations of its initial design, then ``--asks``
consecutive asks (each followed by its tell). The child reports the median, min and max seconds per
ask and its peak memory: the process's peak resident set (``ru_maxrss``) and, on CUDA,
``torch.cuda.max_memory_allocated``. Results are appended to ``--out`` (JSON lines) and cells
already there for the same device, dtype, thread count and kernel are skipped, so an interrupted
grid resumes (``--redo`` measures them again; each record names the git commit it measured). A cell
that runs longer than ``--cell-timeout`` seconds is recorded as timed out; one that crashes is only
reported.
Run it on an otherwise idle machine: the timings are wall-clock.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run_cell(d: int, n: int, asks: int, device: str, dtype: str, threads: int,
             max_model_points: int | None = 1000, problem_name: str = "planted",
             kernel: str = "hed*hamming") -> dict:
    """Time ``asks`` asks at (d, n) in this process; returns the cell's record."""
    import torch

    import bodi
    from bodi.problems import ackley, planted_binary

    warnings.filterwarnings("ignore")
    torch.set_num_threads(threads)
    problem = planted_binary(d, seed=0) if problem_name == "planted" else ackley(d + 3)
    opt = bodi.create_study(
        bodi.BODi(
            problem.space,
            seed=0,
            n_init=n,
            device=device,
            dtype=dtype,
            max_model_points=max_model_points,
            kernel=kernel,
        )
    )
    design = opt.ask(n)
    opt.tell(design, problem.evaluate(design).tolist())
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    seconds = []
    for _ in range(asks):
        start = time.perf_counter()
        x = opt.ask()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        seconds.append(time.perf_counter() - start)
        opt.tell(x, float(problem(x)))
    record = {
        "median_s": statistics.median(seconds), "min_s": min(seconds), "max_s": max(seconds),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "model_n": int(opt.optimizer.model.train_inputs[0].shape[-2]),  # after max_model_points
    }
    if device.startswith("cuda"):
        record["peak_cuda_mb"] = torch.cuda.max_memory_allocated() / 2**20
    return record


def _commit() -> str | None:
    """The measured code's git commit (the record's provenance), if known."""
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE,
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def _key(record: dict) -> tuple:
    return (record.get("problem", "planted"), record["d"], record["n"], record["device"],
            record["dtype"], record["threads"], record.get("max_model_points", 1000),
            record.get("kernel", "hed"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problem", default="planted", choices=["planted", "ackley"],
                        help="binary planted problem, or mixed Ackley (d bits + 3 continuous)")
    parser.add_argument("--dims", default="60,250,1000,4000")
    parser.add_argument("--n", default="100,500,1000,3000")
    parser.add_argument("--asks", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    parser.add_argument("--threads", type=int, default=2, help="torch threads (CPU)")
    parser.add_argument("--out", default=str(HERE / "results" / "scale.jsonl"))
    parser.add_argument("--max-model-points", type=int, default=1000,
                        help="BODi's max_model_points (0: every trial)")
    parser.add_argument("--kernel", default="hed*hamming", help="BODi's kernel (its default; "
                        "records before the option: hed)")
    parser.add_argument("--cell-timeout", type=float, default=3600.0)
    parser.add_argument("--redo", action="store_true",
                        help="measure the selected cells again (the new record replaces the old)")
    parser.add_argument("--cell", default=None, help=argparse.SUPPRESS)  # "d,n": child mode
    args = parser.parse_args()
    if args.cell:
        d, n = (int(v) for v in args.cell.split(","))
        print(json.dumps(run_cell(d, n, args.asks, args.device, args.dtype, args.threads,
                                  args.max_model_points or None, args.problem, args.kernel)))
        return
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = {}
    if out.exists():
        for line in out.read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                done[_key(record)] = record
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads),
           "MKL_NUM_THREADS": str(args.threads)}
    for d in (int(v) for v in args.dims.split(",")):
        for n in (int(v) for v in args.n.split(",")):
            cell = {"problem": args.problem, "d": d, "n": n, "device": args.device,
                    "dtype": args.dtype, "threads": args.threads, "asks": args.asks,
                    "max_model_points": args.max_model_points, "kernel": args.kernel}
            if _key(cell) in done and not args.redo:
                continue
            cell["commit"] = _commit()
            command = [sys.executable, __file__, "--cell", f"{d},{n}", "--asks", str(args.asks),
                       "--device", args.device, "--dtype", args.dtype,
                       "--threads", str(args.threads),
                       "--max-model-points", str(args.max_model_points),
                       "--problem", args.problem, "--kernel", args.kernel]
            start = time.perf_counter()
            try:
                child = subprocess.run(command, capture_output=True, text=True, env=env,
                                       timeout=args.cell_timeout)
                if child.returncode == 0:
                    cell.update(json.loads(child.stdout.strip().splitlines()[-1]))
                else:
                    cell["error"] = (child.stderr.strip().splitlines() or ["?"])[-1]
            except subprocess.TimeoutExpired:
                cell["error"] = f"timed out after {args.cell_timeout:.0f} s"
            cell["wall_s"] = time.perf_counter() - start
            print(json.dumps(cell), flush=True)
            if "error" in cell and not cell["error"].startswith("timed out"):
                continue  # a crash is reported, not stored: the next run tries again
            with out.open("a") as f:
                f.write(json.dumps(cell) + "\n")
            done[_key(cell)] = cell
    print_table(done.values())


def print_table(records) -> None:
    """The Markdown table of every recorded cell."""
    print("| problem | kernel | device | dtype | threads | d | n | model n | median s per ask "
          "| min-max | peak RSS MB | peak CUDA MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in sorted(records, key=_key):
        if "error" in r:
            timing, spread, rss = r["error"], "", ""
        else:
            timing = f"{r['median_s']:.2f}"
            spread = f"{r['min_s']:.2f}-{r['max_s']:.2f}"
            rss = f"{r['peak_rss_mb']:.0f}"
        cuda = f"{r['peak_cuda_mb']:.0f}" if "peak_cuda_mb" in r else ""
        model_n = r.get("model_n", "")
        print(f"| {r.get('problem', 'planted')} | {r.get('kernel', 'hed')} | {r['device']} "
              f"| {r['dtype']} "
              f"| {r['threads']} | {r['d']} | {r['n']} "
              f"| {model_n} | {timing} | {spread} | {rss} | {cuda} |")


if __name__ == "__main__":
    main()
