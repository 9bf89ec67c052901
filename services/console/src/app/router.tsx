/**
 * Every page is a deep link at the path the API's html_url fields name. Pages load lazily, one
 * chunk each; everything but sign-in needs a session.
 */
import { createBrowserRouter, Navigate } from 'react-router';
import { RouterProvider } from 'react-router/dom';
import { Loading } from '../components/query-state';
import { RequireSession } from '../features/auth/require-session';
import { SignInPage } from '../features/auth/sign-in-page';
import { useSession } from '../lib/session';
import { Layout, NotFoundPage } from './layout';

function Home() {
  const session = useSession();
  return <Navigate to={session ? `/${encodeURIComponent(session.org)}` : '/sign-in'} replace />;
}

const router = createBrowserRouter([
  { path: '/sign-in', Component: SignInPage },
  {
    Component: RequireSession,
    HydrateFallback: () => <Loading what="the console" />,
    children: [
      {
        Component: Layout,
        children: [
          { index: true, Component: Home },
          {
            path: ':org',
            lazy: () => import('../features/insight/home-page').then((m) => ({ Component: m.default })),
          },
          {
            path: ':org/deployments',
            lazy: () =>
              import('../features/insight/deployments-page').then((m) => ({ Component: m.default })),
          },
          {
            path: ':org/repos/*',
            lazy: () => import('../features/insight/repo-page').then((m) => ({ Component: m.default })),
          },
          {
            path: ':org/environments',
            lazy: () =>
              import('../features/environments/environments-page').then((m) => ({ Component: m.default })),
          },
          {
            path: ':org/environments/:env',
            lazy: () =>
              import('../features/environments/environment-page').then((m) => ({ Component: m.default })),
          },
          {
            path: ':org/environments/:env/snapshots/:index',
            lazy: () =>
              import('../features/environments/snapshot-page').then((m) => ({ Component: m.default })),
          },
          {
            path: ':org/environments/:env/diff',
            lazy: () => import('../features/environments/diff-page').then((m) => ({ Component: m.default })),
          },
          {
            path: ':org/flows',
            lazy: () => import('../features/flows/flows-page').then((m) => ({ Component: m.default })),
          },
          {
            path: ':org/flows/:flow',
            lazy: () => import('../features/flows/flow-page').then((m) => ({ Component: m.default })),
          },
          {
            path: ':org/flows/:flow/trails/:trail',
            lazy: () => import('../features/flows/trail-page').then((m) => ({ Component: m.default })),
          },
          {
            path: ':org/flows/:flow/artifacts/:fingerprint',
            lazy: () => import('../features/flows/artifact-page').then((m) => ({ Component: m.default })),
          },
          {
            path: ':org/search',
            lazy: () => import('../features/search/search-page').then((m) => ({ Component: m.default })),
          },
          {
            path: ':org/exposure',
            lazy: () => import('../features/exposure/exposure-page').then((m) => ({ Component: m.default })),
          },
          {
            path: ':org/policies',
            lazy: () => import('../features/policies/policies-page').then((m) => ({ Component: m.default })),
          },
          {
            path: ':org/policies/:name',
            lazy: () => import('../features/policies/policy-page').then((m) => ({ Component: m.default })),
          },
          {
            path: ':org/settings/members',
            lazy: () => import('../features/access/members-page').then((m) => ({ Component: m.default })),
          },
          {
            path: ':org/settings/retention',
            lazy: () => import('../features/access/retention-page').then((m) => ({ Component: m.default })),
          },
          {
            path: ':org/settings/service-accounts',
            lazy: () =>
              import('../features/access/service-accounts-page').then((m) => ({ Component: m.default })),
          },
          {
            path: ':org/audit-log',
            lazy: () => import('../features/access/audit-log-page').then((m) => ({ Component: m.default })),
          },
          {
            path: ':org/actions',
            lazy: () => import('../features/actions/actions-page').then((m) => ({ Component: m.default })),
          },
          { path: '*', Component: NotFoundPage },
        ],
      },
    ],
  },
]);

export function AppRouter() {
  return <RouterProvider router={router} />;
}
