/**
 * The hashline sidebar widget: four tabs (activity, review, sessions, snapshots) over the REST
 * API, refreshed when the server emits a hashline event, with a slow poll as a fallback.
 *
 * Invariants:
 * - The visible tab is re-fetched when an event says its data changed (`events.ts`); events
 *   arriving while the panel is hidden are ignored, since showing it fetches anyway.
 * - Timers run only while the panel is visible (from `onAfterShow`, or `onAfterAttach` into a
 *   visible place, until `onAfterHide`, detach or disposal): the fallback poll every
 *   `pollIntervalMs` (0: none; changeable at any time) and a clock that refreshes the
 *   relative-time labels in place, without fetching.
 * - At most one refresh is in flight. A request made during one (an event, a tab switch, the
 *   refresh button) is coalesced into a single follow-up refresh, so no change is missed and
 *   a burst of events costs two fetches at most; a poll tick during one is skipped.
 * - The DOM of a tab is rebuilt only when what it shows changed (data, expansion, error), so a
 *   refresh never replaces the element a person is about to click.
 * - Only the visible tab is fetched; an expanded session's detail is fetched with it.
 * - A failed refresh shows an error state for that tab; the next event, tick or click retries,
 *   so the panel recovers by itself when the server does.
 * - Review: a decision on one cell names the cells decided with it (`decisionCells`); a refused
 *   decision keeps its reason on that cell (or file) until the next decision there. A new
 *   proposal's event while another tab is shown marks the Review tab until it is opened.
 */

import { Widget } from '@lumino/widgets';

import {
  type BusEvent,
  type BusEvents,
  type Tab,
  tabsChangedBy
} from './events';
import { PROPOSAL_EVENT_ID } from './event-types';
import { KeyedRequests, Refresher, errorMessage } from './in-flight';
import type { ActivityEdit, SessionDetailView } from './model';
import { sessionDetail, undoneBy } from './model';
import {
  refreshTimes,
  renderActivity,
  renderError,
  renderSessions,
  renderSnapshots
} from './render';
import {
  type CellReview,
  type Proposal,
  decisionCells,
  openProposals,
  reviewKey
} from './review';
import { type ReviewHandlers, renderReview } from './review-render';
import type {
  ActivityResponse,
  ProposalDecisionRequest,
  ProposalDecisionResponse,
  ProposalsDecisionRequest,
  ProposalsDecisionResponse,
  ProposalsResponse,
  ReviewModeRequest,
  ReviewModeResponse,
  RevertRequest,
  RevertResponse,
  SessionResponse,
  SessionsResponse,
  SnapshotsResponse
} from './rest-types';

export type { Tab };
export const TABS: ReadonlyArray<{ tab: Tab; label: string }> = [
  { tab: 'activity', label: 'Activity' },
  { tab: 'review', label: 'Review' },
  { tab: 'sessions', label: 'Sessions' },
  { tab: 'snapshots', label: 'Snapshots' }
];

/** Where the sidebar gets its data (the REST client, or a fake in tests). */
export interface SidebarSource {
  activity(limit?: number): Promise<ActivityResponse>;
  sessions(): Promise<SessionsResponse>;
  session(id: string): Promise<SessionResponse>;
  snapshots(): Promise<SnapshotsResponse>;
  /** Undo recorded edits; a refusal rejects with the server's reason as its message. */
  revert?(request: RevertRequest): Promise<RevertResponse>;
  /** Review mode (api.ts); without these the Review tab says it is not available. */
  proposals?(path?: string): Promise<ProposalsResponse>;
  decide?(
    id: number,
    accept: boolean,
    request?: ProposalDecisionRequest
  ): Promise<ProposalDecisionResponse>;
  decideAll?(
    accept: boolean,
    request: ProposalsDecisionRequest
  ): Promise<ProposalsDecisionResponse>;
  reviewMode?(): Promise<ReviewModeResponse>;
  setReviewMode?(request: ReviewModeRequest): Promise<ReviewModeResponse>;
}

export interface SidebarOptions {
  source: SidebarSource;
  /** Open the edited file and reveal what the edit touched. */
  openEdit(edit: ActivityEdit): Promise<void>;
  /** Open a proposal's file at its first pending cell. */
  openProposal?(proposal: Proposal): Promise<void>;
  /** Called after the person decided on a proposal here (the notebooks repaint at once). */
  reviewed?(): void;
  /** The server's event stream (`ServiceManager.events.stream`); without it, only the poll. */
  events?: BusEvents;
  /** The fallback poll's period while visible; 0 turns it off. */
  pollIntervalMs?: number;
  now?: () => number;
}

interface ReviewData {
  proposals: Proposal[];
  mode: ReviewModeResponse;
}

interface TabData {
  activity: ActivityResponse | null;
  review: ReviewData | null;
  sessions: SessionsResponse | null;
  snapshots: SnapshotsResponse | null;
}

/** The fallback poll's default period (the settings schema's default says the same). */
export const DEFAULT_POLL_INTERVAL_MS = 10_000;
/** How often relative-time labels ("42 s ago") are refreshed while visible. */
export const CLOCK_INTERVAL_MS = 10_000;
export const ACTIVITY_LIMIT = 100;

export class HashlineSidebar extends Widget {
  constructor(options: SidebarOptions) {
    super();
    this.id = 'jupyter-hashline-sidebar';
    this.addClass('jp-hashline-sidebar');
    this.title.caption = 'Hashline: agent edits, sessions and snapshots';
    this._source = options.source;
    this._openEdit = options.openEdit;
    this._openProposal = options.openProposal ?? null;
    this._reviewed = options.reviewed ?? (() => undefined);
    this._events = options.events ?? null;
    this._events?.connect(this._onEvent, this);
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
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
    if (tab === 'review') {
      this._tabButtons.get('review')?.classList.remove('jp-mod-attention');
    }
    this._tabButtons.forEach((button, key) => {
      button.classList.toggle('jp-mod-active', key === tab);
      button.setAttribute('aria-selected', String(key === tab));
    });
    this._signature = '';
    this._render();
    void this.refresh();
  }

  /** Whether the fallback poll is running (only while visible, and never when it is 0). */
  get polling(): boolean {
    return this._poll !== null;
  }

  /** The fallback poll's period in milliseconds; 0 turns it off. Takes effect at once. */
  get pollIntervalMs(): number {
    return this._pollIntervalMs;
  }

  set pollIntervalMs(value: number) {
    const ms = Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
    this._pollIntervalMs = ms;
    this.node.dataset.pollIntervalMs = String(ms);
    if (this._clock !== null) {
      this._stopPoll();
      this._startPoll();
    }
  }

  /** Fetch the visible tab (and expanded sessions' details) and re-render if anything changed.
   *  Called while a refresh is in flight, it schedules one follow-up refresh. */
  async refresh(): Promise<void> {
    if (this.isDisposed) {
      return;
    }
    await this._refresher.run();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._stopTimers();
    this._events?.disconnect(this._onEvent, this);
    super.dispose();
  }

  protected onAfterShow(): void {
    this._startTimers();
    void this.refresh();
  }

  protected onAfterAttach(): void {
    // Attached straight into a visible place: no after-show message follows.
    if (this.isVisible) {
      this.onAfterShow();
    }
  }

  protected onAfterHide(): void {
    this._stopTimers();
  }

  protected onBeforeDetach(): void {
    this._stopTimers();
  }

  private _onEvent(_sender: unknown, event: BusEvent): void {
    // the bus flattens an event's data into the emission: `action` says what happened
    const action = (event as { action?: unknown }).action;
    if (
      event.schema_id === PROPOSAL_EVENT_ID &&
      (action === 'proposed' || action === undefined) &&
      this._tab !== 'review'
    ) {
      this._tabButtons.get('review')?.classList.add('jp-mod-attention');
    }
    if (
      !this.isDisposed &&
      this.isVisible &&
      tabsChangedBy(event).includes(this._tab)
    ) {
      void this.refresh();
    }
  }

  private async _refreshOnce(): Promise<void> {
    const tab = this._tab;
    try {
      await this._fetch(tab);
      this._errors.delete(tab);
      this._status.textContent = `Updated ${new Date(this._now()).toLocaleTimeString()}`;
    } catch (err) {
      this._errors.set(tab, errorMessage(err));
      this._status.textContent = 'Refresh failed; retrying';
    }
    this._render();
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
    } else if (tab === 'review') {
      this._data.review = await this._fetchReview();
      this._countPending();
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

  private async _fetchReview(): Promise<ReviewData> {
    const source = this._source;
    if (!source.proposals || !source.reviewMode) {
      throw new Error('This sidebar has no review client.');
    }
    const [list, mode] = await Promise.all([
      source.proposals(),
      source.reviewMode()
    ]);
    return { proposals: list.proposals, mode };
  }

  /** Show how many proposals wait on the Review tab's button. */
  private _countPending(): void {
    const button = this._tabButtons.get('review');
    const open = openProposals(this._data.review?.proposals ?? []).length;
    if (button) {
      button.textContent = open ? `Review (${open})` : 'Review';
      button.title = open ? `${open} proposals wait for review` : '';
    }
  }

  private _startTimers(): void {
    if (this._clock === null) {
      this._clock = setInterval(() => this._tickClock(), CLOCK_INTERVAL_MS);
    }
    this._startPoll();
  }

  private _stopTimers(): void {
    this._stopPoll();
    if (this._clock !== null) {
      clearInterval(this._clock);
      this._clock = null;
    }
  }

  private _startPoll(): void {
    if (this._poll === null && this._pollIntervalMs > 0) {
      this._poll = setInterval(() => this._tickPoll(), this._pollIntervalMs);
    }
  }

  private _stopPoll(): void {
    if (this._poll !== null) {
      clearInterval(this._poll);
      this._poll = null;
    }
  }

  private _tickClock(): void {
    if (!this.isVisible) {
      this._stopTimers();
      return;
    }
    refreshTimes(this._body, this._now());
  }

  private _tickPoll(): void {
    if (!this.isVisible) {
      this._stopTimers();
      return;
    }
    refreshTimes(this._body, this._now());
    if (!this._refresher.running) {
      void this.refresh();
    }
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
      tab === 'sessions' ? [...this._details] : null,
      [...this._undos.refused],
      [...this._undos.pending],
      this._showClosed,
      tab === 'review'
        ? [
            [...this._expandedProposals],
            [...this._decisions.pending],
            [...this._decisions.refused],
            this._modeBusy
          ]
        : null
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
            this._activityHandlers,
            {
              undoneBy: undoneBy(data.edits),
              refused: this._undos.refused,
              pending: this._undos.pending
            }
          )
        : loading;
    }
    if (tab === 'review') {
      const data = this._data.review;
      return data
        ? renderReview(
            data.proposals,
            {
              mode: data.mode,
              modeBusy: this._modeBusy,
              expanded: this._expandedProposals,
              busy: this._decisions.pending,
              errors: this._decisions.refused,
              notes: this._notes
            },
            now,
            this._reviewHandlers
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
            this._sessionHandlers,
            this._showClosed
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
    },
    undo: (edit: ActivityEdit): void => {
      void this._undo(edit, { activity: edit.id });
    },
    undoSince: (edit: ActivityEdit): void => {
      void this._undo(edit, { agent: edit.who, since_ms: edit.at_ms });
    }
  };

  /** Show (and focus) the activity entry of record `id`, expanded: a badge's click. */
  reveal(id: number): void {
    this._expandedEdits.add(id);
    this.tab = 'activity';
    this._signature = '';
    this._render();
    void this.refresh().then(() => {
      const item = this._body.querySelector<HTMLElement>(
        `.jp-hashline-edit[data-edit-id="${id}"]`
      );
      item?.scrollIntoView({ block: 'nearest' });
    });
  }

  private async _undo(
    edit: ActivityEdit,
    request: RevertRequest
  ): Promise<void> {
    const revert = this._source.revert?.bind(this._source);
    if (revert === undefined || this._undos.pending.has(edit.id)) {
      return;
    }
    const undone = await this._undos.run(
      edit.id,
      async () => {
        const reply = await revert(request);
        const done = reply.reverted.length;
        this._status.textContent = done
          ? `Undid ${done === 1 ? 'edit' : 'edits'} #${reply.reverted.join(', #')}`
          : 'Nothing to undo';
      },
      () => this._render()
    );
    if (!undone) {
      this._status.textContent = `Undo of #${edit.id} refused`;
    }
    await this.refresh();
  }

  private readonly _reviewHandlers: ReviewHandlers = {
    accept: review => void this._decide(review, true),
    reject: review => void this._decide(review, false),
    setMode: on => void this._setMode(on),
    decideAll: (path, accept) => void this._decideAll(path, accept),
    toggle: proposal => {
      flip(this._expandedProposals, proposal.id);
      this._render();
    },
    open: proposal => {
      this._openProposal?.(proposal).catch((err: unknown) => {
        this._status.textContent = `Could not open ${proposal.path}: ${String(err)}`;
      });
    },
    note: (path, text) => {
      this._notes.set(path, text);
    }
  };

  /** Decide one cell (and those decided with it); a refusal stays on that cell. */
  private async _decide(review: CellReview, accept: boolean): Promise<void> {
    const decide = this._source.decide?.bind(this._source);
    const key = reviewKey(review);
    if (decide === undefined || this._decisions.pending.has(key)) {
      return;
    }
    const request: ProposalDecisionRequest = {
      cells: decisionCells(review.proposal, review.cell.cell)
    };
    const note = this._notes.get(review.proposal.path)?.trim();
    if (!accept && note) {
      request.note = note;
    }
    await this._reviewRequest(key, async () => {
      await decide(review.proposal.id, accept, request);
      const verb = accept ? 'Accepted' : 'Rejected';
      this._status.textContent = `${verb} ${request.cells!.join(', ')} of proposal #${review.proposal.id}`;
    });
  }

  private async _decideAll(path: string, accept: boolean): Promise<void> {
    const decideAll = this._source.decideAll?.bind(this._source);
    if (decideAll === undefined || this._decisions.pending.has(path)) {
      return;
    }
    const request: ProposalsDecisionRequest = { path };
    const note = this._notes.get(path)?.trim();
    if (!accept && note) {
      request.note = note;
    }
    await this._reviewRequest(path, async () => {
      const reply = await decideAll(accept, request);
      const verb = accept ? 'Accepted' : 'Rejected';
      this._status.textContent = `${verb} ${reply.proposals.length} of ${path}`;
    });
  }

  /** Run one decision keyed `key` (busy meanwhile, its refusal kept), then refresh. */
  private async _reviewRequest(
    key: string,
    request: () => Promise<void>
  ): Promise<void> {
    if (!(await this._decisions.run(key, request, () => this._render()))) {
      this._status.textContent = 'Not applied: see why in the Review tab';
    }
    this._reviewed();
    await this.refresh();
  }

  private async _setMode(on: boolean): Promise<void> {
    const setMode = this._source.setReviewMode?.bind(this._source);
    const data = this._data.review;
    if (setMode === undefined || data === null || this._modeBusy) {
      return;
    }
    this._modeBusy = true;
    this._render();
    try {
      data.mode = await setMode({ mode: on ? 'on' : 'off' });
      this._status.textContent = `Review of agent edits is ${data.mode.mode}`;
    } catch (err) {
      this._status.textContent = `Review mode unchanged: ${errorMessage(err)}`;
    } finally {
      this._modeBusy = false;
    }
    this._signature = '';
    this._render();
    this._reviewed();
  }

  private readonly _sessionHandlers = {
    toggle: (summary: { id: string }): void => {
      flip(this._expandedSessions, summary.id);
      this._render();
      if (this._expandedSessions.has(summary.id)) {
        void this.refresh();
      }
    },
    toggleClosed: (): void => {
      this._showClosed = !this._showClosed;
      this._render();
    }
  };

  private _tab: Tab = 'activity';
  private _signature = '';
  private readonly _refresher = new Refresher(
    () => this._refreshOnce(),
    () => this.isDisposed
  );
  private _poll: ReturnType<typeof setInterval> | null = null;
  private _clock: ReturnType<typeof setInterval> | null = null;
  private _pollIntervalMs = DEFAULT_POLL_INTERVAL_MS;
  private readonly _source: SidebarSource;
  private readonly _openEdit: (edit: ActivityEdit) => Promise<void>;
  private readonly _openProposal:
    ((proposal: Proposal) => Promise<void>) | null;
  private readonly _reviewed: () => void;
  private readonly _events: BusEvents | null;
  private readonly _now: () => number;
  private readonly _body = document.createElement('div');
  private readonly _status = document.createElement('div');
  private readonly _tabButtons = new Map<Tab, HTMLButtonElement>();
  private readonly _data: TabData = {
    activity: null,
    review: null,
    sessions: null,
    snapshots: null
  };
  private readonly _errors = new Map<Tab, string>();
  private readonly _expandedEdits = new Set<number>();
  private readonly _expandedSessions = new Set<string>();
  private readonly _details = new Map<string, SessionDetailView>();
  /** Undos by record id. */
  private readonly _undos = new KeyedRequests<number>();
  private _showClosed = false;
  private readonly _expandedProposals = new Set<number>();
  /** Decisions by file path (all of a file) and review key (one cell). */
  private readonly _decisions = new KeyedRequests<string>();
  private readonly _notes = new Map<string, string>();
  private _modeBusy = false;
}

function flip<T>(set: Set<T>, value: T): void {
  if (!set.delete(value)) {
    set.add(value);
  }
}
