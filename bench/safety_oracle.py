"""The judge of the safety table: the merge a correct tool produces, computed independently,
and the verdict on the file a strategy left on disk.

`expected(scenario)` applies the agent's operations to the person's notebook by line identity
(bench/safety_scenarios.py tracks where every line of the notebook read went), never by diffing
texts and never with hashline's code. It is None for overlapping conflicts (no merge keeps both)
and wherever an operation's lines or cells are gone.

`judge(scenario, refused, final)` compares whole cells (type, source, outputs, execution count,
metadata, attachments, id) and the notebook's metadata:

- corrupted: not a valid notebook (copies of an id told apart), or changed although refused;
- rejected: refused, the file exactly as the person saved it;
- applied: equal to the expected merge;
- wrong cell: the agent's change landed on a cell (or at a place) other than the one it aimed at;
- lost: something of the person's notebook is gone (a change reverted, a cell dropped, outputs
  or metadata lost), or the edit landed in an overlapping conflict (one side overwrote the other);
- unexplained: anything else (listed in full; should not happen).

In a notebook without ids, cells of the same type and source cannot be told apart by
anything an agent reads: which of them carries which outputs is not judged.

Ids: a cell's id must stay as the person left it, except that a later copy of an id may get a
fresh one (JupyterLab repairs duplicates so), and cells that have none in a notebook older than
4.5 may get one (the 4.5 upgrade; the notebook's minor version may then be 5). New cells may
have any id. Ids must be unique where present.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from difflib import SequenceMatcher
from enum import Enum
from typing import Any

import nbformat

from bench.safety_scenarios import (
    CellOp,
    CellVerb,
    Conflict,
    LineOp,
    Notebook,
    Scenario,
    Tracked,
    apply_ops,
    source_of,
)

_JOINED = ("source", "text")


class Outcome(Enum):
    APPLIED = "applied"
    REJECTED = "rejected"
    LOST = "lost"
    WRONG_CELL = "wrong cell"
    CORRUPTED = "corrupted"
    UNEXPLAINED = "unexplained"


def expected(scenario: Scenario) -> Notebook | None:
    """The merge of both changes, or None where none keeps both."""
    found = expected_cells(scenario)
    return None if found is None else found[0]


def expected_cells(scenario: Scenario) -> tuple[Notebook, list[int | None]] | None:
    """The merge, and for each of its cells its index in the person's notebook (None: new)."""
    if scenario.conflict is Conflict.OVERLAP:
        return None
    merged = scenario.tracked.clone()
    for index, cell in enumerate(merged.cells):
        cell.tag = index
    if not apply_ops(merged, scenario.agent.ops):
        return None
    return merged.notebook(), [cell.tag for cell in merged.cells]


# -- comparing cells ---------------------------------------------------------------------------


def normalized(value: Any, key: str = "") -> Any:
    """Multi-line strings stored as line lists joined (as nbformat reads them); transient keys
    (`trusted`) dropped; ids left out (compared apart)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in ("trusted", "id") and key in ("metadata", "cell"):
                continue
            out[k] = normalized(v, k)
        return out
    if isinstance(value, list):
        if all(isinstance(v, str) for v in value) and _joinable(key):
            return "".join(value)
        return [normalized(v, key if key == "cells" else "") for v in value]
    return value


def _joinable(key: str) -> bool:
    return key in _JOINED or (
        "/" in key and key != "application/json" and not key.endswith("+json")
    )


def cell_body(cell: dict[str, Any]) -> Any:
    return normalized(cell, "cell")


class Ids:
    """Which ids each cell of the expected notebook may carry."""

    def __init__(self, person: Notebook) -> None:
        self.legacy = (person.get("nbformat", 4), person.get("nbformat_minor", 0)) < (4, 5)
        seen: set[str] = set()
        self.later_copies: set[int] = set()
        for n, cell in enumerate(person["cells"]):
            cid = cell.get("id")
            if isinstance(cid, str) and cid in seen:
                self.later_copies.add(n)
            if isinstance(cid, str):
                seen.add(cid)

    def accepts(self, want: dict[str, Any], got: dict[str, Any], person_index: int | None) -> bool:
        mine, theirs = want.get("id"), got.get("id")
        if person_index is None or person_index in self.later_copies or mine is None:
            return theirs is None or isinstance(theirs, str)
        return bool(theirs == mine)


def same_cell(
    want: dict[str, Any], got: dict[str, Any], ids: Ids, person_index: int | None
) -> bool:
    return cell_body(want) == cell_body(got) and ids.accepts(want, got, person_index)


def same_notebook(
    final: Notebook, want: Notebook, origins: list[int | None], scenario: Scenario
) -> bool:
    person = json.loads(scenario.person)
    ids = Ids(person)
    if not _top_level_kept(final, person):
        return False
    cells, wanted = final["cells"], want["cells"]
    if len(cells) != len(wanted):
        return False
    pairs = enumerate(zip(wanted, cells, strict=True))
    if all(same_cell(w, g, ids, origins[n]) for n, (w, g) in pairs):
        return True
    return ids.legacy and _twins_swapped(cells, wanted)


def _twins_swapped(cells: Sequence[dict[str, Any]], wanted: Sequence[dict[str, Any]]) -> bool:
    """In a notebook without ids, cells of the same type and source cannot be told apart by
    anything an agent reads (the projection shows sources, positions name cells): which of
    them carries which outputs and metadata is not judged, everything else is."""
    if _texts({"cells": cells}) != _texts({"cells": wanted}):
        return False
    groups: dict[tuple[str, str], list[int]] = {}
    for n, cell in enumerate(wanted):
        groups.setdefault((str(cell.get("cell_type")), source_of(cell)), []).append(n)
    return all(
        sorted(_key(cells[n]) for n in members) == sorted(_key(wanted[n]) for n in members)
        for members in groups.values()
    )


def _top_level_kept(final: Notebook, person: Notebook) -> bool:
    if normalized(final.get("metadata", {}), "metadata") != normalized(
        person.get("metadata", {}), "metadata"
    ):
        return False
    if final.get("nbformat") != person.get("nbformat"):
        return False
    minor, was = final.get("nbformat_minor"), person.get("nbformat_minor")
    upgraded = minor == 5 and all("id" in c for c in final["cells"])
    return minor == was or upgraded


# -- the verdict -------------------------------------------------------------------------------


def load_valid(text: str, *, copies: bool) -> Notebook | None:
    """The notebook in `text` when it is a valid one, else None. With `copies`, duplicate ids
    are allowed (the person's notebook had pasted copies; keeping them is not corruption)."""
    try:
        nb = json.loads(text)
        probe = json.loads(text)  # a second parse: a copy to rename ids in
        ids = [c.get("id") for c in probe["cells"] if "id" in c]
        if len(ids) != len(set(ids)) and not copies:
            return None
        for n, cell in enumerate(probe["cells"]):
            if "id" in cell:
                cell["id"] = f"probe-{n}"
        nbformat.validate(nbformat.from_dict(probe))
    except Exception:  # anything unreadable or invalid is a corrupted file
        return None
    return dict(nb)


def judge(scenario: Scenario, refused: bool, final: str) -> Outcome:
    nb = load_valid(final, copies=bool(Ids(json.loads(scenario.person)).later_copies))
    if nb is None:
        return Outcome.CORRUPTED
    if refused:
        return Outcome.REJECTED if final == scenario.person else Outcome.CORRUPTED
    found = expected_cells(scenario)
    if found is not None and same_notebook(nb, *found, scenario):
        return Outcome.APPLIED
    return diagnose(scenario, nb, None if found is None else found[0])


def diagnose(scenario: Scenario, final: Notebook, want: Notebook | None) -> Outcome:
    """Why an applied edit does not equal the expected merge (see the module docstring)."""
    person = json.loads(scenario.person)
    ids = Ids(person)
    if not _top_level_kept(final, person):
        return Outcome.LOST
    if _bodies(final) == _bodies(_stale_intent(scenario)):
        return Outcome.LOST  # the notebook as the agent read it, plus its change
    mine = _agent_cells(scenario)
    untouched = [n for n, c in enumerate(scenario.tracked.cells) if c.origin not in mine]
    missing = _missing(person["cells"], final["cells"], untouched, ids)
    if missing:
        if _landed_elsewhere(scenario, person["cells"], final["cells"], missing):
            return Outcome.WRONG_CELL
        return Outcome.LOST
    if want is None:
        return Outcome.LOST  # landed where the person changed the same lines, or the cell is gone
    if sorted(map(_key, final["cells"])) == sorted(map(_key, want["cells"])):
        return Outcome.WRONG_CELL  # every cell as expected, one of them at another place
    if _texts(final) == _texts(want):
        return Outcome.LOST  # every source where expected; outputs, metadata or an id lost
    if sorted(_texts(final)) == sorted(_texts(want)):
        return Outcome.WRONG_CELL  # every source there, one at another place
    if scenario.agent.writes_rows:
        if _holds_token(final, scenario.agent.token):
            return Outcome.LOST  # the agent's cells hold its change but not the person's
        return Outcome.UNEXPLAINED  # reported applied, yet the agent's rows are nowhere
    if _target_stayed(scenario, json.loads(scenario.person)["cells"], final["cells"]):
        return Outcome.WRONG_CELL
    sources = {source_of(c) for c in final["cells"]}
    if _intended_sources(scenario) & sources:
        return Outcome.LOST  # its cell as it meant it from its read: the person's lines reverted
    return Outcome.UNEXPLAINED


def _bodies(nb: Notebook) -> list[Any]:
    return [cell_body(c) for c in nb["cells"]]


def _texts(nb: Notebook) -> list[tuple[str, str]]:
    return [(str(c.get("cell_type")), source_of(c)) for c in nb["cells"]]


def _stale_intent(scenario: Scenario) -> Notebook:
    """The notebook the agent meant to write: its read with its change, nothing of the person."""
    read = Tracked.of(json.loads(scenario.before))
    assert apply_ops(read, scenario.agent.ops)
    return read.notebook()


def _key(cell: dict[str, Any]) -> str:
    return json.dumps(cell_body(cell), sort_keys=True)


def _agent_cells(scenario: Scenario) -> set[int]:
    """Cells of the read whose content or place the agent's operations change."""
    cells: set[int] = set()
    for op in scenario.agent.ops:
        if isinstance(op, LineOp) or op.verb is not CellVerb.ADD_AFTER:
            cells.add(op.cell)
    return cells


def _missing(
    person: Sequence[dict[str, Any]], final: Sequence[dict[str, Any]], wanted: list[int], ids: Ids
) -> list[int]:
    """Person's cells (by index) with no intact counterpart in the final notebook."""
    free = list(range(len(final)))
    gone = []
    for n in wanted:
        match = next((f for f in free if same_cell(person[n], final[f], ids, n)), None)
        if match is None:
            gone.append(n)
        else:
            free.remove(match)
    return gone


def _landed_elsewhere(
    scenario: Scenario,
    person: Sequence[dict[str, Any]],
    final: Sequence[dict[str, Any]],
    missing: list[int],
) -> bool:
    """The agent's change shows up on a cell it did not aim at: its rows, or the source it
    meant for its own cell; or a cell it meant to delete is still there."""
    intended = _intended_sources(scenario)
    for n in missing:
        twin = _counterpart(person, final, n)
        if twin is None:
            continue
        text = source_of(twin)
        if scenario.agent.token in text or (text in intended and text != source_of(person[n])):
            return True
    return _target_stayed(scenario, person, final)


def _target_stayed(
    scenario: Scenario, person: Sequence[dict[str, Any]], final: Sequence[dict[str, Any]]
) -> bool:
    """A cell the agent meant to delete or move is still where it was, among the same
    neighbours (by an alignment of the cells' texts): something else was deleted or moved."""
    texts = [json.dumps([c.get("cell_type"), source_of(c)]) for c in person]
    matcher = SequenceMatcher(
        None, texts, [json.dumps([c.get("cell_type"), source_of(c)]) for c in final], autojunk=False
    )
    kept = {i for a, _, size in matcher.get_matching_blocks() for i in range(a, a + size)}
    for op in scenario.agent.ops:
        if isinstance(op, CellOp) and op.verb in (CellVerb.DELETE, CellVerb.MOVE_AFTER):
            at = scenario.tracked.find(op.cell)
            if at is not None and at in kept and _block_has_neighbours(matcher, at):
                return True
    return False


def _block_has_neighbours(matcher: SequenceMatcher[str], index: int) -> bool:
    """The cell is matched inside a run longer than itself (its place, not a lone twin)."""
    return any(a <= index < a + size and size > 1 for a, _, size in matcher.get_matching_blocks())


def _intended_sources(scenario: Scenario) -> set[str]:
    """The sources the agent meant for the cells it edits line by line, from its read."""
    read = Tracked.of(json.loads(scenario.before))
    assert apply_ops(read, scenario.agent.ops)
    changed = {op.cell for op in scenario.agent.ops if isinstance(op, LineOp)}
    return {c.source for c in read.cells if c.origin in changed}


def _counterpart(
    person: Sequence[dict[str, Any]], final: Sequence[dict[str, Any]], n: int
) -> dict[str, Any] | None:
    cid = person[n].get("id")
    same_id = [c for c in final if cid is not None and c.get("id") == cid]
    if len(same_id) == 1 and sum(c.get("id") == cid for c in person) == 1:
        return same_id[0]
    return final[n] if n < len(final) else None


def _holds_token(nb: Notebook, token: str) -> bool:
    return any(token in source_of(c) for c in nb["cells"])
