/**
 * Which of the server's events concern the sidebar, and which of its tabs each one makes stale.
 *
 * The server emits a hashline event on jupyter_server's event bus for every recorded edit or
 * run of cells (`ACTIVITY_EVENT_ID`), every session post (`SESSION_EVENT_ID`) and every proposal made
 * or decided in review mode (`PROPOSAL_EVENT_ID`); JupyterLab delivers every
 * event of the bus to `ServiceManager.events.stream`. The ids come from the server's schema
 * files (`event-types.ts` is generated from them).
 *
 * Invariants:
 * - Pure and total: any emission, from any schema, maps to a (possibly empty) list of tabs.
 * - An edit or a run changes what the Activity tab lists and what the Snapshots tab tracks; a session
 *   post changes the Sessions tab only; a proposal (made, accepted, rejected) the Review tab (an
 *   accepted one also lands as an ordinary edit, with its own activity event). Other schemas
 *   (contents, kernels...) change nothing.
 */

import type { ISignal } from '@lumino/signaling';

import {
  ACTIVITY_EVENT_ID,
  PROPOSAL_EVENT_ID,
  SESSION_EVENT_ID
} from './event-types';

export type Tab = 'activity' | 'review' | 'sessions' | 'snapshots';

/** What the sidebar reads of an event bus emission (`Event.Emission` in @jupyterlab/services). */
export interface BusEvent {
  readonly schema_id: string;
}

/** The event stream the sidebar listens to (`ServiceManager.events.stream`, or a test signal). */
export type BusEvents = ISignal<unknown, BusEvent>;

const STALE_TABS: ReadonlyMap<string, ReadonlyArray<Tab>> = new Map([
  [ACTIVITY_EVENT_ID, ['activity', 'snapshots'] as const],
  [SESSION_EVENT_ID, ['sessions'] as const],
  [PROPOSAL_EVENT_ID, ['review'] as const]
]);

/** The tabs whose data an event changed (empty for events that are not hashline's). */
export function tabsChangedBy(event: BusEvent): ReadonlyArray<Tab> {
  return STALE_TABS.get(event.schema_id) ?? [];
}
