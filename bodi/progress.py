"""The one progress display of bodi: rich bars with a "best so far" column.

``bodi.minimize(progress=True)`` shows one bar; ``bodi bench`` one per (problem, method, seed)
task and one overall. When disabled every call is a no-op, and rich (the ``progress`` extra)
is imported only when a bar is shown.
"""

from __future__ import annotations

from typing import Any

from bodi.extras import require


class ProgressBars:
    """A context manager holding any number of bars.

    Args:
        enabled: show the bars (``False``: every method does nothing).
        what: what needs rich, for the one-line error when the extra is missing.
    """

    def __init__(self, enabled: bool = True, what: str = "the progress bar") -> None:
        self.enabled, self.what = enabled, what
        self._progress: Any = None

    def __enter__(self) -> ProgressBars:
        if self.enabled:
            rich = require("rich.progress", what=self.what, extra="progress")
            self._progress = rich.Progress(
                rich.TextColumn("{task.description}"), rich.BarColumn(),
                rich.MofNCompleteColumn(), rich.TimeElapsedColumn(),
                rich.TextColumn("{task.fields[best]}"),
            )
            self._progress.__enter__()
        return self

    def add(self, label: str, total: int, completed: int = 0) -> int | None:
        """A new bar; returns its handle for :meth:`advance`."""
        if self._progress is None:
            return None
        return self._progress.add_task(label, total=total, completed=completed, best="")

    def advance(self, bar: int | None, best: float | str | None = None) -> None:
        """One more step on ``bar``; ``best`` (if given) is shown as the best value so far
        (a string is shown as it is)."""
        if self._progress is None or bar is None:
            return
        if best is None:
            fields = {}
        else:
            fields = {"best": best if isinstance(best, str) else f"best {best:.6g}"}
        self._progress.update(bar, advance=1, **fields)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)
            self._progress = None
