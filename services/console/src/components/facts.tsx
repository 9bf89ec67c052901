/** One term of a page's facts (`<dl className="facts">`) and what it says. */
import type { ReactNode } from 'react';

export function Fact({ term, children }: { term: string; children: ReactNode }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd>{children}</dd>
    </div>
  );
}
