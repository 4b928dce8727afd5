"""The conformance matrix's verdicts, collected as its tests run and printed at the end of the
run (`pytest_terminal_summary`): one row per surface and storage, one column per tool and
target, each cell `pass`, `refused by design` (the reason in a footnote) or `FAIL`.

A verdict is recorded by the test that observed it; a refusal counts as by design only when
the test saw the designed refusal (its status and message), never by being absent. The table
is printed only when matrix tests ran."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

PASS, REFUSED, FAIL = "pass", "refused by design", "FAIL"


@dataclass(frozen=True, slots=True)
class Verdict:
    """What one tool did on one surface over one storage."""

    outcome: str  # PASS, REFUSED or FAIL
    detail: str = ""  # the reason of a refusal, what went wrong in a failure


VERDICTS: dict[tuple[str, str], Verdict] = {}  # (row, column) -> verdict, in run order


def record(row: str, column: str, verdict: Verdict) -> None:
    VERDICTS[(row, column)] = verdict


def render(verdicts: dict[tuple[str, str], Verdict]) -> list[str]:
    """The matrix as text lines: rows in run order, columns in first-seen order."""
    rows = list(dict.fromkeys(row for row, _ in verdicts))
    columns = list(dict.fromkeys(column for _, column in verdicts))
    reasons: dict[str, int] = {}
    cells: dict[tuple[str, str], str] = {}
    for key, verdict in verdicts.items():
        if verdict.outcome == REFUSED:
            number = reasons.setdefault(verdict.detail, len(reasons) + 1)
            cells[key] = f"refused[{number}]"
        else:
            cells[key] = verdict.outcome
    first = max(len(row) for row in rows)
    widths = [
        max(len(column), *(len(cells.get((r, column), "-")) for r in rows)) for column in columns
    ]
    lines = ["  ".join([" " * first, *(c.ljust(w) for c, w in zip(columns, widths, strict=True))])]
    for row in rows:
        shown = (cells.get((row, c), "-").ljust(w) for c, w in zip(columns, widths, strict=True))
        lines.append("  ".join([row.ljust(first), *shown]))
    lines += [f"[{number}] {reason}" for reason, number in reasons.items()]
    failures = [(key, v.detail) for key, v in verdicts.items() if v.outcome == FAIL]
    lines += [f"FAIL {row} / {column}: {detail}" for (row, column), detail in failures]
    counts = {o: sum(v.outcome == o for v in verdicts.values()) for o in (PASS, REFUSED, FAIL)}
    lines.append(", ".join(f"{count} {outcome}" for outcome, count in counts.items()))
    return lines


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not VERDICTS:
        return
    terminalreporter.section("conformance matrix: every tool, surface and storage")
    for line in render(VERDICTS):
        terminalreporter.write_line(line)
