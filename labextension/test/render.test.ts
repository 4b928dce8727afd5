import { describe, expect, it, vi } from 'vitest';

import { sessionDetail } from '../src/model';
import {
  refreshTimes,
  renderActivity,
  renderDiff,
  renderError,
  renderSessions,
  renderSnapshots,
  renderTurnChart
} from '../src/render';
import { NOW, SNAPSHOT, TRACKED, edit, runRecord, summary } from './fixtures';

const noop = { toggle: () => undefined, open: () => undefined };

function texts(root: Element, selector: string): string[] {
  return [...root.querySelectorAll(selector)].map(
    node => node.textContent ?? ''
  );
}

describe('renderActivity', () => {
  it('shows every edit in the given order with path, headers, counts and who', () => {
    const edits = [
      edit({ id: 2, path: 'b.ipynb' }),
      edit({ id: 1, path: 'a.ipynb' })
    ];
    const root = renderActivity(edits, new Set(), NOW, noop);
    expect(texts(root, '.jp-hashline-edit-open')).toEqual([
      'b.ipynb',
      'a.ipynb'
    ]);
    const first = root.querySelector('.jp-hashline-edit')!;
    expect(first.getAttribute('data-edit-id')).toBe('2');
    expect(texts(first, '.jp-hashline-headers')).toEqual(['#1A2B → #3C4D']);
    expect(texts(first, '.jp-hashline-added')).toEqual(['+1']);
    expect(texts(first, '.jp-hashline-removed')).toEqual(['−1']);
    expect(texts(first, '.jp-hashline-who')).toEqual(['alice']);
    expect(texts(first, '.jp-hashline-time')).toEqual(['1 min ago']);
    expect(texts(first, '.jp-hashline-cells')).toEqual(['cell load-data']);
  });

  it('shows the diff only for expanded edits, coloured by row kind', () => {
    const edits = [edit({ id: 2 }), edit({ id: 1 })];
    const root = renderActivity(edits, new Set([1]), NOW, noop);
    const [collapsed, expanded] = [
      ...root.querySelectorAll('.jp-hashline-edit')
    ];
    expect(collapsed.querySelector('.jp-hashline-diff')).toBeNull();
    expect(expanded.classList.contains('jp-mod-expanded')).toBe(true);
    expect(
      texts(expanded, '.jp-hashline-diff-add .jp-hashline-diff-text')
    ).toEqual(['+df = pd.read_csv("sales.csv", parse_dates=["date"])']);
    expect(
      texts(expanded, '.jp-hashline-diff-del .jp-hashline-diff-text')
    ).toEqual(['-df = pd.read_csv("sales.csv")']);
    expect(
      expanded
        .querySelector('.jp-hashline-edit-toggle')!
        .getAttribute('aria-expanded')
    ).toBe('true');
  });

  it('shows a run with each cell, its status and duration, and no diff to fold', () => {
    const opened: number[] = [];
    const handlers = {
      toggle: () => undefined,
      open: (record: { id: number }) => opened.push(record.id)
    };
    const root = renderActivity(
      [runRecord({ id: 7 })],
      new Set([7]),
      NOW,
      handlers
    );
    const item = root.querySelector('.jp-hashline-edit')!;
    expect(item.classList.contains('jp-mod-run')).toBe(true);
    expect(item.querySelector('.jp-hashline-edit-toggle')).toBeNull();
    expect(item.querySelector('.jp-hashline-diff')).toBeNull();
    expect(texts(item, '.jp-hashline-op')).toEqual(['ran 2 of 2 cells']);
    expect(texts(item, '.jp-hashline-added')).toEqual([]);
    expect(texts(item, '.jp-hashline-headers')).toEqual(['#1A2B → #1A2B']);
    expect(texts(item, '.jp-hashline-run-cell')).toEqual([
      'load-data',
      'total'
    ]);
    expect(texts(item, '.jp-hashline-run-status')).toEqual(['ok', 'error']);
    expect(texts(item, '.jp-hashline-run-duration')).toEqual([
      '240 ms',
      '1.5 s'
    ]);
    const [ok, failed] = [...item.querySelectorAll('.jp-hashline-run')];
    expect(ok.classList.contains('jp-hashline-run-ok')).toBe(true);
    expect(failed.classList.contains('jp-hashline-run-error')).toBe(true);
    expect(failed.getAttribute('title')).toBe('execution count 4');
    (item.querySelector('.jp-hashline-edit-open') as HTMLElement).click();
    expect(opened).toEqual([7]);
  });

  it('lists warnings and marks the edit', () => {
    const root = renderActivity(
      [edit({ warnings: ['dropped echoed line 12'] })],
      new Set(),
      NOW,
      noop
    );
    expect(texts(root, '.jp-hashline-warning')).toEqual([
      'dropped echoed line 12'
    ]);
    expect(
      root
        .querySelector('.jp-hashline-edit')!
        .classList.contains('jp-mod-warned')
    ).toBe(true);
  });

  it('calls toggle and open with the edit', () => {
    const handlers = { toggle: vi.fn(), open: vi.fn() };
    const item = edit({ id: 7 });
    const root = renderActivity([item], new Set(), NOW, handlers);
    root.querySelector<HTMLButtonElement>('.jp-hashline-edit-toggle')!.click();
    root.querySelector<HTMLButtonElement>('.jp-hashline-edit-open')!.click();
    expect(handlers.toggle).toHaveBeenCalledWith(item);
    expect(handlers.open).toHaveBeenCalledWith(item);
  });

  it('never interprets server text as HTML', () => {
    const root = renderActivity(
      [edit({ path: '<img src=x onerror=alert(1)>.ipynb' })],
      new Set([1]),
      NOW,
      noop
    );
    expect(root.querySelector('img')).toBeNull();
    expect(texts(root, '.jp-hashline-edit-open')).toEqual([
      '<img src=x onerror=alert(1)>.ipynb'
    ]);
  });

  it('has an empty state that says what will appear', () => {
    const root = renderActivity([], new Set(), NOW, noop);
    expect(root.classList.contains('jp-hashline-empty')).toBe(true);
    expect(root.textContent).toContain('No edits yet');
  });
});

describe('renderDiff', () => {
  it('puts the new-side line number in the gutter', () => {
    const pre = renderDiff('@@ -5,2 +5,2 @@\n a\n-b\n+c\n');
    const gutters = texts(pre, '.jp-hashline-diff-gutter');
    expect(gutters).toEqual(['', '5', '6', '6']);
  });

  it('says so when there is no textual change', () => {
    expect(renderDiff('').textContent).toBe('(no textual change)');
  });
});

describe('renderSessions', () => {
  it('lists summaries and shows the detail of expanded ones', () => {
    const details = new Map([['agent-1', sessionDetail(SNAPSHOT)]]);
    const root = renderSessions(
      [summary(), summary({ id: 'agent-2', label: '' })],
      new Set(['agent-1']),
      details,
      NOW,
      { toggle: () => undefined }
    );
    expect(texts(root, '.jp-hashline-session-name')).toEqual([
      'notebook agent',
      'agent-2'
    ]);
    expect(texts(root, '.jp-hashline-hit')).toEqual(['44%', '44%']);
    const detail = root.querySelector('.jp-hashline-session-detail')!;
    expect(texts(detail, '.jp-hashline-zone-name')).toEqual([
      'prefix',
      'log',
      'scratch'
    ]);
    expect(texts(detail, '.jp-hashline-contract')).toEqual([
      'contract changed',
      'contract holds'
    ]);
    expect(
      detail.querySelector('.jp-hashline-contract.jp-mod-bad')!.textContent
    ).toBe('contract changed');
    expect(texts(detail, '.jp-hashline-drift')).toEqual([
      'model changed: a -> b'
    ]);
    expect(texts(detail, '.jp-hashline-rebuild-label')).toEqual([
      'manual compaction'
    ]);
    expect(detail.querySelectorAll('.jp-hashline-bar')).toHaveLength(3);
    expect(detail.textContent).toContain(
      'Misses: ttl_expired ×2, messages_rewritten ×1'
    );
    expect(root.querySelectorAll('.jp-hashline-session-detail')).toHaveLength(
      1
    );
  });

  it('shows loading for an expanded session whose detail has not arrived', () => {
    const root = renderSessions(
      [summary()],
      new Set(['agent-1']),
      new Map(),
      NOW,
      { toggle: () => undefined }
    );
    expect(root.querySelector('.jp-hashline-session')!.textContent).toContain(
      'Loading…'
    );
  });

  it('has an empty state naming how sessions get here', () => {
    const root = renderSessions([], new Set(), new Map(), NOW, {
      toggle: () => undefined
    });
    expect(root.textContent).toContain('No agent sessions registered');
    expect(root.textContent).toContain('hashline/sessions');
  });
});

describe('renderTurnChart', () => {
  it('draws one bar per turn, height = hit ratio, misses marked with cause', () => {
    const chart = renderTurnChart(sessionDetail(SNAPSHOT));
    const bars = [...chart.querySelectorAll<HTMLElement>('.jp-hashline-bar')];
    expect(
      bars.map(
        b => b.querySelector<HTMLElement>('.jp-hashline-bar-fill')!.style.height
      )
    ).toEqual(['0%', '84%', '10%']);
    expect(bars[0].classList.contains('jp-mod-cold')).toBe(true);
    expect(bars[2].classList.contains('jp-mod-miss')).toBe(true);
    expect(bars[2].title).toContain('miss: messages_rewritten');
  });
});

describe('renderSnapshots', () => {
  it('lists tracked paths with head, versions and seen lines', () => {
    const root = renderSnapshots([TRACKED], NOW);
    expect(texts(root, '.jp-hashline-path')).toEqual(['analysis.ipynb']);
    expect(texts(root, '.jp-hashline-version .jp-hashline-tag')).toEqual([
      '#3C4D',
      '#1A2B'
    ]);
    expect(texts(root, '.jp-hashline-seen')).toEqual([
      'seen: 1-12, 20',
      'seen: none'
    ]);
    expect(
      root.querySelector('.jp-hashline-version.jp-mod-head .jp-hashline-tag')!
        .textContent
    ).toBe('#3C4D');
  });

  it('has an empty state', () => {
    expect(renderSnapshots([], NOW).textContent).toContain('No snapshots');
  });
});

describe('errors and times', () => {
  it('renders an error that says what failed and what to check', () => {
    const box = renderError('activity', 'HTTP 404');
    expect(box.getAttribute('role')).toBe('alert');
    expect(box.textContent).toContain('Could not load activity');
    expect(box.textContent).toContain('HTTP 404');
    expect(box.textContent).toContain('jupyter server extension list');
  });

  it('refreshes relative times in place', () => {
    const root = renderActivity([edit()], new Set(), NOW, noop);
    refreshTimes(root, NOW + 60 * 60_000);
    expect(texts(root, '.jp-hashline-time')).toEqual(['1 h ago']);
  });
});
