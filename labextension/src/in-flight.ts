/**
 * Requests that must not overlap, shared by the sidebar (sidebar.ts) and the proposals shown on
 * notebook cells (review-cells.ts): a refresh that runs once at a time, and a person's requests
 * (an edit's undo, a decision on a proposal) kept one per key with the reason of a refusal.
 *
 * Invariants:
 * - `Refresher.run` never runs its job twice at once: a call made while it runs is folded into
 *   one more run by the call already running, so no change is missed and a burst of calls costs
 *   two runs at most.
 * - `KeyedRequests` marks a key pending from the start of its request to its end (success or
 *   refusal), and keeps a refusal's reason for that key until the next request of it. Callers
 *   check `pending` before they start one, so a key has one request in flight at most.
 */

/** What a failed request says: an Error's message, or the thrown value as text. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** An async job run once at a time; calls made meanwhile are coalesced into one follow-up. */
export class Refresher {
  /** `stopped`: no follow-up run once it says so (the owner was disposed). */
  constructor(
    private readonly _job: () => Promise<void>,
    private readonly _stopped: () => boolean = () => false
  ) {}

  /** Whether a run is under way. */
  get running(): boolean {
    return this._running;
  }

  /** Run the job, and again while calls arrived during it. Resolves to false for a call that
   *  only asked the running one for a follow-up. */
  async run(): Promise<boolean> {
    if (this._running) {
      this._again = true;
      return false;
    }
    this._running = true;
    try {
      do {
        this._again = false;
        await this._job();
      } while (this._again && !this._stopped());
    } finally {
      this._running = false;
    }
    return true;
  }

  private _running = false;
  private _again = false;
}

/** A person's requests by key: which are in flight, and why the last of each was refused. */
export class KeyedRequests<K> {
  readonly pending = new Set<K>();
  readonly refused = new Map<K, string>();

  /** Run `request` for `key` (pending meanwhile, `changed` called as it starts and ends).
   *  Resolves to false when it was refused; the reason is then in `refused`. */
  async run(
    key: K,
    request: () => Promise<void>,
    changed: () => void
  ): Promise<boolean> {
    this.pending.add(key);
    this.refused.delete(key);
    changed();
    let done = false;
    try {
      await request();
      done = true;
    } catch (err) {
      this.refused.set(key, errorMessage(err));
    } finally {
      this.pending.delete(key);
    }
    changed();
    return done;
  }
}
