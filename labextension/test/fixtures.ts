// Fixtures shaped like the server's replies (see rest_schema.json), shared by the unit tests.
import type { ActivityEdit, SessionSummary, TrackedPath } from '../src/model';
import type { Proposal, ProposedCell } from '../src/review';

export const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);

export const NOTEBOOK_DIFF = [
  '--- a/analysis.ipynb',
  '+++ b/analysis.ipynb',
  '@@ -11,4 +11,4 @@',
  ' # %% [code] id=load-data',
  ' import pandas as pd',
  '-df = pd.read_csv("sales.csv")',
  '+df = pd.read_csv("sales.csv", parse_dates=["date"])',
  ' df.head()',
  ''
].join('\n');

export function edit(overrides: Partial<ActivityEdit> = {}): ActivityEdit {
  return {
    id: 1,
    path: 'analysis.ipynb',
    op: 'update',
    at_ms: NOW - 90_000,
    who: 'alice',
    source: 'patch',
    header_before: '[analysis.ipynb#1A2B]',
    header_after: '[analysis.ipynb#3C4D]',
    diff: NOTEBOOK_DIFF,
    warnings: [],
    cells: ['load-data'],
    runs: [],
    notes: [],
    reverts: [],
    undoable: true,
    ...overrides
  };
}

/** A run of two cells as the activity feed records it: the first ok, the second raised. */
export function runRecord(overrides: Partial<ActivityEdit> = {}): ActivityEdit {
  return edit({
    op: 'run',
    source: 'run',
    header_after: '[analysis.ipynb#1A2B]',
    diff: '',
    cells: ['load-data', 'total'],
    runs: [
      { cell: 'load-data', status: 'ok', duration_ms: 240, execution_count: 3 },
      { cell: 'total', status: 'error', duration_ms: 1520, execution_count: 4 }
    ],
    ...overrides
  });
}

export function summary(
  overrides: Partial<SessionSummary> = {}
): SessionSummary {
  return {
    id: 'agent-1',
    label: 'notebook agent',
    created_at_ms: NOW - 600_000,
    updated_at_ms: NOW - 3_000,
    updates: 4,
    prefix_short_id: 'fcc26a0ffa41',
    hit_ratio: 0.4375,
    turns: 2,
    edits: 1,
    runs: 0,
    rebuilds: 1,
    closed: false,
    ...overrides
  };
}

/** A snapshot as Session.snapshot() returns it (trimmed to what the sidebar reads, plus noise). */
export const SNAPSHOT = {
  zones: {
    prefix: {
      short_id: 'fcc26a0ffa41',
      model: 'claude-sonnet-4-5',
      tool_names: ['notebook_read', 'notebook_edit'],
      bytes: 2841,
      status: 'changed (declared)',
      contract_status: 'changed',
      stability: {
        pins: [
          {
            short_id: 'aaaaaaaaaaaa',
            reason: 'initial pin',
            declared: true,
            at: 1_700_000_000,
            drift: null
          },
          {
            short_id: 'fcc26a0ffa41',
            reason: 'model switch',
            declared: true,
            at: 1_700_000_060.5,
            drift: { text: 'model changed: a -> b' }
          }
        ]
      }
    },
    log: {
      messages: 4,
      bytes: 364,
      generation: 1,
      rebuilds: 1,
      status: 'append-only',
      contract_status: 'holds'
    },
    scratch: { messages: 0, bytes: 0, status: 'empty' }
  },
  cache: {
    hit_ratio: 0.4375,
    miss_causes: { messages_rewritten: 1, ttl_expired: 2 },
    turns: [
      {
        index: 0,
        hit_ratio: 0,
        cached_tokens: 0,
        input_tokens: 768,
        cold: true,
        miss: false,
        cause: null
      },
      {
        index: 1,
        hit_ratio: 0.837,
        cached_tokens: 704,
        input_tokens: 841,
        cold: false,
        miss: false,
        cause: null
      },
      {
        index: 2,
        hit_ratio: 0.1,
        cached_tokens: 90,
        input_tokens: 900,
        cold: false,
        miss: true,
        cause: 'messages_rewritten'
      }
    ]
  },
  audit: [
    {
      reason: 'manual_compaction',
      label: 'manual compaction',
      detail: 'kept 2 turns',
      before: 10,
      after: 4,
      at: 1_700_000_100
    }
  ],
  edits: [],
  session: { provider: 'anthropic', model: 'claude-sonnet-4-5' },
  invariant: { checks: 3 }
};

export const TRACKED: TrackedPath = {
  path: 'analysis.ipynb',
  head: '3C4D',
  versions: [
    {
      tag: '3C4D',
      recorded_at_ms: NOW - 10_000,
      lines: 40,
      seen_lines: [
        [1, 12],
        [20, 20]
      ]
    },
    { tag: '1A2B', recorded_at_ms: NOW - 100_000, lines: 39, seen_lines: [] }
  ]
};

export function proposedCell(
  overrides: Partial<ProposedCell> = {}
): ProposedCell {
  return {
    cell: 'load-data',
    kind: 'changed',
    status: 'pending',
    after_cell: null,
    together: [],
    before: 'df = load()',
    after: 'df = load(parse_dates=True)',
    diff: '@@ -1 +1 @@\n-df = load()\n+df = load(parse_dates=True)\n',
    ...overrides
  };
}

/** A pending proposal of one changed cell, as GET hashline/proposals lists it. */
export function proposal(overrides: Partial<Proposal> = {}): Proposal {
  return {
    id: 1,
    path: 'analysis.ipynb',
    agent: 'claude-code',
    at_ms: NOW - 30_000,
    status: 'pending',
    header: '[analysis.ipynb#1A2B]',
    note: '',
    text_file: false,
    cells: [proposedCell()],
    ...overrides
  };
}
