"""Whether code still parses: Python files and Python notebook cells, IPython syntax included.

A `CodeSpan` is a run of lines in one language (a whole `.py` file, one notebook code cell);
`SpanFinder` finds the span around a line. `parse_problem` says why a span's source does not
parse, or None.

Invariants:
- Claims are made for Python only ("python", and "ipython" for notebook cells and `.ipy`
  files); every other language, and IPython cell magics (`%%bash` ...), get no claim (None).
- IPython syntax parses: a source that compiles as it is, or after its magic lines (`%`,
  `!`, `x = !cmd`, `x = %magic`, `?` help) are blanked, has no problem; top-level `await` is
  allowed. Blanking keeps every line in place, so a problem's line is the source's own.
- Pure and cheap: one `compile` to an AST (no bytecode) per source, twice only when the
  first fails; no import of IPython or Jupyter. Spans over `MAX_CHECKED_LINES` get no claim.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

PYTHON_LANGUAGES = frozenset({"python", "ipython", "python3"})
MAX_CHECKED_LINES = 20_000
"""Longer spans get no claim: parsing them on every edit would cost more than it tells."""
_PY_SUFFIXES = {".py": "python", ".pyw": "python", ".pyi": "python", ".ipy": "ipython"}
_MAGIC = re.compile(r"^(\s*)(?:[%!?]|[\w.,\s\[\]()*]+=\s*[%!])")
_HELP = re.compile(r"^(\s*)[\w.]+\?{1,2}\s*$")
_FLAGS = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT


class SyntaxCheck(str, Enum):
    """What to do with an edit that turns parsing Python into code that does not parse."""

    WARN = "warn"
    STRICT = "strict"
    OFF = "off"


@dataclass(frozen=True, slots=True)
class CodeSpan:
    """Lines `first..last` (1-based, inclusive) of a text (`rows`, the whole text's lines), in
    `language`; `label` names the span across versions of the text (a cell's id, a file's
    path), None for a span that is new (a cell written without an id). `decode` turns the
    joined lines into the source they stand for (a notebook's escaped markers)."""

    first: int
    last: int
    language: str
    label: str | None
    rows: Sequence[str] = field(repr=False, compare=False)
    decode: Callable[[str], str] | None = field(default=None, repr=False, compare=False)

    @property
    def checked(self) -> bool:
        """Whether parse claims are made for this span: Python, and not too long to parse on
        every edit (`MAX_CHECKED_LINES`)."""
        return self.language in PYTHON_LANGUAGES and self.last - self.first < MAX_CHECKED_LINES

    @property
    def source(self) -> str:
        """The span's source (joined on demand: most spans are never parsed)."""
        joined = "\n".join(self.rows[self.first - 1 : self.last])
        return self.decode(joined) if self.decode is not None else joined


@dataclass(frozen=True, slots=True)
class ParseProblem:
    """Why a span does not parse: the line (1-based, in the whole text), the message, and the
    span's label (a cell id; a file's path)."""

    line: int
    message: str
    label: str | None = None


class SpanFinder(Protocol):
    """The code span around line `line` of a text given as its lines (None: no code there).

    A finder may also have `resume_at(lines, line) -> int`: after `span_at(lines, line)` found
    no span, the next line at which one may be found, so walks over the spans step over such
    lines at once (without it they go on at `line + 1`)."""

    def span_at(self, lines: Sequence[str], line: int) -> CodeSpan | None: ...

    def span_labelled(self, lines: Sequence[str], label: str) -> CodeSpan | None: ...


@dataclass(frozen=True, slots=True)
class WholeFile:
    """A file that is one span in one language (a `.py` file)."""

    language: str
    label: str

    def span_at(self, lines: Sequence[str], line: int) -> CodeSpan | None:
        if not 1 <= line <= max(len(lines), 1):
            return None
        return CodeSpan(1, len(lines), self.language, self.label, lines)

    def span_labelled(self, lines: Sequence[str], label: str) -> CodeSpan | None:
        return self.span_at(lines, 1) if label == self.label else None


def finder_for_path(path: str) -> WholeFile | None:
    """The finder for a plain file by its name: Python files are one span; others none."""
    dot = path.rfind(".")
    language = _PY_SUFFIXES.get(path[dot:].lower()) if dot >= 0 else None
    return WholeFile(language, path) if language is not None else None


def parse_problem(span: CodeSpan) -> ParseProblem | None:
    """Why `span` does not parse, or None (parses, or no claim for its language)."""
    if not span.checked:
        return None
    source = span.source
    ipython = span.language == "ipython"
    if ipython and source.lstrip().startswith("%%"):
        return None
    problem = _compile_problem(source)
    if problem is None or not ipython:
        return _absolute(problem, span)
    blanked = blank_magics(source)
    if blanked == source:
        return _absolute(problem, span)
    return _absolute(_compile_problem(blanked), span)


def blank_magics(source: str) -> str:
    """`source` with each IPython magic, shell and help line turned into `pass` at its own
    indentation (so blocks around it still parse); every other line as it is."""
    rows = source.split("\n")
    for i, row in enumerate(rows):
        match = _MAGIC.match(row) or _HELP.match(row)
        if match is not None:
            rows[i] = match.group(1) + "pass"
    return "\n".join(rows)


def _compile_problem(source: str) -> tuple[int, str] | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning (invalid escapes) is not a problem
            compile(source, "<code>", "exec", flags=_FLAGS, dont_inherit=True)
    except SyntaxError as err:
        return err.lineno or 1, err.msg
    except (ValueError, MemoryError, RecursionError) as err:
        return 1, str(err) or type(err).__name__
    return None


def _absolute(problem: tuple[int, str] | None, span: CodeSpan) -> ParseProblem | None:
    if problem is None:
        return None
    line, message = problem
    return ParseProblem(min(span.first + line - 1, span.last), message, span.label)


def broken_spans(
    old_lines: Sequence[str],
    new_lines: Sequence[str],
    regions: Sequence[tuple[int, int]],
    finder: SpanFinder,
) -> tuple[ParseProblem, ...]:
    """The problems of the Python spans an edit changed (`regions`, in new numbering) that no
    longer parse but did before the edit (or are new): what the edit broke, not what it
    found broken."""
    problems: list[ParseProblem] = []
    done = 0  # spans do not overlap: every line up to here has been looked at
    for start, end in sorted(regions):
        line = max(min(max(start, 1), max(len(new_lines), 1)), done + 1)
        while line <= max(end, start):
            span = finder.span_at(new_lines, line)
            if span is None:  # no span holds the lines up to where the walk resumes
                line = _resume_at(finder, new_lines, line)
                done = max(done, line - 1)
                continue
            problem = parse_problem(span)
            if problem is not None and _parsed_before(old_lines, span, finder):
                problems.append(problem)
            line = max(span.last, line) + 1
            done = line - 1
    return tuple(problems)


def changed_spans(
    old_lines: Sequence[str], new_lines: Sequence[str], finder: SpanFinder
) -> list[tuple[int, int]]:
    """The line ranges of the spans of `new_lines` whose source no span of `old_lines` has
    (what a whole-file write changed, span by span; no span is compiled)."""
    old_sources = {span.source for span in iter_spans(old_lines, finder)}
    return [
        (span.first, max(span.last, span.first))
        for span in iter_spans(new_lines, finder)
        if span.source not in old_sources
    ]


def iter_spans(lines: Sequence[str], finder: SpanFinder) -> list[CodeSpan]:
    """Every span of a text, in order."""
    spans: list[CodeSpan] = []
    line = 1
    while line <= len(lines):
        span = finder.span_at(lines, line)
        if span is None:
            line = _resume_at(finder, lines, line)
            continue
        spans.append(span)
        line = max(span.last, line) + 1
    return spans


def _resume_at(finder: SpanFinder, lines: Sequence[str], line: int) -> int:
    """Where a walk goes on after `span_at(lines, line)` found no span (see `SpanFinder`)."""
    resume = getattr(finder, "resume_at", None)
    return max(resume(lines, line), line + 1) if resume is not None else line + 1


def _parsed_before(old_lines: Sequence[str], span: CodeSpan, finder: SpanFinder) -> bool:
    old = finder.span_labelled(old_lines, span.label) if span.label is not None else None
    return old is None or parse_problem(old) is None


def describe_problems(problems: Sequence[ParseProblem], path: str) -> str:
    """The problems as a clause: where (line, and cell when the span is a cell) and why."""
    listed = "; ".join(
        f"line {p.line}"
        + (f" (cell {p.label})" if p.label is not None and p.label != path else "")
        + f": {p.message}"
        for p in problems
    )
    return f"no longer parses as Python ({listed}); it parsed before this edit"
