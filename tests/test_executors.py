"""Where evaluations run: a child process per evaluation never outlives a killed run."""

import os
import signal
import subprocess
import sys
import time

from bodi.space import Binary, SearchSpace

SPACE = SearchSpace([Binary(f"b{i}") for i in range(4)])

HANGING_OBJECTIVE = """
import os, time

def f(params):
    with open(os.environ["PIDS"], "a") as log:
        log.write(f"{os.getpid()}\\n")
    time.sleep(120)
    return 0.0
"""


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_the_evaluation_processes_of_a_killed_isolated_run_end_with_it(tmp_path):
    (tmp_path / "hang.py").write_text(HANGING_OBJECTIVE)
    SPACE.to_json(tmp_path / "space.json")
    pids = tmp_path / "pids"
    run = subprocess.Popen(
        [sys.executable, "-m", "bodi", "run", "--objective", "hang.py:f", "--space",
         "space.json", "--storage", "study.db", "--budget", "4", "--n-init", "4", "--quiet",
         "--isolate", "--workers", "2"],
        cwd=tmp_path, env={**os.environ, "PIDS": str(pids)}, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (
            not pids.exists() or len(pids.read_text().split()) < 2):
        time.sleep(0.1)
    children = [int(p) for p in pids.read_text().split()]
    assert len(children) == 2 and all(_running(p) for p in children)
    run.send_signal(signal.SIGKILL)
    run.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_running(p) for p in children):
        time.sleep(0.1)
    assert not any(_running(p) for p in children)
