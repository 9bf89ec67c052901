/** The frame of every signed-in page: skip link, header navigation, search, sign-out, main. */
import { useEffect, useRef, type FormEvent } from 'react';
import { Link, NavLink, Outlet, useLocation, useNavigate, useParams } from 'react-router';
import { signOut, useSession } from '../lib/session';
import { formText } from '../lib/form';

export function Layout() {
  const session = useSession();
  const params = useParams();
  const org = params.org ?? session?.org ?? '';
  const navigate = useNavigate();
  const location = useLocation();
  const main = useRef<HTMLElement>(null);

  // After navigating, put focus at the top of the new page so keyboard and screen reader users start there.
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    main.current?.focus();
  }, [location.pathname]);

  const onSearch = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const q = formText(new FormData(e.currentTarget), 'q');
    if (q) {
      void navigate(`/${encodeURIComponent(org)}/search?q=${encodeURIComponent(q)}`);
    }
  };

  const base = `/${encodeURIComponent(org)}`;
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="top">
        <Link to={`${base}/environments`} className="brand">
          Verity
        </Link>
        <nav aria-label="Main">
          <ul>
            <li>
              <NavLink to={`${base}/environments`}>Environments</NavLink>
            </li>
            <li>
              <NavLink to={`${base}/flows`}>Flows</NavLink>
            </li>
            <li>
              <NavLink to={`${base}/exposure`}>Exposure</NavLink>
            </li>
            <li>
              <NavLink to={`${base}/settings/members`}>Settings</NavLink>
            </li>
          </ul>
        </nav>
        <form role="search" onSubmit={onSearch} className="top-search">
          <label htmlFor="top-search-q" className="visually-hidden">
            Search by fingerprint or commit
          </label>
          <input
            id="top-search-q"
            name="q"
            type="search"
            placeholder="Fingerprint or commit"
            autoComplete="off"
          />
          <button type="submit">Search</button>
        </form>
        <Who org={org} />
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        <Outlet />
      </main>
    </>
  );
}

/** Who is signed in, where, and the way out. */
function Who({ org }: { org: string }) {
  const session = useSession();
  const navigate = useNavigate();
  return (
    <div className="who">
      <span>
        {session?.name && (
          <>
            <strong>{session.name}</strong> in{' '}
          </>
        )}
        Organization <strong>{org}</strong>
      </span>
      <button
        type="button"
        onClick={() => {
          signOut();
          void navigate('/sign-in', { replace: true });
        }}
      >
        Sign out
      </button>
    </div>
  );
}

export function NotFoundPage() {
  const session = useSession();
  return (
    <>
      <title>Page not found · Verity</title>
      <h1>Page not found</h1>
      <p>No console page lives at this address.</p>
      {session && <Link to={`/${encodeURIComponent(session.org)}/environments`}>Go to environments</Link>}
    </>
  );
}
