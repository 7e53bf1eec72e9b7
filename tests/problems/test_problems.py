"""Benchmark problems against the check values of shared/specs/benchmarks.md."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from bodi.problems import (
    PROBLEMS,
    Problem,
    ackley53,
    frb_maxsat,
    frb_wcnf,
    get_problem,
    labs,
    maxsat,
    maxsat60,
    pest,
    planted_mixed,
    random_maxsat,
    read_wcnf,
    shifted,
    write_wcnf,
)
from bodi.problems.labs import KNOWN_OPTIMA, OPTIMAL_RUN_LENGTHS
from bodi.problems.maxsat import WCNF, maxsat_problem, random_wcnf
from bodi.problems.shifted import Shift
from bodi.space import DTYPE

REPO_ROOT = Path(__file__).resolve().parents[2]
WCNF_FILE = REPO_ROOT / ".." / "shared" / "data" / "maxsat" / "frb10-6-4.wcnf"

needs_wcnf = pytest.mark.skipif(not WCNF_FILE.is_file(), reason=f"{WCNF_FILE} not present")


def gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def run_lengths_to_bits(runs: str) -> list[int]:
    bits, value = [], 0
    for run in runs.split():
        bits += [value] * int(run)
        value = 1 - value
    return bits


# ---------------------------------------------------------------------------------------- LABS
def reference_merit(bits: np.ndarray) -> float:
    s = 2 * bits.astype(np.int64) - 1
    n = len(s)
    energy = sum(int(np.dot(s[: n - k], s[k:])) ** 2 for k in range(1, n))
    return n * n / (2 * energy)


def test_labs50_optimum_at_spec_sequence():
    problem = labs(50)
    bits = run_lengths_to_bits("2 1 5 1 3 1 3 1 1 2 2 4 1 1 2 2 4 1 1 4 1 1 4 2")
    assert len(bits) == 50
    value = float(problem.evaluate_encoded(torch.tensor([bits], dtype=DTYPE))[0])
    assert round(value, 4) == 8.1699
    assert problem.name == "labs50" and problem.direction == "maximize"
    assert problem.space.dim == 50 and len(problem.space.binary_dims) == 50
    assert [int(problem.optimal_params[f"x{i + 1}"]) for i in range(50)] == bits
    assert problem(problem.optimal_params) == pytest.approx(value, abs=1e-12)
    assert problem.optimal_value == pytest.approx(value, abs=1e-12)


@pytest.mark.parametrize("n", sorted(KNOWN_OPTIMA))
def test_labs_known_optima(n):
    from botorch.test_functions.synthetic import Labs

    problem = labs(n)
    assert round(problem.optimal_value, 3) == KNOWN_OPTIMA[n]
    # BoTorch's optimizers reach the published value too
    botorch_opt = Labs(dim=n).optimizers.to(DTYPE)
    assert round(float(problem.evaluate_encoded(botorch_opt)[0]), 3) == KNOWN_OPTIMA[n]
    assert problem(problem.optimal_params) == pytest.approx(problem.optimal_value, abs=1e-12)
    assert len(run_lengths_to_bits(" ".join(OPTIMAL_RUN_LENGTHS[n]))) == n


@pytest.mark.parametrize("n", [2, 7, 33, 50])
def test_labs_matches_reference_on_random_points(n):
    problem = labs(n)
    X = problem.space.sample(16, gen(n))
    values = problem.evaluate_encoded(X)
    assert values.dtype == DTYPE and values.shape == (16,)
    expected = [reference_merit(row.numpy().astype(int)) for row in X]
    assert torch.allclose(values, torch.tensor(expected, dtype=DTYPE), rtol=1e-12)
    assert n not in KNOWN_OPTIMA or bool((values <= problem.optimal_value).all())


def test_labs_rejects_short_sequences():
    with pytest.raises(ValueError, match="n >= 2"):
        labs(1)


# -------------------------------------------------------------------------------------- MaxSAT
def naive_maxsat(instance: WCNF, weights: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
    out = []
    for row in X.tolist():
        total = 0.0
        for w, clause in zip(weights.tolist(), instance.clauses, strict=True):
            if any((row[abs(lit) - 1] == 1.0) == (lit > 0) for lit in clause):
                total += w
        out.append(total)
    return torch.tensor(out, dtype=DTYPE)


def independent_set(n_vars: int, edges: set[tuple[int, int]], groups: list[list[int]]):
    """Exact backtracking: one vertex per group, pairwise non-adjacent."""
    chosen: list[int] = []

    def extend(g: int) -> bool:
        if g == len(groups):
            return True
        for v in groups[g]:
            if all((min(v, u), max(v, u)) not in edges for u in chosen):
                chosen.append(v)
                if extend(g + 1):
                    return True
                chosen.pop()
        return False

    return list(chosen) if extend(0) else None


@needs_wcnf
def test_maxsat60_file_structure_and_raw_weights():
    n_vars, weights, clauses = read_wcnf(WCNF_FILE)
    assert n_vars == 60 and len(clauses) == 698 and len(weights) == 698
    units = [(w, c) for w, c in zip(weights.tolist(), clauses, strict=True) if len(c) == 1]
    pairs = [(w, c) for w, c in zip(weights.tolist(), clauses, strict=True) if len(c) == 2]
    assert len(units) == 60 and all(w == 1 and c[0] > 0 for w, c in units)
    assert sorted(c[0] for _, c in units) == list(range(1, 61))
    assert len(pairs) == 638 and all(w == 61 and c[0] < 0 and c[1] < 0 for w, c in pairs)


@needs_wcnf
def test_maxsat60_zscored_check_values():
    problem = maxsat60(WCNF_FILE)
    assert problem.name == "maxsat60" and problem.direction == "maximize"
    X = torch.stack([torch.zeros(60, dtype=DTYPE), torch.ones(60, dtype=DTYPE)])
    f0, f1 = problem.evaluate_encoded(X).tolist()
    # Exactly, f(0) = 195.652754 and f(1) = -195.652754; the spec's 195.6527 / -195.6528 are
    # this value computed in float32 (195.65274 / -195.65276), so compare within 1e-4.
    assert abs(f0 - 195.6527) < 1e-4 and abs(f1 - -195.6528) < 1e-4
    w32 = read_wcnf(WCNF_FILE).weights.float()
    z32 = (w32 - w32.mean()) / w32.std(unbiased=False)
    assert round(float(z32[60:].sum()), 4) == 195.6527
    assert round(float(z32[:60].sum()), 4) == -195.6528
    assert problem.optimal_value == pytest.approx(f0, abs=1e-9)
    assert problem(problem.optimal_params) == pytest.approx(f0, abs=1e-9)
    assert not any(problem.optimal_params.values())  # the all-zeros point
    # the global maximum: no random point or single flip beats it
    R = torch.cat([problem.space.sample(500, gen(1)), torch.eye(60, dtype=DTYPE)])
    assert bool((problem.evaluate_encoded(R) <= f0 + 1e-9).all())


@needs_wcnf
def test_maxsat60_raw_optimum_38928():
    instance = read_wcnf(WCNF_FILE)
    edges = {tuple(sorted((-a, -b))) for a, b in (c for c in instance.clauses if len(c) == 2)}
    groups = [list(range(6 * g + 1, 6 * g + 7)) for g in range(10)]
    # each group of 6 variables is a clique of 2-clauses, so at most one per group (<= 10)
    for group in groups:
        assert all((a, b) in edges for a in group for b in group if a < b)
    found = independent_set(60, edges, groups)
    assert found is not None and len(found) == 10
    problem = maxsat(WCNF_FILE, weighting="raw")
    assert problem.name == "frb10-6-4-raw"
    x = torch.zeros(1, 60, dtype=DTYPE)
    x[0, [v - 1 for v in found]] = 1.0
    assert float(problem.evaluate_encoded(x)[0]) == 38928.0 == 638 * 61 + 10
    # 38928 is the maximum: satisfying all 2-clauses means an independent set (<= 10 unit
    # clauses); violating any 2-clause loses 61 > 60. Random points and flips stay below.
    R = torch.cat([problem.space.sample(500, gen(2)), (x - torch.eye(60, dtype=DTYPE)).abs()])
    assert float(problem.evaluate_encoded(R).max()) <= 38928.0
    raw60 = maxsat60(WCNF_FILE, weighting="raw")
    assert raw60.name == "maxsat60-raw" and raw60.optimal_value == 38928.0
    assert raw60(raw60.optimal_params) == 38928.0


@needs_wcnf
def test_maxsat60_matches_naive_evaluation():
    instance = read_wcnf(WCNF_FILE)
    problem = maxsat60(WCNF_FILE)
    X = problem.space.sample(20, gen(3))
    w = (instance.weights - instance.weights.mean()) / instance.weights.std(unbiased=False)
    assert torch.allclose(problem.evaluate_encoded(X), naive_maxsat(instance, w, X), atol=1e-9)


@needs_wcnf
def test_maxsat60_path_resolution(monkeypatch, tmp_path):
    monkeypatch.setenv("BODI_MAXSAT60", str(WCNF_FILE))
    assert maxsat60().space.dim == 60
    monkeypatch.setenv("BODI_MAXSAT60", str(tmp_path / "nowhere.wcnf"))
    with pytest.raises(FileNotFoundError) as err:
        maxsat60()
    message = str(err.value)
    for part in ("frb10-6-4.wcnf", "MaxSAT Evaluation 2018", "weighted crafted", "--wcnf PATH"):
        assert part in message
    monkeypatch.delenv("BODI_MAXSAT60")
    monkeypatch.chdir(tmp_path)  # the copy shipped with the package, from anywhere
    assert maxsat60().space.dim == 60
    with pytest.raises(FileNotFoundError, match="--wcnf PATH"):
        maxsat60(tmp_path / "missing.wcnf")


@needs_wcnf
def test_the_shipped_instance_is_the_shared_file_unchanged():
    shipped = REPO_ROOT / "bodi" / "problems" / "data" / "frb10-6-4.wcnf"
    assert shipped.read_bytes() == WCNF_FILE.read_bytes()


def test_maxsat60_rejects_another_instance(tmp_path):
    path = write_wcnf(tmp_path / "other.wcnf", *random_wcnf(60, 100, seed=1))
    with pytest.raises(ValueError, match=r"is not frb10-6-4\.wcnf"):
        maxsat60(path)


MALFORMED = [
    ("", "empty file"),
    ("c only a comment\n\n", "empty file"),
    ("1 1 0\n", "line 1: missing header"),
    ("c x\np cnf 3 1\n1 1 0\n", "line 2: garbled header"),
    ("p wcnf three 1 5\n1 1 0\n", "line 1: garbled header"),
    ("p wcnf 3\n1 1 0\n", "line 1: garbled header"),
    ("p wcnf 3 2 9\n1 1 0\n2 1 4 0\n", "line 3: literal 4 out of range"),
    ("p wcnf 3 2 9\n1 1 0\n2 1 -5 0\n", "line 3: literal -5 out of range"),
    ("p wcnf 3 1 9\n1 1 2\n", "line 2: clause is not terminated by 0"),
    ("p wcnf 3 1 9\nc\n1 1 x 0\n", "line 3: non-numeric literal 'x'"),
    ("p wcnf 3 1 9\n1 1 2.5 0\n", "line 2: non-numeric literal '2.5'"),
    ("p wcnf 3 1 9\nw 1 0\n", "line 2: non-numeric clause weight 'w'"),
    ("p wcnf 3 1 9\n-2 1 0\n", "line 2: clause weight must be a positive number"),
    ("p wcnf 3 1 9\n1 1 0 2 0\n", "line 2: 0 inside the clause"),
    ("p wcnf 3 2 9\n1 1 0\n", "declares 2 clauses but the file has 1"),
    ("p wcnf 3 1 9\np wcnf 3 1 9\n1 1 0\n", "line 2: second header"),
]


@pytest.mark.parametrize(("text", "message"), MALFORMED)
def test_wcnf_parser_errors(tmp_path, text, message):
    path = tmp_path / "bad.wcnf"
    path.write_text(text)
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        read_wcnf(path)


def test_wcnf_parser_accepts_comments_blank_lines_and_no_top(tmp_path):
    path = tmp_path / "ok.wcnf"
    path.write_text("c hello\n\np wcnf 3 3\nc mid\n2 1 -2 0\n\n1.5 3 0\n4 -1 1 0\n")
    n_vars, weights, clauses = read_wcnf(path)
    assert n_vars == 3 and weights.tolist() == [2.0, 1.5, 4.0]
    assert clauses == [(1, -2), (3,), (-1, 1)]
    with pytest.raises(ValueError, match="cannot read"):
        read_wcnf(tmp_path / "missing.wcnf")


def test_maxsat_edge_cases_match_naive():
    # duplicate literals, tautologies, long clauses
    instance = WCNF(4, torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0], dtype=DTYPE),
                    [(1, 1), (2, -2), (-1, -2, -3, -4), (1, 2, 3, 4), (-3,)])
    problem = maxsat_problem(instance, "tiny", "raw")
    grid = torch.tensor([[(i >> j) & 1 for j in range(4)] for i in range(16)], dtype=DTYPE)
    assert torch.equal(problem.evaluate_encoded(grid),
                       naive_maxsat(instance, instance.weights, grid))


def test_random_maxsat_deterministic_and_round_trip(tmp_path):
    a, b, c = random_wcnf(30, seed=5), random_wcnf(30, seed=5), random_wcnf(30, seed=6)
    assert a.clauses == b.clauses and torch.equal(a.weights, b.weights)
    assert a.clauses != c.clauses
    assert len(a.clauses) == 300 and all(1 <= len(cl) <= 3 for cl in a.clauses)
    path = write_wcnf(tmp_path / "r.wcnf", *a, comment="random\ninstance")
    n_vars, weights, clauses = read_wcnf(path)
    assert n_vars == 30 and clauses == a.clauses and torch.equal(weights, a.weights)
    p1, p2 = random_maxsat(30, seed=5), maxsat(path)
    assert p1.name == "maxsat-random30" and p2.name == "r"
    X = p1.space.sample(64, gen(4))
    assert torch.equal(p1.evaluate_encoded(X), p2.evaluate_encoded(X))
    assert torch.equal(p1.evaluate_encoded(X), random_maxsat(30, seed=5).evaluate_encoded(X))
    assert not torch.equal(p1.evaluate_encoded(X), random_maxsat(30, seed=6).evaluate_encoded(X))
    raw = random_maxsat(30, seed=5, weighting="raw")
    w = a.weights
    expected = naive_maxsat(a, (w - w.mean()) / w.std(unbiased=False), X)
    assert torch.allclose(p1.evaluate_encoded(X), expected, atol=1e-9)
    assert torch.equal(raw.evaluate_encoded(X), naive_maxsat(a, w, X))
    # float weights round-trip exactly too
    fw = WCNF(2, torch.tensor([0.1, 2.5, 1 / 3], dtype=DTYPE), [(1,), (-2,), (1, 2)])
    back = read_wcnf(write_wcnf(tmp_path / "f.wcnf", *fw))
    assert torch.equal(back.weights, fw.weights)
    with pytest.raises(ValueError, match="weighting"):
        maxsat(path, weighting="zscore")


# ------------------------------------------------------------------------------- Pest Control
def reference_pest(x: list[int], seed: int = 0) -> float:
    """The spec's loop, verbatim (over ``len(x)`` stages: 25 in the spec)."""
    price = {1: 1.0, 2: 0.8, 3: 0.7, 4: 0.5}
    discount = {1: 0.2, 2: 0.3, 3: 0.3, 4: 0.0}
    beta = {1: 2.0 / 7.0, 2: 3.0 / 7.0, 3: 3.0 / 7.0, 4: 5.0 / 7.0}
    tolerance = {1: 1.0 / 7.0, 2: 2.5 / 7.0, 3: 2.0 / 7.0, 4: 0.5 / 7.0}
    xs = np.array(x)
    p = np.random.RandomState(seed).beta(1.0, 30.0, size=100)
    paid = above = 0.0
    stages = len(x)
    for t in range(stages):
        spread = np.random.RandomState(seed).beta(1.0, 17.0 / 3.0, size=100)
        k = int(xs[t])
        if k > 0:
            control = np.random.RandomState(seed).beta(1.0, beta[k], size=100)
            p_next = (1.0 - control) * p
            beta[k] += tolerance[k] / float(stages)
            paid += price[k] * (1.0 - discount[k] / float(stages) * float(np.sum(xs == k)))
        else:
            p_next = spread * (1 - p) + p
        above += np.sum(p > 0.1) / 100.0
        p = p_next
    return paid + above


def test_pest_check_values():
    problem = pest()
    assert problem.name == "pest" and problem.direction == "minimize"
    assert problem.space.dim == 25
    assert all(p.choices == (0, 1, 2, 3, 4) for p in problem.space.parameters)
    points = [[0] * 25, [1] * 25, [3] * 25, [4] * 25, [t % 5 for t in range(25)]]
    values = problem.evaluate_encoded(torch.tensor(points, dtype=DTYPE))
    assert [round(v, 2) for v in values.tolist()] == [22.27, 20.08, 12.32, 12.57, 17.92]
    assert problem({f"x{t + 1}": 3 for t in range(25)}) == pytest.approx(values[2].item())


def test_pest_vectorised_matches_reference_loop():
    problem = pest()
    X = problem.space.sample(40, gen(5))
    values = problem.evaluate_encoded(X)
    expected = [reference_pest([int(v) for v in row]) for row in X.tolist()]
    assert torch.allclose(values, torch.tensor(expected, dtype=DTYPE), atol=1e-10)
    other = pest(seed=3).evaluate_encoded(X[:3])
    assert torch.allclose(other, torch.tensor(
        [reference_pest([int(v) for v in row], seed=3) for row in X[:3].tolist()],
        dtype=DTYPE), atol=1e-10)


def test_pest_with_more_stages_follows_the_same_loop():
    problem = get_problem("pest50")
    assert problem.name == "pest50" and problem.space.dim == 50
    X = problem.space.sample(6, gen(7))
    expected = [reference_pest([int(v) for v in row]) for row in X.tolist()]
    assert torch.allclose(problem.evaluate_encoded(X), torch.tensor(expected, dtype=DTYPE),
                          atol=1e-10)
    published = pest().space.sample(5, gen(8))  # pest25 is the published pest
    assert torch.equal(pest(stages=25).evaluate_encoded(published),
                       pest().evaluate_encoded(published))
    assert get_problem("pest25").name == "pest"
    assert get_problem("pest50-shifted").space.dim == 50
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="stages"):
            pest(stages=bad)


# ------------------------------------------------------------------------------------ Ackley53
def test_ackley53_optimum_and_values():
    problem = ackley53()
    assert problem.name == "ackley53" and problem.direction == "minimize"
    assert len(problem.space.binary_dims) == 50 and len(problem.space.continuous_dims) == 3
    assert problem.optimal_value == 0.0
    assert abs(problem(problem.optimal_params)) < 1e-12
    x = torch.cat([torch.zeros(50), torch.full((3,), 0.5)]).to(DTYPE)
    assert abs(float(problem.evaluate_encoded(x.unsqueeze(0))[0])) < 1e-12
    X = problem.space.sample(50, gen(6))
    values = problem.evaluate_encoded(X)
    z = torch.cat([X[:, :50], 2 * X[:, 50:] - 1], dim=1)
    expected = (20 + math.e - 20 * torch.exp(-0.2 * torch.sqrt((z**2).mean(1)))
                - torch.exp(torch.cos(2 * math.pi * z).mean(1)))
    assert torch.allclose(values, expected, atol=1e-12) and bool((values > 0.1).all())
    noisy = ackley53(noise=True).evaluate_encoded(X)
    assert bool(((noisy - values) >= 0).all()) and bool(((noisy - values) < 1e-6).all())


def test_ackley_with_100_binary_parameters_and_its_shifted_twin():
    problem = get_problem("ackley103")
    assert problem.name == "ackley103" and problem.optimal_value == 0.0
    assert len(problem.space.binary_dims) == 100 and len(problem.space.continuous_dims) == 3
    assert abs(problem(problem.optimal_params)) < 1e-12
    X = problem.space.sample(20, gen(7))
    z = torch.cat([X[:, :100], 2 * X[:, 100:] - 1], dim=1)
    expected = (20 + math.e - 20 * torch.exp(-0.2 * torch.sqrt((z**2).mean(1)))
                - torch.exp(torch.cos(2 * math.pi * z).mean(1)))
    assert torch.allclose(problem.evaluate_encoded(X), expected, atol=1e-12)
    twin = get_problem("ackley103-shifted")
    assert abs(twin(twin.optimal_params)) < 1e-12
    assert twin.optimal_params != problem.optimal_params
    with pytest.raises(ValueError, match="ackley"):
        get_problem("ackley3")



def test_categorical_ackley_values_optimum_and_shifted_twin():
    problem = get_problem("ackley-categorical20")
    assert problem.name == "ackley-categorical20" and problem.direction == "minimize"
    space = problem.space
    assert space.categorical_dims == list(range(20)) and set(space.cardinalities) == {11}
    assert abs(problem(problem.optimal_params)) < 1e-12
    X = space.sample(30, gen(3))
    z = -32.768 + 6.5536 * X
    expected = (20 + math.e - 20 * torch.exp(-0.2 * torch.sqrt((z**2).mean(1)))
                - torch.exp(torch.cos(2 * math.pi * z).mean(1)))
    assert torch.allclose(problem.evaluate_encoded(X), expected, atol=1e-9)
    assert (problem.evaluate_encoded(X) > 0).all()
    twin = get_problem("ackley-categorical20-shifted")
    assert abs(twin(twin.optimal_params)) < 1e-12 and twin.optimal_params != problem.optimal_params
    for bad in ("ackley-categorical0", "ackley-categorical"):
        with pytest.raises(ValueError, match=r"ackley-categorical|unknown problem"):
            get_problem(bad)


# ------------------------------------------------------------------------------------ shifted
def shifted_problems() -> list[Problem]:
    problems = [labs(50), pest(), ackley53(), planted_mixed()]
    if WCNF_FILE.is_file():
        problems.append(maxsat60(WCNF_FILE))
    return problems


@pytest.mark.parametrize("problem", shifted_problems(), ids=lambda p: p.name)
def test_shifted_problem(problem):
    moved = shifted(problem)
    shift = Shift.draw(problem.space, 0)
    assert moved.name == problem.name + "-shifted"
    assert moved.direction == problem.direction and moved.optimal_value == problem.optimal_value
    X = problem.space.sample(32, gen(7))
    Z = shift.apply(X)
    assert bool(problem.space.contains(Z).all())
    assert torch.equal(shift.invert(Z), X)
    assert torch.allclose(moved.evaluate_encoded(Z), problem.evaluate_encoded(X), atol=1e-12)
    assert not torch.equal(Z[:, problem.space.discrete_dims], X[:, problem.space.discrete_dims])
    assert torch.equal(Z[:, problem.space.ordinal_dims], X[:, problem.space.ordinal_dims])
    if problem.optimal_params is not None:
        assert moved.optimal_params != problem.optimal_params
        x_opt = problem.space.encode(problem.optimal_params)
        assert moved.space.encode(moved.optimal_params).equal(shift.apply(x_opt))
        assert moved(moved.optimal_params) == pytest.approx(
            problem(problem.optimal_params), abs=1e-12)
        assert moved(problem.optimal_params) != pytest.approx(problem.optimal_value)
    else:  # pest: its best check point, all 3, moves too
        x3 = torch.full((1, 25), 3.0, dtype=DTYPE)
        assert round(float(moved.evaluate_encoded(shift.apply(x3))[0]), 2) == 12.32
    # a different shift seed gives a different shift
    assert not torch.equal(shifted(problem, seed=1).evaluate_encoded(Z),
                           moved.evaluate_encoded(Z))


# ---------------------------------------------------------------------------------------- SVM
def test_svm53_default_data():
    pytest.importorskip("sklearn")
    from bodi.problems.svm import hyperparameters, load_default_data, svm53

    problem = svm53()
    assert problem.name == "svm53" and problem.direction == "minimize"
    assert len(problem.space.binary_dims) == 50 and len(problem.space.continuous_dims) == 3
    data = load_default_data(0)
    assert data.X_train.shape == (898, 50) and data.X_test.shape == (899, 50)
    assert data.X_train.min() >= -1 and data.X_train.max() <= 1
    X = torch.cat([problem.space.sample(3, gen(8)), torch.zeros(1, 53, dtype=DTYPE)])
    values = problem.evaluate_encoded(X)
    assert bool(torch.isfinite(values).all()) and bool((values > 0).all())
    mean_rmse = math.sqrt(float(np.mean((data.y_test - data.y_train.mean()) ** 2)))
    assert float(values[-1]) == pytest.approx(mean_rmse)
    assert float(values[:3].min()) < mean_rmse  # features help
    assert hyperparameters([0, 0, 0]) == pytest.approx((0.01, 0.01, 0.002))
    assert hyperparameters([1, 1, 1]) == pytest.approx((1.0, 100.0, 0.2))


def test_svm53_csv_protocol(tmp_path):
    pytest.importorskip("sklearn")
    from bodi.problems.svm import load_csv_data, svm53

    rng = np.random.RandomState(1)
    n, d = 120, 60
    features = rng.rand(n, d)
    features[:, 5] = 2.0  # a constant column is dropped
    target = features[:, :3].sum(1) + 0.1 * rng.rand(n)
    header = ",".join(["patientId", *(f"value{i}" for i in range(d)), "reference"])
    rows = np.column_stack([np.arange(n) // 10, features, target])
    path = tmp_path / "slice.csv"
    np.savetxt(path, rows, delimiter=",", header=header, comments="")
    data = load_csv_data(str(path), 0)
    assert data.X_train.shape == (60, 50) and data.X_test.shape == (60, 50)
    assert 5 not in data.columns  # the constant feature column is dropped
    assert sorted(data.columns[:3]) == [0, 1, 2]  # the informative features come first
    value = svm53(path).evaluate_encoded(torch.cat([torch.ones(50), torch.full((3,), 0.5)])
                                         .to(DTYPE).unsqueeze(0))
    assert bool(torch.isfinite(value).all())
    with pytest.raises(FileNotFoundError, match="slice"):
        svm53(tmp_path / "missing.csv")


# --------------------------------------------------------------- maxsat-frb<N>: frb at any size
def _rc2_optimum(instance: WCNF) -> tuple[float, list[int]]:
    """The exact raw optimum of an frb instance by python-sat's RC2. Its edge clauses weigh
    ``n + 1``, more than all ``n`` unit clauses together, so an optimum satisfies every edge
    and they may be given to the solver as hard clauses (which makes it solve in 0.1 s)."""
    pysat = pytest.importorskip("pysat.examples.rc2", reason="python-sat (the dev extra)")
    from pysat import formula as pysat_formula

    n_vars, weights, clauses = instance
    formula = pysat_formula.WCNF()
    for clause, weight in zip(clauses, weights.tolist(), strict=True):
        if weight > n_vars:
            formula.append(list(clause))
        else:
            formula.append(list(clause), weight=int(weight))
    with pysat.RC2(formula) as solver:
        model = solver.compute()
    return float(weights.sum()) - solver.cost, [int(lit > 0) for lit in model[:n_vars]]


@pytest.mark.parametrize("n", [126])
def test_frb_instances_have_the_structure_of_frb10_6_4_and_the_optimum_rc2_finds(n):
    (n_vars, weights, clauses), independent_set = frb_wcnf(n, seed=0)
    units = [c for c in clauses if len(c) == 1]
    edges = [c for c in clauses if len(c) == 2]
    assert n_vars == n and sorted(c[0] for c in units) == list(range(1, n + 1))
    assert all(a < 0 and b < 0 for a, b in edges)
    assert set(weights.tolist()) == {1.0, float(n + 1)}
    groups = {(v - 1) // 6 for v in independent_set}
    assert len(independent_set) == len(groups) == n // 6
    cross = len(edges) - (n // 6) * 15  # edges between groups, against frb10-6-4's density
    allowed = (n * (n - 1) // 2 - (n // 6) * 15) - (n // 6) * (n // 6 - 1) // 2
    assert abs(cross / allowed - 488 / 1575) < 0.02
    raw = frb_maxsat(n, weighting="raw")
    optimum, model = _rc2_optimum(frb_wcnf(n, seed=0).instance)
    assert raw.optimal_value == optimum
    assert raw.evaluate_encoded(torch.tensor([model], dtype=DTYPE)).item() == optimum


def test_frb_literature_weighting_has_its_optimum_at_all_zeros_and_the_twin_moves_it():
    problem = get_problem("maxsat-frb126")
    assert problem.space.dim == 126 and problem.direction == "maximize"
    zeros = torch.zeros(1, 126, dtype=DTYPE)
    assert problem.evaluate_encoded(zeros).item() == problem.optimal_value
    instance = frb_wcnf(126).instance
    w = (instance.weights - instance.weights.mean()) / instance.weights.std(unbiased=False)
    assert problem.optimal_value == pytest.approx(float(w[w > 0].sum()))
    X = problem.space.sample(500, generator=gen(0))
    assert (problem.evaluate_encoded(X) < problem.optimal_value).all()
    twin = get_problem("maxsat-frb126-shifted")
    assert twin(twin.optimal_params) == pytest.approx(problem.optimal_value)
    assert twin.evaluate_encoded(zeros).item() < problem.optimal_value - 100
    assert torch.equal(frb_wcnf(126, seed=0).instance.weights, instance.weights)
    assert frb_wcnf(126, seed=1).instance.clauses != instance.clauses


@pytest.mark.parametrize(("n", "match"), [(125, "multiple of the group size"),
                                          (6, "integer >= 12"), (True, "integer")])
def test_frb_rejects_bad_sizes(n, match):
    with pytest.raises(ValueError, match=match):
        frb_wcnf(n)


# ----------------------------------------------------------------------------------- registry
@pytest.mark.parametrize(
    ("name", "dim", "direction"),
    [("labs50", 50, "maximize"), ("labs12", 12, "maximize"), ("pest", 25, "minimize"),
     ("ackley53", 53, "minimize"), ("svm53", 53, "minimize"),
     ("maxsat-random20", 20, "maximize"), ("planted-binary8", 8, "minimize"),
     ("labs50-shifted", 50, "maximize"), ("pest-shifted", 25, "minimize")],
)
def test_registry_resolves(name, dim, direction):
    problem = get_problem(name)
    assert problem.name == name and problem.space.dim == dim and problem.direction == direction


@needs_wcnf
def test_registry_maxsat60():
    assert get_problem("maxsat60", wcnf=WCNF_FILE).name == "maxsat60"
    moved = get_problem("maxsat60-shifted", wcnf=WCNF_FILE)
    assert moved.name == "maxsat60-shifted"
    assert moved(moved.optimal_params) == pytest.approx(195.6527536, abs=1e-6)


def test_registry_rejects_unknown_names():
    for bad in ("labs", "labs1", "nope", "maxsat61", "pest-shifted-shifted", "ackley"):
        with pytest.raises(ValueError, match="unknown problem"):
            get_problem(bad)
    with pytest.raises(ValueError) as err:
        get_problem("nope")
    for name in ("labs50", "maxsat60", "pest", "ackley53", "svm53", "labs<N>", "-shifted"):
        assert name in str(err.value)
    assert {"labs50", "maxsat60", "pest", "ackley53", "svm53"} <= set(PROBLEMS)


def test_at_most_k_variant_constrains_the_space_and_keeps_the_objective():
    from bodi.problems.registry import get_problem

    base, limited = get_problem("labs20"), get_problem("labs20-shifted-atmost5")
    assert limited.name == "labs20-shifted-atmost5" and limited.optimal_value is None
    X = limited.space.sample(50, generator=torch.Generator().manual_seed(0))
    assert (X.sum(-1) <= 5).all()
    shifted_labs = get_problem("labs20-shifted")
    assert torch.equal(limited.evaluate_encoded(X), shifted_labs.evaluate_encoded(X))
    assert not base.space.constraints
    with pytest.raises(ValueError, match=r"K must be in 0 \.\. 19"):
        get_problem("labs20-atmost20")
    with pytest.raises(ValueError, match="no binary parameter"):
        get_problem("pest-atmost3")


def test_a_shifted_family_has_an_instance_per_seed():
    from bodi.problems import get_problem

    default = get_problem("pest-shifted")
    assert get_problem("pest-shifted-i0").name == default.name == "pest-shifted"
    other = get_problem("pest-shifted-i1001")
    assert other.name == "pest-shifted-i1001"
    X = default.space.sample(4, torch.Generator().manual_seed(0))
    assert default.evaluate_encoded(X).tolist() != other.evaluate_encoded(X).tolist()
    labs = get_problem("labs40-shifted-i7")
    assert labs(labs.optimal_params) == labs.optimal_value
    assert get_problem("labs40-shifted-i7-atmost30").name == "labs40-shifted-i7-atmost30"
