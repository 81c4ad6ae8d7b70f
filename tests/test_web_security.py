"""Escaping and security headers: record text and queries are always text, never HTML."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from pubsearch.index.build import build_index
from pubsearch.ingest.records import Record
from pubsearch.web import SECURITY_HEADERS, SERVICE_KEY, create_app

SRC = Path(__file__).resolve().parent.parent / "src" / "pubsearch"
TEMPLATES = SRC / "web" / "templates"

NASTY = Record(
    title='<script>alert("title")</script> & <b>Batch</b> training',
    abstract=(
        "Large batch training with <img src=x onerror=alert(1)> and x < y && "
        "\"quotes\" 'single' </p></details><script>alert(2)</script> $\\alpha$ batch"
    ),
    authors=('Eve <script>alert("author")</script>', "O'Neil & Sons"),
    subjects=("cs.LG", "<i>cs.XX</i>"),
    year=2020,
    source="arXiv",
)


@pytest.fixture
def nasty_client(tmp_path: Path) -> Iterator[FlaskClient]:
    build_index(tmp_path / "ix", [NASTY])
    app: Flask = create_app(tmp_path / "ix")
    yield app.test_client()
    app.extensions[SERVICE_KEY].close()


@pytest.mark.parametrize(
    "url",
    [
        "/",
        "/?q=batch",
        "/?q=script",
        "/?q=alert",
        "/?q=%3Cscript%3Ealert(3)%3C%2Fscript%3E",
        "/?author=Eve+%3Cscript%3Ealert(%22author%22)%3C%2Fscript%3E",
        "/?subject=%3Ci%3Ecs.XX%3C%2Fi%3E",
    ],
)
def test_record_text_and_queries_are_escaped(nasty_client: FlaskClient, url: str) -> None:
    response = nasty_client.get(url)
    assert response.status_code == 200
    page = response.get_data(as_text=True)
    # The only script element is our own file.
    assert re.findall(r"<script\b[^>]*>", page) == [
        '<script src="/static/pubsearch.js" defer></script>'.removesuffix("</script>")
    ]
    assert "<img" not in page
    assert "<b>" not in page and "<i>" not in page


def test_title_with_script_shows_as_text(nasty_client: FlaskClient) -> None:
    page = nasty_client.get("/?q=training").get_data(as_text=True)
    # Highlighting escapes the record's text and adds only <mark>.
    assert (
        "&lt;script&gt;alert(&quot;title&quot;)&lt;/script&gt; &amp; "
        "&lt;b&gt;Batch&lt;/b&gt; <mark>training</mark></a></h2>" in page
    )
    assert "with &lt;img src=x onerror=alert(1)&gt; and x &lt; y &amp;&amp;" in page
    assert "Eve &lt;script&gt;" in page
    assert "O&#39;Neil &amp; Sons" in page


def test_escaped_in_json_and_exports_too(nasty_client: FlaskClient) -> None:
    data = nasty_client.get("/api/search?q=batch").get_json()
    hit = data["hits"][0]
    assert hit["title"] == NASTY.title  # raw text in JSON fields...
    assert "<script>" not in hit["title_html"]  # ...escaped in the HTML ones
    assert "&lt;script&gt;" in hit["title_html"]
    bib = nasty_client.get("/export.bib?q=batch").get_data(as_text=True)
    assert r"O'Neil \& Sons" in bib
    # TeX math stays TeX; the other characters TeX reads are escaped.
    assert r"x < y \&\& " in bib and r"</script> $\alpha$ batch}" in bib


@pytest.mark.parametrize(
    "url",
    [
        "/",
        "/?page=0",
        "/nowhere",
        "/api/search",
        "/api/search?page=0",
        "/api/nowhere",
        "/export.csv",
        "/static/pubsearch.css",
    ],
)
def test_security_headers_on_every_response(client: FlaskClient, url: str) -> None:
    response = client.get(url)
    for name, value in SECURITY_HEADERS.items():
        assert response.headers[name] == value, (url, name)
    response.close()


def test_content_security_policy() -> None:
    csp = SECURITY_HEADERS["Content-Security-Policy"]
    for directive in [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "form-action 'self'",
    ]:
        assert directive in csp
    assert "unsafe" not in csp
    assert SECURITY_HEADERS["X-Content-Type-Options"] == "nosniff"
    assert SECURITY_HEADERS["X-Frame-Options"] == "DENY"
    assert "Referrer-Policy" in SECURITY_HEADERS


def test_templates_mark_nothing_safe_and_have_no_inline_code() -> None:
    for template in TEMPLATES.glob("*.html"):
        source = template.read_text(encoding="utf-8")
        assert "|safe" not in source.replace(" ", ""), template.name
        assert "Markup" not in source, template.name
        assert "autoescape false" not in source, template.name
        assert not re.search(r"\sstyle=", source), template.name
        assert "<style" not in source, template.name
        assert not re.search(r"\son[a-z]+=", source), template.name
        for tag in re.findall(r"<script\b[^>]*>", source):
            assert "src=" in tag, template.name


def test_markup_is_made_in_one_place_only() -> None:
    uses = []
    for module in SRC.rglob("*.py"):
        for number, line in enumerate(module.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\bMarkup\(", line):
                uses.append(f"{module.relative_to(SRC)}:{number}")
    # highlighted(): the title, snippet and abstract of a hit, and why it was found by meaning
    assert len(uses) == 4, uses
    assert all(u.startswith("web/__init__.py:") for u in uses), uses


def test_no_debug_and_no_catch_all(client: FlaskClient) -> None:
    assert client.application.debug is False
