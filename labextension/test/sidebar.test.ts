import { Widget } from '@lumino/widgets';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { HashlineSidebar, type SidebarSource } from '../src/sidebar';
import type { ActivityResponse } from '../src/rest-types';
import { NOW, SNAPSHOT, TRACKED, edit, summary } from './fixtures';

function fakeSource(): SidebarSource & {
  activityCalls: number;
  fail: string | null;
  edits: ActivityResponse['edits'];
} {
  const source = {
    activityCalls: 0,
    fail: null as string | null,
    edits: [edit({ id: 2, path: 'b.ipynb' }), edit({ id: 1 })],
    async activity(): Promise<ActivityResponse> {
      source.activityCalls++;
      if (source.fail) {
        throw new Error(source.fail);
      }
      return { edits: source.edits };
    },
    async sessions() {
      return { sessions: [summary()] };
    },
    async session(id: string) {
      return { ...summary({ id }), snapshot: SNAPSHOT };
    },
    async snapshots() {
      return { paths: [TRACKED] };
    }
  };
  return source;
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await Promise.resolve();
  }
}

describe('HashlineSidebar', () => {
  let source: ReturnType<typeof fakeSource>;
  let opened: string[];
  let sidebar: HashlineSidebar;

  beforeEach(() => {
    vi.useFakeTimers();
    source = fakeSource();
    opened = [];
    sidebar = new HashlineSidebar({
      source,
      openEdit: async e => {
        opened.push(e.path);
      },
      intervalMs: 1000,
      now: () => NOW
    });
  });

  afterEach(() => {
    sidebar.dispose();
    vi.useRealTimers();
  });

  it('polls only while visible', async () => {
    Widget.attach(sidebar, document.body);
    await settle();
    expect(sidebar.polling).toBe(true);
    const afterShow = source.activityCalls;
    expect(afterShow).toBe(1);
    await vi.advanceTimersByTimeAsync(3000);
    expect(source.activityCalls).toBe(afterShow + 3);
    sidebar.hide();
    expect(sidebar.polling).toBe(false);
    await vi.advanceTimersByTimeAsync(5000);
    expect(source.activityCalls).toBe(afterShow + 3);
    sidebar.show();
    await settle();
    expect(sidebar.polling).toBe(true);
    expect(source.activityCalls).toBe(afterShow + 4);
  });

  it('renders edits, keeps nodes when nothing changed, and re-renders on new data', async () => {
    Widget.attach(sidebar, document.body);
    await settle();
    const first = sidebar.node.querySelector('.jp-hashline-edit');
    expect(first?.textContent).toContain('b.ipynb');
    await vi.advanceTimersByTimeAsync(1000);
    expect(sidebar.node.querySelector('.jp-hashline-edit')).toBe(first);
    source.edits = [edit({ id: 3, path: 'c.ipynb' }), ...source.edits];
    await vi.advanceTimersByTimeAsync(1000);
    const paths = [
      ...sidebar.node.querySelectorAll('.jp-hashline-edit-open')
    ].map(n => n.textContent);
    expect(paths).toEqual(['c.ipynb', 'b.ipynb', 'analysis.ipynb']);
  });

  it('expands an edit to its diff and opens it on click', async () => {
    Widget.attach(sidebar, document.body);
    await settle();
    const toggle = sidebar.node.querySelector<HTMLButtonElement>(
      '[data-edit-id="1"] .jp-hashline-edit-toggle'
    )!;
    toggle.click();
    expect(
      sidebar.node.querySelector('[data-edit-id="1"] .jp-hashline-diff')
    ).not.toBeNull();
    expect(
      sidebar.node.querySelector('[data-edit-id="2"] .jp-hashline-diff')
    ).toBeNull();
    sidebar.node
      .querySelector<HTMLButtonElement>(
        '[data-edit-id="1"] .jp-hashline-edit-open'
      )!
      .click();
    expect(opened).toEqual(['analysis.ipynb']);
  });

  it('shows an error state and recovers when the server answers again', async () => {
    source.fail = 'GET hashline/activity answered HTTP 500.';
    Widget.attach(sidebar, document.body);
    await settle();
    expect(
      sidebar.node.querySelector('.jp-hashline-error')?.textContent
    ).toContain('HTTP 500');
    source.fail = null;
    await vi.advanceTimersByTimeAsync(1000);
    expect(sidebar.node.querySelector('.jp-hashline-error')).toBeNull();
    expect(sidebar.node.querySelectorAll('.jp-hashline-edit')).toHaveLength(2);
  });

  it('switches tabs and loads session details on expand', async () => {
    Widget.attach(sidebar, document.body);
    await settle();
    sidebar.node
      .querySelector<HTMLButtonElement>('.jp-hashline-tab-sessions')!
      .click();
    await settle();
    expect(sidebar.tab).toBe('sessions');
    sidebar.node
      .querySelector<HTMLButtonElement>('.jp-hashline-session-toggle')!
      .click();
    await settle();
    const detail = sidebar.node.querySelector('.jp-hashline-session-detail');
    expect(detail?.textContent).toContain('Rebuild audit');
    sidebar.node
      .querySelector<HTMLButtonElement>('.jp-hashline-tab-snapshots')!
      .click();
    await settle();
    expect(sidebar.node.querySelector('.jp-hashline-path')?.textContent).toBe(
      'analysis.ipynb'
    );
  });
});
