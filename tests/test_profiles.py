"""Author profiles (pubsearch.search.profiles through SearchService.author) and the
``pubsearch author`` command, on a real index of the seed pages: "Yang You" is a name of
several people there (calorimeter electronics, 3D keypoints, large-batch training)."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import assert_one_line_error
from click.testing import CliRunner
from flask.testing import FlaskClient

from pubsearch.cli.main import main
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.search.request import SearchRequest
from pubsearch.search.service import SearchService


def _seed_records(seeds_dir: Path, name: str) -> set[str]:
    """The ids of the records of the seed page of ``name``."""
    return {r.id for r in read_paths([seeds_dir], ReadReport()) if name in r.authors}


def test_every_record_of_a_seed_page_is_under_its_name_and_no_other(
    service: SearchService, seeds_dir: Path
) -> None:
    for name in ("Yang You", "Wei Lin"):
        found = service.author(name)
        records = [r.id for person in found.people for r in person.records]
        assert len(records) == len(set(records))  # each record in one profile
        assert set(records) == _seed_records(seeds_dir, name)
        assert all(person.names == (name,) for person in found.people)


def test_a_name_of_several_people_is_split_by_subject(service: SearchService) -> None:
    found = service.author("Yang You")
    assert len(found.people) >= 2
    by_subject: dict[str, set[str]] = {}
    for person in found.people:
        for subject, _ in person.subjects:
            by_subject.setdefault(subject, set()).add(person.id)
    # The calorimeter electronics and the 3D keypoints are not one person's.
    assert not by_subject["physics.ins-det"] & by_subject["cs.CV"]
    largest = found.people[0]
    assert len(largest.records) == max(len(p.records) for p in found.people)
    dates = [r.date or str(r.year) for r in largest.records]
    assert dates == sorted(dates, reverse=True)  # newest first
    assert sum(n for _, n in largest.years) == len(largest.records)


def test_author_json_lists_each_person(seed_index: Path, seeds_dir: Path) -> None:
    result = CliRunner().invoke(
        main, ["author", "Yang You", "--format", "json", "--index", str(seed_index)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["name"] == "Yang You"
    assert len(data["people"]) >= 2
    for person in data["people"]:
        assert set(person) >= {"id", "names", "records", "subjects", "coauthors", "years"}
        assert 0 <= person["confidence"] <= 1
        assert set(person["assigned_by"]) == set(person["records"])
        assert set(person["assigned_by"].values()) <= {"only", "coauthors", "words", "nearest"}
    ids = {r for person in data["people"] for r in person["records"]}
    assert ids == _seed_records(seeds_dir, "Yang You")
    assert len({person["id"] for person in data["people"]}) == len(data["people"])


def test_author_text_is_a_profile_per_person(seed_index: Path) -> None:
    result = CliRunner().invoke(main, ["author", "Yang You", "--index", str(seed_index)])
    assert result.exit_code == 0, result.output
    text = result.output
    assert "people of that name in the index" in text
    assert text.count("Publications and source records attributed to Yang You.") >= 2
    assert "physics.ins-det (2)" in text
    assert "Skeleton Merger: an Unsupervised Aligned Keypoint Detector" in text


def test_an_unknown_author_is_a_one_line_error(seed_index: Path) -> None:
    result = CliRunner().invoke(main, ["author", "Nobody Here", "--index", str(seed_index)])
    assert_one_line_error(result, 2, "NAME", "Nobody Here")


def _calorimeter_person(service: SearchService) -> str:
    found = service.author("Yang You")
    return next(p.id for p in found.people if dict(p.subjects).get("physics.ins-det"))


def test_query_person_narrows_to_one_person(service: SearchService, seed_index: Path) -> None:
    person = _calorimeter_person(service)
    result = CliRunner().invoke(
        main,
        ["query", "--person", person, "--format", "json", "--index", str(seed_index)],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["filters"]["person"] == person
    assert data["total"] == 2
    assert all("physics.ins-det" in hit["subjects"] for hit in data["hits"])
    # The person and a word: that person's records with the word.
    both = SearchRequest(q="clock", person=person)
    assert service.search(both).total == 1
    assert service.search(SearchRequest(q="clock")).total >= 1


def test_an_unknown_person_is_a_one_line_error(seed_index: Path) -> None:
    result = CliRunner().invoke(
        main, ["query", "--person", "yang-you-00000000", "--index", str(seed_index)]
    )
    assert_one_line_error(result, 2, "person", "yang-you-00000000")


def test_person_in_a_url(client: FlaskClient, service: SearchService) -> None:
    person = _calorimeter_person(service)
    data = client.get("/api/search", query_string={"person": person}).get_json()
    assert data["total"] == 2
    assert data["filters"]["person"] == person
    page = client.get("/", query_string={"person": person, "q": "ATLAS"})
    assert page.status_code == 200
    assert f"person={person}" in page.get_data(as_text=True)
    assert client.get("/api/search", query_string={"person": "nobody-1"}).status_code == 400


def test_author_page_and_its_errors(client: FlaskClient) -> None:
    page = client.get("/author/Yang You")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert html.count('class="profile"') >= 2
    assert "Publications and source records attributed to Yang You." in html
    missing = client.get("/author/Nobody Here")
    assert missing.status_code == 400
    assert "Nobody Here" in missing.get_data(as_text=True)


def test_each_hit_names_the_person_of_each_author(service: SearchService) -> None:
    """A hit's ``people``: the profile each of its authors is under (JSON ``people``)."""
    results = service.search(SearchRequest(q="training", page_size=50))
    assert results.hits
    profiles: dict[str, dict[str, set[str]]] = {}
    for hit in results.hits:
        assert len(hit.people) == len(hit.authors) and all(hit.people)
        for author, person in zip(hit.authors, hit.people, strict=True):
            if author not in profiles:
                profiles[author] = {
                    p.id: {r.id for r in p.records} for p in service.author(author).people
                }
            assert hit.id in profiles[author][person]


def test_related_papers_and_library_hits_name_their_people_too(service: SearchService) -> None:
    first = service.search(SearchRequest(q="batch")).hits[0]
    related = service.related(first.id, SearchRequest(page_size=20)).hits
    assert related and all(len(h.people) == len(h.authors) and all(h.people) for h in related)
    generation, _ = service.meaning()
    ranked = [(1.0, h.doc) for h in related[:3]]
    again = service.hits_of(generation, ranked, SearchRequest())
    assert [h.people for h in again] == [h.people for h in related[:3]]


def test_a_persons_atom_feed_holds_only_that_persons_records(
    client: FlaskClient, service: SearchService
) -> None:
    import re

    import feedparser

    page = client.get("/author/Yang%20You").get_data(as_text=True)
    feeds = re.findall(r'<a class="feed-link" href="([^"]+)"', page)
    people = service.author("Yang You").people
    assert len(feeds) == len(people)
    for person, url in zip(people, feeds, strict=True):
        response = client.get(url.replace("&amp;", "&"))
        assert response.status_code == 200
        assert response.mimetype == "application/atom+xml"
        feed = feedparser.parse(response.get_data())
        assert not feed.bozo, feed.get("bozo_exception")
        assert f"person {person.id}" in feed.feed.title
        assert sorted(entry.title for entry in feed.entries) == sorted(
            r.title for r in person.records
        )


def test_the_author_facet_lists_the_people_of_a_name(
    client: FlaskClient, service: SearchService
) -> None:
    """A name of several people: the facet value lists each (id, hint, count), and a
    person's link narrows the results to their records."""
    import html
    import re
    from urllib.parse import parse_qs, urlsplit

    results = service.search(SearchRequest(q="", facets=True, facet_size=50))
    assert results.facets is not None
    you = next(v for v in results.facets["author"] if v.value == "Yang You")
    people = service.author("Yang You").people
    assert len(you.people) == len(people) >= 2
    assert sum(p.count for p in you.people) == you.count
    assert {p.id for p in you.people} == {p.id for p in people}
    counts = [p.count for p in you.people]
    assert counts == sorted(counts, reverse=True)
    hints = [p.hint for p in you.people]
    assert all(hints) and len(set(hints)) == len(hints)  # each tells its person apart
    assert "physics.ins-det" in hints or any("ins-det" in h for h in hints)
    # Only a name of several people lists them.
    for value in results.facets["author"]:
        assert bool(value.people) == (len(service.author(value.value).people) > 1)
    # JSON: the same people.
    data = client.get("/api/search?q=&facet_size=50").get_json()
    listed = next(v for v in data["facets"]["author"] if v["value"] == "Yang You")
    assert [p["id"] for p in listed["people"]] == [p.id for p in you.people]
    # The page: a link per person; following one shows that person's records only.
    page = client.get("/?facet_size=50").get_data(as_text=True)
    links = re.findall(r'<a href="([^"]+)" class="facet-person', page)
    first = next(html.unescape(u) for u in links if you.people[0].id in u)
    assert parse_qs(urlsplit(first).query)["person"] == [you.people[0].id]
    narrowed = client.get(first).get_data(as_text=True)
    assert f"<strong>{you.people[0].count}</strong> result" in narrowed
    assert 'class="facet-person is-selected" aria-current="true"' in narrowed
    chip = re.search(r'<a class="chip" href="([^"]+)" title="Only this person', narrowed)
    assert chip is not None
    assert f"Yang You ({you.people[0].hint})" in narrowed[chip.end() : chip.end() + 200]
    assert "person" not in parse_qs(urlsplit(html.unescape(chip.group(1))).query)


def test_a_name_of_many_people_lists_the_first_and_the_chosen() -> None:
    from pubsearch.search.results import FacetValue, PersonValue
    from pubsearch.web import pages

    people = tuple(
        PersonValue(f"yang-liu-{n:02d}", f"with Co Author{n}", 20 - n, selected=n == 11)
        for n in range(12)
    )
    value = FacetValue("Yang Liu", 200, True, people)
    group = pages._facet_group(
        "author", "Authors", (value,), SearchRequest(person=people[11].id), "/"
    )
    (option,) = group.options
    shown = [p.hint for p in option.people]
    assert shown == [f"with Co Author{n}" for n in range(pages.PEOPLE_SHOWN)] + ["with Co Author11"]
    assert option.more_people == 12 - pages.PEOPLE_SHOWN - 1
    assert option.people[-1].selected and "person" not in option.people[-1].url
    assert "person=yang-liu-00" in option.people[0].url


def test_the_commonest_value_of_each_owners_documents() -> None:
    """profiles._tops: per owner, the value most of its documents have (ties: the first
    numbered), leaving out one value (the name the people share)."""
    import numpy as np

    from pubsearch.index.facets import MultiValued
    from pubsearch.search import profiles

    column = MultiValued.from_values(
        [["Ann", "Bo"], ["Ann", "Cy"], ["Ann", "Cy", "Bo"], ["Ann"], ["Ann", "Dee"]]
    )
    ann = column.ids_by_key["ann"]
    docs = np.asarray([0, 1, 2, 3, 4], dtype=np.int64)
    owners = np.asarray([0, 0, 0, 1, 2])
    assert profiles._tops(column, docs, owners, 3, ann) == ["Bo", "", "Dee"]
    assert profiles._tops(column, docs, owners, 3, -1) == ["Ann", "Ann", "Ann"]
    # Bo and Cy tie for owner 0 (two documents each): Bo was numbered first.
    assert column.ids_by_key["bo"] < column.ids_by_key["cy"]
    # Many owners and ties: as a count of each owner's values would say.
    rng = np.random.default_rng(7)
    names = [f"Name {n}" for n in range(8)]
    rows = [list(rng.choice(names, size=int(rng.integers(0, 4)), replace=False)) for _ in range(60)]
    column = MultiValued.from_values(rows)
    docs = rng.integers(0, 60, size=200).astype(np.int64)
    owners = rng.integers(0, 30, size=200)
    expected = []
    for owner in range(30):
        counts: dict[int, int] = {}
        for doc in docs[owners == owner].tolist():
            start, end = int(column.offsets[doc]), int(column.offsets[doc + 1])
            for value in column.value_ids[start:end].tolist():
                counts[value] = counts.get(value, 0) + 1
        best = min(counts, key=lambda v: (-counts[v], v)) if counts else None
        expected.append("" if best is None else str(column.labels[best]))
    assert profiles._tops(column, docs, owners, 30, -1) == expected


def test_a_people_index_from_the_builds_saved_orders_is_the_one_made_without_them(
    seed_index: Path,
) -> None:
    """The build saves the author entries' orders by name and by person; a table saved
    without them (an earlier pubsearch's) gives the same index, sorted when read."""
    from dataclasses import replace

    import numpy as np
    from people_support import saved_tables

    from pubsearch.search.profiles import PeopleIndex

    table, people = saved_tables(seed_index)
    assert people.by_name is not None and people.by_person is not None
    saved = PeopleIndex(table, people)
    made = PeopleIndex(table, replace(people, by_name=None, by_person=None))
    for name in ("_by_name", "_name_starts", "_by_person", "_person_starts"):
        assert np.array_equal(getattr(saved, name), getattr(made, name)), name
    you = table.authors.ids_by_key["yang you"]
    entries = saved.entries_of_name(you)
    assert len(entries) == np.count_nonzero(table.authors.value_ids == you) > 10
    assert set(table.authors.value_ids[entries].tolist()) == {you}
