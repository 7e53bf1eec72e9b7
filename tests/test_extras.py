"""bodi.extras: a missing optional dependency gives one line that names the extra."""

import subprocess
import sys
import textwrap

import pytest

from bodi.extras import MissingExtraError, require


def test_require_names_the_extra(monkeypatch):
    # as if rich were not installed (the submodule too: an earlier test may have imported it)
    monkeypatch.setitem(sys.modules, "rich", None)
    monkeypatch.setitem(sys.modules, "rich.progress", None)
    with pytest.raises(MissingExtraError, match=r"needs the 'progress' extra.*bodi\[progress\]"):
        require("rich.progress", "the progress bar", "progress")


def test_a_broken_installation_is_not_reported_as_a_missing_extra(tmp_path, monkeypatch):
    # the extra's module is there, but one of its own imports fails: that error is shown as is
    (tmp_path / "bodi_fake_extra.py").write_text("import bodi_fake_dependency_not_there\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ImportError) as info:
        require("bodi_fake_extra", "a feature", "bench")
    assert not isinstance(info.value, MissingExtraError)
    assert info.value.name == "bodi_fake_dependency_not_there"


@pytest.mark.parametrize(("module", "argv", "extra"), [
    ("distributed", ["bench", "--problems", "labs50", "--methods", "random", "--out", "OUT"],
     "bench"),
    ("matplotlib", ["plot", "OUT"], "plot"),
])
def test_cli_without_the_extra_exits_with_one_line(tmp_path, module, argv, extra):
    # a fresh interpreter in which the extra's module cannot be imported
    argv = [a.replace("OUT", str(tmp_path / "out")) for a in argv]
    script = textwrap.dedent(f"""
        import sys
        sys.modules[{module!r}] = None
        from bodi.cli import main
        sys.exit(main({argv!r}))
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert f"'{extra}' extra" in lines[0] and f"pip install 'bodi[{extra}]'" in lines[0]
