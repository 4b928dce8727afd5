"""Plugin: the one reliability recorder. It counts first; tests assert after.

Every reliability and security figure the suite prints comes from `RECORDER`, and every count
is taken before the assert that could fail on it, so a failing test still leaves its failure
in the summary (a tally that increments after its assert can only ever print 0):

- requests sent and answers by status class (`answer`, called by the `api` fixture for every
  REST call, and by the load, hostile-load and fuzz clients for theirs). A 4xx or 5xx answer
  is *expected* when the caller declared it (`expect=`), or when it came while a fault was
  being injected on purpose (`injecting()`, which every `Trial` enters); a 5xx nobody expected
  is *unexpected* and listed by route;
- acknowledged edits checked against the final files (`Ledger`): each row an agent was told
  landed must be in its file exactly once; missing is *lost*, more than once *duplicated*,
  and a file that is no longer readable (not UTF-8, not JSON, not a valid notebook) is *torn*,
  with every row acknowledged in it;
- faults injected and survived (`fault`, judged by the `Trial` oracle in faults.py), and the
  edits each trial acknowledged, checked by that oracle (`trial_edits`);
- inputs tried and clean errors (`counts`, for the bad-input and fuzz tests);
- figures measured and reported, never asserted (`figures`: the worst event-loop stall under
  hostile load).

Invariants: counting never raises; `Recorder()` makes a private recorder (the meta-test plants
failures in one) and `RECORDER` is the run's; the summary at the end of a run is printed from
`RECORDER` only, and only when something was counted.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import nbformat

CLASSES = ("2xx", "3xx", "4xx", "5xx")


def status_class(status: int) -> str:
    return f"{status // 100}xx"


@dataclass(frozen=True, slots=True)
class EditCheck:
    """What one `Ledger.check` found: rows checked, and the rows lost, duplicated or torn."""

    checked: int
    lost: tuple[str, ...]
    duplicated: tuple[str, ...]
    torn: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicated or self.torn)

    def __str__(self) -> str:
        return (
            f"{self.checked} acknowledged edits checked: lost {list(self.lost)}, "
            f"duplicated {list(self.duplicated)}, torn {list(self.torn)}"
        )


@dataclass
class Recorder:
    requests: int = 0
    answers: Counter[str] = field(default_factory=Counter)  # by status class
    expected: Counter[str] = field(default_factory=Counter)  # non-2xx answers expected
    unexpected: list[str] = field(default_factory=list)  # "route status" of unexpected 5xx
    edits_checked: int = 0
    lost: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    torn: list[str] = field(default_factory=list)
    faults: dict[str, bool] = field(default_factory=dict)  # fault -> survived
    counts: Counter[str] = field(default_factory=Counter)  # inputs tried / clean errors
    figures: dict[str, str] = field(default_factory=dict)  # measured, reported, never asserted
    _injecting: int = 0

    # -- requests ------------------------------------------------------------------------------

    def answer(self, route: str, status: int, *, expect: int | Collection[int] = ()) -> None:
        """One request sent and the status it got back."""
        wanted = {expect} if isinstance(expect, int) else set(expect)
        kind = status_class(status)
        self.requests += 1
        self.answers[kind] += 1
        if status < 400:
            return
        if status in wanted or self._injecting:
            self.expected[kind] += 1
        elif status >= 500:
            self.unexpected.append(f"{route} {status}")

    @contextmanager
    def injecting(self) -> Iterator[None]:
        """While a fault is injected on purpose, error answers are the expected outcome."""
        self._injecting += 1
        try:
            yield
        finally:
            self._injecting -= 1

    # -- faults --------------------------------------------------------------------------------

    def fault(self, name: str, survived: bool) -> None:
        self.faults[name] = survived

    def trial_edits(self, name: str, acknowledged: int, problem: str) -> None:
        """A fault trial's acknowledged edits, judged by its oracle (faults.Trial): all there,
        or the file is no longer valid (torn), or they are not all there exactly (lost)."""
        self.edits_checked += acknowledged
        if not problem:
            return
        kind = self.torn if "not a valid notebook" in problem else self.lost
        kind.append(f"{name}: {problem}")

    # -- acknowledged edits --------------------------------------------------------------------

    def ledger(self) -> Ledger:
        return Ledger(self)

    def _checked(self, found: EditCheck) -> None:
        self.edits_checked += found.checked
        self.lost.extend(found.lost)
        self.duplicated.extend(found.duplicated)
        self.torn.extend(found.torn)

    # -- the summary ---------------------------------------------------------------------------

    def __bool__(self) -> bool:
        return bool(self.requests or self.edits_checked or self.faults or self.counts)

    def summary(self) -> list[str]:
        """The lines printed at the end of a run."""
        classes = " / ".join(f"{self.answers[c]:,}" for c in CLASSES)
        expected = ", ".join(f"{self.expected[c]:,} {c}" for c in ("4xx", "5xx"))
        survived = sum(self.faults.values())
        broken = f"{len(self.lost)} / {len(self.duplicated)} / {len(self.torn)}"
        faults = f"{len(self.faults)} / {survived}"
        inputs = f"{self.counts['inputs tried']:,} / {self.counts['inputs clean errors']:,}"
        lines = [
            f"{'requests sent':<34}{self.requests:>10,}",
            f"{'answers 2xx / 3xx / 4xx / 5xx':<34}{classes:>10}",
            f"{'  expected error answers':<34}{expected:>10}",
            f"{'  unexpected 5xx':<34}{len(self.unexpected):>10,}",
            f"{'acknowledged edits checked':<34}{self.edits_checked:>10,}",
            f"{'  lost / duplicated / torn':<34}{broken:>10}",
            f"{'faults injected / survived':<34}{faults:>10}",
            f"{'inputs tried / clean errors':<34}{inputs:>10}",
        ]
        lines += [f"{name:<34}{value:>10}" for name, value in self.figures.items()]
        lines += [f"  unexpected: {what}" for what in self.unexpected[:20]]
        lines += [f"  lost: {row}" for row in self.lost[:20]]
        lines += [f"  duplicated: {row}" for row in self.duplicated[:20]]
        lines += [f"  torn: {row}" for row in self.torn[:20]]
        lines += [f"  fault not survived: {name}" for name, ok in self.faults.items() if not ok]
        return lines


@dataclass
class Ledger:
    """The rows one test's agents were told landed, per file, checked once at the end."""

    recorder: Recorder
    rows: dict[str, list[str]] = field(default_factory=dict)

    def acknowledge(self, path: str, *rows: str) -> None:
        """`rows` (whole lines, each unique to its edit) were reported written to `path`."""
        self.rows.setdefault(path, []).extend(rows)

    def check(self, files: Mapping[str, bytes]) -> EditCheck:
        """Count every acknowledged row in the final `files` (path -> bytes); recorded in the
        recorder before it is returned, whatever the caller asserts next."""
        lost: list[str] = []
        duplicated: list[str] = []
        torn: list[str] = []
        checked = 0
        for path, rows in self.rows.items():
            checked += len(rows)
            lines = _lines(path, files.get(path))
            if lines is None:
                torn.extend(f"{path}: {row}" for row in rows)
                continue
            count = Counter(lines)
            lost.extend(f"{path}: {row}" for row in rows if count[row] == 0)
            duplicated.extend(f"{path}: {row}" for row in rows if count[row] > 1)
        found = EditCheck(checked, tuple(lost), tuple(duplicated), tuple(torn))
        self.recorder._checked(found)
        return found


def _lines(path: str, data: bytes | None) -> list[str] | None:
    """The lines of a file (of every cell's source, for a notebook); None when it is torn."""
    if data is None:
        return None
    try:
        text = data.decode("utf-8")
        if not path.endswith(".ipynb"):
            return text.split("\n")
        nb: Any = json.loads(text)
        nbformat.validate(nbformat.from_dict(json.loads(text)))
    except Exception:  # undecodable, unparsable or invalid: torn
        return None
    lines: list[str] = []
    for cell in nb.get("cells", []):
        source = cell.get("source", "")
        lines += ("".join(source) if isinstance(source, list) else source).split("\n")
    return lines


RECORDER = Recorder()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The reliability summary, from the recorder, at the end of a run that counted anything."""
    if not RECORDER:
        return
    terminalreporter.section("reliability (one recorder: counted before any assert)")
    for line in RECORDER.summary():
        terminalreporter.write_line(line)
