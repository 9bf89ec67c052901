/** The operator's work queue: dedupe, one worker per key, backoff. */
import { describe, expect, it } from 'vitest';
import { WorkQueue, backoffDelay } from '../../services/operator/src/work-queue.js';

/** A hand-driven timer wheel. */
function timers() {
  let now = 0;
  const pending: Array<{ at: number; fn: () => void; id: number }> = [];
  let next = 1;
  return {
    setTimer: (fn: () => void, ms: number) => {
      const id = next++;
      pending.push({ at: now + ms, fn, id });
      return id;
    },
    clearTimer: (id: unknown) => {
      const i = pending.findIndex((p) => p.id === id);
      if (i >= 0) {
        pending.splice(i, 1);
      }
    },
    advance(ms: number) {
      now += ms;
      for (const p of pending.filter((p) => p.at <= now).sort((a, b) => a.at - b.at)) {
        pending.splice(pending.indexOf(p), 1);
        p.fn();
      }
    },
    get pending() {
      return pending.length;
    },
  };
}

describe('work queue', () => {
  it('keeps a key waiting once however often it is added', async () => {
    const q = new WorkQueue();
    q.add('ns/a');
    q.add('ns/a');
    q.add('ns/b');
    expect(q.length).toBe(2);
    expect(await q.get()).toBe('ns/a');
    expect(await q.get()).toBe('ns/b');
  });

  it('never hands a key to two workers; an add while processing runs it again after', async () => {
    const q = new WorkQueue();
    q.add('k');
    const key = await q.get();
    q.add('k');
    expect(q.length).toBe(0);
    q.done(key!);
    expect(q.length).toBe(1);
    expect(await q.get()).toBe('k');
  });

  it('wakes a waiting worker when a key arrives', async () => {
    const q = new WorkQueue();
    const waiting = q.get();
    q.add('late');
    expect(await waiting).toBe('late');
  });

  it('backs off exponentially per key and forgets on success', () => {
    const t = timers();
    const q = new WorkQueue({
      baseDelayMs: 100,
      maxDelayMs: 1000,
      setTimer: t.setTimer,
      clearTimer: t.clearTimer,
    });
    expect(q.addRateLimited('k')).toBe(100);
    t.advance(100);
    expect(q.length).toBe(1);
    expect([q.addRateLimited('x'), q.addRateLimited('x'), q.addRateLimited('x')]).toEqual([100, 200, 400]);
    q.forget('x');
    expect(q.failureCount('x')).toBe(0);
    expect(backoffDelay(20, 100, 1000)).toBe(1000);
  });

  it('lets an immediate add override a pending delayed one', () => {
    const t = timers();
    const q = new WorkQueue({ setTimer: t.setTimer, clearTimer: t.clearTimer });
    q.addAfter('k', 5000);
    expect(t.pending).toBe(1);
    q.add('k');
    expect(t.pending).toBe(0);
    expect(q.length).toBe(1);
  });

  it('releases waiting workers on shut down', async () => {
    const q = new WorkQueue();
    const waiting = q.get();
    q.shutDown();
    expect(await waiting).toBeUndefined();
    q.add('after');
    expect(q.length).toBe(0);
  });
});
