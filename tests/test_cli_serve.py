"""`pubsearch serve`: a real waitress server, safe defaults, the URL to open."""

from __future__ import annotations

import subprocess
import sys
import urllib.request

from click.testing import CliRunner

from pubsearch.cli import _browser_url, main


def test_help_says_the_defaults_and_how_to_expose_it() -> None:
    result = CliRunner().invoke(main, ["serve", "--help"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "--host TEXT" in text and "[default: 127.0.0.1]" in text
    assert "--port" in text and "[default: 5000; 0<=x<=65535]" in text
    assert "--host 0.0.0.0 exposes the page to your network" in text
    assert "--index" in text and "--threads" in text


def test_python_dash_m_runs_the_cli() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pubsearch", "--help"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "serve" in result.stdout and "query" in result.stdout


def test_browser_url() -> None:
    assert _browser_url("127.0.0.1", 5000) == "http://127.0.0.1:5000/"
    assert _browser_url("0.0.0.0", 8080) == "http://127.0.0.1:8080/"
    assert _browser_url("::1", 80) == "http://[::1]:80/"


def test_real_server_serves_the_page_and_the_api(live_server: str) -> None:
    with urllib.request.urlopen(live_server + "/?q=batch+size") as response:
        assert response.status == 200
        assert response.headers["Server"].startswith("waitress")
        assert "default-src 'self'" in response.headers["Content-Security-Policy"]
        assert "<strong>6</strong> results" in response.read().decode()
    with urllib.request.urlopen(live_server + "/api/search?q=batch") as response:
        assert response.headers["Content-Type"] == "application/json"
    with urllib.request.urlopen(live_server + "/static/pubsearch.css") as response:
        assert response.status == 200
