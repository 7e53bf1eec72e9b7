"""Every bad input gets a clear answer: out-of-range values, huge values, bad options,
interrupts, objective files named like standard modules, numerical warnings."""

import contextlib
import json
import logging
import signal
import sqlite3
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

import bodi
from bodi.space import Binary, Categorical, Continuous, SearchSpace
from bodi.study import create_study

SPACE = SearchSpace([Binary(f"b{i}") for i in range(8)] + [Continuous("u", 0.0, 1.0)])
SMALL = {"dictionary_size": 16, "num_restarts": 4, "raw_samples": 128, "n_init": 5}


def ones(params):
    return float(sum(params[f"b{i}"] for i in range(8))) + params["u"]


def test_an_int_beyond_the_float_range_is_a_failed_trial_not_a_crash():
    calls = []

    def f(params):
        calls.append(params)
        return 10**400 if len(calls) == 3 else ones(params)

    result = bodi.minimize(f, SPACE, budget=8, seed=0, **SMALL)
    states = [t.state for t in result.trials]
    assert states.count("failed") == 1 and states[2] == "failed"
    assert "objective returned" in result.trials[2].message
    assert all(t.state != "pending" for t in result.trials)
    study = create_study(bodi.RandomSearch(SPACE))
    with pytest.warns(UserWarning, match="1329-bit integer\\) is beyond the float range"):
        assert study.tell(study.ask(), 10**400).state == "failed"


@pytest.mark.parametrize("huge", [1e160, -1e300, 1.7e308])
def test_huge_finite_values_do_not_break_later_suggestions(huge):
    calls = []

    def f(params):
        calls.append(params)
        return huge if len(calls) in (2, 7) else ones(params)

    result = bodi.minimize(f, SPACE, budget=14, seed=0, **SMALL)
    assert [t.state for t in result.trials].count("complete") == 14
    assert len({json.dumps(t.params, sort_keys=True) for t in result.trials}) == 14
    assert result.best_value == min(huge, min(t.value for t in result.trials))


@pytest.mark.parametrize(
    "options, message",
    [
        ({"num_restarts": 0}, "num_restarts must be a positive integer"),
        ({"num_restarts": -3}, "num_restarts must be a positive integer"),
        ({"raw_samples": 0}, "raw_samples must be a positive integer"),
    ],
)
def test_bad_options_are_refused_at_construction(options, message):
    with pytest.raises(ValueError, match=message):
        bodi.BODi(SPACE, **options)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"max_attempts": 0}, "max_attempts must be a positive integer"),
        ({"on_pending": "keep"}, "on_pending must be 'reissue' or 'fail'"),
        ({"study_name": ""}, "study_name must be a non-empty string"),
    ],
)
def test_bad_study_options_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        bodi.create_study(bodi.RandomSearch(SPACE), **options)
    with pytest.raises(ValueError, match="a study needs an optimizer"):
        bodi.create_study(SPACE)


OBJECTIVE = """
import time

def f(params):
    time.sleep(0.3)
    return float(sum(params[f"b{i}"] for i in range(8)))
"""


def _stored_trials(db) -> int:
    """Trials in the study file so far (0 while it is being created), read without locking."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
            return con.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
    except sqlite3.Error:  # no file yet, or no table yet
        return 0


@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, 130, "interrupted"),
                                             (signal.SIGTERM, 143, "terminated")])
def test_an_interrupted_run_ends_with_one_line_saying_how_to_resume(tmp_path, sig, code, word):
    (tmp_path / "objective.py").write_text(OBJECTIVE)
    space = SearchSpace([Binary(f"b{i}") for i in range(8)])
    space.to_json(tmp_path / "space.json")
    db = tmp_path / "study.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "bodi", "run", "--objective", f"{tmp_path}/objective.py:f",
         "--space", str(tmp_path / "space.json"), "--budget", "200", "--storage", str(db),
         "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # a process started in the background of a non-interactive shell (CI, nohup ... &)
        # inherits an ignored SIGINT, and Python then installs no KeyboardInterrupt handler;
        # start the run as a terminal would, with the default disposition
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 600  # generous: a loaded machine may start slowly
    while _stored_trials(db) < 3:  # signal only once the run is well under way
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the run stored fewer than 3 trials: {proc.communicate()[1]}")
        time.sleep(0.1)
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == code
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"bodi: {word}")
    assert "--resume" in lines[0]


@pytest.mark.parametrize("stem", ["random", "types"])  # imported by numpy and at start-up
def test_an_objective_file_named_like_a_standard_module_shadows_nothing(tmp_path, stem):
    (tmp_path / f"{stem}.py").write_text(OBJECTIVE.replace("time.sleep(0.3)", "pass"))
    space = SearchSpace([Binary(f"b{i}") for i in range(8)])
    space.to_json(tmp_path / "space.json")
    # the `bodi` command a user types in that folder (`python -m` would itself put the folder
    # first on sys.path, before bodi runs)
    command = Path(sys.executable).with_name("bodi")
    run = subprocess.run(
        [str(command), "run", "--objective", f"{tmp_path}/{stem}.py:f",
         "--space", str(tmp_path / "space.json"), "--budget", "8", "--n-init", "6",
         "--storage", str(tmp_path / "study.db"), "--quiet"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert "8 complete" in run.stdout


def test_numerical_warnings_are_gathered_not_flooded(caplog):
    space = SearchSpace([Binary(f"b{i}") for i in range(10)])

    def flat(params):  # constant values: the GP fit adds jitter again and again
        return 1.0

    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.INFO, "bodi"):
        warnings.simplefilter("always")
        result = bodi.minimize(flat, space, budget=12, seed=0, **{**SMALL, "n_init": 4})
    noisy = [w for w in caught if "linear_operator" in w.filename or "gpytorch" in w.filename
             or "botorch" in w.filename or w.category.__name__ == "NumericalWarning"]
    assert noisy == []
    summaries = [r for r in caplog.records if "numerical warning" in r.getMessage()]
    assert len(summaries) <= 1
    assert result.study.optimizer.numerical_warnings >= 0


def test_categorical_values_outside_the_choices_are_refused_when_told():
    space = SearchSpace([Categorical("c", ["a", "b"]), Binary("x")])
    study = create_study(bodi.RandomSearch(space))
    with pytest.raises(ValueError, match="c"):
        study.tell({"c": "z", "x": True}, 1.0)
