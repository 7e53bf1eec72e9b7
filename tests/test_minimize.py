"""bodi.minimize: the one-call entry point."""

import math

import pytest

import bodi
from bodi.space import Binary, Continuous, SearchSpace
from bodi.study import create_study

SPACE = SearchSpace([Binary(f"b{i}") for i in range(8)] + [Continuous("u", -1.0, 1.0)])


def objective(c):
    return sum(c[f"b{i}"] for i in range(8)) + c["u"] ** 2


def test_result_fields_and_callback():
    finished = []
    result = bodi.minimize(objective, SPACE, budget=14, seed=0, n_init=8,
                           callback=finished.append)
    assert len(result.trials) == len(finished) == 14
    assert result.best_value == min(result.values)
    assert objective(result.best_params) == pytest.approx(result.best_value)
    assert result.study.best == (result.best_params, result.best_value)


def test_failures_are_recorded_and_the_budget_is_completed():
    calls = []

    def flaky(c):
        calls.append(c)
        k = len(calls)
        if k % 4 == 1:
            raise RuntimeError("simulator crashed")
        if k % 4 == 2:
            return math.nan
        if k % 4 == 3:
            return math.inf
        return objective(c)

    result = bodi.minimize(flaky, SPACE, budget=16, seed=1, n_init=6, catch=RuntimeError)
    states = [t.state for t in result.trials]
    assert len(states) == 16 and states.count("failed") == 12
    messages = [t.message for t in result.trials if t.state == "failed"]
    assert any("simulator crashed" in m for m in messages)
    assert any("nan" in m for m in messages) and any("inf" in m for m in messages)
    assert result.best_value == min(t.value for t in result.trials if t.state == "complete")


def test_consecutive_failures_stop_with_a_clear_message():
    def broken(c):
        raise ValueError("license server unreachable")

    with pytest.raises(RuntimeError, match=r"5 evaluations failed in a row.*license server"):
        bodi.minimize(broken, SPACE, budget=20, seed=0, max_consecutive_failures=5,
                      catch=(KeyError, ValueError))


def test_an_exception_not_in_catch_stops_the_run_at_once_with_the_objectives_traceback(
        tmp_path):
    calls = []

    def typo(c):
        calls.append(c)
        return c["b_nine"]  # no such parameter

    with pytest.raises(KeyError, match="b_nine") as raised:
        bodi.minimize(typo, SPACE, budget=20, seed=0, storage=tmp_path / "s.db")
    assert len(calls) == 1
    assert raised.traceback[-1].name == "typo"  # the user's own line
    assert "stored as failed trial #0" in "".join(raised.value.__notes__)
    (trial,) = bodi.load_study(tmp_path / "s.db").trials
    assert trial.state == "failed" and "KeyError" in trial.message
    with pytest.raises(ValueError, match="exception classes"):
        bodi.minimize(typo, SPACE, budget=2, catch=["KeyError"])


def test_in_parallel_the_running_evaluations_are_stored_before_the_error_is_raised():
    import threading

    first = threading.Event()

    def f(c):
        if not first.is_set():
            first.set()
            raise ZeroDivisionError("the first evaluation")
        import time

        time.sleep(0.2)
        return objective(c)

    study = create_study(bodi.RandomSearch(SPACE, seed=0))
    with pytest.raises(ZeroDivisionError):
        bodi.minimize(f, SPACE, budget=12, study=study, n_workers=3)
    states = [t.state for t in study.trials]
    assert states.count("failed") == 1 and "pending" not in states
    assert states.count("complete") == 2  # the two that were running, none started after


def test_timeouts_and_dead_processes_are_failed_trials_whatever_catch_names():
    import os

    def f(c):
        if c["b0"]:
            os._exit(3)
        if c["b1"]:
            import time

            time.sleep(30)
        return objective(c)

    result = bodi.minimize(f, SPACE, budget=8, optimizer=bodi.RandomSearch(SPACE, seed=0),
                           executor="process", evaluation_timeout=2.0, n_workers=4)
    messages = [t.message for t in result.trials if t.state == "failed"]
    assert any("process died" in m for m in messages)
    assert any("time limit" in m for m in messages)


def test_argument_checks():
    with pytest.raises(ValueError, match="budget"):
        bodi.minimize(objective, SPACE, budget=0)
    with pytest.raises(ValueError, match="callable"):
        bodi.minimize(42, SPACE, budget=3)
    with pytest.raises(ValueError, match="cannot be combined"):
        bodi.minimize(objective, SPACE, budget=3, optimizer=bodi.RandomSearch(SPACE),
                      n_init=4)


def _sleeper(log, lock, active, peak, seconds=0.3):
    """An objective that sleeps and records how many evaluations run at once."""
    import time

    def f(c):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(seconds)
        with lock:
            active[0] -= 1
            log.append(tuple(sorted(c.items())))
        return float(sum(v for k, v in c.items() if k.startswith("b")))

    return f


def test_parallel_workers_overlap_and_never_evaluate_a_point_twice():
    import threading

    from bodi.space import Categorical

    space = SearchSpace([Binary(f"b{i}") for i in range(8)] + [Categorical("c", ["x", "y"])])
    log, lock, active, peak = [], threading.Lock(), [0], [0]
    f = _sleeper(log, lock, active, peak)
    # n_init = budget: only design points, handed out at once (no timing is asserted: the
    # peak count of evaluations running together shows the overlap)
    result = bodi.minimize(lambda c: f(c) + (c["c"] == "x"), space, budget=16, seed=0,
                           n_init=16, n_workers=4)
    assert 2 <= peak[0] <= 4
    assert len(log) == len(set(log)) == 16
    assert len(result.trials) == 16
    # with the model in the loop, pending points keep the suggestions apart as well
    log.clear()
    result = bodi.minimize(lambda c: f(c) + (c["c"] == "x"), space, budget=14, seed=1,
                           n_init=6, n_workers=3, dictionary_size=16, num_restarts=4)
    assert len(log) == len(set(log)) == 14


def test_timeout_marks_slow_evaluations_failed_and_continues():
    import time

    calls = []

    def slow_sometimes(c):
        calls.append(c)
        if len(calls) % 3 == 0:
            time.sleep(2.0)
        return objective(c)

    result = bodi.minimize(slow_sometimes, SPACE, budget=9, seed=0, n_init=9,
                           evaluation_timeout=0.5)
    failed = [t for t in result.trials if t.state == "failed"]
    assert len(result.trials) == 9 and len(failed) == 3
    assert all("time limit of 0.5 s" in t.message for t in failed)


def test_dask_client_and_process_pool_executors():
    distributed = pytest.importorskip("distributed")  # the 'dask' extra
    Client, LocalCluster = distributed.Client, distributed.LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        result = bodi.minimize(objective, SPACE, budget=6, seed=0, n_init=6, n_workers=2,
                               executor=client)
    assert len(result.trials) == 6 and result.best_value == min(result.values)
    result = bodi.minimize(objective, SPACE, budget=4, seed=0, n_init=4, n_workers=2,
                           executor="process")
    assert len(result.trials) == 4
    with pytest.raises(ValueError, match="executor"):
        bodi.minimize(objective, SPACE, budget=2, n_workers=2, executor="gpu")


def test_progress_bar_runs_to_the_budget(capsys):
    opt = bodi.RandomSearch(SPACE, seed=0)
    result = bodi.minimize(objective, SPACE, budget=6, optimizer=opt, progress=True)
    assert len(result.trials) == 6
    assert "6/6" in capsys.readouterr().out
