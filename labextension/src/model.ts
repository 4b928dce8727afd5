/**
 * Pure view logic of the hashline sidebar: what to show, computed from REST responses.
 *
 * Nothing here touches the DOM or JupyterLab, so it is unit-tested directly
 * (test/model.test.ts).
 *
 * Invariants:
 * - Every function is total. A session snapshot is whatever a kernel posted (the server only
 *   checks its four top-level keys), so a missing or mistyped field reads as null or empty,
 *   never as an exception.
 * - Relative times are computed against an injected `nowMs`, so output is deterministic.
 * - Zone timestamps (`at`) are seconds since the epoch, REST timestamps (`*_ms`) milliseconds;
 *   views carry milliseconds only.
 */

import type {
  ActivityResponse,
  SessionSummary,
  SnapshotsResponse
} from './rest-types';

export type ActivityEdit = ActivityResponse['edits'][number];
export type CellRun = ActivityEdit['runs'][number];
export type TrackedPath = SnapshotsResponse['paths'][number];
export type { SessionSummary };

// -- diffs ----------------------------------------------------------------------------------

export type DiffRowKind = 'file' | 'hunk' | 'add' | 'del' | 'context' | 'note';

/** One row of a unified diff, with the line numbers it has on each side (if any). */
export interface DiffRow {
  kind: DiffRowKind;
  text: string;
  oldLine: number | null;
  newLine: number | null;
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

function rowKind(row: string, inHunk: boolean): DiffRowKind {
  if (!inHunk && (row.startsWith('--- ') || row.startsWith('+++ '))) {
    return 'file';
  }
  if (HUNK.test(row)) {
    return 'hunk';
  }
  if (!inHunk) {
    return 'note';
  }
  switch (row[0]) {
    case '+':
      return 'add';
    case '-':
      return 'del';
    case ' ':
      return 'context';
    default:
      return 'note';
  }
}

/** Split a unified diff into rows, numbering each row on the side(s) it belongs to. */
export function diffRows(diff: string): DiffRow[] {
  const rows: DiffRow[] = [];
  let oldLine = 0;
  let newLine = 0;
  let inHunk = false;
  const lines = diff.split('\n');
  if (lines[lines.length - 1] === '') {
    lines.pop();
  }
  for (const text of lines) {
    const kind = rowKind(text, inHunk);
    if (kind === 'hunk') {
      const match = HUNK.exec(text)!;
      oldLine = Number(match[1]);
      newLine = Number(match[2]);
      inHunk = true;
      rows.push({ kind, text, oldLine: null, newLine: null });
      continue;
    }
    const row: DiffRow = { kind, text, oldLine: null, newLine: null };
    if (kind === 'context' || kind === 'del') {
      row.oldLine = oldLine++;
    }
    if (kind === 'context' || kind === 'add') {
      row.newLine = newLine++;
    }
    rows.push(row);
  }
  return rows;
}

/** How many lines the diff adds and removes. */
export function diffStats(diff: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const row of diffRows(diff)) {
    added += Number(row.kind === 'add');
    removed += Number(row.kind === 'del');
  }
  return { added, removed };
}

/**
 * The 1-based line of the edited text (after the edit) where the first change is: the first
 * added row, or for a pure deletion the line that now stands where the deleted rows were.
 */
export function firstChangedLine(diff: string): number | null {
  let nextNew: number | null = null;
  for (const row of diffRows(diff)) {
    if (row.kind === 'add') {
      return row.newLine;
    }
    if (row.kind === 'del') {
      return Math.max(nextNew ?? 1, 1);
    }
    if (row.newLine !== null) {
      nextNew = row.newLine + 1;
    }
  }
  return null;
}

// -- edits per cell, and undo -----------------------------------------------------------

/** The rows of one notebook cell's part of a diff (a text file: one part, cell null). */
export interface CellDiff {
  cell: string | null;
  rows: DiffRow[];
}

const HUNK_CELL = /^@@ [^@]* @@ cell (\S+)$/;

/**
 * A diff split by the cell each hunk is in (the server names it after the hunk header,
 * `@@ -1,2 +1,2 @@ cell ID`), hunks of one cell together, in the order cells first appear.
 * File header rows are dropped; a clipping note stays with the cell it follows.
 */
export function cellDiffs(diff: string): CellDiff[] {
  const parts: CellDiff[] = [];
  let current: CellDiff | null = null;
  for (const row of diffRows(diff)) {
    if (row.kind === 'file') {
      continue;
    }
    if (row.kind === 'hunk' || current === null) {
      const cell = HUNK_CELL.exec(row.text)?.[1] ?? null;
      current = parts.find(part => part.cell === cell) ?? null;
      if (current === null) {
        current = { cell, rows: [] };
        parts.push(current);
      }
    }
    current.rows.push(row);
  }
  return parts;
}

/** For each record id another record undid, the id of that undo (`reverts`). */
export function undoneBy(edits: readonly ActivityEdit[]): Map<number, number> {
  const found = new Map<number, number>();
  for (const record of edits) {
    for (const id of record.reverts ?? []) {
      found.set(id, record.id);
    }
  }
  return found;
}

/** Counts of a list of activity records: edits of text and runs of cells, apart. */
export function activityCounts(edits: readonly ActivityEdit[]): {
  edits: number;
  runs: number;
} {
  const runs = edits.filter(isRun).length;
  return { edits: edits.length - runs, runs };
}

// -- edits ----------------------------------------------------------------------------------

/** The 4-hex tag of a `[path#TAG]` header ('' when the header has none). */
export function tagOf(header: string): string {
  const match = /#([0-9A-F]{4})\]$/.exec(header);
  return match ? match[1] : '';
}

/** Where clicking an edit should land: a notebook cell, else a line of a text file. */
export interface EditTarget {
  path: string;
  cellIds: string[];
  line: number | null;
}

export function editTarget(edit: ActivityEdit): EditTarget {
  if (edit.cells.length > 0) {
    return { path: edit.path, cellIds: [...edit.cells], line: null };
  }
  return { path: edit.path, cellIds: [], line: firstChangedLine(edit.diff) };
}

/** "cell load-data", "cells a, b +2", or "" for a plain text file. */
export function cellsLabel(cells: readonly string[], shown = 2): string {
  if (cells.length === 0) {
    return '';
  }
  const head = cells.slice(0, shown).join(', ');
  const more = cells.length > shown ? ` +${cells.length - shown}` : '';
  return `${cells.length === 1 ? 'cell' : 'cells'} ${head}${more}`;
}

// -- runs -----------------------------------------------------------------------------------

/** Whether an activity record is a run of notebook cells (not an edit of the text). */
export function isRun(edit: ActivityEdit): boolean {
  return edit.op === 'run';
}

/** "120 ms" under a second, else "1.5 s": the agent's reply says durations the same way. */
export function durationLabel(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** "ran 2 of 3 cells": how many of the cells asked actually ran (ok, error or timeout). */
export function runSummary(runs: readonly CellRun[]): string {
  const ran = runs.filter(run =>
    ['ok', 'error', 'timeout'].includes(run.status)
  ).length;
  return `ran ${ran} of ${plural(runs.length, 'cell')}`;
}

// -- formatting -----------------------------------------------------------------------------

/** "just now", "42 s ago", "5 min ago", "3 h ago", "2 d ago" (future times read "just now"). */
export function relativeTime(atMs: number, nowMs: number): string {
  const seconds = Math.floor((nowMs - atMs) / 1000);
  if (seconds < 5) {
    return 'just now';
  }
  if (seconds < 60) {
    return `${seconds} s ago`;
  }
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) {
    return `${minutes} min ago`;
  }
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? `${hours} h ago` : `${Math.floor(hours / 24)} d ago`;
}

/** A ratio in [0, 1] as a whole percentage; "—" when unknown. */
export function formatPercent(ratio: number | null | undefined): string {
  if (ratio === null || ratio === undefined || !Number.isFinite(ratio)) {
    return '—';
  }
  return `${Math.round(ratio * 100)}%`;
}

/** Inclusive runs as "1-3, 7"; "none" when no line was shown. */
export function seenLinesText(
  runs: ReadonlyArray<readonly [number, number]>
): string {
  if (runs.length === 0) {
    return 'none';
  }
  return runs.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(', ');
}

export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

// -- session snapshots ----------------------------------------------------------------------

type Json = Record<string, unknown>;

function obj(value: unknown): Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Json)
    : {};
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function secondsToMs(value: unknown): number | null {
  const seconds = num(value);
  return seconds === null ? null : Math.round(seconds * 1000);
}

/** One of the three zones: its status, whether its contract holds, and a few facts. */
export interface ZoneView {
  name: 'prefix' | 'log' | 'scratch';
  status: string;
  contractStatus: string | null;
  facts: Array<[string, string]>;
}

/** A prefix pin: the fingerprint in force from `atMs`, and the drift that led to it. */
export interface PinView {
  shortId: string;
  reason: string;
  declared: boolean;
  atMs: number | null;
  drift: string | null;
}

export interface RebuildView {
  label: string;
  detail: string;
  before: number | null;
  after: number | null;
  atMs: number | null;
}

export interface TurnView {
  index: number;
  hitRatio: number | null;
  cachedTokens: number | null;
  inputTokens: number | null;
  cold: boolean;
  miss: boolean;
  cause: string | null;
}

export interface SessionDetailView {
  model: string | null;
  provider: string | null;
  zones: ZoneView[];
  pins: PinView[];
  audit: RebuildView[];
  turns: TurnView[];
  hitRatio: number | null;
  missCauses: Array<[string, number]>;
}

function fact(label: string, value: unknown): Array<[string, string]> {
  if (value === null || value === undefined || value === '') {
    return [];
  }
  return [[label, String(value)]];
}

function prefixZone(prefix: Json): ZoneView {
  const tools = list(prefix['tool_names']).filter(t => typeof t === 'string');
  return {
    name: 'prefix',
    status: str(prefix['status']) ?? 'unknown',
    contractStatus: str(prefix['contract_status']),
    facts: [
      ...fact('fingerprint', str(prefix['short_id'])),
      ...fact('model', str(prefix['model'])),
      ...fact('tools', tools.length ? tools.join(', ') : null),
      ...fact('bytes', num(prefix['bytes']))
    ]
  };
}

function logZone(log: Json): ZoneView {
  return {
    name: 'log',
    status: str(log['status']) ?? 'unknown',
    contractStatus: str(log['contract_status']),
    facts: [
      ...fact('messages', num(log['messages'])),
      ...fact('bytes', num(log['bytes'])),
      ...fact('rebuilds', num(log['rebuilds'])),
      ...fact('generation', num(log['generation']))
    ]
  };
}

function scratchZone(scratch: Json): ZoneView {
  return {
    name: 'scratch',
    status: str(scratch['status']) ?? 'unknown',
    contractStatus: null,
    facts: [
      ...fact('messages', num(scratch['messages'])),
      ...fact('bytes', num(scratch['bytes']))
    ]
  };
}

function pinView(value: unknown): PinView {
  const pin = obj(value);
  const drift = obj(pin['drift']);
  return {
    shortId: str(pin['short_id']) ?? '?',
    reason: str(pin['reason']) ?? '',
    declared: pin['declared'] === true,
    atMs: secondsToMs(pin['at']),
    drift: str(drift['text'])
  };
}

function rebuildView(value: unknown): RebuildView {
  const record = obj(value);
  return {
    label: str(record['label']) ?? str(record['reason']) ?? 'rebuild',
    detail: str(record['detail']) ?? '',
    before: num(record['before']),
    after: num(record['after']),
    atMs: secondsToMs(record['at'])
  };
}

function turnView(value: unknown, position: number): TurnView {
  const turn = obj(value);
  return {
    index: num(turn['index']) ?? position,
    hitRatio: num(turn['hit_ratio']),
    cachedTokens: num(turn['cached_tokens']),
    inputTokens: num(turn['input_tokens']),
    cold: turn['cold'] === true,
    miss: turn['miss'] === true,
    cause: str(turn['cause'])
  };
}

/** Everything the sessions tab shows of one snapshot, read defensively. */
export function sessionDetail(snapshot: unknown): SessionDetailView {
  const root = obj(snapshot);
  const zones = obj(root['zones']);
  const prefix = obj(zones['prefix']);
  const cache = obj(root['cache']);
  const session = obj(root['session']);
  const causes = Object.entries(obj(cache['miss_causes']))
    .filter((entry): entry is [string, number] => typeof entry[1] === 'number')
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return {
    model: str(session['model']) ?? str(prefix['model']),
    provider: str(session['provider']),
    zones: [
      prefixZone(prefix),
      logZone(obj(zones['log'])),
      scratchZone(obj(zones['scratch']))
    ],
    pins: list(obj(prefix['stability'])['pins']).map(pinView),
    audit: list(root['audit']).map(rebuildView),
    turns: list(cache['turns']).map(turnView),
    hitRatio: num(cache['hit_ratio']),
    missCauses: causes
  };
}

/** "3 edits · 1 run" (runs change outputs, not text, so they are never counted as edits). */
export function editsAndRuns(
  edits: number | null,
  runs: number | null
): string {
  const parts = [plural(edits ?? 0, 'edit')];
  if (runs) {
    parts.push(plural(runs, 'run'));
  }
  return parts.join(' · ');
}

/** A session's display name: its label, else its id. */
export function sessionName(summary: SessionSummary): string {
  return summary.label.trim() || summary.id;
}

// -- badges in the notebook -----------------------------------------------------------------

/**
 * For notebook `path`, the newest edit that touched each cell and still stands: not a run, not
 * an undo, not undone since, and not cleared for that cell (`cleared` holds "recordId:cellId"
 * for badges a person dismissed or whose cell they edited afterwards).
 */
export function badgeRecords(
  edits: readonly ActivityEdit[],
  path: string,
  cleared: ReadonlySet<string>
): Map<string, ActivityEdit> {
  const undone = undoneBy(edits);
  const found = new Map<string, ActivityEdit>();
  for (const record of edits) {
    if (
      record.path !== path ||
      isRun(record) ||
      record.source === 'revert' ||
      undone.has(record.id)
    ) {
      continue;
    }
    for (const cell of record.cells) {
      if (!found.has(cell) && !cleared.has(`${record.id}:${cell}`)) {
        found.set(cell, record);
      }
    }
  }
  return found;
}

/** The part of an edit's diff about one cell, as text (a badge's hover). */
export function cellDiffText(record: ActivityEdit, cell: string): string {
  const part = cellDiffs(record.diff).find(p => p.cell === cell);
  const rows = (part?.rows ?? []).filter(row => row.kind !== 'hunk');
  return (
    rows.map(row => row.text).join('\n') || `${record.who} changed cell ${cell}`
  );
}
