"""bodi.progress: the one progress display of minimize and bodi bench."""

from bodi.progress import ProgressBars


def test_disabled_bars_do_nothing():
    with ProgressBars(enabled=False) as bars:
        bar = bars.add("x", total=3)
        bars.advance(bar, 1.0)
    assert bar is None


def test_bars_count_steps_and_show_the_best_value():
    with ProgressBars(enabled=True) as bars:
        first = bars.add("first", total=5, completed=2)
        second = bars.add("second", total=4)
        bars.advance(first, 0.25)
        bars.advance(second)
        tasks = {t.description: t for t in bars._progress.tasks}
    assert tasks["first"].completed == 3 and tasks["first"].fields["best"] == "best 0.25"
    assert tasks["second"].completed == 1 and tasks["second"].fields["best"] == ""
    assert bars._progress is None
