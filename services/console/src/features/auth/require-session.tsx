/** Pages behind sign-in: without a session, go to sign-in and come back here afterwards. */
import { Navigate, Outlet, useLocation } from 'react-router';
import { useSession } from '../../lib/session';

export interface ReturnTo {
  from?: string;
}

export function RequireSession() {
  const session = useSession();
  const location = useLocation();
  if (!session) {
    const state: ReturnTo = { from: `${location.pathname}${location.search}${location.hash}` };
    return <Navigate to="/sign-in" replace state={state} />;
  }
  return <Outlet />;
}
