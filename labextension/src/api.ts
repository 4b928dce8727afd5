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
  RevertRequest,
  RevertResponse,
  SessionResponse,
  SessionsResponse,
  SnapshotsResponse
} from './rest-types';

export class HashlineRequestError extends Error {
  constructor(
    readonly route: string,
    readonly status: number | null,
    message: string
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
      throw new HashlineRequestError(route, response.status, message);
    }
    return reply as T;
  }
}
