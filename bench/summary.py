"""The one table `make bench` ends with: every measured ratio next to its target (and, for the
cold rows, the JSON floor's and the durable write's own ratios, why a missed target was missed,
and a row's untargeted reference baseline beside it), and hashline's safety verdicts (stale
edits, stale runs), read back from the raw figures each benchmark wrote; plus one JSON file
holding all of those raw figures.

Invariants: it only reads what the benchmarks wrote (a benchmark that wrote nothing is listed
as missing, never invented); a row without a target says so instead of a verdict; a row whose
input was absent or whose scenario failed (`missing`) is printed as such and fails `check`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def _ratio_row(bench: str, row: Mapping[str, Any]) -> str:
    if "missing" in row:
        return f"{bench:<9}{row['name'][:58]:<59}MISSING: {row['missing']}"
    lo, hi = row["spread"]
    target = row.get("target")
    verdict = "no target" if target is None else ("MET" if row["met"] else "MISSED")
    goal = "" if target is None else f"<= {target:g}x"
    floor, write = row.get("floor_ratio"), row.get("write_ratio")
    durable = row.get("durable_floor_ratio")
    bounds = "" if floor is None else f"  floor {floor:.3f}x"
    bounds += "" if floor is None or durable is None else f" ({durable:.3f}x with our write)"
    bounds += "" if write is None else f"  write {write:.3f}x"
    why = f" ({row['reach']})" if target is not None and not row["met"] and "reach" in row else ""
    reference = row.get("reference_ratio")
    beside = "" if reference is None else f"  vs {row['reference']}: {reference:.3f}x, no target"
    return (
        f"{bench:<12}{row['name'][:58]:<59}{row['ratio']:8.3f}x [{lo:.3f}..{hi:.3f}]"
        f"  {goal:>8}  {verdict}{why}{bounds}{beside}"
    )


def _stall_row(bench: str, row: Mapping[str, Any]) -> str:
    stall = row["stall"]
    goal = "no target" if stall["target_ms"] is None else f"<= {stall['target_ms']:g} ms"
    verdict = "" if stall["met"] is None else ("MET" if stall["met"] else "MISSED")
    read = "whole read" if "whole read" in row["name"] else "cell read"
    where = row["name"].rsplit(", ", 1)[-1][:20]
    return (
        f"{bench:<12}{f'  worst event-loop stall, {read}, {where}':<59}"
        f"{stall['ours_ms']:7.1f} ms (Jupyter's GET+PUT {stall['jupyter_ms']:.1f} ms)  "
        f"{goal}  {verdict}"
    )


def _room_row(bench: str, row: Mapping[str, Any]) -> str:
    goal = (
        "(no target: for comparison)"
        if row["met"] is None
        else f"<= {row['latency_target_ms']:g} / {row['stall_target_ms']:g} ms  "
        f"{'MET' if row['met'] else 'MISSED'}"
    )
    return (
        f"{bench:<12}{row['name'][:58]:<59}{row['latency_ms']:7.1f} ms, stall "
        f"{row['stall_ms']:.1f} ms  {goal}"
        f"  (a keystroke in the person's document: {row['direct_ms']:.2f} ms; apart, the "
        f"room's own save of typing stalls {row['room_save_stall_ms']:.1f} ms)"
    )


def _load_row(bench: str, row: Mapping[str, Any]) -> str:
    ours, theirs = row["hashline"], row["jupyter"]
    goal = "(no target)" if row["met"] is None else ("MET" if row["met"] else "MISSED")
    return (
        f"{bench:<12}{row['name'][:58]:<59}{ours['edits_per_s']:6.1f} edits/s, p99 "
        f"{ours['p99_ms']:.0f} ms, stall {ours['stall_ms']:.1f} ms  {goal}  (GET+PUT: "
        f"{theirs['edits_per_s']:.1f}/s, p99 {theirs['p99_ms']:.0f} ms, stall "
        f"{theirs['stall_ms']:.1f} ms, last edits kept {theirs['kept']}/{row['agents']})"
    )


def _request_row(bench: str, row: Mapping[str, Any]) -> str:
    verdict = "MET" if row["met"] else "MISSED"
    return (
        f"{bench:<12}{row['name'][:58]:<59}{row['latency_ms']:7.0f} ms, stall "
        f"{row['stall_ms']:.1f} ms  <= {row['stall_target_ms']:g} ms  {verdict}  (Jupyter's "
        f"contents PUT of that size: {row['jupyter_put_ms']:.0f} ms, stall "
        f"{row['jupyter_stall_ms']:.1f} ms)"
    )


def _safety_rows(payload: Mapping[str, Any]) -> list[str]:
    verdict = payload["hashline"]
    rows = [
        ("person's change lost", str(verdict["lost"]), "0"),
        ("wrong cell edited", str(verdict["wrong_cell"]), "0"),
        ("file corrupted", str(verdict["corrupted"]), "0"),
        ("non-conflicting applied", f"{verdict['non_conflicting_applied']:.1%}", ">= 95%"),
        ("overlapping conflicts rejected", f"{verdict['overlapping_rejected']:.1%}", "100%"),
    ]
    review = payload.get("review")
    if review is not None:
        accept = review["accept"]
        rows += [
            ("review accept: person's change lost", str(accept["lost"]), "0"),
            ("review accept: wrong cell", str(accept["wrong_cell"]), "0"),
            ("review accept: overlapping refused", f"{accept['overlapping_rejected']:.1%}",
             "100%"),
            ("review reject: file left as the person's", f"{review['rejects_kept']}/"
             f"{review['rejects']}", "all"),
            ("review, part accepted: change lost / wrong cell",
             f"{review['part']['lost']} / {review['part']['wrong_cell']}", "0 / 0"),
            ("review, two agents: person's change lost", str(review["two_agents"]["lost"]), "0"),
            ("review, two agents: wrong cell", str(review["two_agents"]["wrong_cell"]), "0"),
        ]  # fmt: skip
    undo = payload.get("revert")
    if undo is not None:
        rows += [
            ("undo: person's work lost", str(undo["lost"]), "0"),
            ("undo: wrong cell", str(undo["wrong_cell"]), "0"),
            ("undo: file corrupted", str(undo["corrupted"]), "0"),
            ("undo of a line the person changed rejected", f"{undo['same_line_rejected']:.1%}",
             "100%"),
        ]  # fmt: skip
    twin = payload.get("twin")
    if twin is not None:
        rows += [
            ("twin edit after another agent's: change lost", str(twin["lost"]), "0"),
            ("twin edit after another agent's: wrong cell", str(twin["wrong_cell"]), "0"),
        ]
    lines = [
        f"{'safety':<12}hashline {what:<50}{got:>8}  target {goal}" for what, got, goal in rows
    ]
    others = [part["met"] for part in (undo, review, twin) if part is not None]
    met = "MET" if verdict["met"] and all(others) else "MISSED"
    lines += [f"{'safety':<12}MISSING: {why}" for why in payload.get("missing", [])]
    return [*lines, f"{'safety':<12}hashline targets, all together: {met}"]


def _run_safety_rows(payload: Mapping[str, Any]) -> list[str]:
    verdict = payload["hashline"]
    rows = [
        ("unseen code runs", str(verdict["unseen_runs"]), "0"),
        ("errors and runs claimed but not made", str(verdict["failures"]), "0"),
        ("controls run", f"{verdict['controls_run']:.0%}", "100%"),
        ("unchanged cells run", f"{verdict['unchanged_run']:.0%}", "100%"),
        ("changed cells run nothing", f"{verdict['changed_ran_nothing']:.0%}", "100%"),
    ]
    lines = [f"{'run':<12}hashline {what:<50}{got:>8}  target {goal}" for what, got, goal in rows]
    met = "MET" if verdict["met"] else "MISSED"
    return [*lines, f"{'run':<12}hashline stale-run targets, all together: {met}"]


def _sloppy_rows(payload: Mapping[str, Any]) -> list[str]:
    verdict = payload["hashline"]
    controls = verdict["controls_as_meant"] / verdict["controls"] if verdict["controls"] else 0.0
    rows = [
        ("sloppy edits applied wrongly", str(verdict["applied_wrongly"]), "0"),
        ("sloppy edits unparseable without a word", str(verdict["unparseable_silent"]), "0"),
        ("clean controls applied as meant", f"{controls:.0%}", "100%"),
    ]
    lines = [
        f"{'sloppy':<12}hashline {what:<50}{got:>8}  target {goal}" for what, got, goal in rows
    ]
    lines.append(
        f"{'sloppy':<12}hashline {'correct call of another change (reported)':<50}"
        f"{verdict.get('lookalikes', 0):>8}"
    )
    lines += [f"{'sloppy':<12}MISSING: {why}" for why in payload.get("missing", [])]
    met = "MET" if verdict["met"] else "MISSED"
    return [*lines, f"{'sloppy':<12}hashline sloppy-edit targets, all together: {met}"]


BASELINE = Path(__file__).resolve().parent / "warm_baseline.json"
WARM_SLACK = 1.10


def check(files: Mapping[str, Path], baseline_path: Path = BASELINE) -> list[str]:
    """Every miss of a run: rows over their target, the safety verdict, warm rows more than 10%
    above their baseline ratio, benchmarks that wrote nothing. Empty: all met."""
    baseline = json.loads(baseline_path.read_text()) if baseline_path.is_file() else {}
    misses: list[str] = []
    for bench, path in files.items():
        if not path.is_file():
            misses.append(f"{bench}: no figures (the benchmark did not finish)")
            continue
        payload = json.loads(path.read_text())
        if isinstance(payload, dict) and payload.get("table") == "requests":
            misses += [
                f"{bench}: {row['name']}: others stalled {row['stall_ms']:.1f} ms > "
                f"{row['stall_target_ms']:g} ms"
                for row in payload["rows"]
                if row["met"] is False
            ]
            continue
        if isinstance(payload, dict) and payload.get("table") == "load":
            misses += [
                f"{bench}: {row['name']}: p99 {row['hashline']['p99_ms']:.0f} ms / stall "
                f"{row['hashline']['stall_ms']:.1f} ms over 1000 / 100 ms"
                for row in payload["rows"]
                if row["met"] is False
            ]
            continue
        if isinstance(payload, dict) and payload.get("table") == "room":
            misses += [
                f"{bench}: {row['name']}: {row['latency_ms']:.1f} ms / stall "
                f"{row['stall_ms']:.1f} ms > {row['latency_target_ms']:g} / "
                f"{row['stall_target_ms']:g} ms"
                for row in payload["rows"]
                if row["met"] is False
            ]
            continue
        if isinstance(payload, dict):
            if not payload["hashline"]["met"]:
                what = "sloppy-edit" if payload.get("table") == "sloppy" else "safety"
                misses.append(f"{bench}: hashline's {what} targets missed")
            if not payload.get("revert", {"met": True})["met"]:
                misses.append(f"{bench}: hashline's undo safety targets missed")
            if not payload.get("review", {"met": True})["met"]:
                misses.append(f"{bench}: hashline's review safety targets missed")
            if not payload.get("twin", {"met": True})["met"]:
                misses.append(f"{bench}: hashline's twin-edit safety targets missed")
            misses += [f"{bench}: not measured: {why}" for why in payload.get("missing", [])]
            continue
        for row in payload:
            if "missing" in row:
                misses.append(f"{bench}: {row['name']}: not measured: {row['missing']}")
                continue
            stall = row.get("stall") or {}
            if stall.get("met") is False:
                misses.append(
                    f"{bench}: {row['name']}: event-loop stall {stall['ours_ms']:.1f} ms > "
                    f"{stall['target_ms']:g} ms"
                )
            if row.get("target") is not None and not row["met"]:
                why = f" ({row['reach']})" if "reach" in row else ""
                misses.append(
                    f"{bench}: {row['name']}: {row['ratio']:.3f}x > {row['target']}x{why}"
                )
            base = baseline.get(row["name"])
            if base is not None and row["ratio"] > base * WARM_SLACK:
                misses.append(
                    f"{bench}: {row['name']}: {row['ratio']:.3f}x, more than 10% above the "
                    f"warm baseline {base:.3f}x"
                )
    return misses


def summarize(files: Mapping[str, Path], combined: Path, *, smoke: bool = False) -> list[str]:
    """The summary lines; writes every benchmark's raw figures into `combined`."""
    lines = ["", "== summary: median ratio [spread over repeats], target, verdict"]
    if smoke:
        lines.append("(smoke run: one tiny repeat of each case; the ratios are not measurements)")
    raw: dict[str, Any] = {}
    for bench, path in files.items():
        if not path.is_file():
            lines.append(f"{bench:<12}(no figures: the benchmark did not finish)")
            continue
        payload = json.loads(path.read_text())
        raw[bench] = payload
        if isinstance(payload, dict) and payload.get("table") == "room":
            lines += [_room_row(bench, row) for row in payload["rows"]]
        elif isinstance(payload, dict) and payload.get("table") == "load":
            lines += [_load_row(bench, row) for row in payload["rows"]]
        elif isinstance(payload, dict) and payload.get("table") == "requests":
            lines += [_request_row(bench, row) for row in payload["rows"]]
        elif isinstance(payload, dict) and payload.get("table") == "run":
            lines += _run_safety_rows(payload)
        elif isinstance(payload, dict) and payload.get("table") == "sloppy":
            lines += _sloppy_rows(payload)
        elif isinstance(payload, dict):
            lines += _safety_rows(payload)
        else:
            lines += [_ratio_row(bench, row) for row in payload]
            lines += [_stall_row(bench, row) for row in payload if row.get("stall")]
    combined.write_text(json.dumps(raw, indent=1))
    lines.append(f"raw figures: {combined}")
    return lines
