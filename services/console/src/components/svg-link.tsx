/**
 * A link inside an SVG picture (a timeline bar): keyboard-reachable, named by its label, and
 * followed by the router so the page does not reload (a modified click opens a new tab).
 */
import type { ReactNode } from 'react';
import { useNavigate } from 'react-router';

export function SvgLink({
  to,
  label,
  current,
  children,
}: {
  to: string;
  label: string;
  current?: boolean;
  children: ReactNode;
}) {
  const navigate = useNavigate();
  return (
    <a
      href={to}
      aria-label={label}
      aria-current={current ? 'page' : undefined}
      onClick={(e) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey) {
          return;
        }
        e.preventDefault();
        void navigate(to);
      }}
    >
      <title>{label}</title>
      {children}
    </a>
  );
}
