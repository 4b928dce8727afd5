/**
 * The sidebar's client of the hashline REST API (`{base_url}hashline/...`).
 *
 * Requests go through JupyterLab's `ServerConnection`, so the page's token and XSRF cookie
 * authenticate them exactly as the server requires. Response types come from
 * `rest-types.ts`, generated from the server's JSON Schema.
 *
 * Invariants:
 * - A failure is always a `HashlineRequestError` whose message is the server's `message`
 *   when it sent one (the text written for agents reads fine for people too), else a
 *   sentence naming the route and the HTTP status or network error.
 */

import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import type {
  ActivityResponse,
  ErrorResponse,
  ProposalDecisionRequest,
  ProposalDecisionResponse,
  ProposalsDecisionRequest,
  ProposalsDecisionResponse,
  ProposalsResponse,
  RevertRequest,
  RevertResponse,
  SessionResponse,
  SessionsResponse,
  ReviewModeRequest,
  ReviewModeResponse,
  SnapshotsResponse
} from './rest-types';

export class HashlineRequestError extends Error {
  constructor(
    readonly route: string,
    readonly status: number | null,
    message: string,
    /** The server's error kind (`proposal_refused`...), when it sent one. */
    readonly kind: string | null = null
  ) {
    super(message);
    this.name = 'HashlineRequestError';
  }
}

function isErrorResponse(value: unknown): value is ErrorResponse {
  const body = value as Partial<ErrorResponse> | null;
  return typeof body?.message === 'string' && typeof body?.error === 'string';
}

export class HashlineApi {
  constructor(
    readonly settings: ServerConnection.ISettings = ServerConnection.makeSettings()
  ) {}

  activity(limit?: number): Promise<ActivityResponse> {
    return this.get<ActivityResponse>(
      limit ? `activity?limit=${limit}` : 'activity'
    );
  }

  sessions(): Promise<SessionsResponse> {
    return this.get<SessionsResponse>('sessions');
  }

  session(id: string): Promise<SessionResponse> {
    return this.get<SessionResponse>(`sessions/${encodeURIComponent(id)}`);
  }

  snapshots(): Promise<SnapshotsResponse> {
    return this.get<SnapshotsResponse>('snapshots');
  }

  /** Undo an edit (or all of an agent's edits since a time); a refusal throws with the
   *  server's reason (which lines changed since, and how). */
  revert(request: RevertRequest): Promise<RevertResponse> {
    return this.send<RevertResponse>('revert', 'POST', JSON.stringify(request));
  }

  /** The proposals kept for review (of one file), newest first. */
  proposals(path?: string): Promise<ProposalsResponse> {
    return this.get<ProposalsResponse>(
      path ? `proposals?path=${encodeURIComponent(path)}` : 'proposals'
    );
  }

  /** Accept or reject a proposal, or some of its cells; a refusal (the person changed the
   *  same lines since) throws with the server's reason, and nothing was written. */
  decide(
    id: number,
    accept: boolean,
    request: ProposalDecisionRequest = {}
  ): Promise<ProposalDecisionResponse> {
    const verb = accept ? 'accept' : 'reject';
    return this.send<ProposalDecisionResponse>(
      `proposals/${id}/${verb}`,
      'POST',
      JSON.stringify(request)
    );
  }

  /** Accept or reject every open proposal of one file. */
  decideAll(
    accept: boolean,
    request: ProposalsDecisionRequest
  ): Promise<ProposalsDecisionResponse> {
    const verb = accept ? 'accept-all' : 'reject-all';
    return this.send<ProposalsDecisionResponse>(
      `proposals/${verb}`,
      'POST',
      JSON.stringify(request)
    );
  }

  reviewMode(): Promise<ReviewModeResponse> {
    return this.get<ReviewModeResponse>('review');
  }

  setReviewMode(request: ReviewModeRequest): Promise<ReviewModeResponse> {
    return this.send<ReviewModeResponse>(
      'review',
      'POST',
      JSON.stringify(request)
    );
  }

  private get<T>(route: string): Promise<T> {
    return this.send<T>(route, 'GET');
  }

  private async send<T>(
    route: string,
    method: 'GET' | 'POST',
    body?: string
  ): Promise<T> {
    const url = URLExt.join(this.settings.baseUrl, 'hashline', route);
    let response: Response;
    try {
      response = await ServerConnection.makeRequest(
        url,
        body === undefined ? { method } : { method, body },
        this.settings
      );
    } catch (err) {
      throw new HashlineRequestError(
        route,
        null,
        `${method} hashline/${route} failed: ${String(err)}`
      );
    }
    const reply: unknown = await response.json().catch(() => null);
    if (!response.ok) {
      const message = isErrorResponse(reply)
        ? reply.message
        : `${method} hashline/${route} answered HTTP ${response.status}.`;
      const kind = isErrorResponse(reply) ? reply.error : null;
      throw new HashlineRequestError(route, response.status, message, kind);
    }
    return reply as T;
  }
}
