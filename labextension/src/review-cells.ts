/**
 * Proposals shown where they would land, in open notebooks: a changed cell carries its diff
 * under its editor, a cell to be deleted is marked, a cell to be inserted is shown as a
 * placeholder under the cell it goes after; each with Accept / Reject, which ask the server.
 *
 * Invariants:
 * - Nothing here changes a notebook: accepting asks the server, which applies the edit through
 *   the live room (the person's unsaved typing stays), and the cell changes as any shared edit.
 * - The boxes follow the server: refetched on every proposal event, when a notebook opens,
 *   after each decision made here, and (only while a notebook shows a pending proposal, in case
 *   an event was missed) by a slow poll.
 * - A box is rebuilt only when what it shows changed, so the button a person is about to click
 *   stays put; a box that leaves the page releases its diff view.
 * - A refused accept (the person changed the same lines since) keeps the server's reason on
 *   that cell until the next decision there or until the cell is no longer pending.
 * - Placement never relies on the notebook's viewport: a box lives inside a cell's own node
 *   (inserted cells: inside the cell they follow; before the first cell: inside the first).
 */

import type { Cell } from '@jupyterlab/cells';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import type { BusEvent, BusEvents } from './events';
import { PROPOSAL_EVENT_ID } from './event-types';
import { KeyedRequests, Refresher } from './in-flight';
import type {
  ProposalDecisionRequest,
  ProposalDecisionResponse,
  ProposalsResponse
} from './rest-types';
import {
  type CellReview,
  type Proposal,
  type ProposedCell,
  decisionCells,
  isOpen,
  notebookReviews,
  reviewKey,
  withReplies
} from './review';
import {
  type DecisionState,
  renderCellLineDiff,
  renderProposedCell
} from './review-render';

const BOX = 'jp-hashline-proposed';
const DELETE_MARK = 'jp-hashline-mod-delete-proposed';
/** While a notebook shows a pending proposal, how often it re-fetches besides its events. */
export const REVIEW_POLL_MS = 10_000;

/** The part of the REST client the notebook decorations use. */
export interface ReviewClient {
  proposals(path?: string): Promise<ProposalsResponse>;
  decide(
    id: number,
    accept: boolean,
    request?: ProposalDecisionRequest
  ): Promise<ProposalDecisionResponse>;
}

/** How a proposed cell's diff is drawn (`host`: the node of the notebook cell it is shown
 *  on), and how a drawn one is let go. */
export interface DiffView {
  render(cell: ProposedCell, host: HTMLElement | null): HTMLElement;
  release(root: Element): void;
}

/** The line diff of render.ts: removed lines red, added lines green. */
export const LINE_DIFF: DiffView = {
  render: cell => renderCellLineDiff(cell.diff),
  release: () => undefined
};

export interface CellReviewOptions {
  tracker: INotebookTracker;
  client: ReviewClient;
  events?: BusEvents;
  diffView?: DiffView;
  /** Called after the person decided here (the sidebar refreshes). */
  decided?(): void;
  now?: () => number;
}

type Place = 'before' | 'input' | 'after';

interface Wanted {
  review: CellReview;
  place: Place;
}

export class CellReviews {
  constructor(private readonly _options: CellReviewOptions) {
    this._now = _options.now ?? Date.now;
    this._diffView = _options.diffView ?? LINE_DIFF;
    _options.events?.connect(this._onEvent, this);
    _options.tracker.widgetAdded.connect((_, panel) => this._watch(panel));
    _options.tracker.forEach(panel => this._watch(panel));
  }

  /** Draw diffs another way from now on (the merge view, once it has loaded). */
  set diffView(view: DiffView) {
    this._diffView = view;
    this._options.tracker.forEach(panel => this._clear(panel));
    this._paintAll();
  }

  /** Fetch the proposals of every open notebook and repaint. Calls made while one is in flight
   *  are coalesced into a single follow-up. */
  async refresh(): Promise<void> {
    if (await this._refresher.run()) {
      this._pollWhilePending();
    }
  }

  private async _fetchAll(): Promise<void> {
    const paths = new Set<string>();
    this._options.tracker.forEach(panel => paths.add(panel.context.path));
    await Promise.all(
      [...paths].map(async path => {
        try {
          const reply = await this._options.client.proposals(path);
          this._proposals.set(path, reply.proposals);
        } catch {
          // the sidebar reports failures; the boxes stay as they are until the next try
        }
      })
    );
    for (const path of [...this._proposals.keys()]) {
      if (!paths.has(path)) {
        this._proposals.delete(path);
      }
    }
  }

  private _pollWhilePending(): void {
    const pending = [...this._proposals.values()].some(list =>
      list.some(isOpen)
    );
    if (pending && this._poll === undefined) {
      this._poll = window.setInterval(
        () => void this.refresh(),
        REVIEW_POLL_MS
      );
    } else if (!pending && this._poll !== undefined) {
      window.clearInterval(this._poll);
      this._poll = undefined;
    }
  }

  private _onEvent(_sender: unknown, event: BusEvent): void {
    if (event.schema_id === PROPOSAL_EVENT_ID) {
      void this.refresh();
    }
  }

  private _watch(panel: NotebookPanel): void {
    void panel.context.ready.then(() => {
      panel.content.model?.cells.changed.connect(() => this._paint(panel));
      return this.refresh();
    });
  }

  /** Repaint every open notebook; a refusal whose cell is no longer shown is forgotten. */
  private _paintAll(): void {
    const shown = new Set<string>();
    this._options.tracker.forEach(panel => this._paint(panel, shown));
    for (const key of [...this._decisions.refused.keys()]) {
      if (!shown.has(key)) {
        this._decisions.refused.delete(key);
      }
    }
  }

  private _paint(panel: NotebookPanel, shown?: Set<string>): void {
    if (panel.isDisposed) {
      return;
    }
    const path = panel.context.path;
    // the server answered for this notebook, whatever path the agent named it by
    const reviews = notebookReviews(this._proposals.get(path) ?? []);
    const cells = panel.content.widgets;
    const ids = new Set(cells.map(cell => cell.model.id));
    // inserted cells whose neighbour is gone are shown at the end rather than lost
    const orphans = [...reviews.after]
      .filter(([after]) => after !== '' && !ids.has(after))
      .flatMap(([, list]) => list);
    cells.forEach((cell, index) => {
      const id = cell.model.id;
      const wanted: Wanted[] = [
        ...(index === 0 ? (reviews.after.get('') ?? []) : []).map(review => ({
          review,
          place: 'before' as const
        })),
        ...(reviews.onCell.get(id) ?? []).map(review => ({
          review,
          place: 'input' as const
        })),
        ...[
          ...(reviews.after.get(id) ?? []),
          ...(index === cells.length - 1 ? orphans : [])
        ].map(review => ({ review, place: 'after' as const }))
      ];
      this._paintCell(panel, cell, wanted);
      wanted.forEach(w => shown?.add(reviewKey(w.review)));
    });
  }

  private _paintCell(panel: NotebookPanel, cell: Cell, wanted: Wanted[]): void {
    const node = cell.node;
    if (!this._seen.has(cell)) {
      // a cell outside the viewport may build its editor later: place the boxes again then
      this._seen.add(cell);
      void cell.ready.then(() => this._paint(panel));
    }
    const kept = new Map<string, HTMLElement>();
    node.querySelectorAll<HTMLElement>(`:scope > .${BOX}`).forEach(box => {
      kept.set(box.dataset.signature ?? '', box);
    });
    const boxes = wanted.map(({ review, place }) => {
      const signature = this._signature(review, place);
      const box =
        kept.get(signature) ?? this._box(review, place, signature, node);
      kept.delete(signature);
      return { box, place };
    });
    kept.forEach(box => {
      this._diffView.release(box);
      box.remove();
    });
    const at = (place: Place): HTMLElement[] =>
      boxes.filter(b => b.place === place).map(b => b.box);
    placeFirst(node, at('before'));
    const input = node.querySelector<HTMLElement>(
      ':scope > .jp-Cell-inputWrapper'
    );
    if (input) {
      placeAfter(input, at('input'));
    } else {
      placeLast(node, at('input'));
    }
    placeLast(node, at('after'));
    node.classList.toggle(
      DELETE_MARK,
      wanted.some(w => w.place === 'input' && w.review.cell.kind === 'deleted')
    );
  }

  /** What a box shows, as a string: a box is rebuilt only when this changes. */
  private _signature(review: CellReview, place: Place): string {
    const key = reviewKey(review);
    const { kind, before, after } = review.cell;
    const state = this._state(key);
    return JSON.stringify([key, place, kind, before, after, state]);
  }

  private _state(key: string): DecisionState {
    return {
      busy: this._decisions.pending.has(key),
      error: this._decisions.refused.get(key) ?? null
    };
  }

  private _box(
    review: CellReview,
    place: Place,
    signature: string,
    cellNode: HTMLElement
  ): HTMLElement {
    // a new cell is code like the notebook's code cells, whatever cell it follows
    const host =
      review.cell.kind === 'inserted'
        ? (cellNode
            .closest('.jp-Notebook')
            ?.querySelector<HTMLElement>('.jp-CodeCell') ?? null)
        : cellNode;
    const box = renderProposedCell(
      review,
      this._diffView.render(review.cell, host),
      this._state(reviewKey(review)),
      this._now(),
      this._handlers
    );
    box.dataset.signature = signature;
    box.dataset.place = place;
    return box;
  }

  private _clear(panel: NotebookPanel): void {
    panel.content.node.querySelectorAll<HTMLElement>(`.${BOX}`).forEach(box => {
      this._diffView.release(box);
      box.remove();
    });
  }

  private readonly _handlers = {
    accept: (review: CellReview): void => void this._decide(review, true),
    reject: (review: CellReview): void => void this._decide(review, false)
  };

  private async _decide(review: CellReview, accept: boolean): Promise<void> {
    const key = reviewKey(review);
    if (this._decisions.pending.has(key)) {
      return;
    }
    const request = { cells: decisionCells(review.proposal, review.cell.cell) };
    await this._decisions.run(
      key,
      async () => {
        const reply = await this._options.client.decide(
          review.proposal.id,
          accept,
          request
        );
        for (const [path, list] of this._proposals) {
          this._proposals.set(path, withReplies(list, [reply.proposal]));
        }
      },
      () => this._paintAll()
    );
    this._options.decided?.();
    await this.refresh();
  }

  private _diffView: DiffView;
  private readonly _refresher = new Refresher(async () => {
    await this._fetchAll();
    this._paintAll();
  });
  private _poll: number | undefined = undefined;
  private readonly _proposals = new Map<string, readonly Proposal[]>();
  /** Decisions by review key (one cell of one proposal). */
  private readonly _decisions = new KeyedRequests<string>();
  private readonly _seen = new WeakSet<Cell>();
  private readonly _now: () => number;
}

/** Make `nodes` the first children of `parent`, in order (moving only what is out of place). */
function placeFirst(parent: HTMLElement, nodes: HTMLElement[]): void {
  let ref = parent.firstElementChild;
  for (const node of nodes) {
    if (ref === node) {
      ref = node.nextElementSibling;
    } else {
      parent.insertBefore(node, ref);
    }
  }
}

/** Make `nodes` follow `anchor`, in order. */
function placeAfter(anchor: HTMLElement, nodes: HTMLElement[]): void {
  let prev: Element = anchor;
  for (const node of nodes) {
    if (prev.nextElementSibling !== node) {
      prev.after(node);
    }
    prev = node;
  }
}

/** Make `nodes` follow the last of `parent`'s own parts (its Lumino widgets), in order;
 *  decorations such as a badge may stand between or after them. */
function placeLast(parent: HTMLElement, nodes: HTMLElement[]): void {
  const widgets = [...parent.children].filter(child =>
    child.classList.contains('lm-Widget')
  );
  const last = widgets[widgets.length - 1];
  const inPlace =
    nodes.every(
      (node, i) => i === 0 || nodes[i - 1].nextElementSibling === node
    ) &&
    (nodes.length === 0 ||
      (nodes[0].parentElement === parent &&
        (last === undefined ||
          (last.compareDocumentPosition(nodes[0]) &
            Node.DOCUMENT_POSITION_FOLLOWING) !==
            0)));
  if (!inPlace) {
    parent.append(...nodes);
  }
}
