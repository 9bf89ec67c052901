/**
 * Polls `what` until it gives a value (anything but undefined): background workers run after a
 * response, so tests wait for what a client would see instead of sleeping a fixed time.
 */
export async function until<T>(what: () => T | undefined | Promise<T | undefined>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what.toString()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
