"""The benchmark runner, its storage, resume after SIGKILL, plots and reports."""

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from bodi.cli import main
from bodi.experiments.analysis import (
    against_report,
    best_curves,
    plot_ranks,
    plot_results,
    report,
    shift_report,
)
from bodi.experiments.results import FORMAT_VERSION, Evaluation, ResultsStore
from bodi.experiments.runner import expand_seeds, run_benchmark
from bodi.optimizers.registry import make_optimizer, parse_method, split_methods
from bodi.space import Binary, SearchSpace


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


@pytest.mark.heavy
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


@pytest.mark.heavy
def test_killed_run_resumes_without_redoing_evaluations(tmp_path):
    command = [sys.executable, "-m", "bodi", "bench", "--problems", "planted-binary12",
               "--methods", "bodi[m=16],random", "--seeds", "0-1", "--budget", "16",
               "--n-init", "4", "--quiet", "--no-plot"]
    killed = tmp_path / "killed"
    kills = 0
    # killed once while on Dask workers, once while running in its own process; resumed there
    for threshold, workers in ((12, "2"), (36, "1")):
        proc = subprocess.Popen([*command, "--workers", workers, "--out", str(killed)],
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
    subprocess.run([*command, "--workers", "1", "--out", str(killed)], check=True,
                   capture_output=True)
    after = _rows(killed)
    assert set(before) <= set(after)  # nothing persisted before a kill was changed
    keys = [(r[0], r[1], r[2], r[3]) for r in after]
    assert len(after) == 64 and len(set(keys)) == 64  # every evaluation exactly once
    # ... and the resumed study equals one that was never interrupted (run here, without Dask)
    clean = tmp_path / "clean"
    assert main([*command[3:], "--workers", "1", "--out", str(clean)]) == 0
    clean_rows = _rows(clean)
    assert [r[:5] for r in clean_rows] == [r[:5] for r in after]  # the same configurations
    for row, other in zip(clean_rows, after, strict=True):  # values to rounding
        assert row[5:] == pytest.approx(other[5:], rel=1e-12, abs=1e-12)


def _store(path, finals: dict[str, list[float]], length: int = 2) -> None:
    """A results directory of problem ``p``: per method, one run per seed whose best is the
    given final value after ``length`` evaluations."""
    store = ResultsStore(path)
    for method, values in finals.items():
        for seed, final in enumerate(values):
            store.register("p", method, seed, "minimize", None, length, 1)
            for v in [final + 1.0] * (length - 1) + [final]:
                store.append("p", method, seed, "minimize", Evaluation({"x": 1}, v, 0.0, 0.0))
    store.close()


def test_a_report_against_earlier_runs_pairs_them_by_seed(tmp_path, capsys):
    _store(tmp_path / "old", {"a": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "b": [1.0] * 6})
    _store(tmp_path / "new", {"a": [2.0, 3.0, 4.0, 5.0, 6.0, 7.0], "b": [1.0] * 6})
    table = against_report(tmp_path / "new", tmp_path / "old")
    assert "| p (min) | a | 6 | 3.5 ± 0.76 | 4.5 ± 0.76 | 0 | 6 | 0.0156 |" in table
    assert "| p (min) | b | 6 | 1 ± 0 | 1 ± 0 | 0 | 0 | 1 |" in table
    # an unfinished run of either side is left out
    _store(tmp_path / "short", {"a": [0.0] * 6}, length=1)
    assert "| a |" not in against_report(tmp_path / "short", tmp_path / "old")
    assert main(["report", str(tmp_path / "new"), "--against", str(tmp_path / "old")]) == 0
    assert "0.0156" in capsys.readouterr().out


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


def test_a_database_of_older_labels_is_read_as_it_is_and_not_written(tmp_path):
    store = ResultsStore(tmp_path)
    store.register("p", "bodi", 0, "minimize", None, 1, 1)
    store.append("p", "bodi", 0, "minimize", Evaluation({"x1": True}, 1.0, 0.0, 0.0))
    store.close()
    with sqlite3.connect(tmp_path / "results.db") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == FORMAT_VERSION
        db.execute("PRAGMA user_version = 8")  # as bodi 0.9 wrote it
    store = ResultsStore(tmp_path, read_only=True)
    assert [t["method"] for t in store.tasks()] == ["bodi"]
    store.close()
    with pytest.raises(ValueError, match="written by an older bodi, whose method labels meant "
                                         "other defaults; write new runs into another"):
        ResultsStore(tmp_path)
    ResultsStore(tmp_path / "new").close()  # an empty database is today's


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


def test_a_family_name_runs_the_instance_of_each_seed(tmp_path):
    """``labs12-shifted-i{seed}``: seed s runs instance s, stored under the family's name; its
    evaluations are those of a run of ``labs12-shifted-i<s>`` itself."""
    family = "labs12-shifted-i{seed}"
    run_benchmark([family], ["random"], [0, 1], budget=4, n_init=2, out=tmp_path / "family",
                  n_workers=1, progress=False).close()
    for seed in (0, 1):
        run_benchmark([f"labs12-shifted-i{seed}"], ["random"], [seed], budget=4, n_init=2,
                      out=tmp_path / f"i{seed}", n_workers=1, progress=False).close()
    family_store = ResultsStore(tmp_path / "family", read_only=True)
    assert {t["problem"] for t in family_store.tasks()} == {family}
    values = {seed: [e.value for e in family_store.history(family, "random", seed)]
              for seed in (0, 1)}
    for seed in (0, 1):
        alone = ResultsStore(tmp_path / f"i{seed}", read_only=True)
        assert values[seed] == [e.value for e in alone.history(f"labs12-shifted-i{seed}",
                                                               "random", seed)]
        alone.close()
    family_store.close()
    assert values[0] != values[1]
