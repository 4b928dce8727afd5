/**
 * The hashline sidebar widget: three tabs (activity, sessions, snapshots) over the REST API,
 * refreshed by a light poll that runs only while the panel is visible.
 *
 * Invariants:
 * - Polling runs while the panel is visible (from `onAfterShow`, or `onAfterAttach` into a
 *   visible place, until `onAfterHide`, detach or disposal) and never otherwise;
 *   at most one refresh is in flight at a time (a tick during one is skipped).
 * - The DOM of a tab is rebuilt only when what it shows changed (data, expansion, error), so a
 *   poll never replaces the element a person is about to click; relative-time labels are
 *   refreshed in place on every tick.
 * - Only the visible tab is fetched; an expanded session's detail is fetched with it.
 * - A failed refresh shows an error state for that tab and polling continues, so the panel
 *   recovers by itself when the server does.
 */

import { Widget } from '@lumino/widgets';

import type { ActivityEdit, SessionDetailView } from './model';
import { sessionDetail } from './model';
import {
  refreshTimes,
  renderActivity,
  renderError,
  renderSessions,
  renderSnapshots
} from './render';
import type {
  ActivityResponse,
  SessionResponse,
  SessionsResponse,
  SnapshotsResponse
} from './rest-types';

export type Tab = 'activity' | 'sessions' | 'snapshots';
export const TABS: ReadonlyArray<{ tab: Tab; label: string }> = [
  { tab: 'activity', label: 'Activity' },
  { tab: 'sessions', label: 'Sessions' },
  { tab: 'snapshots', label: 'Snapshots' }
];

/** Where the sidebar gets its data (the REST client, or a fake in tests). */
export interface SidebarSource {
  activity(limit?: number): Promise<ActivityResponse>;
  sessions(): Promise<SessionsResponse>;
  session(id: string): Promise<SessionResponse>;
  snapshots(): Promise<SnapshotsResponse>;
}

export interface SidebarOptions {
  source: SidebarSource;
  /** Open the edited file and reveal what the edit touched. */
  openEdit(edit: ActivityEdit): Promise<void>;
  intervalMs?: number;
  now?: () => number;
}

interface TabData {
  activity: ActivityResponse | null;
  sessions: SessionsResponse | null;
  snapshots: SnapshotsResponse | null;
}

export const DEFAULT_INTERVAL_MS = 2000;
export const ACTIVITY_LIMIT = 100;

export class HashlineSidebar extends Widget {
  constructor(options: SidebarOptions) {
    super();
    this.id = 'jupyter-hashline-sidebar';
    this.addClass('jp-hashline-sidebar');
    this.title.caption = 'Hashline: agent edits, sessions and snapshots';
    this._source = options.source;
    this._openEdit = options.openEdit;
    this._intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
    this._now = options.now ?? Date.now;
    this.node.append(this._header(), this._status, this._body);
    this._body.className = 'jp-hashline-body';
    this._status.className = 'jp-hashline-status';
    this._status.setAttribute('aria-live', 'polite');
  }

  get tab(): Tab {
    return this._tab;
  }

  set tab(tab: Tab) {
    if (tab === this._tab) {
      return;
    }
    this._tab = tab;
    this._tabButtons.forEach((button, key) => {
      button.classList.toggle('jp-mod-active', key === tab);
      button.setAttribute('aria-selected', String(key === tab));
    });
    this._signature = '';
    this._render();
    void this.refresh();
  }

  /** Whether the poll is running (true only while the panel is visible). */
  get polling(): boolean {
    return this._timer !== null;
  }

  /** Fetch the visible tab (and expanded sessions' details) and re-render if anything changed. */
  async refresh(): Promise<void> {
    if (this._inFlight || this.isDisposed) {
      return;
    }
    this._inFlight = true;
    const tab = this._tab;
    try {
      await this._fetch(tab);
      this._errors.delete(tab);
      this._status.textContent = `Updated ${new Date(this._now()).toLocaleTimeString()}`;
    } catch (err) {
      this._errors.set(tab, err instanceof Error ? err.message : String(err));
      this._status.textContent = 'Refresh failed; retrying';
    } finally {
      this._inFlight = false;
    }
    this._render();
  }

  dispose(): void {
    this._stopPolling();
    super.dispose();
  }

  protected onAfterShow(): void {
    this._startPolling();
    void this.refresh();
  }

  protected onAfterAttach(): void {
    // Attached straight into a visible place: no after-show message follows.
    if (this.isVisible) {
      this.onAfterShow();
    }
  }

  protected onAfterHide(): void {
    this._stopPolling();
  }

  protected onBeforeDetach(): void {
    this._stopPolling();
  }

  private _header(): HTMLElement {
    const header = document.createElement('div');
    header.className = 'jp-hashline-header';
    const tabs = document.createElement('div');
    tabs.className = 'jp-hashline-tabs';
    tabs.setAttribute('role', 'tablist');
    for (const { tab, label } of TABS) {
      const button = document.createElement('button');
      button.className = `jp-hashline-tab jp-hashline-tab-${tab}`;
      button.textContent = label;
      button.setAttribute('role', 'tab');
      button.classList.toggle('jp-mod-active', tab === this._tab);
      button.setAttribute('aria-selected', String(tab === this._tab));
      button.addEventListener('click', () => (this.tab = tab));
      this._tabButtons.set(tab, button);
      tabs.append(button);
    }
    const refresh = document.createElement('button');
    refresh.className = 'jp-hashline-refresh';
    refresh.textContent = '⟳';
    refresh.title = 'Refresh now';
    refresh.addEventListener('click', () => void this.refresh());
    header.append(tabs, refresh);
    return header;
  }

  private async _fetch(tab: Tab): Promise<void> {
    if (tab === 'activity') {
      this._data.activity = await this._source.activity(ACTIVITY_LIMIT);
    } else if (tab === 'snapshots') {
      this._data.snapshots = await this._source.snapshots();
    } else {
      this._data.sessions = await this._source.sessions();
      const known = new Set(this._data.sessions.sessions.map(s => s.id));
      const open = [...this._expandedSessions].filter(id => known.has(id));
      const replies = await Promise.all(
        open.map(id => this._source.session(id))
      );
      replies.forEach(reply =>
        this._details.set(reply.id, sessionDetail(reply.snapshot))
      );
    }
  }

  private _startPolling(): void {
    if (this._timer === null) {
      this._timer = setInterval(() => this._tick(), this._intervalMs);
    }
  }

  private _stopPolling(): void {
    if (this._timer !== null) {
      clearInterval(this._timer);
      this._timer = null;
    }
  }

  private _tick(): void {
    if (!this.isVisible) {
      this._stopPolling();
      return;
    }
    refreshTimes(this._body, this._now());
    void this.refresh();
  }

  private _render(): void {
    const tab = this._tab;
    const error = this._errors.get(tab) ?? null;
    const signature = JSON.stringify([
      tab,
      error,
      this._data[tab],
      [...this._expandedEdits],
      [...this._expandedSessions],
      tab === 'sessions' ? [...this._details] : null
    ]);
    if (signature === this._signature) {
      return;
    }
    this._signature = signature;
    const scroll = this._body.scrollTop;
    this._body.replaceChildren(
      error !== null ? renderError(tab, error) : this._content(tab)
    );
    this._body.scrollTop = scroll;
  }

  private _content(tab: Tab): HTMLElement {
    const now = this._now();
    const loading = document.createElement('p');
    loading.className = 'jp-hashline-hint';
    loading.textContent = 'Loading…';
    if (tab === 'activity') {
      const data = this._data.activity;
      return data
        ? renderActivity(
            data.edits,
            this._expandedEdits,
            now,
            this._activityHandlers
          )
        : loading;
    }
    if (tab === 'sessions') {
      const data = this._data.sessions;
      return data
        ? renderSessions(
            data.sessions,
            this._expandedSessions,
            this._details,
            now,
            this._sessionHandlers
          )
        : loading;
    }
    const data = this._data.snapshots;
    return data ? renderSnapshots(data.paths, now) : loading;
  }

  private readonly _activityHandlers = {
    toggle: (edit: ActivityEdit): void => {
      flip(this._expandedEdits, edit.id);
      this._render();
    },
    open: (edit: ActivityEdit): void => {
      this._openEdit(edit).catch((err: unknown) => {
        this._status.textContent = `Could not open ${edit.path}: ${String(err)}`;
      });
    }
  };

  private readonly _sessionHandlers = {
    toggle: (summary: { id: string }): void => {
      flip(this._expandedSessions, summary.id);
      this._render();
      if (this._expandedSessions.has(summary.id)) {
        void this.refresh();
      }
    }
  };

  private _tab: Tab = 'activity';
  private _signature = '';
  private _inFlight = false;
  private _timer: ReturnType<typeof setInterval> | null = null;
  private readonly _source: SidebarSource;
  private readonly _openEdit: (edit: ActivityEdit) => Promise<void>;
  private readonly _intervalMs: number;
  private readonly _now: () => number;
  private readonly _body = document.createElement('div');
  private readonly _status = document.createElement('div');
  private readonly _tabButtons = new Map<Tab, HTMLButtonElement>();
  private readonly _data: TabData = {
    activity: null,
    sessions: null,
    snapshots: null
  };
  private readonly _errors = new Map<Tab, string>();
  private readonly _expandedEdits = new Set<number>();
  private readonly _expandedSessions = new Set<string>();
  private readonly _details = new Map<string, SessionDetailView>();
}

function flip<T>(set: Set<T>, value: T): void {
  if (!set.delete(value)) {
    set.add(value);
  }
}
