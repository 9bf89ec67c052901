/** Downloads started by a button: busy while running, the error said beside the button. */
import { useState } from 'react';
import { download } from '../lib/api-client';

export function useDownload() {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const start = (url: string, filename: string) => {
    setBusy(true);
    setError(null);
    download(url, filename)
      .catch((e: unknown) => setError(e instanceof Error ? e.message : String(e)))
      .finally(() => setBusy(false));
  };
  return { error, busy, start };
}

export function DownloadError({ error }: { error: string | null }) {
  return error ? (
    <span role="alert" className="error-inline">
      {' '}
      {error}
    </span>
  ) : null;
}
