/** App-wide providers: the query cache, and the idle watch of the session. */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useEffect, useState, type ReactNode } from 'react';
import { ApiError } from '../lib/api-client';
import { useSession, watchIdle } from '../lib/session';

function makeClient() {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 15_000,
        refetchOnWindowFocus: false,
        // Client errors (401, 403, 404, 400) do not get better by retrying.
        retry: (count, error) => !(error instanceof ApiError && error.status < 500) && count < 2,
      },
    },
  });
}

export function AppProvider({ children }: { children: ReactNode }) {
  const [client] = useState(makeClient);
  const session = useSession();
  useEffect(() => watchIdle(), []);
  // Nothing read under one key is shown under another, or after sign-out.
  useEffect(() => {
    if (!session) {
      client.clear();
    }
  }, [session, client]);
  return <QueryClientProvider client={client}>{children}</QueryClientProvider>;
}
