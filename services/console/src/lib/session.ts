/**
 * The signed-in session. A person signed in through the identity provider holds a server-side
 * session behind an HttpOnly cookie, which every tab shares: the console keeps only the
 * organization and the person's name here. A break-glass API-key session keeps the key in this
 * tab's sessionStorage only (it survives a reload, dies with the tab, and never reaches
 * localStorage, a URL or a log). Either ends after IDLE_MS without activity.
 */
import { useSyncExternalStore } from 'react';

export interface Session {
  /** The API key of a key session; absent when the session cookie carries the session. */
  key?: string;
  org: string;
  /** Who is signed in, for the header. */
  name?: string;
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
    if (
      (s.key !== undefined && typeof s.key !== 'string') ||
      typeof s.org !== 'string' ||
      typeof s.lastActive !== 'number'
    ) {
      return null;
    }
    if (Date.now() - s.lastActive > IDLE_MS) {
      sessionStorage.removeItem(STORAGE_KEY);
      return null;
    }
    return {
      org: s.org,
      ...(s.key ? { key: s.key } : {}),
      ...(typeof s.name === 'string' ? { name: s.name } : {}),
    };
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

/** Forgets the key; a cookie session is ended on the server too. */
export function signOut(): void {
  const wasCookie = current !== null && current.key === undefined;
  write(null);
  if (wasCookie) {
    void fetch('/auth/logout', { method: 'POST', credentials: 'same-origin' }).catch(() => undefined);
  }
}

/** Forgets the session without telling the server (it already ended there). */
export function dropSession(): void {
  write(null);
}

interface Me {
  kind: 'user' | 'service_account';
  name: string;
  organizations: { org: string; role: string }[];
}

/**
 * Picks up the session cookie a sign-in through the identity provider left (in this tab or
 * another): asks the API who is signed in. `preferredOrg` is the organization of the page
 * opened, used when the person belongs to it.
 */
export async function restoreFromCookie(preferredOrg: string | undefined): Promise<Session | null> {
  try {
    // Signed out is an answer here (200 with no user), not a failed request in the browser's console.
    const res = await fetch('/auth/session', {
      credentials: 'same-origin',
      headers: { accept: 'application/json' },
    });
    if (!res.ok) {
      return null;
    }
    const me = ((await res.json()) as { user: Me | null }).user;
    if (!me) {
      return null;
    }
    const orgs = me.organizations.map((o) => o.org);
    const org = preferredOrg && orgs.includes(preferredOrg) ? preferredOrg : orgs[0];
    if (me.kind !== 'user' || !org) {
      return null;
    }
    const session: Session = { org, name: me.name };
    write(session);
    return session;
  } catch {
    return null;
  }
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

/**
 * Signs out when idle: checks every minute, and counts keys, clicks, the wheel and touch moves as
 * activity. Not `scroll`: the page scrolls by itself too (a route change, content loading above
 * the fold), and that is no sign of a person.
 */
export function watchIdle(): () => void {
  const onActivity = () => touch();
  const events = ['keydown', 'pointerdown', 'wheel', 'touchmove'] as const;
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
