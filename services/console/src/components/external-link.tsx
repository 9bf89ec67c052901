/** A link out of the console, followed only when it is http(s); otherwise its words alone. */
import type { ReactNode } from 'react';
import { safeHref } from '../lib/format';

export function ExternalLink({
  href,
  children,
  otherwise,
}: {
  href: string | null | undefined;
  children: ReactNode;
  /** What shows when the address is not followed (default: the words in a span). */
  otherwise?: ReactNode;
}) {
  const safe = safeHref(href);
  if (safe) {
    return (
      <a href={safe} rel="noreferrer noopener" target="_blank">
        {children}
      </a>
    );
  }
  return otherwise === undefined ? <span>{children}</span> : <>{otherwise}</>;
}
