import { describe, expect, it } from 'vitest';

import { KeyedRequests, Refresher, errorMessage } from '../src/in-flight';

/** A promise and the function that resolves it. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const wait = new Promise<void>(resolve => (open = resolve));
  return { wait, open };
}

describe('Refresher', () => {
  it('folds the calls made during a run into one follow-up run', async () => {
    const first = gate();
    let runs = 0;
    const refresher = new Refresher(async () => {
      runs += 1;
      if (runs === 1) {
        await first.wait;
      }
    });
    const running = refresher.run();
    expect(refresher.running).toBe(true);
    const asked = [refresher.run(), refresher.run(), refresher.run()];
    expect(await Promise.all(asked)).toEqual([false, false, false]);
    first.open();
    expect(await running).toBe(true);
    expect(runs).toBe(2);
    expect(refresher.running).toBe(false);
  });

  it('runs no follow-up once stopped', async () => {
    const first = gate();
    let runs = 0;
    let stopped = false;
    const refresher = new Refresher(
      async () => {
        runs += 1;
        await first.wait;
      },
      () => stopped
    );
    const running = refresher.run();
    void refresher.run();
    stopped = true;
    first.open();
    await running;
    expect(runs).toBe(1);
  });

  it('is free again after a job that threw', async () => {
    const refresher = new Refresher(async () => {
      throw new Error('down');
    });
    await expect(refresher.run()).rejects.toThrow('down');
    expect(refresher.running).toBe(false);
  });
});

describe('KeyedRequests', () => {
  it('marks a key pending for the length of its request', async () => {
    const requests = new KeyedRequests<number>();
    const seen: boolean[] = [];
    const done = await requests.run(
      7,
      async () => {
        seen.push(requests.pending.has(7));
      },
      () => seen.push(requests.pending.has(7))
    );
    expect(done).toBe(true);
    expect(seen).toEqual([true, true, false]);
    expect(requests.refused.size).toBe(0);
  });

  it('keeps a refusal until the next request of that key', async () => {
    const requests = new KeyedRequests<string>();
    const refuse = async (): Promise<void> => {
      throw new Error('the line changed');
    };
    expect(await requests.run('a', refuse, () => undefined)).toBe(false);
    expect(
      await requests.run(
        'b',
        async () => undefined,
        () => undefined
      )
    ).toBe(true);
    expect(requests.refused.get('a')).toBe('the line changed');
    let during: string | undefined = 'unset';
    await requests.run(
      'a',
      async () => {
        during = requests.refused.get('a');
      },
      () => undefined
    );
    expect(during).toBeUndefined();
    expect(requests.refused.has('a')).toBe(false);
    expect(requests.pending.size).toBe(0);
  });
});

describe('errorMessage', () => {
  it('takes an Error’s message, and anything else as text', () => {
    expect(errorMessage(new Error('refused'))).toBe('refused');
    expect(errorMessage('plain')).toBe('plain');
    expect(errorMessage(409)).toBe('409');
  });
});
