/**
 * Badges on the cells of open notebooks that an agent changed: the agent's name and when, the
 * cell's part of the diff on hover, the activity entry on click.
 *
 * Invariants:
 * - A badge stands for the newest edit of that cell that still stands (`badgeRecords`): an
 *   undo, a later person edit in the cell, or the person's dismissal (×) clears it, and a
 *   cleared badge never comes back for that edit.
 * - A person editing the cell is a key press, input or paste inside that cell's editor (an
 *   agent's edit arrives through the shared document, never as a key press), so the agent's
 *   own change never clears its badge.
 * - Badges are refreshed when the server reports activity (its event stream) and when a
 *   notebook opens; nothing polls.
 * - Server text (names, diffs) is only ever set as textContent or title.
 * - With `follow` on, each new edit of the notebook in the main area scrolls it to the first
 *   cell that edit touched (once per edit; the person's own scrolling is left alone between
 *   edits). Off by default.
 */

import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import type { BusEvent, BusEvents } from './events';
import { ACTIVITY_EVENT_ID } from './event-types';
import type { ActivityEdit } from './model';
import { badgeRecords, cellDiffText, relativeTime } from './model';
import type { ActivityResponse } from './rest-types';

const BADGE = 'jp-hashline-badge';

/** While following, how often the badges re-fetch the activity besides its events. */
const FOLLOW_POLL_MS = 5000;

export interface BadgeOptions {
  tracker: INotebookTracker;
  activity(): Promise<ActivityResponse>;
  events?: BusEvents;
  /** Show the activity entry of record `id` (the sidebar, expanded there). */
  reveal(id: number): void;
  now?: () => number;
}

export class CellBadges {
  constructor(private readonly _options: BadgeOptions) {
    this._now = _options.now ?? Date.now;
    _options.events?.connect(this._onEvent, this);
    _options.tracker.widgetAdded.connect((_, panel) => this._watch(panel));
    _options.tracker.forEach(panel => this._watch(panel));
  }

  /** Scroll the current notebook to the cell each new agent edit touches: every edit newer
   *  than the newest one known when following was turned on, each once. */
  get follow(): boolean {
    return this._follow;
  }

  set follow(on: boolean) {
    this._follow = on;
    this._followAfter = on ? (this._edits[0]?.id ?? 0) : 0;
    // Events drive the badges; while following, a slow poll also catches an edit whose event
    // was missed (the event connection still opening, or dropped).
    window.clearInterval(this._followPoll);
    this._followPoll = on
      ? window.setInterval(() => void this.refresh(), FOLLOW_POLL_MS)
      : undefined;
  }

  /** Fetch the activity and put every open notebook's badges in step with it. */
  async refresh(): Promise<void> {
    try {
      this._edits = (await this._options.activity()).edits;
    } catch {
      return; // the sidebar reports failures; badges simply stay as they are
    }
    this._options.tracker.forEach(panel => this._paint(panel));
    this._followNewest();
  }

  private _followNewest(): void {
    const newest = this._edits[0];
    const panel = this._options.tracker.currentWidget;
    if (
      !this._follow ||
      !newest ||
      newest.id <= this._followAfter ||
      newest.id === this._lastFollowed ||
      !panel
    ) {
      return;
    }
    if (newest.path !== panel.context.path || newest.cells.length === 0) {
      return;
    }
    const index = panel.content.widgets.findIndex(
      c => c.model.id === newest.cells[0]
    );
    if (index >= 0) {
      this._lastFollowed = newest.id;
      void panel.content.scrollToItem(index, 'center');
    }
  }

  private _onEvent(_sender: unknown, event: BusEvent): void {
    if (event.schema_id === ACTIVITY_EVENT_ID) {
      void this.refresh();
    }
  }

  private _watch(panel: NotebookPanel): void {
    const node = panel.content.node;
    const edited = (event: Event): void => this._personEdited(event);
    for (const kind of ['keydown', 'paste', 'cut', 'drop']) {
      node.addEventListener(kind, edited, true);
    }
    panel.content.model?.cells.changed.connect(() => this._paint(panel));
    void panel.context.ready.then(() => this.refresh());
  }

  private _personEdited(event: Event): void {
    if (event instanceof KeyboardEvent && !_changesText(event)) {
      return;
    }
    const target = event.target as HTMLElement | null;
    if (!target?.closest('.jp-InputArea-editor')) {
      return;
    }
    const cell = target.closest<HTMLElement>('.jp-Cell');
    const badge = cell?.querySelector<HTMLElement>(`.${BADGE}`);
    if (badge) {
      this._clear(badge);
    }
  }

  private _clear(badge: HTMLElement): void {
    this._cleared.add(`${badge.dataset.editId}:${badge.dataset.cell}`);
    badge.remove();
  }

  private _paint(panel: NotebookPanel): void {
    const records = badgeRecords(
      this._edits,
      panel.context.path,
      this._cleared
    );
    for (const cell of panel.content.widgets) {
      const id = cell.model.id;
      const record = records.get(id);
      const current = cell.node.querySelector<HTMLElement>(
        `:scope > .${BADGE}`
      );
      if (
        current &&
        (!record || current.dataset.editId !== String(record.id))
      ) {
        current.remove();
      }
      if (record && current?.dataset.editId !== String(record.id)) {
        cell.node.append(this._badge(record, id));
      } else if (record && current) {
        _label(current, record, this._now());
      }
    }
  }

  private _badge(record: ActivityEdit, cell: string): HTMLElement {
    const badge = document.createElement('div');
    badge.className = BADGE;
    badge.dataset.editId = String(record.id);
    badge.dataset.cell = cell;
    badge.title = cellDiffText(record, cell);
    const open = document.createElement('button');
    open.className = 'jp-hashline-badge-open';
    open.addEventListener('click', () => this._options.reveal(record.id));
    const dismiss = document.createElement('button');
    dismiss.className = 'jp-hashline-badge-dismiss';
    dismiss.textContent = '×';
    dismiss.title = 'Dismiss';
    dismiss.setAttribute('aria-label', 'Dismiss this badge');
    dismiss.addEventListener('click', () => this._clear(badge));
    badge.append(open, dismiss);
    _label(badge, record, this._now());
    return badge;
  }

  private _edits: readonly ActivityEdit[] = [];
  private _follow = false;
  private _followPoll: number | undefined = undefined;
  private _followAfter = 0; // the newest edit known when following was turned on
  private _lastFollowed = 0;
  private readonly _cleared = new Set<string>();
  private readonly _now: () => number;
}

function _label(badge: HTMLElement, record: ActivityEdit, nowMs: number): void {
  const open = badge.querySelector<HTMLElement>('.jp-hashline-badge-open');
  if (open) {
    open.textContent = `${record.who} · ${relativeTime(record.at_ms, nowMs)}`;
    open.setAttribute('aria-label', `Edited by ${record.who}: show the edit`);
  }
}

/** Whether a key press types or deletes text (not a shortcut, an arrow or a modifier). */
function _changesText(event: KeyboardEvent): boolean {
  if (event.ctrlKey || event.metaKey || event.altKey) {
    return false;
  }
  return (
    event.key.length === 1 ||
    ['Backspace', 'Delete', 'Enter', 'Tab'].includes(event.key)
  );
}
