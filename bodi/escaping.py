"""Study data shown to people: one escaping for terminals and one for spreadsheets.

Study names, parameter values and failure messages come from users and from files that anyone
may have written. :func:`for_terminal` writes control characters (an escape sequence that
would recolour or retitle the terminal) as Python escapes; :func:`csv_cell` keeps a cell from
being run as a spreadsheet formula.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

#: the first characters that make a spreadsheet read a cell as a formula (OWASP)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def for_terminal(text: str) -> str:
    """``text`` with every control character written as its Python escape (``\\x1b``)."""
    return "".join(repr(c)[1:-1] if unicodedata.category(c) == "Cc" else c for c in text)


def csv_cell(value: Any) -> Any:
    """A value as a CSV cell: lists and dicts as JSON, and text that a spreadsheet would run
    as a formula (``=HYPERLINK(...)`` in a trial's message) behind a ``'``; numbers as they
    are."""
    if isinstance(value, list | dict):
        value = json.dumps(value)
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value
