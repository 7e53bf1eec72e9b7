"""Every Python example of README.md and docs/ runs (with small budgets), so they cannot drift.

A file's blocks run in order in one namespace (a later block may use an earlier one's space),
in a fresh interpreter in a temporary folder. Budgets are cut to a few evaluations and BODi's
acquisition settings made small; nothing else of the examples is changed. Blocks that need a
GPU run only where one is present.
"""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
#: (pattern, replacement): the budgets of the examples, cut short
SMALL_BUDGETS = [
    (re.compile(r"\bbudget=\d+"), "budget=6"),
    (re.compile(r"\bn_trials=\d+"), "n_trials=6"),
    (re.compile(r"\bn_startup_trials=\d+"), "n_startup_trials=3"),
    (re.compile(r"\bn_init=\d+"), "n_init=3"),
    (re.compile(r"for _ in range\(\d+\)"), "for _ in range(5)"),
]
PRELUDE = textwrap.dedent("""
    import functools, bodi, bodi.optimizers.bo as _bo
    _init = _bo.BODi.__init__
    @functools.wraps(_init)  # BODi.option_defaults() reads the signature
    def _small(self, space, **kwargs):  # small acquisition settings keep the run short
        kwargs.setdefault("num_restarts", 2)
        kwargs.setdefault("raw_samples", 64)
        kwargs.setdefault("dictionary_size", 16)
        _init(self, space, **kwargs)
    _bo.BODi.__init__ = _small
""")


def _examples() -> list:
    cases = []
    for path in FILES:
        blocks = BLOCK.findall(path.read_text())
        if blocks:
            cases.append(pytest.param(path, blocks, id=str(path.relative_to(ROOT))))
    return cases


def test_the_docs_have_python_examples():
    assert sum(len(blocks) for _, blocks in (c.values for c in _examples())) >= 10


@pytest.mark.parametrize(("path", "blocks"), _examples())
def test_python_examples_run(path, blocks, tmp_path):
    code = []
    for block in blocks:
        if "cuda" in block:
            import torch

            if not torch.cuda.is_available():
                continue
        for pattern, replacement in SMALL_BUDGETS:
            block = pattern.sub(replacement, block)
        code.append(block)
    script = PRELUDE + "\n".join(code)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, f"{path.name}:\n{proc.stderr[-3000:]}"
    # quiet: no warning from another library about what the example does, no log per trial
    assert "Warning" not in proc.stderr, proc.stderr[-3000:]
    assert len((proc.stdout + proc.stderr).splitlines()) < 30, proc.stdout + proc.stderr


def test_the_layout_map_lists_every_module():
    layout = (ROOT / "docs" / "development.md").read_text()
    modules = [str(p.relative_to(ROOT)) for p in (ROOT / "bodi").rglob("*.py")
               if p.name != "__init__.py"]
    packages = [f"{p.parent.relative_to(ROOT)}/" for p in (ROOT / "bodi").rglob("__init__.py")
                if p.parent != ROOT / "bodi"]
    missing = [m for m in modules + packages if f"`{m}`" not in layout]
    assert not missing, f"docs/development.md's layout lacks {missing}"


SHELL_BLOCK = re.compile(r"^```bash\n(.*?)^```", re.DOTALL | re.MULTILINE)
#: the shell examples that run as they are (with smaller budgets): a study from start to end
RUNNABLE_SHELL = [ROOT / "docs" / "studies.md"]


def _shell_env() -> dict[str, str]:
    """The environment of a docs shell example: this interpreter's ``bodi`` first on PATH."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}


@pytest.mark.parametrize("path", RUNNABLE_SHELL, ids=lambda p: p.name)
def test_shell_examples_run(path, tmp_path):
    script = "set -euo pipefail\n" + "\n".join(SHELL_BLOCK.findall(path.read_text()))
    script = re.sub(r"--budget (\d+)", lambda m: f"--budget {max(4, int(m.group(1)) // 5)}",
                    script).replace("bodi run ", "bodi run --n-init 3 --quiet ")
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=tmp_path,
                          timeout=600, env=_shell_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "best trial #" in proc.stdout and (tmp_path / "study.png").exists()


#: a shell block and the first data row of the first table after it (no other block between)
TABLE_AFTER_BLOCK = re.compile(
    r"^```bash\n(.*?)^```\n(?:(?!```).)*?^\|[^\n]*\n\|[-| ]*\n\|([^\n]*)",
    re.DOTALL | re.MULTILINE)


def _traces_only_mirror(mirror: Path) -> None:
    """``mirror`` as the repository's results look in a fresh clone: the committed traces
    (``tasks.csv``, ``traces.csv.gz``) and study files of data/, without the benchmark
    databases that a local ``bodi bench`` leaves beside them (a report reads those first)."""
    for source in (ROOT / "data").rglob("*"):
        if source.is_file() and source.name in ("tasks.csv", "traces.csv.gz", "studies.db"):
            target = mirror / source.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(source)
    (mirror / "benchmarks").symlink_to(ROOT / "benchmarks")
    (mirror / "docs" / "figures").mkdir(parents=True)


@pytest.mark.heavy
def test_results_commands_print_their_tables(tmp_path):
    """Each command of docs/results.md runs on the committed traces, and the first row of the
    table under it shows the numbers it prints."""
    text = (ROOT / "docs" / "results.md").read_text()
    blocks = SHELL_BLOCK.findall(text)
    assert len(blocks) >= 5
    _traces_only_mirror(tmp_path)
    env = {**_shell_env(), "MPLBACKEND": "Agg"}
    tables = dict(TABLE_AFTER_BLOCK.findall(text))
    for block in blocks:
        proc = subprocess.run(["bash", "-c", "set -euo pipefail\n" + block], capture_output=True,
                              text=True, cwd=tmp_path, timeout=300, env=env)
        assert proc.returncode == 0, (block, proc.stderr[-2000:])
        means = [cell.split(" ± ")[0].strip(" *") for cell in tables.get(block, "").split("|")[2:]]
        numbers = [mean for mean in means if re.fullmatch(r"[\d.]+", mean)]
        missing = [n for n in numbers if n not in proc.stdout]
        assert not missing, (block.splitlines()[-1], missing, proc.stdout[:1500])
