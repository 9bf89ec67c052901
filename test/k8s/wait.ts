/** Waiting on events instead of sleeping: each wait ends when the thing happens, or fails after a timeout. */
import type { EventEmitter } from 'node:events';

/** Resolves with the arguments of the first `event` for which `predicate` holds (checked on every emit). */
export function nextEvent<A extends unknown[] = any[]>(
  emitter: EventEmitter<any>,
  event: string,
  predicate: (...args: A) => boolean = () => true,
  timeoutMs = 10_000,
): Promise<A> {
  return new Promise((resolve, reject) => {
    const onEvent = (...args: A) => {
      if (!predicate(...args)) {
        return;
      }
      clearTimeout(timer);
      emitter.off(event, onEvent);
      resolve(args);
    };
    const timer = setTimeout(() => {
      emitter.off(event, onEvent);
      reject(new Error(`timed out after ${timeoutMs} ms waiting for '${event}'`));
    }, timeoutMs);
    emitter.on(event, onEvent);
  });
}
