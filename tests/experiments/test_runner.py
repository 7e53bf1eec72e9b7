"""The benchmark runner, its storage, resume after SIGKILL, plots and reports."""

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from bodi.experiments.analysis import (
    best_curves,
    plot_ranks,
    plot_results,
    report,
    shift_report,
)
from bodi.experiments.results import (
    CASMOPOLITAN_TOLERANCE,
    FORMAT_VERSION,
    Evaluation,
    ResultsStore,
    spec_with_casmopolitan_tolerance,
    spec_with_expected_improvement,
    spec_with_first_order_term,
    spec_with_held_out_design,
    spec_with_whole_design,
    spec_without_first_order,
)
from bodi.experiments.runner import expand_seeds, run_benchmark
from bodi.optimizers.registry import make_optimizer, parse_method, split_methods
from bodi.space import Binary, Categorical, Continuous, SearchSpace

#: the option that bodi 0.6's relabelling gives the runs of bodi 0.1-0.5
TOLERANCE_40 = CASMOPOLITAN_TOLERANCE


def _rows(out):
    db = sqlite3.connect(out / "results.db")
    try:
        return db.execute(
            "SELECT problem, method, seed, number, params, value, best FROM evaluations "
            "ORDER BY problem, method, seed, number"
        ).fetchall()
    except sqlite3.OperationalError:  # the runner is still creating the tables
        return []
    finally:
        db.close()


def test_parse_method_specs():
    assert parse_method("bodi") == ("bodi", {})
    assert parse_method("bodi[m=32, dictionary=wavelet]") == (
        "bodi", {"dictionary_size": 32, "dictionary": "wavelet"})
    assert parse_method("bodi[trust_region.schedule=geometric,trust_region.init_radius=10]") == (
        "bodi", {"trust_region": {"schedule": "geometric", "init_radius": 10}})
    assert parse_method("bodi[trust_region.box_failure_tolerance=null,dictionary_reference=none]"
                        ) == ("bodi", {"trust_region": {"box_failure_tolerance": None},
                                       "dictionary_reference": "none"})
    assert split_methods("bodi[m=32,dictionary=wavelet], random") == [
        "bodi[m=32,dictionary=wavelet]", "random"]
    for bad in ["bodi[m]", "cmaes", "bodi[", "", "bodi[m=3,m.x=1]", "bodi[trust_region.=1]"]:
        with pytest.raises(ValueError):
            parse_method(bad)
    geometric = make_optimizer("bodi[trust_region.schedule=geometric]",
                               SearchSpace([Binary("a"), Binary("b")]), seed=0,
                               direction="minimize", n_init=2)
    assert geometric.trust_region_settings.schedule == "geometric"
    with pytest.raises(ValueError, match="trust_region"):
        make_optimizer("bodi[trust_region.colour=red]", SearchSpace([Binary("a")]), seed=0,
                       direction="minimize", n_init=2)
    space = SearchSpace([Binary("a"), Binary("b")])
    with pytest.raises(ValueError, match="unexpected keyword"):
        make_optimizer("bodi[colour=red]", space, seed=0, direction="minimize", n_init=2)
    assert expand_seeds("0-2,5") == [0, 1, 2, 5]
    with pytest.raises(ValueError):
        expand_seeds("a-b")


def test_run_persists_every_evaluation_with_shared_initial_design(tmp_path):
    out = tmp_path / "res"
    run_benchmark(["planted-binary10", "pest"], ["bodi[m=16]", "random"], [0, 1],
                  budget=9, n_init=4, out=out, n_workers=2, progress=False).close()
    rows = _rows(out)
    assert len(rows) == 2 * 2 * 2 * 9
    by_task = {}
    for problem, method, seed, number, params, value, best in rows:
        by_task.setdefault((problem, method, seed), []).append((number, params, value, best))
    for (problem, _method, seed), task_rows in by_task.items():
        assert [r[0] for r in task_rows] == list(range(9))
        design = [r[1] for r in task_rows[:4]]
        other = by_task[(problem, "random", seed)][:4]
        assert design == [r[1] for r in other]  # same initial design for every method
        values = [r[2] for r in task_rows]
        assert [r[3] for r in task_rows] == [min(values[: i + 1]) for i in range(9)]
    # a second run with the same command has nothing left to do and changes nothing
    run_benchmark(["planted-binary10", "pest"], ["bodi[m=16]", "random"], [0, 1],
                  budget=9, n_init=4, out=out, n_workers=2, progress=False).close()
    assert _rows(out) == rows
    # one worker runs the steps in this process, without Dask, to the same evaluations
    here = tmp_path / "here"
    script = (
        "import sys, torch\n"
        "from bodi.experiments.runner import run_benchmark\n"
        "torch.set_num_threads(2)\n"
        f"run_benchmark(['planted-binary10', 'pest'], ['bodi[m=16]', 'random'], [0, 1], "
        f"budget=9, n_init=4, out={str(here)!r}, n_workers=1, progress=False).close()\n"
        "assert 'distributed' not in sys.modules, 'Dask was imported'\n"
        "assert torch.get_num_threads() == 2, 'threads not restored'\n")
    subprocess.run([sys.executable, "-c", script], check=True)
    here_rows = _rows(here)
    assert [r[:5] for r in here_rows] == [r[:5] for r in rows]
    for row, other in zip(here_rows, rows, strict=True):
        assert row[5:] == pytest.approx(other[5:], rel=1e-12, abs=1e-12)


def test_existing_scheduler_address(tmp_path):
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster:
        run_benchmark(["planted-binary8"], ["random"], [3], budget=6, n_init=3,
                      out=tmp_path, scheduler=cluster.scheduler_address,
                      progress=False).close()
    assert len(_rows(tmp_path)) == 6


def test_killed_run_resumes_without_redoing_evaluations(tmp_path):
    command = [sys.executable, "-m", "bodi", "bench", "--problems", "planted-binary12",
               "--methods", "bodi[m=16],random", "--seeds", "0-1", "--budget", "16",
               "--n-init", "4", "--workers", "2", "--quiet", "--no-plot"]
    killed = tmp_path / "killed"
    kills = 0
    for threshold in (12, 30, 48):
        proc = subprocess.Popen([*command, "--out", str(killed)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if (killed / "results.db").exists() and len(_rows(killed)) >= threshold:
                break
            time.sleep(0.05)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            kills += 1
        proc.wait()
    before = _rows(killed)
    assert kills >= 2 and len(before) < 64
    subprocess.run([*command, "--out", str(killed)], check=True, capture_output=True)
    after = _rows(killed)
    assert set(before) <= set(after)  # nothing persisted before a kill was changed
    keys = [(r[0], r[1], r[2], r[3]) for r in after]
    assert len(after) == 64 and len(set(keys)) == 64  # every evaluation exactly once
    # ... and the resumed study equals one that was never interrupted
    clean = tmp_path / "clean"
    subprocess.run([*command, "--out", str(clean)], check=True, capture_output=True)
    clean_rows = _rows(clean)
    assert [r[:5] for r in clean_rows] == [r[:5] for r in after]  # the same configurations
    for row, other in zip(clean_rows, after, strict=True):  # values to rounding
        assert row[5:] == pytest.approx(other[5:], rel=1e-12, abs=1e-12)


def test_plot_and_report(tmp_path):
    store = ResultsStore(tmp_path)
    for method, values in {"a": [3.0, 1.0, 2.0], "b": [4.0, None, 2.5]}.items():
        for seed in (0, 1):
            store.register("p", method, seed, "minimize", 0.5, 3, 1)
            for v in values:
                shifted = None if v is None else v + seed
                store.append("p", method, seed, "minimize",
                             Evaluation({"x": 1}, shifted, 0.1 * seed, 0.0))
    store.close()
    curves = best_curves(tmp_path)["p"]
    assert curves["a"].tolist() == [[3.0, 1.0, 1.0], [4.0, 2.0, 2.0]]
    assert curves["b"].tolist() == [[4.0, 4.0, 2.5], [5.0, 5.0, 3.5]]
    table = report(tmp_path)
    assert "| p (min) | a | 2 | 3 | 1.5 ± 0.5 | 1.00 |" in table
    assert "| p (min) | b | 2 | 3 | 3 ± 0.5 | 2.00 |" in table
    png = plot_results(tmp_path, tmp_path / "f.png")
    assert png.stat().st_size > 10_000
    with pytest.raises(ValueError, match="no benchmark results"):
        report(tmp_path / "missing")
    # a second directory combines with the first; selections filter and order
    other = tmp_path / "other"
    store = ResultsStore(other)
    store.register("q", "a", 0, "maximize", None, 2, 1)
    for v in (1.0, 5.0):
        store.append("q", "a", 0, "maximize", Evaluation({"x": 1}, v, 0.0, 0.0))
    store.close()
    table = report([tmp_path, other], methods=["b", "a"])
    assert table.index("| p (min) | b |") < table.index("| p (min) | a |")
    assert "| q (max) | a | 1 | 2 | 5 ±" in table
    assert "| p (min) | b |" not in report([tmp_path, other], methods=["a"])
    assert set(best_curves([tmp_path, other], problems=["q"])) == {"q"}
    with pytest.raises(ValueError, match="more than one"):
        report([tmp_path, tmp_path])
    with pytest.raises(ValueError, match="no evaluations"):
        report(tmp_path, methods=["nope"])
    # an equal budget: only the first two evaluations of every run count
    assert best_curves(tmp_path, evaluations=2)["p"]["a"].tolist() == [[3.0, 1.0], [4.0, 2.0]]
    assert "| p (min) | b | 2 | 2 | 4.5 ± 0.5 | 2.00 |" in report(tmp_path, evaluations=2)
    with pytest.raises(ValueError, match="positive integer"):
        report(tmp_path, evaluations=0)
    # one method under two labels: b's runs shown as a's (a and b share seeds: an error)
    assert best_curves(tmp_path, methods=["c|a"])["p"]["c"].tolist() == (
        best_curves(tmp_path, methods=["a"])["p"]["a"].tolist())
    assert "| p (min) | c |" in report(tmp_path, methods=["b", "c|a"])
    with pytest.raises(ValueError, match="two labels"):
        report(tmp_path, methods=["a|b"])


def test_runs_stored_under_older_defaults_are_relabelled_once(tmp_path):
    # a database of bodi 0.1 (user_version 0), whose BODi defaulted to kernel="hed"
    old = tmp_path / "old"
    store = ResultsStore(old)
    for method in ("bodi", "bodi[dtype=float32]", "bodi[kernel=hamming]", "bodi-paper", "sa"):
        store.register("p", method, 0, "minimize", None, 1, 1)
        store.append("p", method, 0, "minimize", Evaluation({"x": 1}, 1.0, 0.0, 0.0))
    store.close()
    with sqlite3.connect(old / "results.db") as db:
        db.execute("PRAGMA user_version = 0")
    expected = ["bodi-paper", *sorted(
        f"bodi[{options},{TOLERANCE_40},first_order=false,acquisition=logei]" for options in (
            "kernel=hamming,design_in_model=all", "kernel=hed,design_in_model=all",
            "kernel=hed,dtype=float32,design_in_model=all")), "sa"]

    def methods(table):
        with sqlite3.connect(old / "results.db") as db:
            return [m for (m,) in db.execute(f"SELECT method FROM {table} ORDER BY method")]

    ResultsStore(old, read_only=True).close()  # a report changes nothing
    assert "bodi" in methods("tasks")
    ResultsStore(old).close()
    assert methods("tasks") == methods("evaluations") == expected
    # a run of the current default stored after that is not relabelled when reopened
    store = ResultsStore(old)
    store.register("p", "bodi", 0, "minimize", None, 1, 1)
    store.close()
    ResultsStore(old).close()
    assert methods("tasks") == sorted([*expected, "bodi"])


def _relabelled(method: str, categorical: bool = False) -> str:
    """``method`` of bodi 0.4 under today's labels (the steps from format version 3 on; on
    an all-categorical problem of the registry without step 9's)."""
    return _from_08(spec_without_first_order(spec_with_casmopolitan_tolerance(
        spec_with_whole_design(method))), categorical)


def _from_06(method: str) -> str:
    """``method`` of bodi 0.5 or 0.6 under today's labels (the steps from format version 5
    on), on a problem that is not all-categorical."""
    return _from_08(spec_without_first_order(spec_with_held_out_design(method)))


def _from_08(method: str, categorical: bool = False) -> str:
    """``method`` of bodi 0.8 or 0.9 (0.9 on an all-categorical problem) under today's
    labels: step 9, the expected improvement named where the default is now the upper
    confidence bound."""
    return method if categorical else spec_with_expected_improvement(method)


def _store_as_version(folder, problems: dict, methods, version: int) -> None:
    """A results database whose runs (one evaluation of each method on each problem, with
    the problem's params) an older bodi stored: ``PRAGMA user_version`` set to ``version``."""
    store = ResultsStore(folder)
    for problem, params in problems.items():
        for method in methods:
            store.register(problem, method, 0, "minimize", None, 1, 1)
            store.append(problem, method, 0, "minimize", Evaluation(params, 1.0, 0.0, 0.0))
    store.close()
    with sqlite3.connect(folder / "results.db") as db:
        db.execute(f"PRAGMA user_version = {version}")


def test_runs_of_bodi_02_on_mixed_problems_are_relabelled_with_its_trust_region(tmp_path):
    from bodi.experiments.results import spec_without_own_box

    # a database of bodi 0.2 (user_version 1): a mixed problem of the registry, an unknown
    # problem with a continuous value, and an all-discrete problem
    problems = {"ackley53-shifted": {"x1": True, "u1": 0.5}, "mine": {"a": 1, "u": 0.25},
                "labs50-shifted": {"x1": True}}
    methods = ("bodi", "bodi[trust_region.init_radius=2]", "bodi[trust_region=false]",
               "bodi[trust_region.box_failure_tolerance=4]", "bodi-paper", "sa",
               "bodi[kernel=hed,trust_region.schedule=geometric]")
    _store_as_version(tmp_path, problems, methods, 1)
    mixed = sorted(map(_relabelled, [
        "bodi[trust_region.box_failure_tolerance=null]",
        "bodi[trust_region.init_radius=2,trust_region.box_failure_tolerance=null]",
        *methods[2:]]))
    expected = {"ackley53-shifted": mixed, "mine": mixed,
                "labs50-shifted": sorted(map(_relabelled, methods))}

    def stored():
        with sqlite3.connect(tmp_path / "results.db") as db:
            return db.execute("PRAGMA user_version").fetchone()[0], {problem: sorted(
                m for (m,) in db.execute("SELECT method FROM evaluations WHERE problem = ?",
                                         (problem,))) for problem in problems}

    # a report reads the file as it is, under today's labels
    reader = ResultsStore(tmp_path, read_only=True)
    for keys in ({(t["problem"], t["method"]) for t in reader.tasks()},
                 {key[:2] for key in reader.curves()}):
        assert keys == {(problem, m) for problem, ms in expected.items() for m in ms}
    label = ("bodi[trust_region.box_failure_tolerance=null,design_in_model=all,"
             f"{TOLERANCE_40},first_order=false,acquisition=logei]")
    assert reader.history("mine", label, 0)[0].params == problems["mine"]
    assert reader.history("mine", "bodi", 0) == []  # no run is today's default
    assert reader.history("labs50-shifted",
                          f"bodi[design_in_model=all,{TOLERANCE_40},first_order=false,"
                          "acquisition=logei]",
                          0)[0].params == problems["labs50-shifted"]
    reader.close()
    assert stored()[0] == 1
    # a writer relabels the file
    ResultsStore(tmp_path).close()
    assert stored() == (FORMAT_VERSION, expected)
    # each new label builds the region that the run had under bodi 0.2
    space = SearchSpace([Binary("a"), Continuous("u", 0.0, 1.0)])
    for method in methods[:-2] + methods[-1:]:  # sa has no region
        region = make_optimizer(spec_without_own_box(method), space, seed=0,
                                direction="minimize").trust_region_settings
        box = None if region is None else region.box_failure_tolerance
        assert box == (4 if "=4" in method else None), method


def test_runs_of_bodi_03_on_categorical_problems_are_relabelled_with_its_kernel(tmp_path):
    from bodi.experiments.results import spec_with_product_kernel

    # a database of bodi 0.3 (user_version 2): an all-categorical problem of the registry,
    # an unknown problem (its integers could be categories or integers: left alone) and a
    # binary one
    problems = {"pest50-shifted": {"x1": 1}, "mine": {"a": 1}, "labs50-shifted": {"x1": True}}
    methods = ("bodi", "bodi[design_noise=false]", "bodi[kernel=hamming]",
               "bodi[kernel=hed]", "bodi-paper", "bounce")
    _store_as_version(tmp_path, problems, methods, 2)
    categorical = sorted(_relabelled(m, categorical=True) for m in [
        "bodi[kernel=hed*hamming]", "bodi[design_noise=false,kernel=hed*hamming]",
        *methods[2:]])
    reader = ResultsStore(tmp_path, read_only=True)
    assert {t["method"] for t in reader.tasks() if t["problem"] == "pest50-shifted"} == set(
        categorical)
    reader.close()
    ResultsStore(tmp_path).close()
    with sqlite3.connect(tmp_path / "results.db") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == FORMAT_VERSION
        for problem in problems:
            stored = sorted(m for (m,) in db.execute(
                "SELECT method FROM evaluations WHERE problem = ?", (problem,)))
            assert stored == (categorical if problem == "pest50-shifted" else sorted(
                map(_relabelled, methods)))
    # each new label builds bodi 0.3's model of a categorical space
    space = SearchSpace([Categorical("a", ["x", "y", "z"]), Categorical("b", [1, 2, 3])])
    for method in methods[:2]:
        optimizer = make_optimizer(spec_with_product_kernel(method), space, seed=0,
                                   direction="minimize")
        assert optimizer.kernel == "hed*hamming"
    assert make_optimizer("bodi", space, seed=0, direction="minimize").kernel == "hamming"


#: a binary problem and a mixed one, as the relabel tests below store them
BINARY_AND_MIXED = {"labs50-shifted": {"x1": True}, "mine": {"a": 1, "u": 0.25}}


def _check_relabelled(folder, problems, expected) -> None:
    """A report reads the older database under today's labels ``expected`` without changing
    it; a writer then relabels the file to them and sets its format version."""
    reader = ResultsStore(folder, read_only=True)
    assert sorted(t["method"] for t in reader.tasks() if t["problem"] == "mine") == expected
    reader.close()
    ResultsStore(folder).close()
    with sqlite3.connect(folder / "results.db") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == FORMAT_VERSION
        for problem in problems:
            assert sorted(m for (m,) in db.execute(
                "SELECT method FROM tasks WHERE problem = ?", (problem,))) == expected


def _check_design_in_model_of_labels(expected) -> None:
    """Each ``bodi[...design_in_model=X...]`` label builds a BODi with ``X``; ``bodi`` is
    today's ``"reach"``."""
    space = SearchSpace([Binary("a"), Continuous("u", 0.0, 1.0)])
    for method in expected:
        if method.startswith("bodi["):
            optimizer = make_optimizer(method, space, seed=0, direction="minimize")
            assert optimizer.design_in_model == re.search(r"design_in_model=(\w+)",
                                                          method).group(1)
    assert make_optimizer("bodi", space, seed=0, direction="minimize").design_in_model == "reach"


def test_runs_of_bodi_04_are_relabelled_with_the_whole_design_in_the_model(tmp_path):
    # a database of bodi 0.4 (user_version 3): every bodi spec without design_in_model, on
    # any problem, ran with design_in_model="all"
    methods = ("bodi", "bodi[design_noise=false]", "bodi[kernel=hed,dtype=float32]",
               "bodi[design_in_model=auto]", "bodi[design_in_model=few]", "bodi-paper",
               "casmopolitan")
    _store_as_version(tmp_path, BINARY_AND_MIXED, methods, 3)
    expected = sorted(map(_relabelled, [
        "bodi[design_in_model=all]", "bodi[design_noise=false,design_in_model=all]",
        "bodi[kernel=hed,dtype=float32,design_in_model=all]", *methods[3:]]))
    _check_relabelled(tmp_path, BINARY_AND_MIXED, expected)
    _check_design_in_model_of_labels(expected)  # each new label builds bodi 0.4's choice
    space = SearchSpace([Binary("a"), Continuous("u", 0.0, 1.0)])
    assert make_optimizer("bodi-paper", space, seed=0,
                          direction="minimize").design_in_model == "all"


def test_runs_of_bodi_05_are_relabelled_with_casmopolitans_failure_tolerance(tmp_path):
    # a database of bodi 0.5 (user_version 4): every bodi spec whose region took BODi's
    # default failure tolerance, on any problem, shrank its region after 40 failures
    methods = ("bodi", "bodi[design_in_model=all]", "bodi[trust_region=true,dtype=float32]",
               "bodi[trust_region.init_radius=2]", "bodi[trust_region.failure_tolerance=10]",
               "bodi[trust_region.schedule=geometric]", "bodi[trust_region=false]",
               "bodi[acquisition_optimizer=botorch]", "bodi-paper", "casmopolitan")
    _store_as_version(tmp_path, BINARY_AND_MIXED, methods, 4)
    expected = sorted(map(_from_06, [
        f"bodi[{TOLERANCE_40}]", f"bodi[design_in_model=all,{TOLERANCE_40}]",
        f"bodi[dtype=float32,{TOLERANCE_40}]", f"bodi[trust_region.init_radius=2,{TOLERANCE_40}]",
        *methods[4:]]))
    _check_relabelled(tmp_path, BINARY_AND_MIXED, expected)
    # each new label builds bodi 0.5's region; today's default shrinks after 10 failures
    space = SearchSpace([Binary("a"), Continuous("u", 0.0, 1.0)])
    for method in expected:
        if TOLERANCE_40 in method:
            optimizer = make_optimizer(method, space, seed=0, direction="minimize")
            assert optimizer.trust_region_settings.failure_tolerance == 40
    assert make_optimizer("bodi", space, seed=0, direction="minimize").trust_region_settings == (
        make_optimizer("bodi[trust_region.failure_tolerance=10]", space, seed=0,
                       direction="minimize").trust_region_settings)


def test_runs_of_bodi_06_are_relabelled_with_the_held_out_design_choice(tmp_path):
    # a database of bodi 0.6 (user_version 5): every bodi spec without a design_in_model
    # option, on any problem, chose the design in its model by held-out fit ("auto")
    methods = ("bodi", "bodi[trust_region.failure_tolerance=10]", "bodi[kernel=hed]",
               "bodi[trust_region=false]", "bodi[design_in_model=all]",
               "bodi[design_in_model=reach]", "bodi-paper", "casmopolitan")
    _store_as_version(tmp_path, BINARY_AND_MIXED, methods, 5)
    expected = sorted(_from_08(spec_without_first_order(m)) for m in [
        "bodi[design_in_model=auto]",
        "bodi[trust_region.failure_tolerance=10,design_in_model=auto]",
        "bodi[kernel=hed,design_in_model=auto]", "bodi[trust_region=false,design_in_model=auto]",
        *methods[4:]])
    assert sorted(map(_from_06, methods)) == expected
    _check_relabelled(tmp_path, BINARY_AND_MIXED, expected)
    _check_design_in_model_of_labels(expected)  # each new label builds bodi 0.6's choice


def test_runs_of_bodi_07_are_relabelled_without_the_first_order_term(tmp_path):
    # a database of bodi 0.7 (user_version 6): every bodi spec without a first_order option,
    # on any problem, modelled with the kernel alone (first_order=False)
    methods = ("bodi", "bodi[design_in_model=reach]", "bodi[kernel=hed,design_in_model=all]",
               "bodi[first_order=auto-rescale]", "bodi[first_order=auto]",
               "bodi[first_order=true]", "bodi-paper", "bounce")
    _store_as_version(tmp_path, BINARY_AND_MIXED, methods, 6)
    expected = sorted(map(_from_08, [
        "bodi[first_order=false]", "bodi[design_in_model=reach,first_order=false]",
        "bodi[kernel=hed,design_in_model=all,first_order=false]", *methods[3:]]))
    assert sorted(_from_08(spec_without_first_order(m)) for m in methods) == expected
    _check_relabelled(tmp_path, BINARY_AND_MIXED, expected)
    # each new label builds bodi 0.7's model; today's default is the one-fit first-order rule
    space = SearchSpace([Binary("a"), Continuous("u", 0.0, 1.0)])
    for method in expected:
        if method.startswith("bodi["):
            optimizer = make_optimizer(method, space, seed=0, direction="minimize")
            assert optimizer.first_order == parse_method(method)[1]["first_order"]
    assert make_optimizer("bodi", space, seed=0,
                          direction="minimize").first_order == "auto-rescale"
    assert make_optimizer("bodi-paper", space, seed=0, direction="minimize").first_order is False


def test_runs_of_bodi_08_on_categorical_problems_are_relabelled_with_the_first_order_term(
        tmp_path):
    # a database of bodi 0.8 (user_version 7): a bodi spec without a first_order option fitted
    # the term on every problem; bodi 0.9 fits none on an all-categorical space, so there
    # (and only there, of the registry's problems) such runs read first_order=auto-rescale
    problems = {"pest50-shifted": {"x1": 1}, "mine": {"a": 1}, **BINARY_AND_MIXED}
    methods = ("bodi", "bodi[design_in_model=all]", "bodi[first_order=false]",
               "bodi[first_order=true]", "bodi-paper", "bounce")
    _store_as_version(tmp_path, problems, methods, 7)
    term = ["bodi[first_order=auto-rescale]", "bodi[design_in_model=all,first_order=auto-rescale]"]
    assert [spec_with_first_order_term(m) for m in methods] == [*term, *methods[2:]]
    ResultsStore(tmp_path).close()
    with sqlite3.connect(tmp_path / "results.db") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == FORMAT_VERSION
        for problem in problems:
            assert sorted(m for (m,) in db.execute(
                "SELECT method FROM evaluations WHERE problem = ?", (problem,))) == sorted(
                [*term, *methods[2:]] if problem == "pest50-shifted" else map(_from_08, methods))
    # the new label builds bodi 0.8's model of a categorical space; today's has no term
    space = SearchSpace([Categorical("a", ["x", "y", "z"]), Categorical("b", [1, 2, 3])])
    assert make_optimizer(term[0], space, seed=0,
                          direction="minimize").first_order == "auto-rescale"
    assert make_optimizer("bodi", space, seed=0, direction="minimize").first_order is False


def test_runs_of_bodi_09_are_relabelled_with_the_expected_improvement(tmp_path):
    # a database of bodi 0.9 (user_version 8): every bodi spec without an acquisition option
    # ran LogEI; bodi 0.10's default is the upper confidence bound except on an all-categorical
    # space, so such runs read acquisition=logei on every problem but those of the registry
    # that are all-categorical
    problems = {"pest50-shifted": {"x1": 1}, "mine": {"a": 1}, **BINARY_AND_MIXED}
    methods = ("bodi", "bodi[first_order=false]", "bodi[acquisition=ucb]", "bodi-paper",
               "bounce")
    _store_as_version(tmp_path, problems, methods, 8)
    named = ["bodi[acquisition=logei]", "bodi[first_order=false,acquisition=logei]"]
    assert [spec_with_expected_improvement(m) for m in methods] == [*named, *methods[2:]]
    ResultsStore(tmp_path).close()
    with sqlite3.connect(tmp_path / "results.db") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == FORMAT_VERSION == 9
        for problem in problems:
            assert sorted(m for (m,) in db.execute(
                "SELECT method FROM evaluations WHERE problem = ?", (problem,))) == sorted(
                methods if problem == "pest50-shifted" else [*named, *methods[2:]])
    # the new label builds bodi 0.9's acquisition; today's default is the upper confidence
    # bound on a binary space, LogEI on an all-categorical one
    binary = SearchSpace([Binary("a"), Binary("b")])
    categorical = SearchSpace([Categorical("a", ["x", "y", "z"]), Categorical("b", [1, 2, 3])])
    assert make_optimizer(named[0], binary, seed=0, direction="minimize").acquisition == "logei"
    assert make_optimizer("bodi", binary, seed=0, direction="minimize").acquisition == "ucb"
    assert make_optimizer("bodi", categorical, seed=0,
                          direction="minimize").acquisition == "logei"


def test_a_report_shows_a_run_under_each_asked_label_that_is_its_configuration(tmp_path):
    # bodi 0.7's label is today's default on an all-categorical problem only
    seven, eight = "bodi[design_in_model=reach,first_order=false]", "bodi[first_order=auto-rescale]"
    store = ResultsStore(tmp_path)
    for problem, params in {"pest-shifted": {"x1": 1}, "labs50-shifted": {"x1": True}}.items():
        for method, value in ((seven, 2.0), (eight, 3.0)):
            store.register(problem, method, 0, "minimize", None, 1, 1)
            store.append(problem, method, 0, "minimize", Evaluation(params, value, 0.0, 0.0))
    store.close()
    curves = best_curves(tmp_path, methods=["bodi", seven])
    assert {m: c.tolist() for m, c in curves["pest-shifted"].items()} == {
        "bodi": [[2.0]], seven: [[2.0]]}
    assert {m: c.tolist() for m, c in curves["labs50-shifted"].items()} == {
        "bodi": [[3.0]], seven: [[2.0]]}
    # a label that is no stored run's configuration shows nothing
    with pytest.raises(ValueError, match="no evaluations"):
        best_curves(tmp_path, methods=["bodi[first_order=true]", "sa"])
    # two stored labels of one configuration on one seed: an error, as for "A|B"
    store = ResultsStore(tmp_path)
    store.register("labs50-shifted", "bodi", 0, "minimize", None, 1, 1)
    store.append("labs50-shifted", "bodi", 0, "minimize",
                 Evaluation({"x1": True}, 3.0, 0.0, 0.0))
    store.close()
    with pytest.raises(ValueError, match="two labels"):
        best_curves(tmp_path, methods=["bodi"], problems=["labs50-shifted"])


def test_two_stored_names_of_one_configuration_are_refused_not_merged(tmp_path):
    # bodi 0.5's `bodi` and `bodi[trust_region=true]` both read `bodi[...failure_tolerance=40]`
    _store_as_version(tmp_path, {"p": {"x1": True}}, ("bodi", "bodi[trust_region=true]"), 4)
    for read_only in (True, False):
        with pytest.raises(ValueError, match=r"both read 'bodi\[trust_region\.failure_tol"):
            ResultsStore(tmp_path, read_only=read_only)
    with sqlite3.connect(tmp_path / "results.db") as db:  # left as it was
        assert db.execute("PRAGMA user_version").fetchone()[0] == 4
        assert sorted(m for (m,) in db.execute("SELECT method FROM evaluations")) == [
            "bodi", "bodi[trust_region=true]"]


def test_report_ranks_across_problems_and_tests_the_winners_lead(tmp_path):
    # problem "clear": a beats b by 1 on every one of 5 seeds (a lead far above the noise);
    # problem "noisy": b's mean is better (2.4 against 3.4) but a is better on 3 of 5 seeds
    finals = {("clear", "a"): [1.0, 2.0, 3.0, 4.0, 5.0], ("clear", "b"): [2.0, 3.0, 4.0, 5.0, 6.0],
              ("noisy", "a"): [1.0, 5.0, 2.0, 6.0, 3.0], ("noisy", "b"): [2.0, 1.0, 3.0, 2.0, 4.0],
              # both at the optimum, b's sums in another order (a difference in the last bits)
              ("tied", "a"): [195.6527536223257] * 5, ("tied", "b"): [195.6527536223253] * 5}
    store = ResultsStore(tmp_path)
    for (problem, method), values in finals.items():
        for seed, value in enumerate(values):
            store.register(problem, method, seed, "minimize", 0.0, 1, 1)
            store.append(problem, method, seed, "minimize",
                         Evaluation({"x": 1}, value, 0.0, 0.0))
    store.close()
    table = report(tmp_path)
    assert "| a | 1.30 | 3 | 1 |" in table and "| b | 1.70 | 3 | 1 |" in table  # no tie won
    assert "on 1 of 3 problems" in table
    assert "| tied | a = b (tie) | - | 0 | 5 | - | no |" in table
    assert "| clear | a | b | 1 | 5 | 0 | yes |" in table
    assert "| noisy | b | a | 1 | 5 | 0.23 | no |" in table
    ranks = plot_ranks(tmp_path, tmp_path / "ranks.png")
    regret = plot_results(tmp_path, tmp_path / "regret.png", regret=True)
    assert ranks.stat().st_size > 10_000 and regret.stat().st_size > 10_000


def test_report_names_no_winner_that_is_behind_on_the_shared_seeds(tmp_path):
    # "a" ran seeds 0-1, "b" seeds 0-3: a's mean (2) beats b's (5), but on the seeds both ran
    # b is ahead (1 < 2), so the problem has no winner and the lead is not called a win
    store = ResultsStore(tmp_path)
    for method, values in {"a": [2.0, 2.0], "b": [1.0, 1.0, 9.0, 9.0]}.items():
        for seed, value in enumerate(values):
            store.register("p", method, seed, "minimize", 0.0, 1, 1)
            store.append("p", method, seed, "minimize", Evaluation({"x": 1}, value, 0.0, 0.0))
    store.close()
    table = report(tmp_path)
    assert "| p | a | b | -1 | 2 | - | no: level or behind on the shared seeds |" in table
    assert "| a | 2.00 | 1 | 0 |" in table and "| b | 1.00 | 1 | 0 |" in table


def test_report_does_not_rank_an_unfinished_method_against_finished_ones(tmp_path):
    # "slow" stopped after 2 of 4 evaluations; its best so far (5) looks worse than it would
    # be, so it is marked partial, left out of the ranks, and compared at an equal budget
    store = ResultsStore(tmp_path)
    values = {"fast": [9.0, 8.0, 1.0, 1.0], "slow": [6.0, 5.0], "other": [7.0, 7.0, 7.0, 2.0]}
    for method, run in values.items():
        for seed in (0, 1):
            store.register("p", method, seed, "minimize", 0.0, 4, 1)
            for value in run:
                store.append("p", method, seed, "minimize", Evaluation({"x": 1}, value, 0.0, 0.0))
    store.close()
    table = report(tmp_path)
    assert "| p (min) | slow | 2 | 2 | 5 ± 0 | partial |" in table
    assert "| p (min) | fast | 2 | 4 | 1 ± 0 | 1.00 |" in table
    assert "| p (min) | other | 2 | 4 | 2 ± 0 | 2.00 |" in table
    assert "partial (not ranked" in table and "slow on p" in table
    assert "| slow |" not in table.split("mean rank over problems")[1]
    equal = report(tmp_path, evaluations=2)
    assert "partial" not in equal and "| p (min) | slow | 2 | 2 | 5 ± 0 | 1.00 |" in equal
    assert plot_ranks(tmp_path, tmp_path / "ranks.png").exists()


def test_shift_report_compares_each_problem_with_its_twin(tmp_path):
    store = ResultsStore(tmp_path)
    finals = {("p", "a"): [1.0, 3.0], ("p-shifted", "a"): [1.5, 3.5],  # worse by 0.5 < s.e. 1
              ("p", "b"): [1.0, 1.2], ("p-shifted", "b"): [4.0, 4.2],  # worse by 3
              ("q", "a"): [0.0, 0.0]}  # no twin: not shown
    for (problem, method), values in finals.items():
        for seed, value in enumerate(values):
            store.register(problem, method, seed, "minimize", None, 1, 1)
            store.append(problem, method, seed, "minimize",
                         Evaluation({"x": 1}, value, 0.0, 0.0))
    store.close()
    table = shift_report(tmp_path)
    assert "| p (min) | a | 2 ± 1 | 2.5 ± 1 | 0.5 | yes |" in table
    assert "| p (min) | b | 1.1 ± 0.1 | 4.1 ± 0.1 | 3 | no |" in table
    assert "q (min)" not in table
    assert "| b |" not in shift_report(tmp_path, problems=["p"], methods=["a"])
    with pytest.raises(ValueError, match="shifted twin"):
        shift_report(tmp_path, problems=["q"])


def test_cli_bench_plot_report(tmp_path, capsys):
    from bodi.cli import main

    out = tmp_path / "r"
    assert main(["bench", "--problems", "planted-binary8", "--methods", "random",
                 "--seeds", "0", "--budget", "5", "--n-init", "2", "--out", str(out),
                 "--quiet", "--workers", "1"]) == 0
    assert (out / "figure.png").exists() and (out / "report.md").exists()
    assert main(["report", str(out)]) == 0
    assert "planted-binary8" in capsys.readouterr().out
    assert main(["report", str(out), "--evaluations", "3"]) == 0
    ranks = tmp_path / "ranks.png"
    assert main(["plot", str(out), "--regret", "--ranks", str(ranks)]) == 0
    assert ranks.stat().st_size > 10_000
    assert "| planted-binary8 (min) | random | 1 | 3 |" in capsys.readouterr().out
    assert main(["report", str(out), "--shifted"]) == 2  # no -shifted twin in these results
    assert "shifted twin" in capsys.readouterr().err
    assert main(["bench", "--problems", "nonsense", "--out", str(out), "--quiet"]) == 2
    assert "nonsense" in capsys.readouterr().err
    assert main(["bench", "--problems", "maxsat60", "--wcnf", str(tmp_path / "no.wcnf"),
                 "--out", str(out), "--quiet"]) == 2
    assert "frb10-6-4" in capsys.readouterr().err
