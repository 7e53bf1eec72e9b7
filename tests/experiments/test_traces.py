"""The compact traces of a results directory: written by the runner, read by the reports."""

import gzip

import pytest

from bodi.experiments.analysis import best_curves, report
from bodi.experiments.runner import run_benchmark
from bodi.experiments.traces import TASKS_NAME, TRACES_NAME, TraceTable, write_traces


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    run_benchmark(["planted-binary10", "labs10"], ["random", "sa"], [0, 1], budget=12, n_init=4,
                  out=out, n_workers=1, progress=False).close()
    return out


def test_the_runner_writes_traces_that_report_as_the_database_does(results_dir, tmp_path):
    assert (results_dir / TASKS_NAME).exists() and (results_dir / TRACES_NAME).exists()
    traces_only = tmp_path / "traces"
    traces_only.mkdir()
    for name in (TASKS_NAME, TRACES_NAME):
        (traces_only / name).write_bytes((results_dir / name).read_bytes())
    def without_seconds(table):  # the traces round them to 6 significant digits
        return [line.rsplit("|", 2)[0] for line in table.splitlines()]

    assert without_seconds(report(traces_only)) == without_seconds(report(results_dir))
    from_db, from_traces = best_curves(results_dir), best_curves(traces_only)
    assert from_db.keys() == from_traces.keys()
    for problem, methods in from_db.items():
        for method, curves in methods.items():
            assert curves.tolist() == from_traces[problem][method].tolist()


def test_traces_are_rewritten_byte_for_byte(results_dir):
    before = (results_dir / TRACES_NAME).read_bytes(), (results_dir / TASKS_NAME).read_bytes()
    write_traces(results_dir)
    after = (results_dir / TRACES_NAME).read_bytes(), (results_dir / TASKS_NAME).read_bytes()
    assert before == after


def test_one_row_per_evaluation_and_exact_floats(results_dir):
    table = TraceTable(results_dir)
    curves = table.curves()
    assert sorted(curves) == [(p, m, s) for p in ("labs10", "planted-binary10")
                              for m in ("random", "sa") for s in (0, 1)]
    assert all([r["number"] for r in rows] == list(range(12)) for rows in curves.values())
    assert {t["budget"] for t in table.tasks()} == {12}


def test_damaged_traces_are_one_clear_error(results_dir, tmp_path):
    (tmp_path / TASKS_NAME).write_bytes((results_dir / TASKS_NAME).read_bytes())
    with gzip.open(tmp_path / TRACES_NAME, "wt") as handle:
        handle.write("problem,value\nlabs10,1\n")
    with pytest.raises(ValueError, match="has the columns"):
        TraceTable(tmp_path)
    (tmp_path / TRACES_NAME).write_bytes(b"not gzip")
    with pytest.raises(ValueError, match="unreadable benchmark traces"):
        TraceTable(tmp_path)


def test_a_directory_without_results_is_named(tmp_path):
    with pytest.raises(ValueError, match="holds no benchmark results"):
        report(tmp_path)


def test_bench_leaves_another_applications_results_db_as_it_is(tmp_path):
    import sqlite3

    foreign = tmp_path / "results.db"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE orders (id INTEGER)")
    db.commit()
    db.close()
    before = foreign.read_bytes()
    with pytest.raises(ValueError, match="another application's database"):
        run_benchmark(["labs10"], ["random"], [0], budget=4, n_init=2, out=tmp_path,
                      n_workers=1, progress=False)
    assert foreign.read_bytes() == before
    assert not (tmp_path / "results.db-wal").exists()


def test_every_run_records_the_version_commit_and_settings_that_made_it(results_dir):
    import json

    import bodi
    from bodi.experiments.results import ResultsStore

    store = ResultsStore(results_dir, read_only=True)
    tasks = store.tasks()
    store.close()
    for task in tasks:
        (made_by,) = json.loads(task["provenance"])
        assert made_by["version"] == bodi.__version__
        assert made_by["commit"] is None or len(made_by["commit"].split("-")[0]) == 40
        assert made_by["optimizer"] in ("RandomSearch", "SimulatedAnnealing")
        assert isinstance(made_by["settings"], dict)
    from_traces = {(t["problem"], t["method"], t["seed"]): t["provenance"]
                   for t in TraceTable(results_dir).tasks()}
    assert from_traces == {(t["problem"], t["method"], t["seed"]): t["provenance"]
                           for t in tasks}


def test_a_run_resumed_by_other_code_keeps_both_records(tmp_path):
    import json

    from bodi.experiments.results import ResultsStore

    store = ResultsStore(tmp_path)
    first = {"version": "0.10.0", "commit": "a" * 40, "optimizer": "BODi", "settings": {}}
    second = {**first, "version": "0.11.0"}
    for made_by in (first, first, second):
        store.register("p", "bodi", 0, "minimize", None, 10, 2, made_by=made_by)
    (task,) = store.tasks()
    store.close()
    assert json.loads(task["provenance"]) == [first, second]
