/** The frame of every signed-in page: skip link, header navigation, search, sign-out, main. */
import { useEffect, useRef, type FormEvent } from 'react';
import { Link, NavLink, Outlet, useLocation, useNavigate, useParams } from 'react-router';
import { signOut, useSession } from '../lib/session';
import { formText } from '../lib/form';
import { setTheme, setZone, usePreferences, type ThemeChoice } from '../lib/preferences';

const browserZone = new Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'local time';

/** The zone every time is shown in, and the colour theme: both remembered in this browser. */
function DisplayChoices() {
  const { zone, theme } = usePreferences();
  return (
    <div className="choices">
      <label htmlFor="choice-zone">Times in</label>
      <select
        id="choice-zone"
        value={zone}
        onChange={(e) => setZone(e.target.value === 'utc' ? 'utc' : 'local')}
      >
        <option value="local">{`browser zone (${browserZone})`}</option>
        <option value="utc">UTC</option>
      </select>
      <label htmlFor="choice-theme">Theme</label>
      <select id="choice-theme" value={theme} onChange={(e) => setTheme(e.target.value as ThemeChoice)}>
        <option value="system">as the system</option>
        <option value="light">light</option>
        <option value="dark">dark</option>
      </select>
    </div>
  );
}

/** The header's one search box: names, fingerprints and commits. */
function TopSearch({ org }: { org: string }) {
  const navigate = useNavigate();
  const onSearch = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const q = formText(new FormData(e.currentTarget), 'q');
    if (q) {
      void navigate(`/${encodeURIComponent(org)}/search?q=${encodeURIComponent(q)}`);
    }
  };
  return (
    <form role="search" onSubmit={onSearch} className="top-search">
      <label htmlFor="top-search-q" className="visually-hidden">
        Search by name, fingerprint or commit
      </label>
      <input
        id="top-search-q"
        name="q"
        type="search"
        placeholder="Name, fingerprint or commit"
        autoComplete="off"
      />
      <button type="submit">Search</button>
    </form>
  );
}

export function Layout() {
  const session = useSession();
  const params = useParams();
  const org = params.org ?? session?.org ?? '';
  const location = useLocation();
  const main = useRef<HTMLElement>(null);
  const { zone } = usePreferences();

  // After navigating, put focus at the top of the new page so keyboard and screen reader users start there.
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    main.current?.focus();
  }, [location.pathname]);

  const base = `/${encodeURIComponent(org)}`;
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="top">
        <Link to={base} className="brand">
          Verity
        </Link>
        <nav aria-label="Main">
          <ul>
            <li>
              <NavLink to={base} end>
                Home
              </NavLink>
            </li>
            <li>
              <NavLink to={`${base}/deployments`}>Deployments</NavLink>
            </li>
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
              <NavLink to={`${base}/policies`}>Policies</NavLink>
            </li>
            <li>
              <NavLink to={`${base}/actions`}>Actions</NavLink>
            </li>
            <li>
              <NavLink to={`${base}/settings/members`}>Settings</NavLink>
            </li>
          </ul>
        </nav>
        {/* the search page has its own box: one search box on a page */}
        {!location.pathname.endsWith('/search') && <TopSearch org={org} />}
        <DisplayChoices />
        <Who org={org} />
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        {/* a new zone redraws every time of the page */}
        <Outlet key={zone} />
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
      {session && <Link to={`/${encodeURIComponent(session.org)}`}>Go to the home page</Link>}
    </>
  );
}
