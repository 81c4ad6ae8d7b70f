"""The e-mail digest against a real SMTP server on 127.0.0.1 (aiosmtpd, run by the test):
one message with text and HTML parts; a login from the environment; a server that cannot
be reached is one line and marks nothing seen."""

from __future__ import annotations

import email
import socket
import ssl
from collections.abc import Iterator
from email.message import Message
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from cli_support import assert_one_line_error
from click.testing import CliRunner
from library_support import build, record, update

from pubsearch.cli.main import main
from pubsearch.library.follow import Library
from pubsearch.search.request import SearchRequest
from pubsearch.search.service import SearchService


class Inbox:
    """What the server received, and the logins it was given."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.envelopes: list[tuple[str, list[str]]] = []
        self.logins: list[tuple[str, str]] = []
        self.encrypted: list[bool] = []  # whether each message came over TLS

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        self.messages.append(email.message_from_bytes(envelope.content))
        self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
        self.encrypted.append(session.ssl is not None)
        return "250 OK"

    def authenticate(
        self, server: Any, session: Any, envelope: Any, mechanism: str, data: Any
    ) -> AuthResult:
        assert isinstance(data, LoginPassword)
        login = (data.login.decode(), data.password.decode())
        self.logins.append(login)
        # handled=False: the server answers a refusal itself (535).
        return AuthResult(success=login == ("reader", "pa55"), handled=False)


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    inbox = Inbox()
    port = _port()
    controller = Controller(
        inbox,
        hostname="127.0.0.1",
        port=port,
        authenticator=inbox.authenticate,
        auth_require_tls=False,
    )
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


@pytest.fixture
def tls_smtp(tmp_path: Path) -> Iterator[tuple[Inbox, int, Path]]:
    """A server that requires STARTTLS (and TLS for a login), its certificate for
    127.0.0.1 issued by a test CA (trustme) whose certificate file it yields."""
    import trustme

    authority = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(context)
    ca_file = tmp_path / "test-ca.pem"
    authority.cert_pem.write_to_path(str(ca_file))
    inbox = Inbox()
    port = _port()
    controller = Controller(
        inbox,
        hostname="127.0.0.1",
        port=port,
        tls_context=context,
        require_starttls=True,
        authenticator=inbox.authenticate,
        auth_require_tls=True,
    )
    controller.start()
    try:
        yield inbox, port, ca_file
    finally:
        controller.stop()


@pytest.fixture
def index(tmp_path: Path) -> Path:
    index_dir = build(tmp_path / "ix")
    library = Library(SearchService(index_dir))
    library.follow("galaxies", SearchRequest(q="galaxy"))
    library.follow("graphs", SearchRequest(q="graph", subjects=("cs.LG",)))
    update(index_dir, [record(901, "galaxy"), record(902, "graph"), record(903, "galaxy")])
    return index_dir


def _send(index: Path, port: int, *more: str, env: dict[str, str] | None = None) -> Any:
    args = ["news", "--email", "me@example.org", "--smtp-port", str(port), "--index", str(index)]
    return CliRunner().invoke(main, [*args, *more], env=env or {})


def test_the_digest_is_one_message_with_text_and_html(index: Path, smtp: tuple[Inbox, int]) -> None:
    inbox, port = smtp
    result = _send(index, port, "--from", "digest@example.org", "--page-url", "http://lib.example/")
    assert result.exit_code == 0, result.output
    assert "Sent 3 new records of 2 saved searches to me@example.org." in result.output
    [message] = inbox.messages
    assert inbox.envelopes == [("digest@example.org", ["me@example.org"])]
    assert message["Subject"] == "pubsearch: 3 new records"
    assert message.is_multipart()
    text = message.get_payload(0).get_payload(decode=True).decode()  # type: ignore[union-attr]
    page = message.get_payload(1).get_payload(decode=True).decode()  # type: ignore[union-attr]
    assert message.get_payload(1).get_content_type() == "text/html"  # type: ignore[union-attr]
    assert "galaxies: 2 new" in text and "graphs: 1 new" in text
    assert "http://lib.example/?q=graph&subject=cs.LG" in text
    assert "Galaxy study number 903" in text and "https://arxiv.org/abs/2503.00903" in text
    assert '<a href="http://lib.example/?q=galaxy">galaxies</a>' in page
    assert page.count("<li>") == 3
    # Sent: seen. The next digest has nothing new.
    assert _send(index, port).exit_code == 0
    assert inbox.messages[1]["Subject"] == "pubsearch: 0 new records"


def test_the_login_comes_from_the_environment(index: Path, smtp: tuple[Inbox, int]) -> None:
    inbox, port = smtp
    env = {"PUBSEARCH_SMTP_USER": "reader", "PUBSEARCH_SMTP_PASSWORD": "pa55"}
    assert _send(index, port, env=env).exit_code == 0
    assert inbox.logins == [("reader", "pa55")] and len(inbox.messages) == 1
    wrong = _send(index, port, env={**env, "PUBSEARCH_SMTP_PASSWORD": "nope"})
    assert_one_line_error(wrong, 1, f"127.0.0.1:{port}", "cannot send the digest")


def test_the_server_and_sender_come_from_the_environment_too(
    index: Path, smtp: tuple[Inbox, int]
) -> None:
    inbox, port = smtp
    env = {"PUBSEARCH_SMTP_PORT": str(port), "PUBSEARCH_MAIL_FROM": "env@example.org"}
    result = CliRunner().invoke(
        main, ["news", "--email", "me@example.org", "--index", str(index)], env=env
    )
    assert result.exit_code == 0, result.output
    assert inbox.envelopes[0][0] == "env@example.org"


def test_a_server_that_cannot_be_reached_marks_nothing_seen(index: Path) -> None:
    port = _port()  # nothing listens there
    result = _send(index, port)
    assert_one_line_error(result, 1, f"127.0.0.1:{port}", "cannot send the digest")
    followed = {f.saved.name: f.new for f in Library(SearchService(index)).followed()}
    assert followed == {"galaxies": 2, "graphs": 1}


def test_the_digest_recommends_for_each_tag_among_its_new_records(
    tmp_path: Path, smtp: tuple[Inbox, int]
) -> None:
    inbox, port = smtp
    index_dir = build(tmp_path / "ix")
    library = Library(SearchService(index_dir))
    library.follow("galaxies", SearchRequest(q="galaxy"))
    library.tag("lensing", ["2503.00001", "2503.00004"])  # two galaxy papers
    update(index_dir, [record(901, "galaxy"), record(902, "graph"), record(903, "galaxy")])
    result = _send(index_dir, port, "--recommended", "2", "--page-url", "http://lib.example/")
    assert result.exit_code == 0, result.output
    assert "Sent 2 new records of 1 saved searches and 2 recommended for 1 tag" in result.output
    message = inbox.messages[0]
    assert message["Subject"] == "pubsearch: 2 new records, 2 recommended"
    text = message.get_payload(0).get_payload(decode=True).decode()  # type: ignore[union-attr]
    page = message.get_payload(1).get_payload(decode=True).decode()  # type: ignore[union-attr]
    section = text[text.index("Recommended for lensing") :]
    # Among the 3 records new since the tag was given, the two galaxy papers, not the graph.
    assert "the 2 most like its 2 records of 3 new" in section
    assert "http://lib.example/library/tag/lensing/recommended" in section
    assert "number 901" in section and "number 903" in section and "number 902" not in section
    assert page.count("<li>") == 4 and "Recommended for <a href=" in page
    # Sent: the tag's new records were recommended; the next digest has none for it.
    assert _send(index_dir, port).exit_code == 0
    assert inbox.messages[1]["Subject"] == "pubsearch: 0 new records"
    again = inbox.messages[1].get_payload(0).get_payload(decode=True).decode()  # type: ignore[union-attr]
    assert "the 0 most like its 2 records of 0 new" in again
    # --recommended 0: no section.
    update(index_dir, [record(904, "galaxy")])
    assert _send(index_dir, port, "--recommended", "0").exit_code == 0
    third = inbox.messages[2].get_payload(0).get_payload(decode=True).decode()  # type: ignore[union-attr]
    assert "Recommended for" not in third and "galaxies: 1 new" in third


def test_starttls_encrypts_the_message_and_the_login(
    index: Path, tls_smtp: tuple[Inbox, int, Path]
) -> None:
    inbox, port, ca_file = tls_smtp
    login = {"PUBSEARCH_SMTP_USER": "reader", "PUBSEARCH_SMTP_PASSWORD": "pa55"}
    # The server's certificate is checked against the CAs OpenSSL is told of.
    trusted = {**login, "SSL_CERT_FILE": str(ca_file)}
    result = _send(index, port, "--starttls", env=trusted)
    assert result.exit_code == 0, result.output
    assert inbox.encrypted == [True] and inbox.logins == [("reader", "pa55")]
    assert inbox.messages[0]["Subject"] == "pubsearch: 3 new records"


def test_a_server_that_requires_starttls_refuses_plain_text_in_one_line(
    index: Path, tls_smtp: tuple[Inbox, int, Path]
) -> None:
    inbox, port, ca_file = tls_smtp
    plain = _send(index, port, env={"SSL_CERT_FILE": str(ca_file)})
    assert_one_line_error(plain, 1, f"127.0.0.1:{port}", "cannot send the digest")
    assert inbox.messages == []
    followed = {f.saved.name: f.new for f in Library(SearchService(index)).followed()}
    assert followed == {"galaxies": 2, "graphs": 1}  # nothing marked seen


def test_a_certificate_not_trusted_stops_before_the_login(
    index: Path, tls_smtp: tuple[Inbox, int, Path], tmp_path: Path
) -> None:
    inbox, port, _ca_file = tls_smtp
    other = tmp_path / "other-ca.pem"
    import trustme

    trustme.CA().cert_pem.write_to_path(str(other))
    env = {"PUBSEARCH_SMTP_USER": "reader", "PUBSEARCH_SMTP_PASSWORD": "pa55"}
    result = _send(index, port, "--starttls", env={**env, "SSL_CERT_FILE": str(other)})
    assert_one_line_error(result, 1, f"127.0.0.1:{port}", "certificate verify failed")
    assert inbox.logins == [] and inbox.messages == []
