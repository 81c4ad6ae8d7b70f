"""Where readers note what they had to skip."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ReadProblem:
    """One skipped block or line: ``where`` is ``path:line``."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


@dataclass
class ReadReport:
    """Counts and problems gathered while reading."""

    problems: list[ReadProblem] = field(default_factory=list)
    files: int = 0
    records_read: int = 0
    bytes_read: int = 0  # of the files as stored (compressed bytes for a gzip file)

    def skip(self, where: str, message: str) -> None:
        self.problems.append(ReadProblem(where, message))

    def count_bytes(self, count: int) -> None:
        self.bytes_read += count
