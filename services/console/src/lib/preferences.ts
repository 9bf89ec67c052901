/**
 * The reader's display choices, remembered in this browser's localStorage (they are not secret):
 * the zone every time is shown in (the browser's own, or UTC) and the colour theme (the system's
 * setting, or light or dark).
 */
import { useSyncExternalStore } from 'react';

export type ZoneChoice = 'local' | 'utc';
export type ThemeChoice = 'system' | 'light' | 'dark';

interface Preferences {
  zone: ZoneChoice;
  theme: ThemeChoice;
}

const STORAGE_KEY = 'verity.preferences';
const listeners = new Set<() => void>();

function read(): Preferences {
  const fallback: Preferences = { zone: 'local', theme: 'system' };
  try {
    const raw = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? '{}') as Partial<Preferences>;
    return {
      zone: raw.zone === 'utc' ? 'utc' : fallback.zone,
      theme: raw.theme === 'light' || raw.theme === 'dark' ? raw.theme : fallback.theme,
    };
  } catch {
    return fallback;
  }
}

let current: Preferences = read();

/** Applies the theme to the document: `data-theme` is set only when the reader chose one. */
export function applyTheme(theme: ThemeChoice = current.theme): void {
  if (theme === 'system') {
    delete document.documentElement.dataset.theme;
  } else {
    document.documentElement.dataset.theme = theme;
  }
}

function update(patch: Partial<Preferences>): void {
  current = { ...current, ...patch };
  try {
    localStorage.setItem(STORAGE_KEY, JSON.stringify(current));
  } catch {
    // storage full or refused: the choice still holds in this tab
  }
  applyTheme();
  for (const l of listeners) {
    l();
  }
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  // another tab changed a choice
  const onStorage = (e: StorageEvent) => {
    if (e.key === STORAGE_KEY) {
      current = read();
      applyTheme();
      listener();
    }
  };
  window.addEventListener('storage', onStorage);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('storage', onStorage);
  };
}

/** The zone times are shown in now. */
export const zoneChoice = (): ZoneChoice => current.zone;
export const setZone = (zone: ZoneChoice): void => update({ zone });
export const setTheme = (theme: ThemeChoice): void => update({ theme });

export function usePreferences(): Preferences {
  return useSyncExternalStore(subscribe, () => current);
}
