"""The one progress display of bodi: rich bars with a "best so far" column.

``bodi.minimize(progress=True)`` shows one bar; ``bodi bench`` one per (problem, method, seed)
task and one overall. When disabled every call is a no-op, and rich (the ``progress`` extra)
is imported only when a bar is shown. Without rich (the core install) the bars are plain lines
on standard error, one per bar at most every few seconds and when it completes.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from bodi.extras import available


class PlainProgress:
    """rich's ``Progress`` calls that :class:`ProgressBars` makes, as plain text lines:
    ``label: 12/40 best 3.5`` at most every ``every`` seconds per bar, and when it completes."""

    def __init__(self, stream: TextIO | None = None, every: float = 5.0) -> None:
        self.stream, self.every = stream or sys.stderr, every
        self.tasks: list[dict[str, Any]] = []

    def add_task(self, label: str, total: int, completed: int = 0, best: str = "") -> int:
        self.tasks.append({"label": label, "total": total, "completed": completed,
                           "best": best, "shown": -float("inf")})
        return len(self.tasks) - 1

    def update(self, task: int, advance: int = 0, best: str | None = None) -> None:
        state = self.tasks[task]
        state["completed"] += advance
        if best is not None:
            state["best"] = best
        now = time.monotonic()
        if state["completed"] >= state["total"] or now - state["shown"] >= self.every:
            state["shown"] = now
            best_text = f" {state['best']}" if state["best"] else ""
            print(f"{state['label'].replace('[bold]', '')}: {state['completed']}/"
                  f"{state['total']}{best_text}", file=self.stream, flush=True)

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


class ProgressBars:
    """A context manager holding any number of bars.

    Args:
        enabled: show the bars (``False``: every method does nothing).
        what: what shows the bars (kept for messages).
    """

    def __init__(self, enabled: bool = True, what: str = "the progress bar") -> None:
        self.enabled, self.what = enabled, what
        self._progress: Any = None

    def __enter__(self) -> ProgressBars:
        if self.enabled and not available("rich.progress"):
            self._progress = PlainProgress()
        elif self.enabled:
            import rich.progress as rich

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
