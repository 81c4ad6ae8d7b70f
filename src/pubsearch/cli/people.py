"""The ``author`` command: the people a name stands for, as profiles (the search service
finds them; this only renders)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from pubsearch.cli.options import index_dir_of, index_option, reports_errors

if TYPE_CHECKING:
    from pubsearch.search.profiles import AuthorProfiles, Person

# Records listed per person in the text form (the JSON has them all).
LISTED = 20
_BAR = 30


@click.command("author")
@click.argument("name")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@index_option
@reports_errors
def author_command(name: str, fmt: str, index_dir: Path | None) -> None:
    """The people of the author NAME: one profile each, split from the records' co-authors,
    subjects and words when one name is several people, with the name's other written
    forms (initials) joined where the records agree. docs/people.md has the method.

    \b
    Example:
        pubsearch author "Yang You"
        pubsearch author "Wei Lin" --format json
    """
    from pubsearch.search.service import SearchService

    service = SearchService(index_dir_of(index_dir))
    try:
        found = service.author(name)
    finally:
        service.close()
    if fmt == "json":
        click.echo(json.dumps(found.to_dict(), ensure_ascii=False, indent=2))
        return
    _print_profiles(found)


def _print_profiles(found: AuthorProfiles) -> None:
    count = len(found.people)
    people = "one person" if count == 1 else f"{count} people"
    click.echo(f"{found.name}: {people} of that name in the index.\n")
    for number, person in enumerate(found.people, start=1):
        _print_person(person, number, count)


def _print_person(person: Person, number: int, count: int) -> None:
    forms = person.names[0] + (
        f" (also written {', '.join(person.names[1:])})" if len(person.names) > 1 else ""
    )
    head = f"[{number}/{count}] {forms}" if count > 1 else forms
    click.echo(click.style(head, bold=True) + click.style(f"  id {person.id}", dim=True))
    click.echo(f"Publications and source records attributed to {person.names[0]}.")
    records = len(person.records)
    span = (
        f", {person.first_year}-{person.last_year}"
        if person.first_year and person.first_year != person.last_year
        else (f", {person.first_year}" if person.first_year else "")
    )
    click.echo(
        f"{records} {'record' if records == 1 else 'records'}{span}; "
        f"confidence {person.confidence:.2f}"
    )
    if person.subjects:
        click.echo("subjects:   " + ", ".join(f"{s} ({n})" for s, n in person.subjects))
    if person.coauthors:
        click.echo("co-authors: " + ", ".join(f"{a} ({n})" for a, n in person.coauthors))
    if person.years:
        most = max(n for _, n in person.years)
        for year, n in person.years:
            bar = "#" * max(1, round(_BAR * n / most))
            click.echo(f"  {year}  {bar} {n}")
    for record in person.records[:LISTED]:
        when = record.date[:4] + "-" + record.date[4:6] if record.date else str(record.year or "")
        note = "" if record.assigned_by in ("only", "coauthors", "words") else " (nearest)"
        click.echo(f"  {when:<8} {record.id:<22} {record.title}{note}")
    if records > LISTED:
        click.echo(f"  ... and {records - LISTED} more (--format json lists them all)")
    click.echo()
