/** The tabs of the organization's settings. */
import { NavLink } from 'react-router';

export function SettingsNav({ org }: { org: string }) {
  const base = `/${encodeURIComponent(org)}`;
  return (
    <nav aria-label="Settings" className="tabs">
      <ul>
        <li>
          <NavLink to={`${base}/settings/members`}>Members</NavLink>
        </li>
        <li>
          <NavLink to={`${base}/settings/service-accounts`}>Service accounts</NavLink>
        </li>
        <li>
          <NavLink to={`${base}/settings/retention`}>Retention</NavLink>
        </li>
        <li>
          <NavLink to={`${base}/audit-log`}>Audit log</NavLink>
        </li>
      </ul>
    </nav>
  );
}
