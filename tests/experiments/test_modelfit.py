"""The model-fit study (`bodi modelfit`): data, metrics, outputs and the CLI."""

import math

import numpy as np
import pytest
import torch

from bodi.cli import main
from bodi.experiments.modelfit import (
    FIELDS,
    SURROGATES,
    draw_points,
    gaussian_metrics,
    read_csv,
    run_modelfit,
    write_outputs,
)
from bodi.problems import planted_mixed
from bodi.space import Binary, SearchSpace


def test_gaussian_metrics_by_hand():
    y = np.array([0.0, 1.0, 2.0, 3.0])
    mean = np.array([0.0, 1.0, 2.0, 5.0])
    variance = np.array([1.0, 1.0, 1.0, 1.0])
    m = gaussian_metrics(y, mean, variance)
    assert m["rmse"] == pytest.approx(1.0)
    assert m["nrmse"] == pytest.approx(1.0 / np.std(y))
    assert m["nlpd"] == pytest.approx(0.5 * math.log(2 * math.pi) + 0.5 * 4 / 4)
    assert m["coverage95"] == pytest.approx(0.75)  # |3 - 5| = 2 > 1.96
    assert m["spearman"] == pytest.approx(1.0)
    assert math.isnan(gaussian_metrics(y, np.ones(4), variance)["spearman"])  # constant mean


def test_points_are_distinct_seeded_and_exhaust_small_spaces():
    space = SearchSpace([Binary(f"b{i}") for i in range(4)])
    X = draw_points(space, 16, seed=3)
    assert len({tuple(r.tolist()) for r in X}) == 16  # all of {0,1}^4
    assert torch.equal(draw_points(space, 10, seed=5), draw_points(space, 10, seed=5))
    assert not torch.equal(draw_points(space, 10, seed=5), draw_points(space, 10, seed=6))
    with pytest.raises(ValueError, match="distinct"):
        draw_points(space, 17, seed=0)


def test_cli_modelfit_on_a_planted_problem(tmp_path, capsys):
    out = tmp_path / "fit"
    code = main(["modelfit", "--problem", "planted-binary10", "--train", "20", "--test", "10",
                 "--seeds", "0-1", "--out", str(out), "--m", "32"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "| hed-diverse | 2 |" in printed
    assert {p.name for p in out.iterdir()} == {"modelfit.csv", "modelfit.md", "modelfit.png"}
    assert (out / "modelfit.png").stat().st_size > 10_000
    rows = read_csv(out / "modelfit.csv")
    assert list(rows[0]) == list(FIELDS)
    assert [(r["model"], r["seed"]) for r in rows] == [(m, s) for s in (0, 1) for m in SURROGATES]
    for r in rows:
        assert r["error"] == "" and r["n_train"] == 20 and r["n_test"] == 10
        assert 0 <= r["coverage95"] <= 1 and -1 <= r["spearman"] <= 1
        assert r["rmse"] >= 0 and math.isfinite(r["nlpd"]) and r["fit_seconds"] > 0
        if r["model"].startswith("hed-"):
            assert 0 <= r["n_ls_shrunk"] <= r["n_ls_below_10"] <= 32 and r["m"] == 32
        else:
            assert r["n_ls_below_10"] is None and r["m"] is None
    # Predicting the mean of the test values scores RMSE / std = 1; the BODi GP does far better.
    hed = [r for r in rows if r["model"] == "hed-diverse"]
    assert all(r["nrmse"] < 0.6 and r["spearman"] > 0.7 for r in hed)
    text = (out / "modelfit.md").read_text()
    assert "# Model fit on planted-binary10" in text
    assert (f"bodi modelfit --problem planted-binary10 --train 20 --test 10 --seeds 0-1 "
            f"--out {out} --m 32") in text
    assert text.count("\n|") == 2 + len(SURROGATES)  # header, rule, one row per model


def test_same_points_for_every_model_and_reproducible(tmp_path):
    a = run_modelfit("planted-binary10", n_train=12, n_test=6, seeds=[4],
                     models=["hed-naive", "overlap"], dictionary_size=8, log=None)
    b = run_modelfit("planted-binary10", n_train=12, n_test=6, seeds=[4],
                     models=["overlap"], dictionary_size=8, log=None)
    np.testing.assert_array_equal(a.first_seed["hed-naive"].y, a.first_seed["overlap"].y)
    np.testing.assert_allclose(a.first_seed["overlap"].mean, b.first_seed["overlap"].mean)
    assert a.rows[1]["rmse"] == pytest.approx(b.rows[0]["rmse"])


def test_categorical_and_mixed_problems_skip_binary_only_dictionaries(tmp_path, capsys):
    out = tmp_path / "pest"
    assert main(["modelfit", "--problem", "pest", "--train", "12", "--test", "5", "--seeds", "0",
                 "--out", str(out), "--m", "8"]) == 0
    assert "skipping hed-wavelet, hed-gaussian" in capsys.readouterr().out
    models = {r["model"] for r in read_csv(out / "modelfit.csv")}
    assert models == {"hed-diverse", "hed-naive", "overlap", "diffusion"}
    assert "Skipped (defined for binary parameters only): hed-wavelet, hed-gaussian" in (
        out / "modelfit.md").read_text()
    # a Problem object with binary, categorical and continuous parameters
    study = run_modelfit(planted_mixed(4, 2, 2, seed=1), n_train=12, n_test=5, seeds=[0],
                         models=["hed-diverse", "hed-gaussian", "overlap", "diffusion"],
                         dictionary_size=8, log=None)
    assert study.skipped == ["hed-gaussian"]
    assert [r["model"] for r in study.rows] == ["hed-diverse", "overlap", "diffusion"]
    assert all(not r["error"] and math.isfinite(r["rmse"]) for r in study.rows)
    paths = write_outputs(study, tmp_path / "mixed")
    assert paths["png"].exists() and "hed-gaussian" in paths["md"].read_text()


def test_cli_modelfit_errors(tmp_path, capsys):
    base = ["modelfit", "--train", "5", "--test", "2", "--out", str(tmp_path / "x")]
    assert main([*base, "--problem", "planted-binary6", "--models", "casmo"]) == 2
    assert "unknown model 'casmo'" in capsys.readouterr().err
    assert main([*base, "--problem", "pest", "--models", "hed-wavelet"]) == 2
    assert "none of the models" in capsys.readouterr().err
    assert main([*base, "--problem", "nosuchproblem"]) == 2
    assert main([*base, "--problem", "planted-binary6", "--seeds", "a-b"]) == 2
    with pytest.raises(SystemExit):
        main([*base, "--problem", "planted-binary6", "--train", "0"])
