"""bodi.space: parameter validation, the tensor encoding, sampling and the JSON format."""

from __future__ import annotations

import json
import math
import os
import re
import tempfile

import pytest
import torch
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from bodi.space import Binary, Categorical, Continuous, Integer, SearchSpace

FUZZ = settings(max_examples=150, deadline=None, derandomize=True)
ROUND_TRIP = settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)

EXAMPLE = {
    "parameters": [
        {"name": "b0", "type": "binary"},
        {"name": "c", "type": "categorical", "choices": ["x", "y"]},
        {"name": "u", "type": "continuous", "low": 0.0, "high": 1.0, "log": False},
        {"name": "k", "type": "integer", "low": 1, "high": 5},
    ]
}


def _mixed_space() -> SearchSpace:
    return SearchSpace(
        [
            Binary("b0"),
            Categorical("c", ["x", "y", "z"]),
            Continuous("u", 0.0, 1.0),
            Integer("k", 1, 5),
            Binary("b1"),
            Continuous("lr", 1e-4, 1e-1, log=True),
        ]
    )


def _names(name: str) -> str:
    return re.escape(repr(name))


# --------------------------------------------------------------------------- validation
NAN, INF = math.nan, math.inf

INVALID_PARAMETERS = [
    # (id, constructor, regex the ValueError message must match)
    ("duplicate-names", lambda: SearchSpace([Binary("p"), Integer("p", 0, 3)]), _names("p")),
    (
        "duplicate-names-mixed",
        lambda: SearchSpace([Binary("a"), Binary("p"), Binary("p")]),
        _names("p"),
    ),
    ("no-choices", lambda: Categorical("p", []), _names("p")),
    ("one-choice", lambda: Categorical("p", ["a"]), _names("p")),
    ("duplicate-str-choices", lambda: Categorical("p", ["a", "b", "a"]), _names("p")),
    ("duplicate-int-choices", lambda: Categorical("p", [1, 2, 1]), _names("p")),
    ("duplicate-float-choices", lambda: Categorical("p", [0.0, -0.0]), _names("p")),
    ("choices-not-a-list", lambda: Categorical("p", "ab"), _names("p")),
    ("choice-not-a-value", lambda: Categorical("p", ["a", None]), _names("p")),
    ("choice-nan", lambda: Categorical("p", [1.0, NAN]), _names("p")),
    ("continuous-low-eq-high", lambda: Continuous("p", 1.0, 1.0), _names("p")),
    ("continuous-low-gt-high", lambda: Continuous("p", 2.0, 1.0), _names("p")),
    ("integer-low-eq-high", lambda: Integer("p", 3, 3), _names("p")),
    ("integer-low-gt-high", lambda: Integer("p", 5, 1), _names("p")),
    ("continuous-low-nan", lambda: Continuous("p", NAN, 1.0), _names("p")),
    ("continuous-high-nan", lambda: Continuous("p", 0.0, NAN), _names("p")),
    ("continuous-high-inf", lambda: Continuous("p", 0.0, INF), _names("p")),
    ("continuous-low-minus-inf", lambda: Continuous("p", -INF, 0.0), _names("p")),
    ("integer-low-nan", lambda: Integer("p", NAN, 3), _names("p")),
    ("integer-high-inf", lambda: Integer("p", 0, INF), _names("p")),
    ("continuous-bound-not-a-number", lambda: Continuous("p", "0", 1.0), _names("p")),
    ("continuous-bound-bool", lambda: Continuous("p", False, 1.0), _names("p")),
    ("log-low-zero", lambda: Continuous("p", 0.0, 1.0, log=True), _names("p")),
    ("log-low-negative", lambda: Continuous("p", -1.0, 1.0, log=True), _names("p")),
    ("log-not-bool", lambda: Continuous("p", 1.0, 2.0, log="yes"), _names("p")),
    ("integer-low-fraction", lambda: Integer("p", 0.5, 3), _names("p")),
    ("integer-high-fraction", lambda: Integer("p", 0, 2.5), _names("p")),
    ("integer-bound-str", lambda: Integer("p", "0", 3), _names("p")),
    ("integer-bound-bool", lambda: Integer("p", True, 3), _names("p")),
    ("empty-name", lambda: Binary(""), "name"),
    ("blank-name", lambda: Binary("   "), "name"),
    ("non-str-name", lambda: Binary(3), "name"),
    ("empty-space", lambda: SearchSpace([]), "at least one parameter"),
    ("non-parameter-str", lambda: SearchSpace([Binary("a"), "b"]), "'b' is not a parameter"),
    ("non-parameter-int", lambda: SearchSpace([1]), "1 is not a parameter"),
    (
        "non-parameter-dict",
        lambda: SearchSpace([{"name": "a", "type": "binary"}]),
        "is not a parameter",
    ),
    ("parameters-mapping", lambda: SearchSpace({"a": Binary("a")}), "must be a list"),
]


@pytest.mark.parametrize(
    ("build", "message"),
    [case[1:] for case in INVALID_PARAMETERS],
    ids=[case[0] for case in INVALID_PARAMETERS],
)
def test_invalid_definitions_raise_value_error_naming_the_parameter(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_valid_definitions_normalise_their_bounds():
    assert Integer("k", 1.0, 4.0) == Integer("k", 1, 4)
    assert type(Integer("k", 1.0, 4.0).low) is int
    u = Continuous("u", 0, 2)
    assert (type(u.low), type(u.high)) == (float, float)
    assert Categorical("c", ("a", 1, True, 1.0)).cardinality == 4  # distinct by type


# ---------------------------------------------------------------------- round trip
_NAME = st.text(min_size=1, max_size=8).filter(lambda s: s.strip() != "")
_CHOICE = st.one_of(
    st.text(max_size=5),
    st.integers(-1000, 1000),
    st.booleans(),
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
)


def _choice_key(choice):
    return (type(choice).__name__, choice)


@st.composite
def _parameter(draw, name: str):
    """A random parameter called ``name`` of any of the four types (continuous maybe log)."""
    kind = draw(st.sampled_from(["binary", "categorical", "continuous", "log", "integer"]))
    if kind == "binary":
        return Binary(name)
    if kind == "categorical":
        return Categorical(
            name, draw(st.lists(_CHOICE, min_size=2, max_size=6, unique_by=_choice_key))
        )
    if kind == "integer":
        low = draw(st.integers(-1000, 1000))
        return Integer(name, low, low + draw(st.integers(1, 1000)))
    if kind == "log":
        low = draw(st.floats(1e-6, 1e3))
        return Continuous(name, low, low * draw(st.floats(1.01, 1e6)), log=True)
    low = draw(st.floats(-1e6, 1e6))
    high = low + draw(st.floats(1e-3, 1e6))
    assume(low < high)
    return Continuous(name, low, high)


def _value_for(parameter):
    if isinstance(parameter, Binary):
        return st.booleans()
    if isinstance(parameter, Categorical):
        return st.sampled_from(parameter.choices)
    if isinstance(parameter, Integer):
        return st.integers(parameter.low, parameter.high)
    low, high = parameter.low, parameter.high
    return st.floats(low, high) | st.sampled_from([low, high])


@st.composite
def spaces_and_configs(draw, max_params: int = 6, max_configs: int = 4):
    """A random space of up to ``max_params`` parameters and 1..max_configs valid configs."""
    names = draw(st.lists(_NAME, min_size=1, max_size=max_params, unique=True))
    space = SearchSpace([draw(_parameter(name)) for name in names])
    configs = [
        {p.name: draw(_value_for(p)) for p in space.parameters}
        for _ in range(draw(st.integers(1, max_configs)))
    ]
    return space, configs


def _assert_same_config(space: SearchSpace, decoded: dict, config: dict) -> None:
    assert list(decoded) == space.names
    for parameter in space.parameters:
        got, want = decoded[parameter.name], config[parameter.name]
        if isinstance(parameter, Continuous):
            assert type(got) is float
            assert parameter.low <= got <= parameter.high
            if parameter.log:
                assert math.isclose(got, want, rel_tol=1e-9), (parameter, got, want)
            else:
                scale = max(abs(parameter.low), abs(parameter.high))
                assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9 * scale), (
                    parameter,
                    got,
                    want,
                )
        else:
            # Exact value *and* type: 1, 1.0 and True are different categorical choices.
            assert type(got) is type(want), (parameter, got, want)
            assert got == want, (parameter, got, want)


@ROUND_TRIP
@given(spaces_and_configs())
def test_decode_inverts_encode(space_and_configs):
    space, configs = space_and_configs
    X = space.encode(configs)
    assert X.shape == (len(configs), space.dim)
    assert X.dtype == torch.float64
    assert space.contains(X).all()
    lower, upper = space.bounds
    assert X.ge(lower).all() and X.le(upper).all()
    decoded = space.decode(X)
    assert len(decoded) == len(configs)
    for got, want in zip(decoded, configs, strict=True):
        _assert_same_config(space, got, want)
    # A single dict encodes to one row; a 1-d tensor decodes as one row.
    assert torch.equal(space.encode(configs[0]), X[:1])
    assert space.decode(X[0]) == decoded[:1]


@pytest.mark.parametrize(
    ("parameter", "value", "encoded"),
    [
        (Binary("b"), True, 1.0),
        (Binary("b"), 0, 0.0),
        (Categorical("c", ["x", "y", "z"]), "z", 2.0),
        (Categorical("c", [1, 1.0, True]), 1.0, 1.0),
        (Categorical("c", [1, 1.0, True]), True, 2.0),
        (Categorical("c", [2, "a"]), 2.0, 0.0),  # numeric value matches an int choice
        (Continuous("u", -1.0, 3.0), 1.0, 0.5),
        (Continuous("u", 1.0, 100.0, log=True), 10.0, 0.5),
        (Integer("k", 1, 5), 3, 0.5),
        (Integer("k", 1, 5), 5.0, 1.0),
    ],
)
def test_encoding_of_single_values(parameter, value, encoded):
    assert parameter.encode(value) == pytest.approx(encoded, rel=1e-12)


def test_decode_snaps_and_clips_out_of_grid_values():
    space = SearchSpace(
        [
            Binary("b"),
            Categorical("c", ["x", "y", "z"]),
            Continuous("u", 0.0, 2.0),
            Integer("k", 0, 4),
        ]
    )
    (config,) = space.decode(torch.tensor([[0.7, 5.0, 1.5, 0.6]]))
    assert config == {"b": True, "c": "z", "u": 2.0, "k": 2}
    (config,) = space.decode(torch.tensor([[0.2, -3.0, -0.5, -1.0]]))
    assert config == {"b": False, "c": "x", "u": 0.0, "k": 0}
    with pytest.raises(ValueError, match="4"):
        space.decode(torch.zeros(2, 3))


# -------------------------------------------------------------------- encode errors
def _good_config() -> dict:
    return {"b0": True, "c": "y", "u": 0.5, "k": 3, "b1": False, "lr": 1e-2}


ENCODE_ERRORS = [
    ("missing", {"drop": "k"}, "k"),
    ("missing-several", {"drop": "c"}, "c"),
    ("unknown", {"set": ("zz", 1)}, "zz"),
    ("not-a-choice", {"set": ("c", "q")}, "c"),
    ("not-a-choice-type", {"set": ("c", 0)}, "c"),
    ("continuous-above", {"set": ("u", 1.5)}, "u"),
    ("continuous-below", {"set": ("u", -1e-9)}, "u"),
    ("log-below", {"set": ("lr", 1e-5)}, "lr"),
    ("integer-above", {"set": ("k", 6)}, "k"),
    ("integer-below", {"set": ("k", 0)}, "k"),
    ("binary-str", {"set": ("b0", "yes")}, "b0"),
    ("binary-two", {"set": ("b0", 2)}, "b0"),
    ("binary-none", {"set": ("b1", None)}, "b1"),
    ("continuous-str", {"set": ("u", "0.5")}, "u"),
    ("continuous-none", {"set": ("u", None)}, "u"),
    ("continuous-nan", {"set": ("u", NAN)}, "u"),
    ("continuous-bool", {"set": ("u", True)}, "u"),
    ("integer-fraction", {"set": ("k", 2.5)}, "k"),
    ("integer-str", {"set": ("k", "3")}, "k"),
    ("integer-bool", {"set": ("k", True)}, "k"),
    ("integer-nan", {"set": ("k", NAN)}, "k"),
]


@pytest.mark.parametrize(
    ("change", "name"),
    [case[1:] for case in ENCODE_ERRORS],
    ids=[case[0] for case in ENCODE_ERRORS],
)
def test_encode_errors_name_the_parameter(change, name):
    space = _mixed_space()
    config = _good_config()
    if "drop" in change:
        del config[change["drop"]]
    else:
        key, value = change["set"]
        config[key] = value
    with pytest.raises(ValueError, match=_names(name)):
        space.encode(config)
    with pytest.raises(ValueError, match=_names(name)):  # also inside a list of configs
        space.encode([_good_config(), config])


def test_encode_rejects_non_dict_configurations():
    with pytest.raises(ValueError, match="dict"):
        _mixed_space().encode([["b0", True]])


# ------------------------------------------------------------------------- sampling
def test_samples_are_valid_and_reproducible():
    space = _mixed_space()
    X = space.sample(500, torch.Generator().manual_seed(7))
    assert X.shape == (500, space.dim)
    assert X.dtype == torch.float64
    assert space.contains(X).all()
    lower, upper = space.bounds
    assert X.ge(lower).all() and X.le(upper).all()
    again = space.sample(500, torch.Generator().manual_seed(7))
    assert torch.equal(X, again)
    other = space.sample(500, torch.Generator().manual_seed(8))
    assert not torch.equal(X, other)
    # Decoded samples are valid configurations that encode back to the same rows.
    assert torch.allclose(space.encode(space.decode(X)), X, rtol=0, atol=1e-12)


def test_small_discrete_parameters_take_every_value():
    space = SearchSpace([Categorical("c", ["a", "b", "c"]), Integer("k", -2, 2), Binary("b")])
    X = space.sample(300, torch.Generator().manual_seed(0))
    assert set(X[:, 0].tolist()) == {0.0, 1.0, 2.0}
    assert {c["k"] for c in space.decode(X)} == {-2, -1, 0, 1, 2}
    assert set(X[:, 2].tolist()) == {0.0, 1.0}


@FUZZ
@given(spaces_and_configs(max_configs=1), st.integers(0, 2**32 - 1), st.integers(1, 40))
def test_sampling_random_spaces(space_and_configs, seed, n):
    space, _ = space_and_configs
    X = space.sample(n, torch.Generator().manual_seed(seed))
    assert X.shape == (n, space.dim)
    assert space.contains(X).all()
    assert torch.equal(X, space.sample(n, torch.Generator().manual_seed(seed)))


def test_contains_rejects_invalid_rows():
    space = SearchSpace(
        [
            Binary("b"),
            Categorical("c", ["x", "y", "z"]),
            Integer("k", 0, 4),
            Continuous("u", 0.0, 1.0),
        ]
    )
    X = torch.tensor(
        [
            [1.0, 2.0, 0.75, 0.3],  # valid
            [0.5, 2.0, 0.75, 0.3],  # binary not 0/1
            [1.0, 3.0, 0.75, 0.3],  # categorical index out of range
            [1.0, 1.0, 0.6, 0.3],  # integer off the grid
            [1.0, 1.0, 0.5, 1.2],  # continuous out of [0, 1]
            [1.0, 1.0, 0.5, math.nan],  # nan
        ],
        dtype=torch.float64,
    )
    assert space.contains(X).tolist() == [True, False, False, False, False, False]


# --------------------------------------------------------------------------- JSON
def test_documented_example_round_trips_exactly():
    space = SearchSpace.from_dict(EXAMPLE)
    assert space.names == ["b0", "c", "u", "k"]
    assert space.parameters == (
        Binary("b0"),
        Categorical("c", ["x", "y"]),
        Continuous("u", 0.0, 1.0, log=False),
        Integer("k", 1, 5),
    )
    assert space.to_dict() == EXAMPLE
    assert json.loads(space.to_json()) == EXAMPLE
    assert SearchSpace.from_json(json.dumps(EXAMPLE)) == space
    # The docstring example.
    X = space.encode([{"b0": True, "c": "y", "u": 0.5, "k": 3}])
    assert X.shape == (1, 4)
    assert space.decode(X)[0]["c"] == "y"


def test_to_json_and_from_json_files(tmp_path):
    space = _mixed_space()
    path = tmp_path / "space.json"
    text = space.to_json(path)
    assert path.read_text() == text + "\n"
    for source in (path, str(path)):
        loaded = SearchSpace.from_json(source)
        assert loaded == space
        assert loaded.to_dict() == space.to_dict()
    (tmp_path / "example.json").write_text(json.dumps(EXAMPLE))
    assert SearchSpace.from_json(tmp_path / "example.json").to_dict() == EXAMPLE


def test_from_json_errors(tmp_path):
    with pytest.raises(ValueError, match="cannot read"):
        SearchSpace.from_json(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="cannot read"):
        SearchSpace.from_json(str(tmp_path / "missing" / "space.json"))
    with pytest.raises(ValueError, match="not valid JSON"):
        SearchSpace.from_json('{"parameters": [')
    bad = tmp_path / "bad.json"
    bad.write_text("{ nope")
    with pytest.raises(ValueError, match="not valid JSON"):
        SearchSpace.from_json(bad)


@ROUND_TRIP
@given(spaces_and_configs(max_configs=1))
def test_json_round_trip_of_random_spaces(space_and_configs):
    space, (config,) = space_and_configs
    text = space.to_json()
    loaded = SearchSpace.from_json(text)
    # json.dumps is type-sensitive (1 vs 1.0 vs true), so this checks the choices' types too.
    assert json.dumps(loaded.to_dict()) == json.dumps(space.to_dict())
    assert loaded == space
    assert torch.equal(loaded.encode(config), space.encode(config))


# ---------------------------------------------------------------- from_dict fuzzing
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
_FIELD_NAMES = st.sampled_from(["name", "type", "choices", "low", "high", "log", "extra", ""])
_TYPE_NAMES = st.sampled_from(
    ["binary", "categorical", "continuous", "integer", "Binary", "float", "bool", ""]
)


@st.composite
def mutated_example(draw):
    """The documented example with a few random edits: drops, replacements, additions."""
    data = json.loads(json.dumps(EXAMPLE))
    specs = data["parameters"]
    for _ in range(draw(st.integers(1, 4))):
        action = draw(
            st.sampled_from(
                [
                    "drop-field",
                    "set-field",
                    "set-type",
                    "add-field",
                    "drop-param",
                    "dup-param",
                    "replace-param",
                    "replace-parameters",
                    "replace-top",
                    "add-top",
                ]
            )
        )
        if action == "replace-parameters":
            data["parameters"] = draw(_JSON)
            return data
        if action == "replace-top":
            return draw(_JSON | st.lists(_JSON, max_size=3))
        if action == "add-top":
            data[draw(st.text(max_size=5))] = draw(_JSON)
            continue
        if not specs:
            continue
        i = draw(st.integers(0, len(specs) - 1))
        spec = specs[i]
        if action == "drop-param":
            del specs[i]
        elif action == "dup-param":
            specs.append(json.loads(json.dumps(spec)))
        elif action == "replace-param":
            specs[i] = draw(_JSON)
        elif not isinstance(spec, dict):
            continue
        elif action == "drop-field" and spec:
            del spec[draw(st.sampled_from(sorted(spec)))]
        elif action == "set-field":
            spec[draw(_FIELD_NAMES)] = draw(_JSON)
        elif action == "set-type":
            spec["type"] = draw(_TYPE_NAMES | _JSON)
        elif action == "add-field":
            spec[draw(st.text(max_size=6))] = draw(_JSON)
    return data


def _from_dict_or_value_error(data):
    try:
        space = SearchSpace.from_dict(data)
    except ValueError:
        event("ValueError")
        return None
    event("accepted")
    assert isinstance(space, SearchSpace)
    assert len(space) >= 1
    # Whatever was accepted writes back to a dict that reads back to the same space.
    assert SearchSpace.from_dict(json.loads(json.dumps(space.to_dict()))) == space
    return space


@FUZZ
@given(_JSON | st.dictionaries(st.just("parameters"), _JSON, min_size=1))
def test_from_dict_on_arbitrary_json_returns_a_space_or_raises_value_error(data):
    _from_dict_or_value_error(data)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(mutated_example())
def test_from_dict_on_mutated_example_returns_a_space_or_raises_value_error(data):
    _from_dict_or_value_error(data)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (None, "parameters"),
        ([], "parameters"),
        ({}, "parameters"),
        ({"parameters": {}}, "list"),
        ({"parameters": []}, "at least one"),
        ({"parameters": [1]}, "#0"),
        ({"parameters": [{"name": "a"}]}, "'a'.*unknown type"),
        ({"parameters": [{"name": "a", "type": "float"}]}, "'a'.*unknown type"),
        ({"parameters": [{"type": "binary", "name": "a", "low": 0}]}, "'a'.*unknown field"),
        ({"parameters": [{"type": "categorical", "name": "c"}]}, "'c'.*missing field"),
        ({"parameters": [{"type": "continuous", "name": "u", "low": 0}]}, "'u'.*missing"),
        ({"parameters": [{"type": "integer", "name": "k", "low": 0, "high": "9"}]}, "'k'"),
        (
            {"parameters": [{"type": "continuous", "name": "u", "low": 0, "high": 1, "log": "no"}]},
            "'u'",
        ),
        ({"parameters": [{"type": "binary", "name": ""}]}, "name"),
        ({"parameters": [{"type": "binary", "name": 5}]}, "name"),
        (
            {"parameters": [{"type": "binary", "name": "a"}, {"type": "binary", "name": "a"}]},
            "'a'.*duplicate",
        ),
    ],
)
def test_from_dict_errors(data, message):
    with pytest.raises(ValueError, match=message):
        SearchSpace.from_dict(data)


def test_log_field_is_optional():
    spec = {"parameters": [{"name": "u", "type": "continuous", "low": 1, "high": 2}]}
    assert SearchSpace.from_dict(spec).parameters == (Continuous("u", 1.0, 2.0),)


@FUZZ
@given(
    st.one_of(
        st.text(max_size=40),
        st.text(max_size=40).map(lambda s: "{" + s),
        st.builds(json.dumps, _JSON),
        st.builds(json.dumps, mutated_example()),
    )
)
def test_from_json_on_arbitrary_text_returns_a_space_or_raises_value_error(text):
    # Text that does not start with "{" is read as a path: run inside an empty directory and
    # keep away from device files.
    assume("dev" not in text and not text.lstrip().startswith(("/", "~")))
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as empty:
        os.chdir(empty)
        try:
            SearchSpace.from_json(text)
        except ValueError:
            pass
        finally:
            os.chdir(cwd)


# ------------------------------------------------- regressions found by fuzzing
@pytest.mark.parametrize("kind", [[], {}, ["binary"]])
def test_from_dict_unhashable_type_raises_value_error(kind):
    with pytest.raises(ValueError, match="'a'"):
        SearchSpace.from_dict({"parameters": [{"name": "a", "type": kind}]})


@pytest.mark.parametrize(
    "source",
    [
        lambda: Continuous("u", 0, 10**400),
        lambda: SearchSpace.from_json(
            '{"parameters": [{"name": "u", "type": "continuous", "low": 0, "high": 1'
            + "0" * 400
            + "}]}"
        ),
        lambda: Continuous("u", 0.0, 1.0).encode(10**400),
    ],
    ids=["constructor", "from_json", "encode"],
)
def test_huge_integer_continuous_values_raise_value_error(source):
    with pytest.raises(ValueError, match="'u'"):
        source()


def test_continuous_range_too_wide_for_a_float_is_rejected():
    with pytest.raises(ValueError, match=r"'u'.*too wide"):
        Continuous("u", -1e308, 1e308)
    u = Continuous("u", -1e307, 1e307)  # a wide range that still fits round-trips
    assert u.decode(u.encode(0.0)) == pytest.approx(0.0, abs=1e292)


def test_numpy_scalars_are_accepted():
    import numpy as np

    space = SearchSpace([Binary("b"), Categorical("c", [1, 2]), Integer("k", 0, 9),
                         Continuous("u", 0.0, 1.0)])
    X = space.encode({"b": np.bool_(True), "c": np.int64(2), "k": np.int32(7),
                      "u": np.float32(0.25)})
    assert space.decode(X)[0] == {"b": True, "c": 2, "k": 7, "u": 0.25}
    assert Integer("k", np.int64(1), np.int64(4)).high == 4


# ----------------------------------------------------------------------- properties
def test_structure_of_a_mixed_space():
    space = SearchSpace(
        [
            Binary("b0"),
            Categorical("c", ["x", "y", "z"]),
            Continuous("u", 0.0, 1.0),
            Integer("k", 1, 5),
            Binary("b1"),
            Categorical("d", [1, 2, 3, 4]),
        ]
    )
    assert len(space) == space.dim == 6
    assert space.names == ["b0", "c", "u", "k", "b1", "d"]
    assert space.binary_dims == [0, 4]
    assert space.categorical_dims == [1, 5]
    assert space.discrete_dims == [0, 1, 4, 5]
    assert space.continuous_dims == [2]
    assert space.integer_dims == [3]
    assert space.ordinal_dims == [2, 3]
    assert space.cardinalities == [2, 3, 2, 4]
    expected = torch.tensor([[0.0] * 6, [1.0, 2.0, 1.0, 1.0, 1.0, 3.0]], dtype=torch.float64)
    assert space.bounds.dtype == torch.float64
    assert torch.equal(space.bounds, expected)
    assert space.is_discrete is False
    assert space.cardinality == math.inf


def test_structure_of_a_discrete_space():
    space = SearchSpace(
        [Binary("b0"), Categorical("c", ["x", "y", "z"]), Integer("k", 1, 5), Binary("b1")]
    )
    assert space.is_discrete is True
    assert space.cardinality == 2 * 3 * 5 * 2
    assert space.discrete_dims == [0, 1, 3]
    assert space.ordinal_dims == [2]
    assert space.cardinalities == [2, 3, 2]
    assert Integer("k", 1, 5).grid() == [0.0, 0.25, 0.5, 0.75, 1.0]


def test_round_snaps_to_the_feasible_set():
    space = SearchSpace(
        [
            Binary("b"),
            Categorical("c", ["x", "y", "z"]),
            Integer("k", 0, 4),
            Continuous("u", 0.0, 1.0),
        ]
    )
    X = torch.tensor([[0.6, 2.7, 0.3, 1.3], [-0.2, -1.0, 0.9, 0.25]], dtype=torch.float64)
    expected = torch.tensor([[1.0, 2.0, 0.25, 1.0], [0.0, 0.0, 1.0, 0.25]], dtype=torch.float64)
    assert torch.equal(space.round(X), expected)
    assert space.contains(space.round(X)).all()


def test_is_categorical_means_every_parameter_categorical_with_three_or_more_values():
    three = Categorical("a", ["x", "y", "z"])
    assert SearchSpace([three, Categorical("b", [1, 2, 3, 4])]).is_categorical
    for others in ([Binary("b")], [Categorical("b", ["p", "q"])], [Continuous("u", 0.0, 1.0)],
                   [Integer("i", 0, 5)]):
        assert not SearchSpace([three, *others]).is_categorical
