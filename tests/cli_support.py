"""Checks shared by the command-line tests."""

from __future__ import annotations

from click.testing import Result


def assert_one_line_error(result: Result, code: int, *fragments: str) -> None:
    """The command failed with exit ``code`` and one line on stderr, ``Error: ...`` naming
    each of ``fragments``, and no traceback anywhere."""
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert "Traceback" not in result.output
