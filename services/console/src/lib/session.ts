/**
 * The signed-in session: the API key and organization, kept in this tab's sessionStorage only
 * (it survives a reload, dies with the tab, and never reaches localStorage, a URL or a log).
 * A session ends after IDLE_MS without activity.
 */
import { useSyncExternalStore } from 'react';

export interface Session {
  key: string;
  org: string;
}

const STORAGE_KEY = 'verity.session';
/** Idle time after which the session is forgotten. */
export const IDLE_MS = 30 * 60 * 1000;

interface Stored extends Session {
  lastActive: number;
}

const listeners = new Set<() => void>();
let current: Session | null = read();

function read(): Session | null {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    if (!raw) {
      return null;
    }
    const s = JSON.parse(raw) as Partial<Stored>;
    if (typeof s.key !== 'string' || typeof s.org !== 'string' || typeof s.lastActive !== 'number') {
      return null;
    }
    if (Date.now() - s.lastActive > IDLE_MS) {
      sessionStorage.removeItem(STORAGE_KEY);
      return null;
    }
    return { key: s.key, org: s.org };
  } catch {
    return null;
  }
}

function write(session: Session | null) {
  if (session) {
    const stored: Stored = { ...session, lastActive: Date.now() };
    sessionStorage.setItem(STORAGE_KEY, JSON.stringify(stored));
  } else {
    sessionStorage.removeItem(STORAGE_KEY);
  }
  current = session;
  for (const l of listeners) {
    l();
  }
}

/** The current session, or null when signed out or idle too long. */
export function getSession(): Session | null {
  if (current && read() === null) {
    write(null);
  }
  return current;
}

/** Starts a session after the key was checked against the API. */
export function signIn(session: Session): void {
  write(session);
}

/** Forgets the key. */
export function signOut(): void {
  write(null);
}

let lastTouch = 0;
/** Records activity (at most every few seconds) so an active session does not expire. */
export function touch(): void {
  const now = Date.now();
  if (!current || now - lastTouch < 5_000) {
    return;
  }
  lastTouch = now;
  if (read() === null) {
    write(null);
    return;
  }
  write(current);
}

/** React view of the session. */
export function useSession(): Session | null {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => current,
  );
}

/** Signs out when idle: checks every minute, and counts keys, clicks and scrolls as activity. */
export function watchIdle(): () => void {
  const onActivity = () => touch();
  const events = ['keydown', 'pointerdown', 'scroll'] as const;
  for (const e of events) {
    window.addEventListener(e, onActivity, { passive: true });
  }
  const timer = window.setInterval(() => {
    if (current && read() === null) {
      write(null);
    }
  }, 60_000);
  return () => {
    for (const e of events) {
      window.removeEventListener(e, onActivity);
    }
    window.clearInterval(timer);
  };
}
