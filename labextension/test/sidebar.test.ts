import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { ACTIVITY_EVENT_ID, SESSION_EVENT_ID } from '../src/event-types';
import type { BusEvent } from '../src/events';
import {
  CLOCK_INTERVAL_MS,
  HashlineSidebar,
  type SidebarSource
} from '../src/sidebar';
import type { ActivityResponse } from '../src/rest-types';
import { NOW, SNAPSHOT, TRACKED, edit, summary } from './fixtures';

type FakeSource = SidebarSource & {
  activityCalls: number;
  sessionsCalls: number;
  fail: string | null;
  edits: ActivityResponse['edits'];
  /** While set, activity() waits for this promise (a slow server). */
  gate: Promise<void> | null;
};

function fakeSource(): FakeSource {
  const source: FakeSource = {
    activityCalls: 0,
    sessionsCalls: 0,
    fail: null,
    edits: [edit({ id: 2, path: 'b.ipynb' }), edit({ id: 1 })],
    gate: null,
    async activity(): Promise<ActivityResponse> {
      source.activityCalls++;
      const edits = source.edits;
      if (source.gate) {
        await source.gate;
      }
      if (source.fail) {
        throw new Error(source.fail);
      }
      return { edits };
    },
    async sessions() {
      source.sessionsCalls++;
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
      pollIntervalMs: 1000,
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

describe('HashlineSidebar on the event bus', () => {
  let source: FakeSource;
  let bus: Signal<unknown, BusEvent>;
  let sidebar: HashlineSidebar;
  let clock: number;
  const activity = { schema_id: ACTIVITY_EVENT_ID };
  const session = { schema_id: SESSION_EVENT_ID };

  beforeEach(() => {
    vi.useFakeTimers();
    source = fakeSource();
    bus = new Signal<unknown, BusEvent>({});
    clock = NOW;
    sidebar = new HashlineSidebar({
      source,
      events: bus,
      openEdit: async () => undefined,
      pollIntervalMs: 0,
      now: () => clock
    });
  });

  afterEach(() => {
    sidebar.dispose();
    vi.useRealTimers();
  });

  it('with the poll off, fetches only when a hashline event concerns the visible tab', async () => {
    Widget.attach(sidebar, document.body);
    await settle();
    expect(sidebar.polling).toBe(false);
    expect(sidebar.node.dataset.pollIntervalMs).toBe('0');
    expect(source.activityCalls).toBe(1);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(source.activityCalls).toBe(1); // no poll
    source.edits = [edit({ id: 3, path: 'new.ipynb' }), ...source.edits];
    bus.emit(activity);
    await settle();
    expect(source.activityCalls).toBe(2);
    expect(
      sidebar.node.querySelector('.jp-hashline-edit-open')?.textContent
    ).toBe('new.ipynb');
    bus.emit(session); // the sessions tab is not visible
    bus.emit({
      schema_id: 'https://events.jupyter.org/jupyter_server/contents_service/v1'
    });
    await settle();
    expect([source.activityCalls, source.sessionsCalls]).toEqual([2, 0]);
    sidebar.node
      .querySelector<HTMLButtonElement>('.jp-hashline-tab-sessions')!
      .click();
    await settle();
    expect(source.sessionsCalls).toBe(1);
    bus.emit(session);
    bus.emit(activity); // an edit does not change the sessions tab
    await settle();
    expect([source.activityCalls, source.sessionsCalls]).toEqual([2, 2]);
  });

  it('coalesces events during a slow refresh into one follow-up that sees the newest data', async () => {
    Widget.attach(sidebar, document.body);
    await settle();
    let open!: () => void;
    source.gate = new Promise<void>(resolve => (open = resolve));
    bus.emit(activity);
    await settle();
    expect(source.activityCalls).toBe(2); // in flight, held by the gate
    source.edits = [edit({ id: 9, path: 'late.ipynb' }), ...source.edits];
    bus.emit(activity);
    bus.emit(activity);
    bus.emit(activity);
    source.gate = null;
    open();
    await settle();
    await settle();
    expect(source.activityCalls).toBe(3); // one follow-up for three events
    expect(
      sidebar.node.querySelector('.jp-hashline-edit-open')?.textContent
    ).toBe('late.ipynb');
  });

  it('ignores events while hidden and catches up when shown', async () => {
    Widget.attach(sidebar, document.body);
    await settle();
    sidebar.hide();
    bus.emit(activity);
    await settle();
    expect(source.activityCalls).toBe(1);
    sidebar.show();
    await settle();
    expect(source.activityCalls).toBe(2);
  });

  it('changes the poll period live, and 0 stops it', async () => {
    Widget.attach(sidebar, document.body);
    await settle();
    sidebar.pollIntervalMs = 500;
    expect(sidebar.polling).toBe(true);
    await vi.advanceTimersByTimeAsync(1000);
    expect(source.activityCalls).toBe(3);
    sidebar.pollIntervalMs = 0;
    expect(sidebar.polling).toBe(false);
    await vi.advanceTimersByTimeAsync(5000);
    expect(source.activityCalls).toBe(3);
    sidebar.pollIntervalMs = -1; // not a period: off
    expect([sidebar.pollIntervalMs, sidebar.polling]).toEqual([0, false]);
    sidebar.hide();
    sidebar.pollIntervalMs = 500; // hidden: nothing starts until shown
    expect(sidebar.polling).toBe(false);
  });

  it('keeps relative times current without fetching', async () => {
    Widget.attach(sidebar, document.body);
    await settle();
    const label = (): string | undefined =>
      sidebar.node.querySelector<HTMLElement>('[data-edit-id="2"] [data-at-ms]')
        ?.textContent ?? undefined;
    expect(label()).toBe('1 min ago');
    clock += 5 * 60_000;
    await vi.advanceTimersByTimeAsync(CLOCK_INTERVAL_MS);
    expect(label()).toBe('6 min ago');
    expect(source.activityCalls).toBe(1);
  });

  it('stops listening when disposed', async () => {
    Widget.attach(sidebar, document.body);
    await settle();
    sidebar.dispose();
    bus.emit(activity);
    await settle();
    expect(source.activityCalls).toBe(1);
  });
});
