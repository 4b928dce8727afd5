"""HTML fragments for the zones panel, rendered from the tracker's JSON `summary`.

Pure string functions (no ipywidgets): each takes the summary (or a part of it) and returns the
HTML one standard `ipywidgets.HTML` shows. Styles are inline, so the panel looks the same in
JupyterLab, Notebook 7, VS Code and a static HTML export, with no custom front-end.

Invariants: every piece of text that comes from the session (paths, diffs, prompts, reasons)
is HTML-escaped; the sizes of the fragments are bounded because the summary's lists are; rows
carry a `data-row` attribute (`audit`, `drift`, `edit`, `run`, `miss`) so tests can count them.
"""

from __future__ import annotations

import functools
import html
import time
from typing import Any

__all__ = [
    "render_audit",
    "render_cache",
    "render_edits",
    "render_header",
    "render_log",
    "render_prefix",
    "render_scratch",
    "render_status",
]

# explicit line heights: ipywidgets gives HTML content the 28px line height of its controls
FONT = (
    "font-family: var(--jp-ui-font-family, system-ui, sans-serif); font-size: 12px; "
    "line-height: 1.45;"
)
MONO = "font-family: var(--jp-code-font-family, monospace); font-size: 11px; line-height: 1.35;"
CARD = (
    "border: 1px solid #d0d7de; border-radius: 6px; padding: 6px 8px; background: #fbfcfd; "
    "min-height: 118px; box-sizing: border-box;"
)
STATUS_COLOURS = {"ok": "#1a7f37", "rebuilt": "#9a6700", "drifted": "#cf222e"}
DIFF_COLOURS = {"+": "#1a7f37", "-": "#cf222e", "@": "#8250df"}
RUN_COLOURS = {"ok": "#1a7f37", "error": "#cf222e", "timeout": "#cf222e"}  # busy, skipped: grey
HIT_COLOUR, MISS_COLOUR, COLD_COLOUR = "#2da44e", "#cf222e", "#8c959f"
BAR_COLOURS = {"hit": HIT_COLOUR, "miss": MISS_COLOUR, "cold": COLD_COLOUR}


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def clock_time(at: float | None) -> str:
    """Local wall-clock time of an epoch timestamp, as people read it in a panel."""
    return "" if at is None else time.strftime("%H:%M:%S", time.localtime(at))


def _card(title: str, rows: list[str], *, status: str = "") -> str:
    badge = f' <span style="color:#57606a">· {esc(status)}</span>' if status else ""
    body = "".join(f"<div>{row}</div>" for row in rows)
    return f'<div style="{CARD}{FONT}"><b>{esc(title)}</b>{badge}{body}</div>'


def _num(value: int) -> str:
    return f"{value:,}"


def _count(value: int, noun: str, plural: str | None = None) -> str:
    return f"{value:,} {noun if value == 1 else plural or noun + 's'}"


def _signed(value: int) -> str:
    return f"{value:+,}"


# -- header and status ------------------------------------------------------------------------


def render_header(summary: dict[str, Any]) -> str:
    s = summary["session"]
    dot, state = ("#2da44e", "running a turn") if s["active"] else ("#8c959f", "idle")
    return (
        f'<div style="{FONT}"><b>hashline agent session</b> '
        f'<code style="{MONO}">{esc(s["id"])}</code> · {esc(s["provider"])} · '
        f"{esc(s['model'])} · {_num(s['turns'])} turns · "
        f'<span style="color:{dot}">●</span> {state}</div>'
    )


def render_status(summary: dict[str, Any]) -> str:
    """The contract status line, then the drift history (newest first)."""
    status = summary["status"]
    colour = STATUS_COLOURS.get(status, "#57606a")
    prefix, log = summary["prefix"], summary["log"]
    detail = (
        f"prefix {esc(prefix['short_id'])}: {_count(prefix['changes'], 'change')}, "
        f"{_num(prefix['undeclared_changes'])} undeclared; "
        f"log: {_count(log['rebuilds'], 'audited rebuild')}"
    )
    line = (
        f'<span data-status="{esc(status)}" style="background:{colour};color:white;'
        f'border-radius:4px;padding:1px 6px;font-weight:bold">{esc(status.upper())}</span> '
        f"cache contract · {detail}"
    )
    rows = [_drift_html(row) for row in summary["drifts"]]
    history = "".join(rows) if rows else '<div style="color:#57606a">no prefix drift</div>'
    return f'<div style="{FONT}">{line}<div style="margin-top:3px">{history}</div></div>'


def _drift_html(row: dict[str, Any]) -> str:
    kind = "declared" if row["declared"] else "undeclared"
    parts = ", ".join(row["parts"]) or "prefix"
    return (
        f'<div data-row="drift" style="{MONO}">{clock_time(row["at"])} '
        f"{esc(row['from'])} → {esc(row['to'])}: {esc(parts)} changed ({kind})</div>"
    )


# -- the three zones ------------------------------------------------------------------------


def render_prefix(summary: dict[str, Any]) -> str:
    p = summary["prefix"]
    return _card(
        "pinned prefix",
        [
            f'<code style="{MONO}">{esc(p["short_id"])}</code>',
            f"model {esc(p['model'] or '(none)')}",
            f"system {_num(p['system_chars'])} chars · {_num(p['tool_count'])} tools",
            f"stable in {_num(p['checks'] - p['changes'])} of {_num(p['checks'])} checks "
            f"({p['stability_ratio']:.1%})",
        ],
        status=p["status"],
    )


def render_log(summary: dict[str, Any]) -> str:
    log = summary["log"]
    last = log["last_rebuild"]
    rebuilt = (
        f"last rebuild: {esc(last['label'])} at {clock_time(last['at'])}" if last else "no rebuilds"
    )
    return _card(
        "append log",
        [
            f"{_count(log['messages'], 'message')} · {_num(log['bytes'])} bytes",
            f"turn growth {_signed(log['growth_messages'])} messages, "
            f"{_signed(log['growth_bytes'])} bytes",
            f"generation {_num(log['generation'])} · {_count(log['rebuilds'], 'rebuild')}",
            rebuilt,
        ],
        status="append-only",
    )


def render_scratch(summary: dict[str, Any]) -> str:
    sc = summary["scratch"]
    rows = [f"{_count(sc['messages'], 'message')} · {_num(sc['bytes'])} bytes"]
    if sc["pending_text"]:
        rows.append(f'pending: <span style="{MONO}">{esc(sc["pending_text"])}</span>')
    if sc["working_set"]:
        rows.append("working set: " + esc(", ".join(sc["working_set"])))
    rows += [f"note: {esc(note)}" for note in sc["notes"]]
    if len(rows) == 1:
        rows.append('<span style="color:#57606a">nothing staged</span>')
    return _card("turn scratch", rows, status="active" if sc["active"] else "idle")


# -- cache --------------------------------------------------------------------------------------


def hit_chart_svg(chart: dict[str, Any], width: int = 300, height: int = 56) -> str:
    """Bars of the hit ratio per request: green hits, red misses, grey for the cold request.

    Bars sit at x = request index × bar width inside a group shifted left to the first point,
    so a bar's markup never changes once drawn and is cached (`_bar`)."""
    ratios, kinds, causes = chart["hit_ratio"], chart["kind"], chart["cause"]
    if not ratios:
        return f'<svg width="{width}" height="{height}"></svg>'
    step = round(width / len(ratios), 3)
    first = chart["first_index"]
    bars = "".join(
        _bar(first + i, ratio, kind, cause, step, height)
        for i, (ratio, kind, cause) in enumerate(zip(ratios, kinds, causes, strict=True))
    )
    axis = f'<line x1="0" y1="{height - 0.5}" x2="{width}" y2="{height - 0.5}" stroke="#d0d7de"/>'
    return (
        f'<svg width="{width}" height="{height}" role="img" '
        f'aria-label="cache hit ratio per request">{axis}'
        f'<g transform="translate({-first * step:.3f} 0)">{bars}</g></svg>'
    )


@functools.lru_cache(maxsize=2048)
def _bar(index: int, ratio: float, kind: str, cause: str | None, step: float, height: int) -> str:
    colour = BAR_COLOURS.get(kind, COLD_COLOUR)
    bar = max(3.0, ratio * (height - 2))  # a cold or empty request stays visible
    title = f"request #{index}: {ratio:.1%}" + (f" (miss: {cause})" if cause else "")
    return (
        f'<rect x="{index * step:.3f}" y="{height - bar:.2f}" width="{max(step - 1, 1):.3f}" '
        f'height="{bar:.2f}" fill="{colour}"><title>{esc(title)}</title></rect>'
    )


def render_cache(summary: dict[str, Any]) -> str:
    c = summary["cache"]
    causes = [
        f'<div data-row="miss" style="{MONO}">{esc(cause)} × {_num(n)}</div>'
        for cause, n in c["miss_causes"].items()
    ]
    shown = len(c["chart"]["hit_ratio"])
    rows = [
        f'session hit ratio <b data-value="hit_ratio">{c["hit_ratio"]:.1%}</b> · '
        f"{_num(c['cached_tokens'])} of {_num(c['input_tokens'])} input tokens cached",
        f"{_count(c['requests'], 'request')} · {_count(c['misses'], 'miss', 'misses')}",
        hit_chart_svg(c["chart"]),
        f'<span style="color:#57606a">hit ratio of the last {_num(shown)} requests</span>',
        "miss causes:" if causes else "miss causes: none",
        *causes,
    ]
    return _card("cache", rows)


# -- audit and edits --------------------------------------------------------------------------


def render_audit(summary: dict[str, Any]) -> str:
    rows = summary["audit"]
    if not rows:
        return _card("rebuild audit", ['<span style="color:#57606a">no rebuilds</span>'])
    head = "".join(
        f'<th style="text-align:left;padding-right:6px">{h}</th>'
        for h in ("time", "reason", "detail", "messages")
    )
    body = "".join(
        f'<tr data-row="audit"><td>{clock_time(r["at"])}</td><td>{esc(r["label"])}</td>'
        f"<td>{esc(r['detail'] or '')}</td><td>{_num(r['before'])} → {_num(r['after'])}</td></tr>"
        for r in rows
    )
    table = f'<table style="{FONT}border-collapse:collapse"><tr>{head}</tr>{body}</table>'
    total = summary["log"]["rebuilds"]
    return _card(f"rebuild audit (newest {len(rows)} of {total:,})", [table])


def render_edits(summary: dict[str, Any]) -> str:
    edits = summary["edits"]
    if not edits:
        return f'<div style="{FONT}color:#57606a">no edits yet</div>'
    rows = "".join(_edit_html(edit, open_=i == 0) for i, edit in enumerate(edits))
    return f'<div style="{FONT}">{rows}</div>'


def _edit_html(edit: dict[str, Any], *, open_: bool) -> str:
    """One edit: a summary line; the newest shows its diff, older ones fold it away. A run
    shows each cell's status and duration instead of a diff."""
    if edit.get("runs"):
        return _run_html(edit)
    cells = ", ".join(edit["cells"]) or "-"
    warnings = "".join(
        f'<div style="color:#9a6700">⚠ {esc(warning)}</div>' for warning in edit["warnings"]
    )
    count = len(edit["warnings"])
    flag = f' · <span style="color:#9a6700">⚠ {_count(count, "warning")}</span>' if count else ""
    return (
        f'<details data-row="edit" style="margin-bottom:4px"{" open" if open_ else ""}>'
        f"<summary><b>{esc(edit['path'])}</b> "
        f'<code style="{MONO}">{esc(edit["header_after"])}</code>'
        f" · {esc(edit['op'])} · cells {esc(cells)} · {clock_time(edit['at_ms'] / 1000)}"
        f"{flag}</summary>{warnings}{render_diff(edit['diff'])}</details>"
    )


def _run_html(run: dict[str, Any]) -> str:
    """One run: a summary line, then a row per cell (status, duration, execution count)."""
    rows = "".join(
        f'<div data-row="run" style="{MONO}padding-left:12px">'
        f'<span style="color:{RUN_COLOURS.get(cell["status"], "#57606a")}">'
        f"{esc(cell['status'])}</span> {esc(cell['cell'])} · {_duration(cell['duration_ms'])}"
        + (f" · [{cell['execution_count']}]" if cell["execution_count"] is not None else "")
        + "</div>"
        for cell in run["runs"]
    )
    warnings = "".join(
        f'<div style="color:#9a6700">⚠ {esc(warning)}</div>' for warning in run["warnings"]
    )
    ran = sum(1 for cell in run["runs"] if cell["status"] in ("ok", "error", "timeout"))
    return (
        f'<div data-row="edit" style="margin-bottom:4px">'
        f"<b>{esc(run['path'])}</b> "
        f'<code style="{MONO}">{esc(run["header_after"])}</code>'
        f" · run: {ran} of {_count(len(run['runs']), 'cell')} ran"
        f" · {clock_time(run['at_ms'] / 1000)}{warnings}{rows}</div>"
    )


def _duration(ms: int) -> str:
    return f"{ms} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def render_diff(diff: str) -> str:
    """A unified diff with added, removed and hunk lines coloured."""
    lines = []
    for line in diff.splitlines():
        colour = DIFF_COLOURS.get(line[:1]) if not line.startswith(("+++", "---")) else "#57606a"
        style = f' style="color:{colour}"' if colour else ""
        lines.append(f"<span{style}>{esc(line)}</span>")
    return (
        f'<pre style="{MONO}margin:2px 0;padding:4px;background:#f6f8fa;max-height:220px;'
        f'overflow:auto">' + "\n".join(lines) + "</pre>"
    )
