/**
 * DOM builders of the hashline sidebar: REST data and view state in, detached elements out.
 *
 * No JupyterLab imports and no network: the widget (sidebar.ts) owns state and fetching and
 * calls these to rebuild its content; tests call them in a DOM emulation.
 *
 * Invariants:
 * - Text from the server (paths, diffs, warnings, labels) is only ever set as `textContent`,
 *   never parsed as HTML.
 * - Every list has an explicit empty state saying what would appear there and how.
 * - Elements showing a relative time carry `data-at-ms`, so the widget can refresh the labels
 *   in place (`refreshTimes`) without rebuilding the list.
 * - Class names starting `jp-hashline-` are the contract with style/index.css and the browser
 *   test; keep them stable.
 */

import {
  type ActivityEdit,
  type CellRun,
  type DiffRow,
  activityCounts,
  cellDiffs,
  editsAndRuns,
  type SessionDetailView,
  type SessionSummary,
  type TrackedPath,
  type ZoneView,
  cellsLabel,
  diffRows,
  diffStats,
  durationLabel,
  formatPercent,
  isRun,
  plural,
  relativeTime,
  runSummary,
  seenLinesText,
  sessionName,
  tagOf
} from './model';

export interface ActivityHandlers {
  toggle(edit: ActivityEdit): void;
  open(edit: ActivityEdit): void;
  /** Undo this one edit. */
  undo(edit: ActivityEdit): void;
  /** Undo every edit of this edit's agent from this one on (newest first, all or nothing). */
  undoSince(edit: ActivityEdit): void;
}

/** What the sidebar knows about undoing each edit, beyond the records themselves. */
export interface UndoState {
  /** Record id -> the id of the record that undid it. */
  undoneBy: ReadonlyMap<number, number>;
  /** Record id -> why the last undo asked from this record was refused. */
  refused: ReadonlyMap<number, string>;
  /** Record ids whose undo is in flight. */
  pending: ReadonlySet<number>;
}

export const NO_UNDO_STATE: UndoState = {
  undoneBy: new Map(),
  refused: new Map(),
  pending: new Set()
};

export interface SessionHandlers {
  toggle(summary: SessionSummary): void;
  /** Show or hide the closed sessions. */
  toggleClosed(): void;
}

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

export function timeLabel(atMs: number | null, nowMs: number): HTMLElement {
  const node = el('span', 'jp-hashline-time');
  if (atMs !== null) {
    node.dataset.atMs = String(atMs);
    node.textContent = relativeTime(atMs, nowMs);
    node.title = new Date(atMs).toLocaleString();
  }
  return node;
}

/** Update every relative-time label under `root` to `nowMs`. */
export function refreshTimes(root: HTMLElement, nowMs: number): void {
  root.querySelectorAll<HTMLElement>('[data-at-ms]').forEach(node => {
    node.textContent = relativeTime(Number(node.dataset.atMs), nowMs);
  });
}

/** A message for an empty list: what would be here, and how to get it there. */
export function renderEmpty(title: string, hint: string): HTMLElement {
  const box = el('div', 'jp-hashline-empty');
  box.append(
    el('p', 'jp-hashline-empty-title', title),
    el('p', 'jp-hashline-hint', hint)
  );
  return box;
}

/** A ▸ / ▾ button that shows or hides what it heads (`title`: what a click does). */
export function foldToggle(
  className: string,
  expanded: boolean,
  title: string,
  onClick: () => void
): HTMLButtonElement {
  const toggle = el(
    'button',
    `jp-hashline-toggle ${className}`,
    expanded ? '▾' : '▸'
  );
  toggle.setAttribute('aria-expanded', String(expanded));
  toggle.title = title;
  toggle.addEventListener('click', onClick);
  return toggle;
}

/** Why the server refused a person's request: `lead` in bold, then its reason. */
export function renderRefusal(
  className: string,
  lead: string,
  reason: string
): HTMLElement {
  const box = el('div', className);
  box.setAttribute('role', 'alert');
  box.append(el('strong', undefined, lead), el('span', undefined, reason));
  return box;
}

/** The head of one file's group in a list: its path, then what is said of it. */
export function pathHead(path: string, ...details: HTMLElement[]): HTMLElement {
  const head = el('div', 'jp-hashline-tracked-head');
  head.append(el('span', 'jp-hashline-path', path), ...details);
  return head;
}

/** A failed refresh: what failed and what to check. */
export function renderError(what: string, message: string): HTMLElement {
  const box = el('div', 'jp-hashline-error');
  box.setAttribute('role', 'alert');
  box.append(
    el('p', 'jp-hashline-error-title', `Could not load ${what}`),
    el('p', 'jp-hashline-error-message', message),
    el(
      'p',
      'jp-hashline-hint',
      'Check that the jupyter_hashline server extension is enabled ' +
        '(jupyter server extension list); the sidebar retries on its own.'
    )
  );
  return box;
}

// -- activity -------------------------------------------------------------------------------

/** The diff as rows coloured by kind, with the new-side line number in a gutter. */
export function renderDiff(diff: string): HTMLElement {
  if (diff === '') {
    const pre = el('pre', 'jp-hashline-diff');
    pre.append(el('span', 'jp-hashline-diff-note', '(no textual change)'));
    return pre;
  }
  return renderDiffRows(diffRows(diff));
}

/** An edit's diff, one part per notebook cell it touched (titled with the cell's id). */
export function renderCellDiffs(diff: string): HTMLElement {
  const parts = cellDiffs(diff);
  if (parts.length <= 1 && (parts[0]?.cell ?? null) === null) {
    return renderDiff(diff);
  }
  const box = el('div', 'jp-hashline-cell-diffs');
  for (const part of parts) {
    const one = el('div', 'jp-hashline-cell-diff');
    if (part.cell !== null) {
      one.dataset.cell = part.cell;
    }
    one.append(
      el(
        'div',
        'jp-hashline-cell-diff-title',
        part.cell ? `cell ${part.cell}` : 'file'
      ),
      renderDiffRows(part.rows.filter(row => row.kind !== 'hunk'))
    );
    box.append(one);
  }
  return box;
}

export function renderDiffRows(rows: readonly DiffRow[]): HTMLElement {
  const pre = el('pre', 'jp-hashline-diff');
  for (const row of rows) {
    const line = el(
      'span',
      `jp-hashline-diff-row jp-hashline-diff-${row.kind}`
    );
    const gutter = row.newLine ?? row.oldLine;
    line.append(
      el(
        'span',
        'jp-hashline-diff-gutter',
        gutter === null ? '' : String(gutter)
      ),
      el('span', 'jp-hashline-diff-text', row.text)
    );
    pre.append(line);
  }
  return pre;
}

function editHead(
  edit: ActivityEdit,
  expanded: boolean,
  handlers: ActivityHandlers
): HTMLElement {
  const head = el('div', 'jp-hashline-edit-head');
  const open = el('button', 'jp-hashline-edit-open', edit.path);
  const where = cellsLabel(edit.cells, 1);
  open.title = `Open ${edit.path}${where ? ` at ${where}` : ''}`;
  open.addEventListener('click', () => handlers.open(edit));
  if (isRun(edit)) {
    // a run changed outputs, not text: it has no diff to fold, its cells are always shown
    head.append(
      el('span', 'jp-hashline-toggle jp-hashline-run-mark', '▶'),
      open
    );
    return head;
  }
  const toggle = foldToggle(
    'jp-hashline-edit-toggle',
    expanded,
    expanded ? 'Hide the diff' : 'Show the diff',
    () => handlers.toggle(edit)
  );
  head.append(toggle, open);
  return head;
}

function editMeta(edit: ActivityEdit, nowMs: number): HTMLElement {
  const meta = el('div', 'jp-hashline-edit-meta');
  const stats = diffStats(edit.diff);
  const headers = el(
    'code',
    'jp-hashline-headers',
    `#${tagOf(edit.header_before)} → #${tagOf(edit.header_after)}`
  );
  headers.title = `${edit.header_before} → ${edit.header_after}`;
  meta.append(headers);
  if (isRun(edit)) {
    meta.append(el('span', 'jp-hashline-op', runSummary(edit.runs)));
  } else {
    meta.append(
      el('span', 'jp-hashline-added', `+${stats.added}`),
      el('span', 'jp-hashline-removed', `−${stats.removed}`),
      el(
        'span',
        'jp-hashline-op',
        edit.op === 'create' ? 'created' : edit.source
      )
    );
  }
  meta.append(
    el('span', 'jp-hashline-who', edit.who),
    timeLabel(edit.at_ms, nowMs)
  );
  const cells = cellsLabel(edit.cells);
  if (cells) {
    meta.append(el('span', 'jp-hashline-cells', cells));
  }
  return meta;
}

function warningsList(warnings: readonly string[]): HTMLElement {
  const ul = el('ul', 'jp-hashline-warnings');
  for (const text of warnings) {
    ul.append(el('li', 'jp-hashline-warning', text));
  }
  return ul;
}

/** Outcomes worth knowing that ask nothing of anyone (a new cell's id): neutral, not warnings. */
function notesList(notes: readonly string[]): HTMLElement {
  const ul = el('ul', 'jp-hashline-notes');
  for (const text of notes) {
    ul.append(el('li', 'jp-hashline-note', text));
  }
  return ul;
}

/** Undo buttons, or what already undid the edit, and why the last undo was refused. */
function undoRow(
  edit: ActivityEdit,
  undo: UndoState,
  handlers: ActivityHandlers
): HTMLElement {
  const row = el('div', 'jp-hashline-undo-row');
  const by = undo.undoneBy.get(edit.id);
  if (by !== undefined) {
    row.append(el('span', 'jp-hashline-undone', `undone by #${by}`));
  } else if (edit.undoable) {
    const busy = undo.pending.has(edit.id);
    const one = el('button', 'jp-hashline-undo', busy ? 'Undoing…' : 'Undo');
    one.title =
      'Undo this edit on the notebook as it is now: it lands only where the lines it ' +
      'wrote are unchanged, and your other changes stay';
    one.disabled = busy;
    one.addEventListener('click', () => handlers.undo(edit));
    const since = el(
      'button',
      'jp-hashline-undo-since',
      `Undo all by ${edit.who} since here`
    );
    since.title = `Undo every edit ${edit.who} made from this one on, newest first; all or nothing`;
    since.disabled = busy;
    since.addEventListener('click', () => handlers.undoSince(edit));
    row.append(one, since);
  } else {
    row.append(
      el('span', 'jp-hashline-hint', 'This edit cannot be undone here.')
    );
  }
  const why = undo.refused.get(edit.id);
  if (why !== undefined) {
    row.append(renderRefusal('jp-hashline-undo-error', 'Undo refused. ', why));
  }
  return row;
}

/** Each cell of a run: its id, how it ended (ok, error, timeout, busy, skipped), how long. */
export function renderRuns(runs: readonly CellRun[]): HTMLElement {
  const ul = el('ul', 'jp-hashline-runs');
  for (const run of runs) {
    const li = el('li', `jp-hashline-run jp-hashline-run-${run.status}`);
    li.dataset.cell = run.cell;
    li.append(
      el('span', 'jp-hashline-run-cell', run.cell),
      el('span', 'jp-hashline-run-status', run.status),
      el('span', 'jp-hashline-run-duration', durationLabel(run.duration_ms))
    );
    if (run.execution_count !== null) {
      li.title = `execution count ${run.execution_count}`;
    }
    ul.append(li);
  }
  return ul;
}

/** One edit: header row (toggle + path), meta row, warnings and notes, and when expanded its
 * diff per cell with Undo. A run instead shows each cell's status and duration, always. */
export function renderEdit(
  edit: ActivityEdit,
  expanded: boolean,
  nowMs: number,
  handlers: ActivityHandlers,
  undo: UndoState = NO_UNDO_STATE
): HTMLElement {
  const item = el('li', 'jp-hashline-edit');
  item.dataset.editId = String(edit.id);
  item.dataset.path = edit.path;
  item.classList.toggle('jp-mod-expanded', expanded);
  item.classList.toggle('jp-mod-warned', edit.warnings.length > 0);
  item.classList.toggle('jp-mod-run', isRun(edit));
  item.classList.toggle('jp-mod-undone', undo.undoneBy.has(edit.id));
  item.classList.toggle('jp-mod-revert', edit.source === 'revert');
  item.append(editHead(edit, expanded, handlers), editMeta(edit, nowMs));
  if (edit.source === 'revert' && edit.reverts.length > 0) {
    const ids = edit.reverts.map(id => `#${id}`).join(', ');
    item.append(el('div', 'jp-hashline-reverts', `undoes ${ids}`));
  }
  if (edit.warnings.length > 0) {
    item.append(warningsList(edit.warnings));
  }
  if ((edit.notes ?? []).length > 0) {
    item.append(notesList(edit.notes));
  }
  if (isRun(edit)) {
    item.append(renderRuns(edit.runs));
  } else if (expanded) {
    item.append(renderCellDiffs(edit.diff), undoRow(edit, undo, handlers));
  } else if (undo.refused.has(edit.id)) {
    item.append(undoRow(edit, undo, handlers));
  }
  return item;
}

/** The activity list, newest first as the server sends it, under its counts. */
export function renderActivity(
  edits: readonly ActivityEdit[],
  expanded: ReadonlySet<number>,
  nowMs: number,
  handlers: ActivityHandlers,
  undo: UndoState = NO_UNDO_STATE
): HTMLElement {
  if (edits.length === 0) {
    return renderEmpty(
      'No edits yet',
      'Edits and runs of cells that agents make through the hashline API (REST, MCP, a ' +
        'kernel session) appear here, newest first.'
    );
  }
  const box = el('div', 'jp-hashline-activity-box');
  const counts = activityCounts(edits);
  box.append(
    el('p', 'jp-hashline-counts', editsAndRuns(counts.edits, counts.runs))
  );
  const ul = el('ul', 'jp-hashline-list jp-hashline-activity');
  for (const edit of edits) {
    ul.append(renderEdit(edit, expanded.has(edit.id), nowMs, handlers, undo));
  }
  box.append(ul);
  return box;
}

// -- sessions -------------------------------------------------------------------------------

function zoneRow(zone: ZoneView): HTMLElement {
  const row = el('div', `jp-hashline-zone jp-hashline-zone-${zone.name}`);
  const title = el('div', 'jp-hashline-zone-title');
  title.append(
    el('span', 'jp-hashline-zone-name', zone.name),
    el('span', 'jp-hashline-zone-status', zone.status)
  );
  if (zone.contractStatus !== null) {
    const contract = el(
      'span',
      'jp-hashline-contract',
      `contract ${zone.contractStatus}`
    );
    contract.classList.add(
      zone.contractStatus === 'holds' ? 'jp-mod-ok' : 'jp-mod-bad'
    );
    title.append(contract);
  }
  const facts = el('dl', 'jp-hashline-facts');
  for (const [label, value] of zone.facts) {
    facts.append(el('dt', undefined, label), el('dd', undefined, value));
  }
  row.append(title, facts);
  return row;
}

export function section(title: string, body: HTMLElement): HTMLElement {
  const box = el('div', 'jp-hashline-section');
  box.append(el('h4', 'jp-hashline-section-title', title), body);
  return box;
}

function pinsList(detail: SessionDetailView, nowMs: number): HTMLElement {
  if (detail.pins.length === 0) {
    return el('p', 'jp-hashline-hint', 'No fingerprint pinned yet.');
  }
  const ul = el('ul', 'jp-hashline-pins');
  for (const pin of detail.pins) {
    const li = el(
      'li',
      pin.drift ? 'jp-hashline-pin jp-mod-drift' : 'jp-hashline-pin'
    );
    li.append(
      el('code', 'jp-hashline-short-id', pin.shortId),
      el(
        'span',
        undefined,
        `${pin.reason}${pin.declared ? '' : ' (undeclared)'}`
      ),
      timeLabel(pin.atMs, nowMs)
    );
    if (pin.drift) {
      li.append(el('div', 'jp-hashline-drift', pin.drift));
    }
    ul.append(li);
  }
  return ul;
}

function auditList(detail: SessionDetailView, nowMs: number): HTMLElement {
  if (detail.audit.length === 0) {
    return el(
      'p',
      'jp-hashline-hint',
      'No rebuilds: the log has only been appended to.'
    );
  }
  const ul = el('ul', 'jp-hashline-audit');
  for (const record of detail.audit) {
    const li = el('li', 'jp-hashline-rebuild');
    const counts = `${record.before ?? '?'} → ${record.after ?? '?'} messages`;
    li.append(
      el('span', 'jp-hashline-rebuild-label', record.label),
      el('span', undefined, counts),
      timeLabel(record.atMs, nowMs)
    );
    if (record.detail) {
      li.append(el('div', 'jp-hashline-hint', record.detail));
    }
    ul.append(li);
  }
  return ul;
}

/** Cache hit ratio per turn as a row of bars (height = ratio), misses marked with their cause. */
export function renderTurnChart(detail: SessionDetailView): HTMLElement {
  if (detail.turns.length === 0) {
    return el('p', 'jp-hashline-hint', 'No provider requests yet.');
  }
  const chart = el('div', 'jp-hashline-chart');
  chart.setAttribute('role', 'img');
  chart.setAttribute(
    'aria-label',
    `cache hit ratio per turn, overall ${formatPercent(detail.hitRatio)}`
  );
  for (const turn of detail.turns) {
    const bar = el('div', 'jp-hashline-bar');
    bar.classList.toggle('jp-mod-miss', turn.miss);
    bar.classList.toggle('jp-mod-cold', turn.cold);
    const fill = el('div', 'jp-hashline-bar-fill');
    fill.style.height = `${Math.round((turn.hitRatio ?? 0) * 100)}%`;
    bar.append(fill);
    const cause =
      turn.miss && turn.cause
        ? `, miss: ${turn.cause}`
        : turn.cold
          ? ', cold'
          : '';
    bar.title = `turn ${turn.index}: ${formatPercent(turn.hitRatio)} cached (${turn.cachedTokens ?? '?'} of ${turn.inputTokens ?? '?'} tokens${cause})`;
    chart.append(bar);
  }
  return chart;
}

function missCauses(detail: SessionDetailView): HTMLElement {
  const text = detail.missCauses
    .map(([cause, count]) => `${cause} ×${count}`)
    .join(', ');
  return el(
    'p',
    'jp-hashline-miss-causes',
    text ? `Misses: ${text}` : 'No cache misses.'
  );
}

/** A session's zones, fingerprints and drift, rebuild audit and cache chart. */
export function renderSessionDetail(
  detail: SessionDetailView,
  nowMs: number
): HTMLElement {
  const box = el('div', 'jp-hashline-session-detail');
  const zones = el('div', 'jp-hashline-zones');
  detail.zones.forEach(zone => zones.append(zoneRow(zone)));
  const cache = el('div');
  cache.append(renderTurnChart(detail), missCauses(detail));
  box.append(
    section('Zones', zones),
    section('Fingerprints', pinsList(detail, nowMs)),
    section('Rebuild audit', auditList(detail, nowMs)),
    section(`Cache: ${formatPercent(detail.hitRatio)} hit`, cache)
  );
  return box;
}

function sessionHead(
  summary: SessionSummary,
  expanded: boolean,
  handlers: SessionHandlers
): HTMLElement {
  const head = el('div', 'jp-hashline-session-head');
  const toggle = foldToggle(
    'jp-hashline-session-toggle',
    expanded,
    expanded ? 'Hide details' : 'Show zones, audit and cache',
    () => handlers.toggle(summary)
  );
  const name = el('span', 'jp-hashline-session-name', sessionName(summary));
  name.title = `session ${summary.id}`;
  const state = el(
    'span',
    `jp-hashline-session-state ${summary.closed ? 'jp-mod-closed' : 'jp-mod-open'}`,
    summary.closed ? 'closed' : 'open'
  );
  head.append(
    toggle,
    name,
    state,
    el('span', 'jp-hashline-hit', formatPercent(summary.hit_ratio))
  );
  return head;
}

function sessionMeta(summary: SessionSummary, nowMs: number): HTMLElement {
  const meta = el('div', 'jp-hashline-session-meta');
  meta.append(
    el('code', 'jp-hashline-short-id', summary.prefix_short_id ?? 'no prefix'),
    el('span', undefined, plural(summary.turns ?? 0, 'request')),
    el(
      'span',
      'jp-hashline-session-counts',
      editsAndRuns(summary.edits, summary.runs)
    ),
    el('span', undefined, plural(summary.rebuilds ?? 0, 'rebuild')),
    el('span', 'jp-hashline-hint', 'last activity'),
    timeLabel(summary.updated_at_ms, nowMs)
  );
  return meta;
}

function sessionItem(
  summary: SessionSummary,
  expanded: ReadonlySet<string>,
  details: ReadonlyMap<string, SessionDetailView>,
  nowMs: number,
  handlers: SessionHandlers
): HTMLElement {
  const open = expanded.has(summary.id);
  const li = el('li', 'jp-hashline-session');
  li.dataset.sessionId = summary.id;
  li.classList.toggle('jp-mod-expanded', open);
  li.classList.toggle('jp-mod-closed', summary.closed === true);
  li.append(sessionHead(summary, open, handlers), sessionMeta(summary, nowMs));
  if (open) {
    const detail = details.get(summary.id);
    li.append(
      detail
        ? renderSessionDetail(detail, nowMs)
        : el('p', 'jp-hashline-hint', 'Loading…')
    );
  }
  return li;
}

/** The session list, open sessions first; closed ones fold under one row until asked for.
 * An expanded session shows its detail, or a loading line until it arrives. */
export function renderSessions(
  sessions: readonly SessionSummary[],
  expanded: ReadonlySet<string>,
  details: ReadonlyMap<string, SessionDetailView>,
  nowMs: number,
  handlers: SessionHandlers,
  showClosed = false
): HTMLElement {
  if (sessions.length === 0) {
    return renderEmpty(
      'No agent sessions registered',
      'A jupyter_hashline.agent.Session started in a kernel of this server registers itself ' +
        'here; so does anything that POSTs to hashline/sessions.'
    );
  }
  const ul = el('ul', 'jp-hashline-list jp-hashline-sessions');
  const closed = sessions.filter(s => s.closed === true);
  for (const summary of sessions.filter(s => s.closed !== true)) {
    ul.append(sessionItem(summary, expanded, details, nowMs, handlers));
  }
  if (closed.length > 0) {
    const fold = el(
      'button',
      'jp-hashline-closed-toggle',
      `${showClosed ? '▾' : '▸'} ${plural(closed.length, 'closed session')}`
    );
    fold.setAttribute('aria-expanded', String(showClosed));
    fold.addEventListener('click', () => handlers.toggleClosed());
    const li = el('li', 'jp-hashline-closed');
    li.append(fold);
    ul.append(li);
    if (showClosed) {
      for (const summary of closed) {
        ul.append(sessionItem(summary, expanded, details, nowMs, handlers));
      }
    }
  }
  return ul;
}

// -- snapshots ------------------------------------------------------------------------------

function versionRow(
  version: TrackedPath['versions'][number],
  head: string | null,
  nowMs: number
): HTMLElement {
  const li = el('li', 'jp-hashline-version');
  li.classList.toggle('jp-mod-head', version.tag === head);
  li.append(
    el('code', 'jp-hashline-tag', `#${version.tag}`),
    el('span', undefined, plural(version.lines, 'line')),
    el(
      'span',
      'jp-hashline-seen',
      `seen: ${seenLinesText(version.seen_lines)}`
    ),
    timeLabel(version.recorded_at_ms, nowMs)
  );
  return li;
}

/** Tracked paths (most recently used first) with their versions, the head marked. */
export function renderSnapshots(
  paths: readonly TrackedPath[],
  nowMs: number
): HTMLElement {
  if (paths.length === 0) {
    return renderEmpty(
      'No snapshots',
      'Every hashline read records a snapshot of the text it showed; tracked files and ' +
        'their tags appear here.'
    );
  }
  const ul = el('ul', 'jp-hashline-list jp-hashline-snapshots');
  for (const tracked of paths) {
    const li = el('li', 'jp-hashline-tracked');
    li.dataset.path = tracked.path;
    const head = pathHead(
      tracked.path,
      el(
        'code',
        'jp-hashline-tag',
        tracked.head ? `#${tracked.head}` : 'no head'
      ),
      el('span', 'jp-hashline-hint', plural(tracked.versions.length, 'version'))
    );
    const versions = el('ul', 'jp-hashline-versions');
    tracked.versions.forEach(v =>
      versions.append(versionRow(v, tracked.head, nowMs))
    );
    li.append(head, versions);
    ul.append(li);
  }
  return ul;
}
