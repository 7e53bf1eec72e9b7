"""What a new user meets in the first hour: each test failed on the code before it."""

import math
import subprocess
import sys
import textwrap

import pytest

import bodi
from bodi.cli import main
from bodi.optimize import InvalidObjectiveValueError
from bodi.progress import PlainProgress, ProgressBars
from bodi.space import Binary, Categorical, SearchSpace
from bodi.study import create_study

SPACE = SearchSpace([Binary(f"b{i}") for i in range(5)] + [Categorical("c", ["x", "y", "z"])])
SMALL = {"dictionary_size": 8, "num_restarts": 2, "raw_samples": 64, "n_init": 4}
HEADER = "number,state,value,datetime_start,datetime_complete,duration,params_b0"


def value(params):
    return float(sum(params[f"b{i}"] for i in range(5)) + (params["c"] != "y"))


@pytest.fixture
def project(tmp_path):
    SPACE.to_json(tmp_path / "space.json")
    (tmp_path / "first_hour_helper.py").write_text(
        "def score(p):\n    return float(sum(p[f'b{i}'] for i in range(5)))\n")
    (tmp_path / "objective.py").write_text(textwrap.dedent("""
        import pathlib
        import first_hour_helper as helper  # a module beside the objective file

        pathlib.Path(__file__).with_name("imported").touch()

        def f(params):
            return helper.score(params)
    """))
    return tmp_path


def _run(project, storage, *extra):
    return main(["run", "--objective", f"{project / 'objective.py'}:f", "--space",
                 str(project / "space.json"), "--storage", str(storage), "--budget", "6",
                 "--n-init", "4", *extra])


def test_show_never_draws_over_a_study_file_named_png(project, capsys):
    study = project / "victim.png"
    assert _run(project, study, "--quiet") == 0
    before = study.read_bytes()
    assert main(["show", str(study)]) == 0
    assert study.read_bytes() == before
    assert (project / "victim.plot.png").stat().st_size > 1000
    assert main(["show", str(study), "--plot", str(study)]) == 2
    assert "the study file itself" in capsys.readouterr().err
    assert study.read_bytes() == before


def test_an_objective_file_imports_its_helpers_and_runs_only_when_the_run_can_start(project,
                                                                                     capsys):
    assert _run(project, project / "study.db", "--quiet") == 0
    assert "6 complete" in capsys.readouterr().out
    (project / "imported").unlink()
    assert _run(project, project / "study.db", "--quiet") == 2  # exists: needs --resume
    assert "--resume" in capsys.readouterr().err
    assert not (project / "imported").exists()  # the objective's code did not run


def test_resume_with_a_budget_already_reached_says_so(project, capsys):
    assert _run(project, project / "study.db", "--quiet") == 0
    capsys.readouterr()
    assert _run(project, project / "study.db", "--quiet", "--resume") == 0
    assert "already holds 6 trials, --budget 6: nothing to evaluate" in capsys.readouterr().out


def test_the_cli_runs_and_shows_without_rich_and_matplotlib(project):
    # a fresh interpreter in which neither extra can be imported (the core install)
    script = textwrap.dedent(f"""
        import sys
        for name in ("rich", "rich.progress", "matplotlib", "matplotlib.pyplot"):
            sys.modules[name] = None
        from bodi.cli import main
        code = main(["run", "--objective", {str(project / 'objective.py') + ':f'!r},
                     "--space", {str(project / 'space.json')!r}, "--storage",
                     {str(project / 'study.db')!r}, "--budget", "6", "--n-init", "4"])
        assert code == 0, code
        sys.exit(main(["show", {str(project / 'study.db')!r}]))
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert "bodi: 6/6 best" in proc.stderr  # the plain progress line
    assert "best trial #" in proc.stdout and "matplotlib is not installed" in proc.stdout
    assert not (project / "study.png").exists()


def test_plain_progress_lines(capsys):
    progress = PlainProgress(every=3600)
    bar = progress.add_task("[bold]bodi", total=3)
    for best in ("best 2", "best 1", "best 0.5"):
        progress.update(bar, advance=1, best=best)
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["bodi: 1/3 best 2", "bodi: 3/3 best 0.5"]  # first, then when complete
    with ProgressBars(False) as bars:  # disabled: nothing at all
        assert bars.add("x", 3) is None


@pytest.mark.parametrize("bad", ["0.5", None, [1.0, 2.0], {"v": 1}])
def test_a_value_that_is_no_number_stops_the_run_at_once(bad):
    calls = []

    def objective(params):
        calls.append(params)
        return value(params) if len(calls) < 3 else bad

    study = create_study(bodi.BODi(SPACE, seed=0, **SMALL))
    with pytest.raises(InvalidObjectiveValueError, match=r"trial #2.*Return a number"):
        bodi.minimize(objective, SPACE, budget=10, study=study)
    assert len(calls) == 3
    assert [t.state for t in study.trials] == ["complete", "complete", "failed"]
    assert "invalid objective value" in study.trials[2].message


def test_time_limit_for_the_whole_run_and_the_old_timeout_keyword():
    result = bodi.minimize(value, SPACE, budget=50, seed=0, time_limit=1e-9, **SMALL)
    assert len(result.trials) <= 1
    with pytest.warns(DeprecationWarning, match="evaluation_timeout"):
        result = bodi.minimize(value, SPACE, budget=4, seed=0, timeout=60, **SMALL)
    assert len(result.trials) == 4
    with pytest.raises(ValueError, match="time_limit"):
        bodi.minimize(value, SPACE, budget=4, time_limit=-1)


def test_every_evaluation_failing_still_returns_the_result():
    def broken(params):
        raise RuntimeError("no licence")

    result = bodi.minimize(broken, SPACE, budget=3, seed=0, catch=RuntimeError, **SMALL)
    assert result.best_value is None and result.best_params is None
    assert [t.state for t in result.trials] == ["failed"] * 3
    assert "no licence" in result.trials[0].message


def test_the_result_prints_short():
    result = bodi.minimize(value, SPACE, budget=30, seed=0, **SMALL)
    text = repr(result)
    assert len(text) < 400 and "trials=30 (30 complete)" in text
    assert f"best_value={result.best_value!r}" in text and math.isfinite(result.best_value)


def test_version_flag(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"bodi {bodi.__version__}"


def test_unreachable_scheduler_is_one_line_and_leaves_no_study_file(project, capsys):
    pytest.importorskip("distributed")
    study = project / "study.db"
    assert _run(project, study, "--quiet", "--scheduler", "tcp://127.0.0.1:9") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot reach the Dask scheduler" in err[0]
    assert not study.exists()


# ------------------------------------------------------------ what Optuna users reach for
def test_retry_failed_trials_puts_them_back_first(tmp_path):
    calls = []

    def flaky(params):
        calls.append(dict(params))
        if len(calls) in (2, 3):
            raise RuntimeError("licence server down")
        return value(params)

    storage = tmp_path / "study.db"
    result = bodi.minimize(flaky, SPACE, budget=6, seed=0, storage=storage, catch=RuntimeError,
                           **SMALL)
    failed = [t for t in result.trials if t.state == "failed"]
    assert [t.number for t in failed] == [1, 2]
    study = bodi.load_study(storage)
    assert study.retry_failed() == [1, 2]
    assert all(study.trials[n].waiting for n in (1, 2))
    result = bodi.minimize(flaky, SPACE, budget=6, study=study)
    assert [t.state for t in result.trials] == ["complete"] * 6
    assert calls[6:] == [t.params for t in failed]  # evaluated again, nothing new
    assert result.trials[1].user_attrs["failed_before"].endswith("licence server down")


def test_enqueue_user_attrs_and_the_trials_table(tmp_path):
    storage = tmp_path / "study.db"
    study = create_study(bodi.BODi(SPACE, seed=0, **SMALL), storage=storage)
    wanted = {**{f"b{i}": False for i in range(5)}, "c": "y"}
    assert study.enqueue(wanted).waiting
    with pytest.raises(ValueError, match="already a trial"):
        study.enqueue(wanted)

    def objective(params):
        return bodi.Outcome(value(params), user_attrs={"seconds": 1.5, "note": "ok"})

    result = bodi.minimize(objective, SPACE, budget=5, study=study)
    assert result.trials[0].params == wanted and result.best_value == 0.0
    study.set_user_attr(0, "reviewed", True)
    with pytest.raises(ValueError, match="JSON"):
        study.set_user_attr(0, "bad", object())
    again = bodi.load_study(storage)
    assert again.trials[0].user_attrs == {"seconds": 1.5, "note": "ok", "reviewed": True}
    frame = again.trials_dataframe()
    assert len(frame) == 5 and list(frame.columns[:3]) == ["number", "state", "value"]
    assert {"params_b0", "params_c", "user_attrs_seconds", "user_attrs_reviewed"} <= set(
        frame.columns)
    assert frame.loc[0, "value"] == 0.0


def test_show_csv_and_studies_list_copy_delete(project, capsys):
    study = project / "study.db"
    assert _run(project, study, "--quiet") == 0
    assert main(["show", str(study), "--csv", str(project / "trials.csv")]) == 0
    lines = (project / "trials.csv").read_text().splitlines()
    assert len(lines) == 7 and lines[0].startswith(HEADER)
    capsys.readouterr()
    assert main(["studies", str(study)]) == 0
    assert "default: BODi, 6 parameters, 6 trials (6 complete), minimize" in \
        capsys.readouterr().out
    assert main(["studies", str(study), "--copy", "default", "--to", str(project / "b.db"),
                 "--as", "again"]) == 0
    copy = bodi.load_study(project / "b.db", "again")
    assert [t.params for t in copy.trials] == [t.params for t in bodi.load_study(study).trials]
    assert main(["studies", str(project / "b.db"), "--delete", "again"]) == 0
    capsys.readouterr()
    assert main(["studies", str(project / "b.db")]) == 0
    assert "holds no study" in capsys.readouterr().out
    assert main(["studies", str(study), "--delete", "nope"]) == 2


def test_export_to_optuna_reads_back(project, capsys):
    optuna = pytest.importorskip("optuna")
    study = project / "study.db"
    assert _run(project, study, "--quiet") == 0
    url = f"sqlite:///{project / 'optuna.db'}"
    assert main(["export", str(study), "--optuna", url]) == 0
    assert "exported 6 trials" in capsys.readouterr().out
    exported = optuna.load_study(study_name="default", storage=url)
    original = bodi.load_study(study)
    assert [t.params for t in exported.trials] == [t.params for t in original.trials]
    assert [t.value for t in exported.trials] == [t.value for t in original.trials]
    assert exported.best_value == original.best[1]


def test_reading_and_exporting_a_study_import_no_torch(project):
    pytest.importorskip("optuna")
    study = project / "study.db"
    assert _run(project, study, "--quiet") == 0
    # a fresh interpreter in which torch cannot be imported: the commands that read a study
    script = textwrap.dedent(f"""
        import sys
        sys.modules["torch"] = None
        from bodi.cli import main
        for command in (["studies"], ["show", "--csv", "-"],
                        ["export", "--optuna", {str(project / 'optuna.db')!r}]):
            code = main([command[0], {str(study)!r}, *command[1:]])
            assert code == 0, (command, code)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert "exported 6 trials" in proc.stdout
    assert proc.stderr == ""  # no log lines of Optuna's beside the export's own line


def test_the_convergence_plot_steps_and_says_what_it_shows():
    from bodi.experiments.analysis import _count
    from bodi.plots import convergence_figure

    result = bodi.minimize(value, SPACE, budget=8, seed=0, **SMALL)
    figure = convergence_figure(result.study)
    ax = figure.axes[0]
    assert ax.get_title() == "study 'default': 6 parameters, 8 trials, BODi"
    (best,) = [line for line in ax.get_lines() if line.get_label() == "best so far"]
    assert best.get_drawstyle() == "steps-post"  # flat between improvements
    assert (_count(1, "seed"), _count(3, "seed")) == ("1 seed", "3 seeds")


def test_show_csv_dash_writes_the_table_alone_to_standard_output(project, capsys):
    study = project / "study.db"
    assert _run(project, study, "--quiet") == 0
    capsys.readouterr()
    assert main(["show", str(study), "--csv", "-"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 7 and lines[0].startswith(HEADER)
    assert not (project / "-").exists()


def test_export_again_refuses_in_one_line_or_replaces_and_takes_a_path(project, capsys):
    optuna = pytest.importorskip("optuna")
    study = project / "study.db"
    assert _run(project, study, "--quiet") == 0
    target = project / "optuna.db"  # a path, not a URL
    assert main(["export", str(study), "--optuna", str(target)]) == 0
    capsys.readouterr()
    assert main(["export", str(study), "--optuna", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already holds an Optuna study 'default'" in err
    assert main(["export", str(study), "--optuna", f"sqlite:///{target}", "--replace"]) == 0
    exported = optuna.load_study(study_name="default", storage=f"sqlite:///{target}")
    assert len(exported.trials) == 6  # replaced, not appended


def test_identical_workers_join_a_study_whether_or_not_it_exists(project):
    study = project / "study.db"
    assert _run(project, study, "--quiet", "--join") == 0  # creates it
    assert _run(project, study, "--quiet", "--join", "--budget", "8") == 0  # continues it
    assert len(bodi.load_study(study).trials) == 8
    assert _run(project, study, "--quiet", "--join", "--resume") == 2


TYPO_OBJECTIVE = """
def f(params):
    return float(params["b_five"])  # a typo: there is no such parameter
"""


def test_an_exception_in_the_objective_stops_the_cli_run_with_its_traceback(project):
    (project / "typo.py").write_text(TYPO_OBJECTIVE)
    command = [sys.executable, "-m", "bodi", "run", "--objective", "typo.py:f", "--space",
               "space.json", "--storage", "study.db", "--budget", "6", "--n-init", "4",
               "--quiet"]
    done = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    assert 'typo.py", line 3, in f' in done.stderr and "KeyError: 'b_five'" in done.stderr
    assert "stored as failed trial #0" in done.stderr
    assert len(bodi.load_study(project / "study.db").trials) == 1
    caught = subprocess.run([*command, "--resume", "--catch", "KeyError", "--max-failures", "3"],
                            cwd=project, capture_output=True, text=True, timeout=300)
    assert caught.returncode == 2 and "3 evaluations failed in a row" in caught.stderr
    bad = subprocess.run([*command, "--catch", "NoSuchError"], cwd=project,
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "--catch NoSuchError: not an exception class" in bad.stderr


def test_a_study_starts_from_an_earlier_studys_trials_in_a_wider_space(tmp_path, capsys):
    old = tmp_path / "old.db"
    first = bodi.minimize(value, SPACE, budget=6, seed=0, storage=old, **SMALL)
    wider = SearchSpace([Binary(f"b{i}") for i in range(5)]
                        + [Categorical("c", ["x", "y", "z", "w"])])
    result = bodi.minimize(value, wider, budget=9, seed=1, storage=tmp_path / "new.db",
                           start_from=old, **SMALL)
    copied = result.trials[:6]
    assert [t.params for t in copied] == [t.params for t in first.trials]
    assert [t.value for t in copied] == [t.value for t in first.trials]
    assert all(t.user_attrs["copied_from"].endswith(f"#{k}") for k, t in enumerate(copied))
    assert len(result.trials) == 9  # the copies count toward the budget
    again = bodi.load_study(tmp_path / "new.db")
    assert again.add_trials_from(old) == []  # idempotent
    narrower = SearchSpace([Binary(f"b{i}") for i in range(5)] + [Categorical("c", ["w", "v"])])
    with pytest.raises(ValueError, match="does not fit this space"):
        bodi.minimize(value, narrower, budget=7, storage=tmp_path / "n.db", start_from=old,
                      **SMALL)
    # the command line: the same, in one option
    SPACE.to_json(tmp_path / "space.json")
    (tmp_path / "objective.py").write_text(
        "def f(p):\n    return float(sum(p[f'b{i}'] for i in range(5)))\n")
    assert main(["run", "--objective", f"{tmp_path / 'objective.py'}:f", "--space",
                 str(tmp_path / "space.json"), "--storage", str(tmp_path / "cli.db"),
                 "--budget", "8", "--n-init", "4", "--quiet", "--start-from", str(old)]) == 0
    assert "8 complete" in capsys.readouterr().out
    assert len([t for t in bodi.load_study(tmp_path / "cli.db").trials
                if "copied_from" in t.user_attrs]) == 6
