/**
 * Pages behind sign-in. Without a session in this tab, the console first asks the API whether a
 * session cookie (a sign-in through the identity provider, in any tab) is there; without one, it
 * goes to sign-in and comes back here afterwards.
 */
import { useEffect, useState } from 'react';
import { Navigate, Outlet, useLocation } from 'react-router';
import { Loading } from '../../components/query-state';
import { restoreFromCookie, useSession } from '../../lib/session';

export interface ReturnTo {
  from?: string;
}

export function RequireSession() {
  const session = useSession();
  const location = useLocation();
  const [checked, setChecked] = useState(false);
  const pageOrg = decodeURIComponent(location.pathname.split('/')[1] ?? '') || undefined;

  useEffect(() => {
    if (session || checked) {
      return;
    }
    let live = true;
    void restoreFromCookie(pageOrg).finally(() => {
      if (live) {
        setChecked(true);
      }
    });
    return () => {
      live = false;
    };
  }, [session, checked, pageOrg]);

  if (!session && !checked) {
    return <Loading what="your session" />;
  }
  if (!session) {
    const state: ReturnTo = { from: `${location.pathname}${location.search}${location.hash}` };
    return <Navigate to="/sign-in" replace state={state} />;
  }
  return <Outlet />;
}
