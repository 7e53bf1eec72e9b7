"""Device and dtype of the GP optimizers: float32 and float64 on the CPU, CUDA where present."""

import json
import sqlite3

import pytest
import torch
from study_files import forget_settings

import bodi
from bodi.acquisition.optimize import OnModelDevice
from bodi.baselines import CASMOPOLITAN, COMBO, BoTorchMixed
from bodi.device import dtype_name, model_tensor_kwargs, resolve_device
from bodi.hed.kernel import HammingEmbeddingKernel
from bodi.optimizers import make_optimizer
from bodi.optimizers.training_data import squash_outcomes
from bodi.space import Binary, Categorical, Continuous, Integer, SearchSpace
from bodi.study import create_study

MIXED = SearchSpace(
    [Binary(f"b{i}") for i in range(8)]
    + [Categorical("c", ["x", "y", "z"]), Integer("k", 0, 5), Continuous("u", -1.0, 1.0)]
)
FAST = {"n_init": 6, "dictionary_size": 16, "num_restarts": 3, "raw_samples": 128}
CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")


def objective(p):
    return sum(p[f"b{i}"] for i in range(8)) + (p["c"] != "y") + abs(p["k"] - 2) + p["u"] ** 2


def _run(opt, steps):
    for _ in range(steps):
        x = opt.ask()
        opt.tell(x, objective(x))
    return opt


def _model_dtypes(model):
    tensors = [*model.parameters(), *model.buffers(), *model.train_inputs, model.train_targets]
    return {t.dtype for t in tensors if t.is_floating_point()}


def test_names_and_errors():
    assert dtype_name(torch.float32) == dtype_name("float") == dtype_name("single") == "float32"
    assert dtype_name("Float64") == dtype_name(torch.double) == "float64"
    assert model_tensor_kwargs(None, "float32") == {"device": torch.device("cpu"),
                                                    "dtype": torch.float32}
    with pytest.raises(ValueError, match="dtype must be one of"):
        dtype_name("float16")
    with pytest.raises(ValueError, match="dtype must be one of"):
        dtype_name(torch.int64)
    with pytest.raises(ValueError, match="unknown device"):
        resolve_device("tpu-7")
    with pytest.raises(ValueError, match="not supported"):
        resolve_device("meta")
    with pytest.raises(ValueError, match="dtype"):
        bodi.BODi(MIXED, dtype="half")


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available here")
def test_cuda_without_a_gpu_is_a_clear_error():
    with pytest.raises(ValueError, match="CUDA is not available"):
        bodi.BODi(MIXED, device="cuda")
    with pytest.raises(ValueError, match="CUDA is not available"):
        make_optimizer("bodi", MIXED, seed=0, direction="minimize", device="cuda")


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_bodi_models_in_the_asked_dtype_and_keeps_the_search_exact(dtype):
    opt = _run(create_study(bodi.BODi(MIXED, seed=1, dtype=dtype, **FAST)), 10)
    assert opt.optimizer.dtype == dtype and opt.optimizer.device == torch.device("cpu")
    assert _model_dtypes(opt.optimizer.model) == {dtype}
    # the HED factor, wherever the fit put it (beside a first-order term or not)
    hed = [
        k
        for k in opt.optimizer.model.covar_module.modules()
        if isinstance(k, HammingEmbeddingKernel)
    ]
    assert hed[0].projection.dtype == dtype
    X = opt.history.X_completed  # every stored point is canonical float64 and distinct
    assert X.dtype == torch.float64
    assert torch.equal(MIXED.round(X), X)
    assert len({tuple(row.tolist()) for row in X}) == len(X)
    with torch.no_grad():  # the fit is sound: its mean follows the data it was fitted to
        mean = opt.optimizer.model.posterior(
            opt.optimizer.model.train_inputs[0].unsqueeze(-2)
        ).mean.reshape(-1)
    targets = opt.optimizer.model.outcome_transform.untransform(
        opt.optimizer.model.train_targets.unsqueeze(-1)
    )[0]
    assert torch.corrcoef(torch.stack([mean, targets.reshape(-1)]))[0, 1] > 0.9


def test_float32_and_float64_runs_are_each_reproducible_and_the_dtype_is_stored(tmp_path):
    path = tmp_path / "study.db"
    first = _run(create_study(bodi.BODi(MIXED, seed=3, dtype="float32", **FAST), storage=path), 9)
    again = _run(create_study(bodi.BODi(MIXED, seed=3, dtype="float32", **FAST)), 9)
    assert [t.params for t in first.trials] == [t.params for t in again.trials]
    with sqlite3.connect(path) as db:
        (settings,) = db.execute("SELECT settings FROM studies").fetchone()
    assert json.loads(settings)["dtype"] == "float32"
    loaded = bodi.load_study(path, device="cpu")
    assert loaded.optimizer.dtype == torch.float32
    assert loaded.ask() == again.ask()
    with pytest.raises(ValueError, match=r"settings\.dtype: stored 'float32', given 'float64'"):
        create_study(bodi.BODi(MIXED, seed=3, **FAST), storage=path)  # float64 on a float32 study


def test_a_study_without_a_stored_dtype_runs_in_float64(tmp_path):
    path = tmp_path / "study.db"
    _run(create_study(bodi.BODi(MIXED, seed=0, **FAST), storage=path), 7)
    forget_settings(path, "dtype")
    assert bodi.load_study(path).optimizer.dtype == torch.float64


def test_device_is_only_for_gp_optimizers(tmp_path):
    path = tmp_path / "study.db"
    _run(create_study(bodi.RandomSearch(MIXED, seed=0), storage=path), 2)
    with pytest.raises(ValueError, match="no model device"):
        bodi.load_study(path, device="cpu")
    # a benchmark's --device reaches the GP methods and leaves the others alone
    random = make_optimizer("random", MIXED, seed=0, direction="minimize", device="cpu")
    assert not hasattr(random, "device")
    gp = make_optimizer("bodi[dtype=float32]", MIXED, seed=0, direction="minimize",
                        device="cpu")
    assert (gp.device, gp.dtype) == (torch.device("cpu"), torch.float32)


@pytest.mark.parametrize("cls", [CASMOPOLITAN, COMBO, BoTorchMixed])
def test_gp_baselines_model_in_float32(cls):
    options = {"n_init": 6, "num_restarts": 2, "raw_samples": 64}
    opt = _run(create_study(cls(MIXED, seed=0, dtype=torch.float32, **options)), 8)
    assert _model_dtypes(opt.optimizer.model) == {torch.float32}
    assert len({tuple(t.x.tolist()) for t in opt.trials}) == 8


def test_on_model_device_casts_inputs_values_gradients_and_pending_points():
    from botorch.acquisition import LogExpectedImprovement, qLogNoisyExpectedImprovement

    opt = _run(create_study(bodi.BODi(MIXED, seed=2, dtype=torch.float32, **FAST)), 8)
    model = opt.optimizer.model
    inner = LogExpectedImprovement(model, best_f=model.train_targets.max())
    wrapped = OnModelDevice(inner, torch.device("cpu"), torch.float32)
    X = MIXED.sample(5, generator=torch.Generator().manual_seed(0)).unsqueeze(-2)
    X.requires_grad_(True)
    values = wrapped(X)
    assert values.dtype == torch.float64 and values.shape == (5,)
    torch.testing.assert_close(values.detach(), inner(X.detach().float()).double())
    values.sum().backward()
    assert X.grad is not None and X.grad.dtype == torch.float64
    batch = qLogNoisyExpectedImprovement(model, X_baseline=model.train_inputs[0],
                                         incremental=False)  # keeps X_pending as given
    wrapped = OnModelDevice(batch, torch.device("cpu"), torch.float32)
    pending = MIXED.sample(2, generator=torch.Generator().manual_seed(1))
    wrapped.set_X_pending(pending)
    inner = batch
    assert wrapped.X_pending.dtype == torch.float64
    assert inner.X_pending.dtype == torch.float32


def test_squashing_huge_values_depends_on_the_model_precision():
    Y = torch.tensor([[1.0], [1e18]], dtype=torch.float64)
    assert torch.equal(squash_outcomes(Y, torch.float64), Y)  # fine for float64
    squashed = squash_outcomes(Y, torch.float32)
    assert squashed.max() < 50 and squashed.argmax() == 1  # order kept, float32-safe


@CUDA
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_bodi_on_cuda_and_the_study_resumes_on_the_cpu(tmp_path, dtype):
    path = tmp_path / "study.db"
    opt = _run(
        create_study(bodi.BODi(MIXED, seed=4, device="cuda", dtype=dtype, **FAST), storage=path), 9
    )
    assert opt.optimizer.model.train_inputs[0].device.type == "cuda"
    assert all(b.device.type == "cuda" for b in opt.optimizer.model.buffers())
    assert all(t.x.device.type == "cpu" for t in opt.trials)
    on_cpu = bodi.load_study(path)  # the device is not part of the study
    assert on_cpu.optimizer.device == torch.device("cpu") and on_cpu.optimizer.dtype == dtype
    _run(on_cpu, 2)
    assert len({tuple(t.x.tolist()) for t in on_cpu.trials}) == 11
    back = bodi.load_study(path, device="cuda")
    _run(back, 1)
    assert back.optimizer.model.train_inputs[0].device.type == "cuda"


@CUDA
def test_gp_baselines_on_cuda():
    for cls in (CASMOPOLITAN, COMBO, BoTorchMixed):
        opt = _run(
            create_study(
                cls(MIXED, seed=0, device="cuda", n_init=6, num_restarts=2, raw_samples=64)
            ),
            7,
        )
        assert opt.optimizer.model.train_inputs[0].device.type == "cuda"
