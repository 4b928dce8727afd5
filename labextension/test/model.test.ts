import { describe, expect, it } from 'vitest';

import {
  cellsLabel,
  diffRows,
  diffStats,
  durationLabel,
  editTarget,
  firstChangedLine,
  formatPercent,
  isRun,
  relativeTime,
  runSummary,
  seenLinesText,
  sessionDetail,
  sessionName,
  tagOf
} from '../src/model';
import {
  NOTEBOOK_DIFF,
  NOW,
  SNAPSHOT,
  edit,
  runRecord,
  summary
} from './fixtures';

describe('diffRows', () => {
  it('classifies rows and numbers them on both sides', () => {
    const rows = diffRows(NOTEBOOK_DIFF);
    expect(rows.map(r => r.kind)).toEqual([
      'file',
      'file',
      'hunk',
      'context',
      'context',
      'del',
      'add',
      'context'
    ]);
    const del = rows[5];
    const add = rows[6];
    expect([del.oldLine, del.newLine]).toEqual([13, null]);
    expect([add.oldLine, add.newLine]).toEqual([null, 13]);
    expect(rows[7]).toMatchObject({
      oldLine: 14,
      newLine: 14,
      text: ' df.head()'
    });
  });

  it('treats rows starting with --- or +++ inside a hunk as a deletion or addition', () => {
    const diff =
      '--- a/x\n+++ b/x\n@@ -1,1 +1,1 @@\n--- old rule\n+++ new rule\n';
    expect(diffRows(diff).map(r => r.kind)).toEqual([
      'file',
      'file',
      'hunk',
      'del',
      'add'
    ]);
  });

  it('keeps the clipping note as a note, not a change', () => {
    const diff =
      '@@ -1,1 +1,1 @@\n-a\n+b\n... diff clipped: 10 more characters\n';
    const rows = diffRows(diff);
    expect(rows[3].kind).toBe('note');
    expect(diffStats(diff)).toEqual({ added: 1, removed: 1 });
  });

  it('reads an empty diff as no rows', () => {
    expect(diffRows('')).toEqual([]);
  });
});

describe('firstChangedLine', () => {
  it('is the first added line on the new side', () => {
    expect(firstChangedLine(NOTEBOOK_DIFF)).toBe(13);
  });

  it('is the line after the context for a pure deletion', () => {
    expect(firstChangedLine('@@ -4,3 +4,2 @@\n a\n-b\n c\n')).toBe(5);
  });

  it('is 1 when the very first line was deleted, null without changes', () => {
    expect(firstChangedLine('@@ -1,2 +1,1 @@\n-a\n b\n')).toBe(1);
    expect(firstChangedLine('')).toBeNull();
  });
});

describe('edits', () => {
  it('targets the touched cells of a notebook edit', () => {
    expect(editTarget(edit({ cells: ['b', 'c'] }))).toEqual({
      path: 'analysis.ipynb',
      cellIds: ['b', 'c'],
      line: null
    });
  });

  it('targets the first changed line of a text file edit', () => {
    expect(editTarget(edit({ path: 'x.py', cells: [] }))).toEqual({
      path: 'x.py',
      cellIds: [],
      line: 13
    });
  });

  it('labels cells compactly', () => {
    expect(cellsLabel([])).toBe('');
    expect(cellsLabel(['a'])).toBe('cell a');
    expect(cellsLabel(['a', 'b', 'c', 'd'])).toBe('cells a, b +2');
  });

  it('reads the tag of a header', () => {
    expect(tagOf('[dir/a b.ipynb#09AF]')).toBe('09AF');
    expect(tagOf('not a header')).toBe('');
  });
});

describe('runs', () => {
  it('tells runs from edits and targets the cells that ran', () => {
    expect(isRun(runRecord())).toBe(true);
    expect(isRun(edit())).toBe(false);
    expect(editTarget(runRecord()).cellIds).toEqual(['load-data', 'total']);
  });

  it('counts the cells that ran and says durations as the agent reads them', () => {
    const runs = runRecord().runs;
    expect(runSummary(runs)).toBe('ran 2 of 2 cells');
    const skipped = [
      ...runs,
      {
        cell: 'plot',
        status: 'skipped' as const,
        duration_ms: 0,
        execution_count: null
      }
    ];
    expect(runSummary(skipped)).toBe('ran 2 of 3 cells');
    expect(runSummary([])).toBe('ran 0 of 0 cells');
    expect(durationLabel(0)).toBe('0 ms');
    expect(durationLabel(999)).toBe('999 ms');
    expect(durationLabel(1000)).toBe('1.0 s');
    expect(durationLabel(61_250)).toBe('61.3 s');
  });
});

describe('formatting', () => {
  it.each([
    [NOW + 5_000, 'just now'],
    [NOW - 4_000, 'just now'],
    [NOW - 42_000, '42 s ago'],
    [NOW - 5 * 60_000, '5 min ago'],
    [NOW - 3 * 3_600_000, '3 h ago'],
    [NOW - 3 * 86_400_000, '3 d ago']
  ])('relativeTime(%d) is %s', (at, text) => {
    expect(relativeTime(at, NOW)).toBe(text);
  });

  it('formats ratios and unknowns', () => {
    expect(formatPercent(0.837)).toBe('84%');
    expect(formatPercent(null)).toBe('—');
    expect(formatPercent(Number.NaN)).toBe('—');
  });

  it('writes seen-line runs', () => {
    expect(
      seenLinesText([
        [1, 12],
        [20, 20]
      ])
    ).toBe('1-12, 20');
    expect(seenLinesText([])).toBe('none');
  });

  it('names a session by label, else id', () => {
    expect(sessionName(summary())).toBe('notebook agent');
    expect(sessionName(summary({ label: '  ' }))).toBe('agent-1');
  });
});

describe('sessionDetail', () => {
  it('reads zones, pins with drift, audit and turns from a snapshot', () => {
    const detail = sessionDetail(SNAPSHOT);
    expect(detail.zones.map(z => [z.name, z.status, z.contractStatus])).toEqual(
      [
        ['prefix', 'changed (declared)', 'changed'],
        ['log', 'append-only', 'holds'],
        ['scratch', 'empty', null]
      ]
    );
    expect(detail.zones[0].facts).toContainEqual([
      'fingerprint',
      'fcc26a0ffa41'
    ]);
    expect(detail.zones[0].facts).toContainEqual([
      'tools',
      'notebook_read, notebook_edit'
    ]);
    expect(detail.pins.map(p => [p.shortId, p.drift])).toEqual([
      ['aaaaaaaaaaaa', null],
      ['fcc26a0ffa41', 'model changed: a -> b']
    ]);
    expect(detail.pins[1].atMs).toBe(1_700_000_060_500);
    expect(detail.audit).toEqual([
      {
        label: 'manual compaction',
        detail: 'kept 2 turns',
        before: 10,
        after: 4,
        atMs: 1_700_000_100_000
      }
    ]);
    expect(detail.turns.map(t => [t.index, t.miss, t.cause])).toEqual([
      [0, false, null],
      [1, false, null],
      [2, true, 'messages_rewritten']
    ]);
    expect(detail.missCauses).toEqual([
      ['ttl_expired', 2],
      ['messages_rewritten', 1]
    ]);
    expect(detail.model).toBe('claude-sonnet-4-5');
    expect(detail.hitRatio).toBeCloseTo(0.4375);
  });

  it.each([
    null,
    42,
    'text',
    [],
    { zones: 'nope', cache: { turns: 'x' }, audit: {} }
  ])('never throws on a malformed snapshot (%j)', snapshot => {
    const detail = sessionDetail(snapshot);
    expect(detail.zones.map(z => z.status)).toEqual([
      'unknown',
      'unknown',
      'unknown'
    ]);
    expect(detail.pins).toEqual([]);
    expect(detail.audit).toEqual([]);
    expect(detail.turns).toEqual([]);
    expect(detail.hitRatio).toBeNull();
  });
});
