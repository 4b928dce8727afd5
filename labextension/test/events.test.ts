import { describe, expect, it } from 'vitest';

import { ACTIVITY_EVENT_ID, SESSION_EVENT_ID } from '../src/event-types';
import { tabsChangedBy } from '../src/events';

describe('tabsChangedBy', () => {
  it('maps an edit to the activity and snapshots tabs', () => {
    expect(tabsChangedBy({ schema_id: ACTIVITY_EVENT_ID })).toEqual([
      'activity',
      'snapshots'
    ]);
  });

  it('maps a session post to the sessions tab', () => {
    expect(tabsChangedBy({ schema_id: SESSION_EVENT_ID })).toEqual([
      'sessions'
    ]);
  });

  it('ignores events of other schemas, including other versions of ours', () => {
    for (const schema_id of [
      'https://events.jupyter.org/jupyter_server/contents_service/v1',
      ACTIVITY_EVENT_ID.replace(/v1$/, 'v0'),
      ''
    ]) {
      expect(tabsChangedBy({ schema_id })).toEqual([]);
    }
  });

  it('uses the ids of the server schemas', () => {
    expect(ACTIVITY_EVENT_ID).toBe(
      'https://events.jupyter.org/jupyter_hashline/activity/v1'
    );
    expect(SESSION_EVENT_ID).toBe(
      'https://events.jupyter.org/jupyter_hashline/session/v1'
    );
  });
});
