"""One error hierarchy: every error pubsearch defines is a PubsearchError, in errors.py."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from pubsearch.core import errors

SRC = Path(errors.__file__).resolve().parent


def test_errors_are_defined_in_errors_py_only() -> None:
    """(The command line's two ways of reporting them to click are its own.)"""
    elsewhere = [
        f"{path.relative_to(SRC)}:{number}"
        for path in SRC.rglob("*.py")
        if path.name != "errors.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.match(r"\s*class \w+(Error|Exception)\b", line)
        and "(click.ClickException)" not in line
    ]
    assert elsewhere == []


def test_every_error_is_a_pubsearch_error() -> None:
    classes = [
        c for _, c in inspect.getmembers(errors, inspect.isclass) if c.__module__ == errors.__name__
    ]
    assert len(classes) > 10
    assert all(issubclass(c, errors.PubsearchError) for c in classes)
