/**
 * DOM builders of review mode: the sidebar's Review tab (the mode toggle, open proposals by
 * notebook with Accept all / Reject all) and the box a proposed cell shows on its cell (what
 * the agent proposes, its diff, Accept / Reject, and why an accept was refused).
 *
 * No JupyterLab imports and no network: the sidebar (sidebar.ts) and the notebook decorations
 * (review-cells.ts) own state and requests and call these; tests call them in a DOM emulation.
 *
 * Invariants:
 * - Server text (paths, agents, sources, diffs, refusals) is only set as `textContent`.
 * - The diff of a cell is built by the caller (a CodeMirror merge view in the lab, the line
 *   diff of `render.ts` elsewhere) and only placed here.
 * - A button whose request is in flight is disabled, so one click makes one request.
 * - Class names starting `jp-hashline-` are the contract with style/index.css and the browser
 *   test; keep them stable.
 */

import {
  el,
  foldToggle,
  pathHead,
  renderDiffRows,
  renderEmpty,
  renderRefusal,
  section,
  timeLabel
} from './render';
import type { ReviewModeResponse } from './rest-types';
import {
  type CellReview,
  type Proposal,
  countsLabel,
  pendingCells,
  proposalTitle,
  proposalsByPath,
  reviewKey,
  togetherLabel
} from './review';
import { diffRows, plural, tagOf } from './model';

export interface ProposedCellHandlers {
  accept(review: CellReview): void;
  reject(review: CellReview): void;
}

/** What the person's last decision on a cell did: in flight, or refused with a reason. */
export interface DecisionState {
  busy: boolean;
  error: string | null;
}

/** A proposed cell's line diff without its file and hunk headers: removed lines red, added
 *  lines green, each numbered on its side. */
export function renderCellLineDiff(diff: string): HTMLElement {
  const rows = diffRows(diff).filter(
    row => row.kind !== 'file' && row.kind !== 'hunk'
  );
  return renderDiffRows(rows);
}

/** How a proposed cell's box is headed: from the cell's side (in a notebook), or naming the
 *  cell (in the sidebar, under its proposal). */
export type BoxHeading = 'cell' | 'list';

function boxTitle(review: CellReview, heading: BoxHeading): string {
  if (heading === 'cell') {
    return proposalTitle(review);
  }
  const { cell, kind } = review.cell;
  return review.proposal.text_file ? 'file changed' : `cell ${cell} ${kind}`;
}

function button(
  className: string,
  text: string,
  title: string,
  busy: boolean,
  onClick: () => void
): HTMLButtonElement {
  const node = el('button', `jp-hashline-review-button ${className}`, text);
  node.title = title;
  node.disabled = busy;
  node.addEventListener('click', event => {
    event.stopPropagation(); // a click in a cell must not also select or edit the cell
    onClick();
  });
  return node;
}

/** Why the server did not apply a decision. */
function refusal(reason: string): HTMLElement {
  return renderRefusal('jp-hashline-proposed-error', 'Not applied. ', reason);
}

/** One pending cell of a proposal: what it does, its diff, Accept / Reject, a refusal. */
export function renderProposedCell(
  review: CellReview,
  diff: HTMLElement,
  state: DecisionState,
  nowMs: number,
  handlers: ProposedCellHandlers,
  heading: BoxHeading = 'cell'
): HTMLElement {
  const kind = review.cell.kind;
  const box = el('div', `jp-hashline-proposed jp-hashline-proposed-${kind}`);
  box.dataset.proposalId = String(review.proposal.id);
  box.dataset.cell = review.cell.cell;
  box.dataset.key = reviewKey(review);
  box.classList.toggle('jp-mod-refused', state.error !== null);
  const head = el('div', 'jp-hashline-proposed-head');
  head.append(
    el('span', 'jp-hashline-proposed-title', boxTitle(review, heading))
  );
  if (heading === 'cell') {
    head.append(timeLabel(review.proposal.at_ms, nowMs));
  }
  head.append(
    button(
      'jp-hashline-proposed-accept',
      state.busy ? 'Working…' : 'Accept',
      'Apply this change to the notebook as it is now; your own changes stay',
      state.busy,
      () => handlers.accept(review)
    ),
    button(
      'jp-hashline-proposed-reject',
      'Reject',
      'Drop this change; the agent is told on its next call',
      state.busy,
      () => handlers.reject(review)
    )
  );
  box.append(head);
  const together = togetherLabel(review);
  if (together) {
    box.append(el('div', 'jp-hashline-proposed-together', together));
  }
  diff.classList.add('jp-hashline-proposed-diff');
  box.append(diff);
  if (state.error !== null) {
    box.append(refusal(state.error));
  }
  return box;
}

// -- the sidebar's Review tab -----------------------------------------------------------------

export interface ReviewHandlers extends ProposedCellHandlers {
  /** Turn the server-wide review mode on or off. */
  setMode(on: boolean): void;
  /** Accept or reject every open proposal of one file. */
  decideAll(path: string, accept: boolean): void;
  toggle(proposal: Proposal): void;
  /** Open the proposal's file at its first pending cell. */
  open(proposal: Proposal): void;
  /** The note a person typed for the agent, sent with rejections of that file. */
  note(path: string, text: string): void;
}

export interface ReviewViewState {
  mode: ReviewModeResponse | null;
  modeBusy: boolean;
  expanded: ReadonlySet<number>;
  /** Decisions in flight: file paths (all of a file) and review keys (one cell). */
  busy: ReadonlySet<string>;
  /** Why the last decision was refused, by file path or review key. */
  errors: ReadonlyMap<string, string>;
  notes: ReadonlyMap<string, string>;
}

function modeToggle(
  state: ReviewViewState,
  handlers: ReviewHandlers
): HTMLElement {
  const box = el('div', 'jp-hashline-review-mode');
  const label = el('label', 'jp-hashline-review-toggle');
  const input = el('input');
  input.type = 'checkbox';
  input.checked = state.mode?.mode === 'on';
  input.disabled = state.modeBusy || state.mode === null;
  input.addEventListener('change', () => handlers.setMode(input.checked));
  label.append(input, el('span', undefined, 'Review agent edits'));
  box.append(label);
  box.append(
    el(
      'p',
      'jp-hashline-hint',
      input.checked
        ? 'On: an agent’s edit waits here as a proposal until you accept or reject it, per cell.'
        : 'Off: agents’ edits land at once (an agent can still propose one).'
    )
  );
  const agents = Object.entries(state.mode?.agents ?? {});
  if (agents.length > 0) {
    const own = agents.map(([name, mode]) => `${name}: ${String(mode)}`);
    box.append(
      el('p', 'jp-hashline-review-agents', `Per agent: ${own.join(', ')}`)
    );
  }
  return box;
}

function proposalCellList(
  proposal: Proposal,
  state: ReviewViewState,
  nowMs: number,
  handlers: ReviewHandlers
): HTMLElement {
  const list = el('div', 'jp-hashline-proposal-cells');
  for (const cell of pendingCells(proposal)) {
    const review = { proposal, cell };
    const key = reviewKey(review);
    const decision = {
      busy: state.busy.has(key) || state.busy.has(proposal.path),
      error: state.errors.get(key) ?? null
    };
    list.append(
      renderProposedCell(
        review,
        renderCellLineDiff(cell.diff),
        decision,
        nowMs,
        handlers,
        'list'
      )
    );
  }
  return list;
}

function proposalItem(
  proposal: Proposal,
  state: ReviewViewState,
  nowMs: number,
  handlers: ReviewHandlers
): HTMLElement {
  const expanded = state.expanded.has(proposal.id);
  const item = el('li', 'jp-hashline-proposal');
  item.dataset.proposalId = String(proposal.id);
  item.classList.toggle('jp-mod-expanded', expanded);
  const head = el('div', 'jp-hashline-proposal-head');
  const toggle = foldToggle(
    'jp-hashline-proposal-toggle',
    expanded,
    expanded ? 'Hide the cells' : 'Show each cell’s diff',
    () => handlers.toggle(proposal)
  );
  const who = el('button', 'jp-hashline-proposal-agent', proposal.agent);
  who.title = `Open ${proposal.path} at the proposal`;
  who.addEventListener('click', () => handlers.open(proposal));
  head.append(toggle, who, timeLabel(proposal.at_ms, nowMs));
  const meta = el('div', 'jp-hashline-proposal-meta');
  const tag = el(
    'code',
    'jp-hashline-headers',
    `on #${tagOf(proposal.header)}`
  );
  tag.title = `proposed on ${proposal.header}`;
  meta.append(
    el('span', 'jp-hashline-proposal-counts', countsLabel(proposal)),
    tag
  );
  if (proposal.status === 'partly accepted') {
    meta.append(el('span', 'jp-hashline-hint', 'partly decided'));
  }
  item.append(head, meta);
  if (expanded) {
    item.append(proposalCellList(proposal, state, nowMs, handlers));
  }
  return item;
}

function groupActions(
  path: string,
  state: ReviewViewState,
  handlers: ReviewHandlers
): HTMLElement {
  const row = el('div', 'jp-hashline-proposal-actions');
  const busy = state.busy.has(path);
  const note = el('input', 'jp-hashline-proposal-note');
  note.type = 'text';
  note.placeholder = 'Note to the agent with a rejection (optional)';
  note.title = 'Sent to the agent with Reject all and with each Reject here';
  note.value = state.notes.get(path) ?? '';
  note.addEventListener('input', () => handlers.note(path, note.value));
  row.append(
    button(
      'jp-hashline-accept-all',
      busy ? 'Working…' : 'Accept all',
      `Apply every open proposal of ${path}, oldest first`,
      busy,
      () => handlers.decideAll(path, true)
    ),
    button(
      'jp-hashline-reject-all',
      'Reject all',
      `Drop every open proposal of ${path}`,
      busy,
      () => handlers.decideAll(path, false)
    ),
    note
  );
  const why = state.errors.get(path);
  if (why !== undefined) {
    row.append(refusal(why));
  }
  return row;
}

/** The Review tab: the mode toggle, then the open proposals, one group per file. */
export function renderReview(
  proposals: readonly Proposal[],
  state: ReviewViewState,
  nowMs: number,
  handlers: ReviewHandlers
): HTMLElement {
  const box = el('div', 'jp-hashline-review-box');
  box.append(modeToggle(state, handlers));
  const groups = proposalsByPath(proposals);
  if (groups.length === 0) {
    box.append(
      section(
        'Proposals',
        renderEmpty(
          'No proposals waiting',
          'With review on (here, per agent, or an agent’s propose: true), an agent’s ' +
            'edits appear here and on their cells until you accept or reject them.'
        )
      )
    );
    return box;
  }
  const ul = el('ul', 'jp-hashline-list jp-hashline-proposal-groups');
  for (const group of groups) {
    const li = el('li', 'jp-hashline-proposal-group');
    li.dataset.path = group.path;
    const head = pathHead(
      group.path,
      el('span', 'jp-hashline-hint', plural(group.proposals.length, 'proposal'))
    );
    const list = el('ul', 'jp-hashline-proposals');
    for (const proposal of group.proposals) {
      list.append(proposalItem(proposal, state, nowMs, handlers));
    }
    li.append(head, groupActions(group.path, state, handlers), list);
    ul.append(li);
  }
  box.append(section('Proposals', ul));
  return box;
}
