import type { EventEmitter } from 'node:events';

/**
 * Polls `what` until it gives a value (anything but undefined): background workers run after a
 * response, so tests wait for what a client would see instead of sleeping a fixed time.
 */
export async function until<T>(what: () => T | undefined | Promise<T | undefined>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (v !== undefined) {
      return v;
    }
    if (Date.now() > end) {
      throw new Error(`timed out after ${ms} ms waiting for ${what.toString()}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Resolves with what `check` gives once it gives a value (anything but undefined or false),
 * checked now and after every `event` of `emitter`: for state that changes only when the emitter
 * says so. An async check runs one at a time; events during it are not checked again.
 */
export function untilEvent<T>(
  emitter: Pick<EventEmitter, 'on' | 'off'>,
  event: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  ms = 10_000,
): Promise<T> {
  return new Promise((resolve, reject) => {
    let running = false;
    let done = false;
    const finish = (err: Error | undefined, v?: T) => {
      done = true;
      emitter.off(event, onEvent);
      clearTimeout(timer);
      if (err) {
        reject(err);
      } else {
        resolve(v as T);
      }
    };
    const settle = (v: T | undefined | false) => {
      if (v !== undefined && v !== false) {
        finish(undefined, v);
      }
    };
    function onEvent(): void {
      if (running || done) {
        return;
      }
      let v: ReturnType<typeof check>;
      try {
        v = check();
      } catch (err) {
        return finish(err as Error);
      }
      if (v instanceof Promise) {
        running = true;
        v.then(
          (r) => {
            running = false;
            settle(r);
          },
          (err: Error) => finish(err),
        );
      } else {
        settle(v);
      }
    }
    const timer = setTimeout(() => finish(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
    emitter.on(event, onEvent);
    onEvent();
  });
}
