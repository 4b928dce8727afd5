"""syntax.py: which code parses (IPython syntax included) and what an edit broke."""

from __future__ import annotations

import pytest

from jupyter_hashline.hashline.syntax import (
    CodeSpan,
    WholeFile,
    blank_magics,
    broken_spans,
    finder_for_path,
    parse_problem,
)


def span(source: str, language: str = "ipython") -> CodeSpan:
    rows = ["# before"] * 9 + source.split("\n")
    return CodeSpan(10, len(rows), language, "c1", rows)


@pytest.mark.parametrize(
    "source",
    [
        "%matplotlib inline\nimport numpy as np",
        "!pip install x\nfiles = !ls\nx = %time f()",
        "await asyncio.sleep(0)",
        "for i in range(3):\n    !echo $i\n    %time f(i)",
        "np.array?",
        "%%bash\nls -la | grep (",
        "x = (1\n     % 2)",  # a modulo operator at the start of a continuation line
    ],
)
def test_ipython_syntax_parses(source: str) -> None:
    assert parse_problem(span(source)) is None


def test_a_problem_names_the_line_in_the_whole_text() -> None:
    problem = parse_problem(span("x = 1\ny = (2\n"))
    assert problem is not None and problem.line == 11 and problem.label == "c1"
    assert "never closed" in problem.message


def test_magics_are_not_python_in_a_python_file() -> None:
    assert parse_problem(span("%matplotlib inline", "python")) is not None


def test_other_languages_get_no_claim() -> None:
    assert parse_problem(span("this is ( not python", "markdown")) is None
    assert parse_problem(span("x <- c(1, 2", "r")) is None


def test_blanking_keeps_every_line_in_place() -> None:
    source = "a = 1\n  !ls\n%time f()\nb = 2"
    assert blank_magics(source) == "a = 1\n  pass\npass\nb = 2"


def test_finder_by_file_name() -> None:
    assert finder_for_path("pkg/mod.py") == WholeFile("python", "pkg/mod.py")
    assert finder_for_path("x.ipy") == WholeFile("ipython", "x.ipy")
    assert finder_for_path("README.md") is None and finder_for_path("Makefile") is None


def test_broken_spans_reports_what_the_edit_broke_not_what_it_found_broken() -> None:
    finder = WholeFile("python", "m.py")
    good, bad = ["x = 1"], ["x = (1"]
    assert [p.line for p in broken_spans(good, bad, [(1, 1)], finder)] == [1]
    assert broken_spans(bad, ["x = (2"], [(1, 1)], finder) == ()
    assert broken_spans(bad, good, [(1, 1)], finder) == ()
