"""JSON objects, one at a time, from JSON lines or from one JSON array.

JSON lines (one object per line) is the main form: a line that is not a JSON object is
reported with its line number and skipped. A file whose first line is a lone ``{`` holds
pretty-printed objects (``jq .``'s output), each ending at a ``}`` at the start of a line. A
file whose first non-blank character is ``[`` is read as one array, element by element,
without holding more than one element (and the line it ends on) in memory; an array is one
JSON text, so a syntax error in it ends the file with a :class:`~pubsearch.core.errors.ReadError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import chain
from typing import Any

from pubsearch.core.errors import ReadError
from pubsearch.ingest.readers.report import ReadReport

JsonObject = dict[str, Any]

_DECODER = json.JSONDecoder()
_SEPARATORS = re.compile(r"[\s,]*")


def looks_like_json(first_lines: list[str]) -> bool:
    """True when the first non-blank character is ``{`` or ``[``."""
    for line in first_lines:
        text = line.strip().lstrip("\ufeff")
        if text:
            return text[0] in "{["
    return False


def sniff_objects(first_lines: list[str]) -> list[JsonObject]:
    """The objects among the opening lines that parse on their own (a leading ``[`` and a
    trailing ``,`` or ``]`` are allowed, so one-object-a-line arrays sniff too)."""
    objects: list[JsonObject] = []
    for line in first_lines:
        text = line.strip().lstrip("\ufeff[").rstrip(",]").strip()
        if not text.startswith("{"):
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            objects.append(value)
    return objects


def sniff_keys(first_lines: list[str]) -> set[str]:
    """Keys seen in the opening lines: those of whole objects, and ``"key":`` openings of
    lines (for pretty-printed files, where no line is an object of its own)."""
    keys: set[str] = set()
    for obj in sniff_objects(first_lines):
        keys.update(obj)
    for line in first_lines:
        match = re.match(r'\s*"([^"\\]+)"\s*:', line)
        if match:
            keys.add(match.group(1))
    return keys


def iter_objects(
    lines: Iterable[str], origin: str, report: ReadReport
) -> Iterator[tuple[int, JsonObject]]:
    """``(line number, object)`` for each JSON object in ``lines``; see the module doc."""
    numbered = enumerate(lines, start=1)
    for number, line in numbered:
        text = line.strip().lstrip("\ufeff")
        if not text:
            continue
        rest = chain([(number, line.removeprefix("\ufeff"))], numbered)
        if text.startswith("["):
            yield from _array_objects(rest, origin, report)
        elif text == "{":
            yield from _pretty_objects(rest, origin, report)
        else:
            yield from _line_objects(rest, origin, report)
        return


def _line_objects(
    numbered: Iterable[tuple[int, str]], origin: str, report: ReadReport
) -> Iterator[tuple[int, JsonObject]]:
    for number, line in numbered:
        text = line.strip()
        if not text:
            continue
        where = f"{origin}:{number}"
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            report.skip(where, f"not valid JSON ({exc.msg} at column {exc.colno}); skipped")
            continue
        if not isinstance(value, dict):
            report.skip(where, f"a JSON {_kind(value)}, not an object; skipped")
            continue
        yield number, value


def _pretty_objects(
    numbered: Iterable[tuple[int, str]], origin: str, report: ReadReport
) -> Iterator[tuple[int, JsonObject]]:
    """Objects written over several lines each (``jq .``'s output, a saved API response
    pretty-printed): an object ends at a line that is a closing brace alone at its start.
    A line like that inside an object that has not ended (no indentation) is read on."""
    held: list[str] = []
    start = 0
    for number, line in numbered:
        if not held and not line.strip():
            continue
        if not held:
            start = number
        held.append(line)
        if line.rstrip().rstrip(",") != "}":
            continue
        text = "".join(held).strip().rstrip(",")
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            if exc.pos >= len(text):  # the object goes on below
                continue
            where = f"{origin}:{start + exc.lineno - 1}"
            report.skip(where, f"not valid JSON ({exc.msg} at column {exc.colno}); object skipped")
            held = []
            continue
        held = []
        if isinstance(value, dict):
            yield start, value
        else:
            report.skip(f"{origin}:{start}", f"a JSON {_kind(value)}, not an object; skipped")
    if held:
        report.skip(f"{origin}:{start}", "JSON object ends early (no closing '}'); skipped")


def _kind(value: object) -> str:
    """JSON's name for the type of ``value``."""
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "null"


def _skip_separators(text: str, pos: int) -> int:
    """Where the white space and commas that start at ``pos`` end."""
    match = _SEPARATORS.match(text, pos)
    return match.end() if match else pos


class _ArrayBuffer:
    """Text of a JSON array read so far, where decoding has got to, and on which line."""

    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.text = ""
        self.pos = 0
        self.line = 1  # the line that ``text[pos]`` is on
        self.last_line = 0
        self.opened = False
        self.closed = False

    def add(self, number: int, line: str) -> None:
        """Append the next line, first dropping what was decoded already."""
        if self.pos >= len(self.text):
            self.line = number
        self.text = self.text[self.pos :] + line
        self.pos = 0
        self.last_line = number

    def consume(self, end: int) -> None:
        self.line += self.text.count("\n", self.pos, end)
        self.pos = end

    def error(self, position: int, message: str) -> ReadError:
        line = self.line + self.text.count("\n", self.pos, position)
        return ReadError(f"{self.origin}:{line}", message)

    def next_value(self) -> tuple[int, object] | None:
        """The next whole element and its line, or ``None`` when more text is needed."""
        self.consume(_skip_separators(self.text, self.pos))
        if not self.opened:
            if self.pos >= len(self.text):
                return None
            if self.text[self.pos] != "[":
                raise self.error(self.pos, "expected a JSON array")
            self.opened = True
            self.consume(_skip_separators(self.text, self.pos + 1))
        if self.pos >= len(self.text):
            return None
        if self.text[self.pos] == "]":
            self.closed = True
            self.consume(self.pos + 1)
            return None
        try:
            value, end = _DECODER.raw_decode(self.text, self.pos)
        except json.JSONDecodeError as exc:
            # An error on the last line read may only mean that the element goes on below.
            if self.text.find("\n", exc.pos, len(self.text) - 1) != -1:
                raise self.error(exc.pos, f"invalid JSON in array ({exc.msg})") from None
            return None
        line = self.line
        self.consume(end)
        return line, value


def _array_objects(
    numbered: Iterable[tuple[int, str]], origin: str, report: ReadReport
) -> Iterator[tuple[int, JsonObject]]:
    buffer = _ArrayBuffer(origin)
    for number, line in numbered:
        buffer.add(number, line)
        while not buffer.closed and (item := buffer.next_value()) is not None:
            line_number, value = item
            if isinstance(value, dict):
                yield line_number, value
            else:
                report.skip(f"{origin}:{line_number}", f"array element is a JSON {_kind(value)}")
        if buffer.closed:
            break
    if not buffer.closed:
        where = f"{origin}:{buffer.last_line}"
        raise ReadError(where, "JSON array ends early (no closing ']'); file truncated?")


def read_works(
    lines: Iterable[str],
    origin: str,
    report: ReadReport,
    source: str,
    works_of: Callable[[JsonObject], list[Any]],
    record_from_work: Callable[[Mapping[str, Any], str], Any],
) -> Iterator[Any]:
    """Records of an API's works (OpenAlex, Crossref): each JSON object of the stream is a
    work or a response listing works (``works_of`` says which); a work that is not an
    object, or gives no record, is skipped with its file and line."""
    for number, obj in iter_objects(lines, origin, report):
        works = works_of(obj)
        for item, work in enumerate(works):
            where = f"{origin}:{number}"
            what = f"work {item + 1} of the response" if len(works) > 1 else "work"
            if not isinstance(work, Mapping):
                report.skip(where, f"{what} is not a JSON object; skipped")
                continue
            record = record_from_work(work, where)
            if record is None:
                report.skip(where, f"{source} {what} has neither a title nor an abstract; skipped")
            else:
                yield record
