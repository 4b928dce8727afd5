// Undo in the sidebar, edits per cell, notes apart from warnings, runs counted apart, closed
// sessions folded, and which cells carry a badge.
import { Widget } from '@lumino/widgets';
import { afterEach, describe, expect, it, vi } from 'vitest';

import {
  activityCounts,
  badgeRecords,
  cellDiffText,
  cellDiffs,
  editsAndRuns,
  undoneBy
} from '../src/model';
import { renderActivity, renderSessions } from '../src/render';
import type { RevertRequest } from '../src/rest-types';
import { HashlineSidebar, type SidebarSource } from '../src/sidebar';
import { NOW, TRACKED, edit, runRecord, summary } from './fixtures';

const TWO_CELLS = [
  '--- a/analysis.ipynb',
  '+++ b/analysis.ipynb',
  '@@ -2,3 +2,3 @@ cell intro',
  ' # %% [markdown] id=intro',
  '-# Title',
  '+# Sales',
  '@@ -11,4 +11,4 @@ cell load-data',
  ' import pandas as pd',
  '-df = load()',
  '+df = load(parse_dates=True)',
  ''
].join('\n');

function texts(root: Element, selector: string): string[] {
  return [...root.querySelectorAll(selector)].map(n => n.textContent ?? '');
}

describe('the model', () => {
  it('splits a diff by the cell each hunk names', () => {
    const parts = cellDiffs(TWO_CELLS);
    expect(parts.map(p => p.cell)).toEqual(['intro', 'load-data']);
    expect(
      parts[1].rows.filter(r => r.kind === 'add').map(r => r.text)
    ).toEqual(['+df = load(parse_dates=True)']);
    expect(cellDiffs('@@ -1,1 +1,1 @@\n-a\n+b\n').map(p => p.cell)).toEqual([
      null
    ]);
    const one = edit({ diff: TWO_CELLS, cells: ['intro', 'load-data'] });
    expect(cellDiffText(one, 'intro')).toBe(
      ' # %% [markdown] id=intro\n-# Title\n+# Sales'
    );
  });

  it('knows which edits an undo undid, and counts runs apart from edits', () => {
    const undo = edit({ id: 5, source: 'revert', reverts: [2] });
    const records = [undo, runRecord({ id: 4 }), edit({ id: 2 })];
    expect([...undoneBy(records)]).toEqual([[2, 5]]);
    expect(activityCounts(records)).toEqual({ edits: 2, runs: 1 });
    expect(editsAndRuns(2, 1)).toBe('2 edits · 1 run');
    expect(editsAndRuns(3, 0)).toBe('3 edits');
  });

  it('badges the newest standing edit of each cell, never runs, undos or cleared ones', () => {
    const records = [
      edit({ id: 6, source: 'revert', reverts: [3], cells: ['c'] }),
      edit({ id: 5, cells: ['a'] }),
      runRecord({ id: 4, cells: ['b'] }),
      edit({ id: 3, cells: ['c'] }),
      edit({ id: 2, cells: ['a', 'b'] }),
      edit({ id: 1, path: 'other.ipynb', cells: ['d'] })
    ];
    const found = badgeRecords(records, 'analysis.ipynb', new Set(['5:a']));
    expect([...found].map(([cell, r]) => [cell, r.id])).toEqual([
      ['a', 2],
      ['b', 2]
    ]);
  });
});

describe('rendering', () => {
  const handlers = {
    toggle: vi.fn(),
    open: vi.fn(),
    undo: vi.fn(),
    undoSince: vi.fn()
  };

  it('shows an expanded edit per cell with Undo, notes apart from warnings', () => {
    const one = edit({
      id: 7,
      diff: TWO_CELLS,
      notes: ['new code cell id=abc (line 12)'],
      warnings: [
        'cell x changed from code to markdown: its outputs were dropped'
      ]
    });
    const root = renderActivity(
      [one, runRecord({ id: 6 })],
      new Set([7]),
      NOW,
      handlers
    );
    expect(texts(root, '.jp-hashline-counts')).toEqual(['1 edit · 1 run']);
    expect(texts(root, '.jp-hashline-cell-diff-title')).toEqual([
      'cell intro',
      'cell load-data'
    ]);
    expect(texts(root, '.jp-hashline-note')).toEqual([
      'new code cell id=abc (line 12)'
    ]);
    expect(texts(root, '.jp-hashline-warning')).toHaveLength(1);
    root.querySelector<HTMLButtonElement>('.jp-hashline-undo')!.click();
    expect(handlers.undo).toHaveBeenCalledWith(one);
    root.querySelector<HTMLButtonElement>('.jp-hashline-undo-since')!.click();
    expect(handlers.undoSince).toHaveBeenCalledWith(one);
    expect(texts(root, '.jp-hashline-undo-since')).toEqual([
      'Undo all by alice since here'
    ]);
  });

  it('says what undid an edit, and why an undo was refused', () => {
    const undo = edit({ id: 9, source: 'revert', reverts: [8] });
    const state = {
      undoneBy: new Map([[8, 9]]),
      refused: new Map([[3, 'the line was changed since']]),
      pending: new Set<number>()
    };
    const root = renderActivity(
      [undo, edit({ id: 8 }), edit({ id: 3 })],
      new Set([8]),
      NOW,
      handlers,
      state
    );
    expect(texts(root, '.jp-hashline-reverts')).toEqual(['undoes #8']);
    const eight = root.querySelector('[data-edit-id="8"]')!;
    expect(texts(eight, '.jp-hashline-undone')).toEqual(['undone by #9']);
    expect(eight.querySelector('.jp-hashline-undo')).toBeNull();
    const three = root.querySelector('[data-edit-id="3"]')!; // folded, yet the refusal shows
    expect(texts(three, '.jp-hashline-undo-error')[0]).toContain(
      'the line was changed since'
    );
  });

  it('folds closed sessions under one row and marks open ones', () => {
    const sessions = [
      summary({ id: 'a', label: 'anthropic/claude #1', runs: 2, edits: 3 }),
      summary({ id: 'b', label: 'anthropic/claude #2', closed: true })
    ];
    const toggleClosed = vi.fn();
    const handlers = { toggle: vi.fn(), toggleClosed };
    const folded = renderSessions(
      sessions,
      new Set(),
      new Map(),
      NOW,
      handlers
    );
    expect(texts(folded, '.jp-hashline-session-name')).toEqual([
      'anthropic/claude #1'
    ]);
    expect(texts(folded, '.jp-hashline-session-state')).toEqual(['open']);
    expect(texts(folded, '.jp-hashline-session-counts')).toEqual([
      '3 edits · 2 runs'
    ]);
    folded
      .querySelector<HTMLButtonElement>('.jp-hashline-closed-toggle')!
      .click();
    expect(toggleClosed).toHaveBeenCalled();
    const shown = renderSessions(
      sessions,
      new Set(),
      new Map(),
      NOW,
      handlers,
      true
    );
    expect(texts(shown, '.jp-hashline-session-state')).toEqual([
      'open',
      'closed'
    ]);
  });
});

describe('undo from the sidebar', () => {
  let sidebar: HashlineSidebar | null = null;
  afterEach(() => sidebar?.dispose());

  it('posts the undo, and shows why when the server refuses it', async () => {
    const asked: RevertRequest[] = [];
    let refuse = true;
    const source: SidebarSource = {
      activity: async () => ({ edits: [edit({ id: 4 })] }),
      sessions: async () => ({ sessions: [] }),
      session: async id => ({ ...summary({ id }), snapshot: {} }),
      snapshots: async () => ({ paths: [TRACKED] }),
      revert: async request => {
        asked.push(request);
        if (refuse) {
          throw new Error('Undo of activity 4 refused: *3:b = 21  # person');
        }
        return { reverted: [4], activity: [], text: 'Undid activity 4.' };
      }
    };
    sidebar = new HashlineSidebar({
      source,
      openEdit: async () => undefined,
      pollIntervalMs: 0,
      now: () => NOW
    });
    Widget.attach(sidebar, document.body);
    await vi.waitFor(() =>
      expect(sidebar!.node.querySelector('.jp-hashline-edit')).not.toBeNull()
    );
    sidebar.node
      .querySelector<HTMLButtonElement>('.jp-hashline-edit-toggle')!
      .click();
    sidebar.node.querySelector<HTMLButtonElement>('.jp-hashline-undo')!.click();
    await vi.waitFor(() =>
      expect(texts(sidebar!.node, '.jp-hashline-undo-error')[0]).toContain(
        'b = 21  # person'
      )
    );
    refuse = false;
    sidebar.node
      .querySelector<HTMLButtonElement>('.jp-hashline-undo-since')!
      .click();
    await vi.waitFor(() =>
      expect(sidebar!.node.querySelector('.jp-hashline-undo-error')).toBeNull()
    );
    expect(asked).toEqual([
      { activity: 4 },
      { agent: 'alice', since_ms: NOW - 90_000 }
    ]);
  });
});
