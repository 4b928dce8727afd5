/**
 * Pure view logic of review mode: which proposals are open, what they do to which cell, and
 * which cells a decision on one cell must name.
 *
 * A proposal is an agent's edit kept for a person's review (GET hashline/proposals). Nothing
 * here touches the DOM or JupyterLab (test/review.test.ts).
 *
 * Invariants:
 * - Per-cell status is what counts: a proposal is open while one of its cells is pending, and
 *   only pending cells are shown, counted or decided.
 * - A decision on one cell names that cell and every pending cell that must be decided with it
 *   (`together`, followed transitively), so the server never has to refuse a split hunk.
 * - Every function is total and keeps the server's order (proposals newest first, cells in the
 *   order the proposal lists them).
 */

import type { Proposal, ProposedCell } from './rest-types';

export type { Proposal, ProposedCell };

export type CellKind = ProposedCell['kind'];

/** The cells of a proposal still waiting for a person's decision. */
export function pendingCells(proposal: Proposal): ProposedCell[] {
  return proposal.cells.filter(cell => cell.status === 'pending');
}

/** Whether a person still has something to decide on this proposal. */
export function isOpen(proposal: Proposal): boolean {
  return pendingCells(proposal).length > 0;
}

export function openProposals(proposals: readonly Proposal[]): Proposal[] {
  return proposals.filter(isOpen);
}

/** How many pending cells the proposal changes, inserts and deletes. */
export function cellCounts(proposal: Proposal): Record<CellKind, number> {
  const counts = { changed: 0, inserted: 0, deleted: 0 };
  for (const cell of pendingCells(proposal)) {
    counts[cell.kind] += 1;
  }
  return counts;
}

/** "2 changed · 1 inserted" (kinds with no cell left out); a text file: "file changed". */
export function countsLabel(proposal: Proposal): string {
  if (proposal.text_file) {
    return 'file changed';
  }
  const counts = cellCounts(proposal);
  const parts = (['changed', 'inserted', 'deleted'] as const)
    .filter(kind => counts[kind] > 0)
    .map(kind => `${counts[kind]} ${kind}`);
  return parts.length ? parts.join(' · ') : 'nothing pending';
}

/** The open proposals grouped by file, files in the order of their newest proposal. */
export function proposalsByPath(
  proposals: readonly Proposal[]
): Array<{ path: string; proposals: Proposal[] }> {
  const groups = new Map<string, Proposal[]>();
  for (const proposal of openProposals(proposals)) {
    const group = groups.get(proposal.path) ?? [];
    group.push(proposal);
    groups.set(proposal.path, group);
  }
  return [...groups].map(([path, list]) => ({ path, proposals: list }));
}

/** The pending cells a decision on `key` must name: `key` first, then those decided with it. */
export function decisionCells(proposal: Proposal, key: string): string[] {
  const pending = new Map(pendingCells(proposal).map(c => [c.cell, c]));
  const found = [key];
  for (let i = 0; i < found.length; i++) {
    const mates = pending.get(found[i])?.together ?? [];
    for (const mate of mates) {
      if (!found.includes(mate) && pending.has(mate)) {
        found.push(mate);
      }
    }
  }
  return found;
}

/** One pending cell of one proposal, as a notebook shows it. */
export interface CellReview {
  proposal: Proposal;
  cell: ProposedCell;
}

/** A stable key of one reviewed cell: "proposal id:cell key". */
export function reviewKey(review: CellReview): string {
  return `${review.proposal.id}:${review.cell.cell}`;
}

/** Where each pending cell of a notebook's open proposals is shown. */
export interface NotebookReviews {
  /** Changed and deleted cells, by the id of the notebook cell they change. */
  onCell: Map<string, CellReview[]>;
  /** Inserted cells, by the id of the cell they go after ('' : before the first cell). */
  after: Map<string, CellReview[]>;
}

/** The pending cells of the open notebook proposals (of `path` only, when given: a list the
 *  server filtered by path needs none, and may spell the path as the agent did), oldest
 *  proposal first on each cell. */
export function notebookReviews(
  proposals: readonly Proposal[],
  path?: string
): NotebookReviews {
  const found: NotebookReviews = { onCell: new Map(), after: new Map() };
  const mine = openProposals(proposals).filter(
    p => (path === undefined || p.path === path) && !p.text_file
  );
  for (const proposal of mine.reverse()) {
    for (const cell of pendingCells(proposal)) {
      const table = cell.kind === 'inserted' ? found.after : found.onCell;
      const where =
        cell.kind === 'inserted' ? (cell.after_cell ?? '') : cell.cell;
      const list = table.get(where) ?? [];
      list.push({ proposal, cell });
      table.set(where, list);
    }
  }
  return found;
}

/** What a proposed cell does, said from the cell's side ("claude-code proposes …"). */
export function proposalTitle(review: CellReview): string {
  const who = review.proposal.agent;
  switch (review.cell.kind) {
    case 'inserted':
      return `${who} proposes a new cell here`;
    case 'deleted':
      return `${who} proposes deleting this cell`;
    default:
      return review.proposal.text_file
        ? `${who} proposes a change`
        : `${who} proposes a change to this cell`;
  }
}

/** "changed with cell b, c": the other cells a decision on this one takes along ('' if none). */
export function togetherLabel(review: CellReview): string {
  const mates = decisionCells(review.proposal, review.cell.cell).slice(1);
  if (mates.length === 0) {
    return '';
  }
  const noun = mates.length === 1 ? 'cell' : 'cells';
  return `Accepted or rejected together with ${noun} ${mates.join(', ')} (changed in one piece).`;
}

/** Replace proposals by id with newer copies (a decision's reply), keeping the order. */
export function withReplies(
  proposals: readonly Proposal[],
  replies: readonly Proposal[]
): Proposal[] {
  const newer = new Map(replies.map(p => [p.id, p]));
  return proposals.map(p => newer.get(p.id) ?? p);
}
