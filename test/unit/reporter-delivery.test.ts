/**
 * Delivery: the newest state only, exponential backoff with jitter, Retry-After followed, no
 * retry on other 4xx. Waits go through a recording sleep, so no test waits them out.
 */
import { describe, expect, it } from 'vitest';
import { VerityApiError } from '../../services/shared/client/index.js';
import {
  LatestOnlyDelivery,
  MAX_RETRY_AFTER_MS,
  PermanentError,
  retryDelay,
  type Sleep,
} from '../../services/reporter/src/delivery.js';

const policy = { baseMs: 1000, maxMs: 60_000 };

describe('retryDelay', () => {
  it.each([
    ['the first retry waits half the base plus jitter', 1, 0, undefined, 500],
    ['full jitter on the first step', 1, 1, undefined, 1000],
    ['each attempt doubles the step', 3, 0.5, undefined, 3000],
    ['the step is capped', 20, 1, undefined, 60_000],
    ['Retry-After is followed as sent', 9, 0.9, 7000, 7000],
    ['Retry-After 0 retries at once', 2, 0.5, 0, 0],
    ['an absurd Retry-After is capped', 1, 0, 10 * 86_400_000, MAX_RETRY_AFTER_MS],
  ])('%s', (_rule, attempt, random, retryAfter, expected) => {
    expect(retryDelay(attempt, policy, random, retryAfter)).toBe(expected);
  });
});

/** A send whose outcomes the test scripts, and a sleep that records and returns at once. */
function harness(outcomes: Array<'ok' | number | Error | { status: number; retryAfter: number }>) {
  const sent: string[] = [];
  const delays: number[] = [];
  const events: string[] = [];
  const sleep: Sleep = async (ms) => {
    delays.push(ms);
  };
  const delivery = new LatestOnlyDelivery<string>(
    async (item) => {
      sent.push(item);
      const outcome = outcomes.shift() ?? 'ok';
      if (outcome === 'ok') {
        return;
      }
      if (outcome instanceof Error) {
        throw outcome;
      }
      const { status, retryAfter } =
        typeof outcome === 'number' ? { status: outcome, retryAfter: undefined } : outcome;
      throw new VerityApiError(status, `HTTP ${status}`, undefined, retryAfter);
    },
    {
      accepted: (item, attempts) => events.push(`accepted ${item} after ${attempts}`),
      rejected: (item, err) => events.push(`rejected ${item}: ${(err as Error).message}`),
      retrying: (item, _err, delay) => events.push(`retry ${item} in ${delay}`),
    },
    policy,
    sleep,
    () => 0.5,
  );
  return { delivery, sent, delays, events };
}

describe('LatestOnlyDelivery', () => {
  it('retries network errors, 409, 429 and 5xx with growing waits, then delivers', async () => {
    const h = harness([0, 409, 502, 503, { status: 429, retryAfter: 7 }, 'ok']);
    h.delivery.submit('A');
    await h.delivery.idle();
    expect(h.sent).toEqual(['A', 'A', 'A', 'A', 'A', 'A']);
    expect(h.delays).toEqual([750, 1500, 3000, 6000, 7000]);
    expect(h.events.at(-1)).toBe('accepted A after 6');
  });

  it.each([400, 401, 403, 404, 413, 422, 501])('does not retry a %i', async (status) => {
    const h = harness([status]);
    h.delivery.submit('A');
    await h.delivery.idle();
    expect(h.sent).toEqual(['A']);
    expect(h.events).toEqual([`rejected A: HTTP ${status}`]);
  });

  it('does not retry a permanent error', async () => {
    const h = harness([new PermanentError('wrong environment type')]);
    h.delivery.submit('A');
    await h.delivery.idle();
    expect(h.events).toEqual(['rejected A: wrong environment type']);
  });

  it('sends only the newest of many states submitted during an outage', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const sent: string[] = [];
    let failures = 0;
    const delivery = new LatestOnlyDelivery<string>(
      async (item) => {
        sent.push(item);
        if (failures++ < 3) {
          throw new VerityApiError(0, 'connect ECONNREFUSED');
        }
      },
      { accepted: () => {}, rejected: () => {}, retrying: () => {} },
      policy,
      // The outage lasts until the test releases the gate.
      () => gate,
    );
    delivery.submit('state-0');
    for (let i = 1; i <= 1000; i++) {
      delivery.submit(`state-${i}`);
    }
    release();
    await delivery.idle();
    expect(sent).toEqual(['state-0', 'state-1000', 'state-1000', 'state-1000']);
  });

  it('keeps a state submitted while a failing attempt is in flight, not the failed one', async () => {
    let fail!: (err: Error) => void;
    const sent: string[] = [];
    const delivery = new LatestOnlyDelivery<string>(
      (item) => {
        sent.push(item);
        if (sent.length > 1) {
          return Promise.resolve();
        }
        return new Promise<void>((_resolve, reject) => (fail = reject));
      },
      { accepted: () => {}, rejected: () => {}, retrying: () => {} },
      policy,
      async () => {},
    );
    delivery.submit('old');
    delivery.submit('new');
    fail(new VerityApiError(503, 'unavailable'));
    await delivery.idle();
    expect(sent).toEqual(['old', 'new']);
  });

  it('sends a state submitted while an accepted attempt is in flight', async () => {
    const h = harness(['ok', 'ok']);
    h.delivery.submit('A');
    h.delivery.submit('B');
    await h.delivery.idle();
    expect(h.sent).toEqual(['A', 'B']);
  });

  it('stops retrying when stopped', async () => {
    const h = harness([503, 503, 503]);
    h.delivery.submit('A');
    h.delivery.stop();
    await h.delivery.idle();
    h.delivery.submit('B');
    await h.delivery.idle();
    expect(h.sent).toEqual(['A']);
  });
});
