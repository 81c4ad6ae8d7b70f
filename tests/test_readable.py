"""TeX shown as text: real titles of the arXiv sample, and what stays as it is."""

from __future__ import annotations

import pytest

from pubsearch.ingest.readable import readable


@pytest.mark.parametrize(
    ("tex", "text"),
    [
        # Real titles of tests/data/arxiv-2024-2026.sample.jsonl
        (
            "The astrophysical $S-$factor and reaction rate for $^{15}$N($p,γ$)$^{16}$O",
            "The astrophysical S-factor and reaction rate for ¹⁵N(p,γ)¹⁶O",
        ),
        (
            "Minority magnons and mode branching in monolayer Fe$_3$GeTe$_2$",
            "Minority magnons and mode branching in monolayer Fe₃GeTe₂",
        ),
        (
            "\\textit{Ab initio} Wannier-representation-based calculations of photocurrent",
            "Ab initio Wannier-representation-based calculations of photocurrent",
        ),
        (
            "Electron correlations in the kagome flat band metal $\\rm CsCr_3Sb_5$",
            "Electron correlations in the kagome flat band metal CsCr₃Sb₅",
        ),
        (
            "Tuning superconductivity in boron doped $Si_{1-x}Ge_{x}$ epilayers",
            "Tuning superconductivity in boron doped Si₁₋ₓGeₓ epilayers",
        ),
        (
            "Inversion of Van Hove Singularities in $A$V$_{3}$Sb$_{5}$ ($A$ = K, Rb, and Cs)",
            "Inversion of Van Hove Singularities in AV₃Sb₅ (A = K, Rb, and Cs)",
        ),
        # Made up, after what the corpus has
        ("\\textbf{\\underline{Diff}}usion Models", "Diffusion Models"),
        ("$\\alpha$-stable processes in $O(n^2)$ time", "α-stable processes in O(n²) time"),
        ("\\emph{in situ} data, $\\sim$10\\% better", "in situ data, ∼10% better"),
        ("angles of $30^\\circ$ and $f^\\prime$", "angles of 30° and f′"),
        ("see \\href{https://example.org}{the code}", "see the code"),
        ("\\texttt{pubsearch} & co", "pubsearch & co"),
        ("$x_{max}$ and $\\mathbb{R}^d$", "xₘₐₓ and ℝ^d"),  # no Unicode superscript d
    ],
)
def test_tex_reads_as_text(tex: str, text: str) -> None:
    assert readable(tex) == text


@pytest.mark.parametrize(
    "text",
    [
        "No TeX at all: 5 < 6 & 7 > 2",
        "A price of $5 and $6",  # dollars of money: as pylatexenc reads them, or as they are
        "a broken \\frac{1}{2",
    ],
)
def test_text_without_tex_or_with_broken_tex_is_never_lost(text: str) -> None:
    out = readable(text)
    assert out
    assert all(word.strip("$\\{}") in out for word in text.split() if word.isalpha())


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("the ``high-level'' tasks", "the \u201chigh-level\u201d tasks"),
        (
            "``the model's output'' and ``more''",
            "\u201cthe model's output\u201d and \u201cmore\u201d",
        ),
        ("``$\\alpha$-decay'' rates", "\u201c\u03b1-decay\u201d rates"),
        ("an ``unclosed quote", "an ``unclosed quote"),
        ("it's Smith''s", "it's Smith''s"),
    ],
)
def test_tex_quotation_marks_are_curly_quotes(text: str, shown: str) -> None:
    assert readable(text) == shown
