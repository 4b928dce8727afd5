// Review mode: which proposals are open and what they do per cell, the Review tab, and the
// proposals on the cells of an open notebook (a fake tracker: no lab, no server).
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { HashlineRequestError } from '../src/api';
import { PROPOSAL_EVENT_ID } from '../src/event-types';
import { type BusEvent, tabsChangedBy } from '../src/events';
import type {
  ProposalDecisionRequest,
  ProposalDecisionResponse,
  ReviewModeResponse
} from '../src/rest-types';
import {
  cellCounts,
  countsLabel,
  decisionCells,
  notebookReviews,
  proposalsByPath,
  togetherLabel
} from '../src/review';
import { CellReviews, type ReviewClient } from '../src/review-cells';
import {
  renderCellLineDiff,
  renderProposedCell,
  renderReview
} from '../src/review-render';
import { HashlineSidebar, type SidebarSource } from '../src/sidebar';
import {
  NOW,
  SNAPSHOT,
  TRACKED,
  proposal,
  proposedCell,
  summary
} from './fixtures';

function texts(root: Element, selector: string): string[] {
  return [...root.querySelectorAll(selector)].map(n => n.textContent ?? '');
}

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) {
    await Promise.resolve();
  }
}

/** Two cells changed (a and b, in one hunk), one inserted after b, one deleted. */
function mixed(id = 7) {
  return proposal({
    id,
    cells: [
      proposedCell({ cell: 'a', together: ['b'] }),
      proposedCell({ cell: 'b', together: ['a'] }),
      proposedCell({
        cell: 'new-1',
        kind: 'inserted',
        after_cell: 'b',
        before: '',
        after: 'print(2)',
        diff: '@@ -0,0 +1 @@\n+print(2)\n'
      }),
      proposedCell({
        cell: 'c',
        kind: 'deleted',
        before: 'old()',
        after: '',
        diff: '@@ -1 +0,0 @@\n-old()\n'
      }),
      proposedCell({ cell: 'd', status: 'accepted' })
    ]
  });
}

describe('the review model', () => {
  it('counts and labels only the pending cells', () => {
    const one = mixed();
    expect(cellCounts(one)).toEqual({ changed: 2, inserted: 1, deleted: 1 });
    expect(countsLabel(one)).toBe('2 changed · 1 inserted · 1 deleted');
    expect(countsLabel(proposal({ text_file: true }))).toBe('file changed');
  });

  it('groups open proposals by file, decided ones left out', () => {
    const decided = proposal({
      id: 3,
      status: 'rejected',
      cells: [proposedCell({ status: 'rejected' })]
    });
    const groups = proposalsByPath([
      proposal({ id: 5, path: 'b.ipynb' }),
      decided,
      proposal({ id: 4 }),
      proposal({ id: 2, path: 'b.ipynb' })
    ]);
    expect(groups.map(g => [g.path, g.proposals.map(p => p.id)])).toEqual([
      ['b.ipynb', [5, 2]],
      ['analysis.ipynb', [4]]
    ]);
  });

  it('decides a cell with every pending cell changed in one piece with it', () => {
    const chain = proposal({
      cells: [
        proposedCell({ cell: 'a', together: ['b'] }),
        proposedCell({ cell: 'b', together: ['a', 'c'] }),
        proposedCell({ cell: 'c', together: ['b', 'gone'] }),
        proposedCell({ cell: 'e' })
      ]
    });
    expect(decisionCells(chain, 'a')).toEqual(['a', 'b', 'c']);
    expect(decisionCells(chain, 'e')).toEqual(['e']);
    expect(togetherLabel({ proposal: chain, cell: chain.cells[0] })).toBe(
      'Accepted or rejected together with cells b, c (changed in one piece).'
    );
  });

  it('places changed and deleted cells on their cell, inserted ones after theirs', () => {
    const first = proposedCell({
      cell: 'new-1',
      kind: 'inserted',
      after_cell: null
    });
    const reviews = notebookReviews(
      [
        mixed(8),
        proposal({ id: 6, cells: [first, proposedCell({ cell: 'a' })] })
      ],
      'analysis.ipynb'
    );
    expect([...reviews.onCell.keys()]).toEqual(['a', 'b', 'c']);
    // the older proposal first on a cell both change
    expect(reviews.onCell.get('a')!.map(r => r.proposal.id)).toEqual([6, 8]);
    expect([...reviews.after.keys()]).toEqual(['', 'b']);
    expect(notebookReviews([mixed()], 'other.ipynb').onCell.size).toBe(0);
  });

  it('maps proposal events to the Review tab', () => {
    expect(tabsChangedBy({ schema_id: PROPOSAL_EVENT_ID })).toEqual(['review']);
    expect(PROPOSAL_EVENT_ID).toBe(
      'https://events.jupyter.org/jupyter_hashline/proposal/v1'
    );
  });
});

describe('rendering a proposed cell', () => {
  it('says what the agent proposes, shows the diff, and calls back per button', () => {
    const one = mixed();
    const calls: string[] = [];
    const diff = document.createElement('pre');
    const box = renderProposedCell(
      { proposal: one, cell: one.cells[3] },
      diff,
      { busy: false, error: null },
      NOW,
      {
        accept: r => calls.push(`accept ${r.cell.cell}`),
        reject: r => calls.push(`reject ${r.cell.cell}`)
      }
    );
    expect(box.classList).toContain('jp-hashline-proposed-deleted');
    expect(box.dataset.key).toBe('7:c');
    expect(texts(box, '.jp-hashline-proposed-title')).toEqual([
      'claude-code proposes deleting this cell'
    ]);
    expect(box.contains(diff)).toBe(true);
    box
      .querySelector<HTMLButtonElement>('.jp-hashline-proposed-accept')!
      .click();
    box
      .querySelector<HTMLButtonElement>('.jp-hashline-proposed-reject')!
      .click();
    expect(calls).toEqual(['accept c', 'reject c']);
  });

  it('shows a refusal, disables the buttons in flight, and sets server text as text', () => {
    const one = mixed();
    const review = { proposal: one, cell: one.cells[0] };
    const handlers = { accept: vi.fn(), reject: vi.fn() };
    const refused = renderProposedCell(
      review,
      document.createElement('pre'),
      { busy: false, error: '<b>line 2 changed</b>' },
      NOW,
      handlers
    );
    expect(texts(refused, '.jp-hashline-proposed-error')).toEqual([
      'Not applied. <b>line 2 changed</b>'
    ]);
    expect(refused.querySelector('b')).toBeNull();
    expect(texts(refused, '.jp-hashline-proposed-together')[0]).toContain(
      'cell b'
    );
    const busy = renderProposedCell(
      review,
      document.createElement('pre'),
      { busy: true, error: null },
      NOW,
      handlers
    );
    const buttons = busy.querySelectorAll('button');
    expect([...buttons].every(b => b.disabled)).toBe(true);
  });
});

describe('the line diff of a proposed cell', () => {
  it('drops the file and hunk headers, keeps removed and added lines numbered', () => {
    const pre = renderCellLineDiff(
      '--- \n+++ \n@@ -1,2 +1,2 @@\n import pandas as pd\n-rate = 0.2\n+rate = 0.3\n'
    );
    expect(texts(pre, '.jp-hashline-diff-text')).toEqual([
      ' import pandas as pd',
      '-rate = 0.2',
      '+rate = 0.3'
    ]);
    expect(texts(pre, '.jp-hashline-diff-gutter')).toEqual(['1', '2', '2']);
    expect(
      pre.querySelectorAll('.jp-hashline-diff-file, .jp-hashline-diff-hunk')
    ).toHaveLength(0);
  });

  it('names the cell and its kind when listed under its proposal', () => {
    const one = mixed();
    const box = renderProposedCell(
      { proposal: one, cell: one.cells[2] },
      document.createElement('pre'),
      { busy: false, error: null },
      NOW,
      { accept: vi.fn(), reject: vi.fn() },
      'list'
    );
    expect(texts(box, '.jp-hashline-proposed-title')).toEqual([
      'cell new-1 inserted'
    ]);
    expect(box.querySelector('.jp-hashline-time')).toBeNull();
  });
});

describe('the Review tab', () => {
  const state = {
    mode: { mode: 'on', agents: { bot: 'off' } } as ReviewModeResponse,
    modeBusy: false,
    expanded: new Set<number>(),
    busy: new Set<string>(),
    errors: new Map<string, string>(),
    notes: new Map<string, string>()
  };
  const handlers = {
    accept: vi.fn(),
    reject: vi.fn(),
    setMode: vi.fn(),
    decideAll: vi.fn(),
    toggle: vi.fn(),
    open: vi.fn(),
    note: vi.fn()
  };

  it('has the toggle and an empty state that says how proposals arrive', () => {
    const box = renderReview([], state, NOW, handlers);
    const toggle = box.querySelector<HTMLInputElement>(
      '.jp-hashline-review-toggle input'
    )!;
    expect(toggle.checked).toBe(true);
    expect(texts(box, '.jp-hashline-review-agents')).toEqual([
      'Per agent: bot: off'
    ]);
    expect(texts(box, '.jp-hashline-empty-title')).toEqual([
      'No proposals waiting'
    ]);
    toggle.checked = false;
    toggle.dispatchEvent(new Event('change'));
    expect(handlers.setMode).toHaveBeenCalledWith(false);
  });

  it('lists proposals per notebook with counts, Accept all and Reject all', () => {
    const box = renderReview(
      [mixed(), proposal({ id: 2, path: 'b.ipynb' })],
      { ...state, expanded: new Set([7]), errors: new Map([['7:a', 'no']]) },
      NOW,
      handlers
    );
    expect(texts(box, '.jp-hashline-proposal-group .jp-hashline-path')).toEqual(
      ['analysis.ipynb', 'b.ipynb']
    );
    expect(texts(box, '.jp-hashline-proposal-counts')).toEqual([
      '2 changed · 1 inserted · 1 deleted',
      '1 changed'
    ]);
    const first = box.querySelector('.jp-hashline-proposal-group')!;
    // expanded: one box per pending cell, the refusal on its cell
    expect(first.querySelectorAll('.jp-hashline-proposed')).toHaveLength(4);
    expect(texts(first, '.jp-hashline-proposed-error')).toEqual([
      'Not applied. no'
    ]);
    first.querySelector<HTMLButtonElement>('.jp-hashline-reject-all')!.click();
    expect(handlers.decideAll).toHaveBeenCalledWith('analysis.ipynb', false);
    first
      .querySelector<HTMLButtonElement>('.jp-hashline-proposal-agent')!
      .click();
    expect(handlers.open).toHaveBeenCalled();
  });
});

// -- the sidebar's Review tab, against a fake server ----------------------------------------

type ReviewSource = SidebarSource & {
  decisions: Array<[number, boolean, ProposalDecisionRequest | undefined]>;
  refuse: string | null;
  mode: 'on' | 'off';
  list: ReturnType<typeof mixed>[];
};

function reviewSource(): ReviewSource {
  const source: ReviewSource = {
    decisions: [],
    refuse: null,
    mode: 'off',
    list: [mixed()],
    async activity() {
      return { edits: [] };
    },
    async sessions() {
      return { sessions: [summary()] };
    },
    async session(id: string) {
      return { ...summary({ id }), snapshot: SNAPSHOT };
    },
    async snapshots() {
      return { paths: [TRACKED] };
    },
    async proposals() {
      return { proposals: source.list };
    },
    async reviewMode() {
      return { mode: source.mode, agents: {} };
    },
    async setReviewMode(request) {
      source.mode = request.mode;
      return { mode: source.mode, agents: {} };
    },
    async decide(id, accept, request) {
      source.decisions.push([id, accept, request]);
      if (source.refuse) {
        throw new HashlineRequestError(
          'x',
          409,
          source.refuse,
          'proposal_refused'
        );
      }
      source.list = [];
      return { proposal: mixed(), activity: [], text: '' };
    },
    async decideAll(accept, request) {
      source.decisions.push([0, accept, { note: request.note }]);
      source.list = [];
      return { proposals: [], activity: [], text: '' };
    }
  };
  return source;
}

describe('HashlineSidebar review', () => {
  let source: ReviewSource;
  let sidebar: HashlineSidebar;
  let events: Signal<unknown, BusEvent>;
  let reviewed: number;

  beforeEach(() => {
    vi.useFakeTimers();
    source = reviewSource();
    events = new Signal<unknown, BusEvent>({});
    reviewed = 0;
    sidebar = new HashlineSidebar({
      source,
      events,
      openEdit: async () => undefined,
      reviewed: () => reviewed++,
      pollIntervalMs: 0,
      now: () => NOW
    });
    Widget.attach(sidebar, document.body);
  });

  afterEach(() => {
    sidebar.dispose();
    vi.useRealTimers();
  });

  const tab = () =>
    sidebar.node.querySelector<HTMLButtonElement>('.jp-hashline-tab-review')!;

  it('marks the Review tab on a proposal event, counts open proposals when shown', async () => {
    events.emit({
      schema_id: PROPOSAL_EVENT_ID,
      action: 'accepted'
    } as BusEvent);
    expect(tab().classList).not.toContain('jp-mod-attention');
    events.emit({
      schema_id: PROPOSAL_EVENT_ID,
      action: 'proposed'
    } as BusEvent);
    expect(tab().classList).toContain('jp-mod-attention');
    tab().click();
    await settle();
    expect(tab().classList).not.toContain('jp-mod-attention');
    expect(tab().textContent).toBe('Review (1)');
    expect(texts(sidebar.node, '.jp-hashline-proposal-counts')).toEqual([
      '2 changed · 1 inserted · 1 deleted'
    ]);
  });

  it('turns review mode on from the toggle', async () => {
    tab().click();
    await settle();
    const toggle = sidebar.node.querySelector<HTMLInputElement>(
      '.jp-hashline-review-toggle input'
    )!;
    expect(toggle.checked).toBe(false);
    toggle.checked = true;
    toggle.dispatchEvent(new Event('change'));
    await settle();
    expect(source.mode).toBe('on');
    expect(
      sidebar.node.querySelector<HTMLInputElement>(
        '.jp-hashline-review-toggle input'
      )!.checked
    ).toBe(true);
  });

  it('accepts one cell with the cells changed with it, and shows a refusal on it', async () => {
    tab().click();
    await settle();
    sidebar.node
      .querySelector<HTMLButtonElement>('.jp-hashline-proposal-toggle')!
      .click();
    source.refuse = 'line 1 of cell a changed since: x = 2';
    sidebar.node
      .querySelector<HTMLButtonElement>(
        '.jp-hashline-proposed[data-cell="a"] .jp-hashline-proposed-accept'
      )!
      .click();
    await settle();
    expect(source.decisions).toEqual([[7, true, { cells: ['a', 'b'] }]]);
    expect(texts(sidebar.node, '.jp-hashline-proposed-error')).toEqual([
      'Not applied. line 1 of cell a changed since: x = 2'
    ]);
    expect(reviewed).toBe(1);
  });

  it('rejects all of a notebook with the note typed for the agent', async () => {
    tab().click();
    await settle();
    const note = sidebar.node.querySelector<HTMLInputElement>(
      '.jp-hashline-proposal-note'
    )!;
    note.value = 'keep the old loader';
    note.dispatchEvent(new Event('input'));
    sidebar.node
      .querySelector<HTMLButtonElement>('.jp-hashline-reject-all')!
      .click();
    await settle();
    expect(source.decisions).toEqual([
      [0, false, { note: 'keep the old loader' }]
    ]);
    expect(texts(sidebar.node, '.jp-hashline-empty-title')).toEqual([
      'No proposals waiting'
    ]);
  });
});

// -- proposals on the cells of an open notebook ---------------------------------------------

interface FakeCell {
  model: { id: string };
  node: HTMLElement;
  ready: Promise<void>;
}

function fakeCell(id: string): FakeCell {
  const node = document.createElement('div');
  node.className = 'jp-Cell';
  for (const part of ['jp-Cell-inputWrapper', 'jp-Cell-outputWrapper']) {
    const child = document.createElement('div');
    child.className = `lm-Widget ${part}`;
    node.append(child);
  }
  return { model: { id }, node, ready: Promise.resolve() };
}

function fakeTracker(path: string, ids: string[]) {
  const cells = ids.map(fakeCell);
  const node = document.createElement('div');
  cells.forEach(cell => node.append(cell.node));
  const panel = {
    isDisposed: false,
    context: { path, ready: Promise.resolve() },
    content: {
      node,
      widgets: cells,
      model: { cells: { changed: new Signal<unknown, unknown>({}) } }
    }
  };
  const tracker = {
    widgetAdded: new Signal<unknown, unknown>({}),
    forEach: (fn: (p: unknown) => void) => fn(panel)
  };
  return { tracker, panel, cells };
}

describe('CellReviews', () => {
  let client: ReviewClient & {
    calls: Array<[number, boolean, ProposalDecisionRequest | undefined]>;
    list: ReturnType<typeof mixed>[];
    refuse: string | null;
  };

  beforeEach(() => {
    client = {
      calls: [],
      list: [mixed()],
      refuse: null,
      async proposals() {
        return { proposals: client.list };
      },
      async decide(id, accept, request): Promise<ProposalDecisionResponse> {
        client.calls.push([id, accept, request]);
        if (client.refuse) {
          throw new HashlineRequestError('x', 409, client.refuse);
        }
        const after = mixed();
        for (const cell of after.cells) {
          if (request?.cells?.includes(cell.cell)) {
            cell.status = accept ? 'accepted' : 'rejected';
          }
        }
        client.list = [after];
        return { proposal: after, activity: [], text: '' };
      }
    };
  });

  function show(ids = ['a', 'b', 'c']) {
    const fake = fakeTracker('analysis.ipynb', ids);
    const events = new Signal<unknown, BusEvent>({});
    const reviews = new CellReviews({
      tracker: fake.tracker as never,
      client,
      events,
      now: () => NOW
    });
    return { ...fake, events, reviews };
  }

  const boxes = (cell: FakeCell) => [
    ...cell.node.querySelectorAll<HTMLElement>(':scope > .jp-hashline-proposed')
  ];

  it('shows each pending cell where it would land', async () => {
    const { cells } = show();
    await settle();
    const [a, b, c] = cells;
    // a changed cell: under its editor, before its outputs
    expect(boxes(a).map(x => x.dataset.cell)).toEqual(['a']);
    expect(a.node.children[1]).toBe(boxes(a)[0]);
    // b: its change under the editor, the inserted cell after it, at the end
    expect(boxes(b).map(x => [x.dataset.cell, x.dataset.place])).toEqual([
      ['b', 'input'],
      ['new-1', 'after']
    ]);
    expect(b.node.lastElementChild).toBe(boxes(b)[1]);
    expect(boxes(b)[1].classList).toContain('jp-hashline-proposed-inserted');
    // c: marked as to be deleted
    expect(c.node.classList).toContain('jp-hashline-mod-delete-proposed');
    expect(
      boxes(c)[0].querySelector('.jp-hashline-diff-del')?.textContent
    ).toContain('old()');
  });

  it('accepts a cell with the cells decided with it, and the boxes go', async () => {
    const { cells } = show();
    await settle();
    const kept = boxes(cells[2])[0];
    boxes(cells[0])[0]
      .querySelector<HTMLButtonElement>('.jp-hashline-proposed-accept')!
      .click();
    await settle();
    expect(client.calls).toEqual([[7, true, { cells: ['a', 'b'] }]]);
    expect(boxes(cells[0])).toEqual([]);
    expect(boxes(cells[1]).map(x => x.dataset.cell)).toEqual(['new-1']);
    // what did not change is not rebuilt
    expect(boxes(cells[2])[0]).toBe(kept);
  });

  it('keeps a refusal on its cell until the next decision there', async () => {
    const { cells } = show();
    await settle();
    client.refuse = 'cell c changed since the proposal';
    boxes(cells[2])[0]
      .querySelector<HTMLButtonElement>('.jp-hashline-proposed-accept')!
      .click();
    await settle();
    expect(texts(cells[2].node, '.jp-hashline-proposed-error')).toEqual([
      'Not applied. cell c changed since the proposal'
    ]);
    client.refuse = null;
    boxes(cells[2])[0]
      .querySelector<HTMLButtonElement>('.jp-hashline-proposed-reject')!
      .click();
    await settle();
    expect(client.calls.map(c => c[1])).toEqual([true, false]);
    expect(boxes(cells[2])).toEqual([]);
    expect(cells[2].node.classList).not.toContain(
      'jp-hashline-mod-delete-proposed'
    );
  });

  it('repaints on a proposal event, and puts a new first cell in the first cell', async () => {
    client.list = [];
    const { cells, events } = show(['x', 'y']);
    await settle();
    expect(boxes(cells[0])).toEqual([]);
    client.list = [
      proposal({
        cells: [
          proposedCell({ cell: 'new-1', kind: 'inserted', after_cell: null }),
          proposedCell({ cell: 'new-2', kind: 'inserted', after_cell: 'gone' })
        ]
      })
    ];
    events.emit({ schema_id: PROPOSAL_EVENT_ID });
    await settle();
    expect(cells[0].node.firstElementChild).toBe(boxes(cells[0])[0]);
    expect(boxes(cells[0]).map(x => x.dataset.cell)).toEqual(['new-1']);
    // an inserted cell whose neighbour is gone shows at the end, not nowhere
    expect(boxes(cells[1]).map(x => x.dataset.cell)).toEqual(['new-2']);
  });
});
