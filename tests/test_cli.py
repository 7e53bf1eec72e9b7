"""The bodi command line."""

import subprocess
import sys

from bodi.cli import main


def test_demo_prints_the_best_point(capsys):
    assert main(["demo", "--problem", "binary", "--budget", "12", "--n-init", "10",
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "best value" in out and "best point:" in out


def test_bad_arguments_exit_with_a_message():
    proc = subprocess.run(
        [sys.executable, "-m", "bodi", "demo", "--budget", "-3"],
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 2
    assert "positive integer" in proc.stderr and "Traceback" not in proc.stderr
