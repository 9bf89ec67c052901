/**
 * The box a table scrolls sideways in when it is wider than the page (phones): the table keeps its
 * table semantics, and the page itself never scrolls sideways. While the table overflows, the box
 * can take keyboard focus (so it scrolls with the arrow keys) and is named after the table's caption.
 */
import { useLayoutEffect, useRef, useState, type ReactNode } from 'react';

export function TableBox({ children }: { children: ReactNode }) {
  const box = useRef<HTMLDivElement>(null);
  const [name, setName] = useState<string | null>(null);
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) {
      return undefined;
    }
    const measure = () => {
      const overflows = el.scrollWidth > el.clientWidth + 1;
      const caption = el.querySelector('caption')?.textContent?.trim() || 'Table';
      setName(overflows ? `${caption} (scrolls sideways)` : null);
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    const table = el.querySelector('table');
    if (table) {
      observer.observe(table);
    }
    return () => observer.disconnect();
  }, []);
  return name === null ? (
    <div ref={box} className="table-box">
      {children}
    </div>
  ) : (
    <div ref={box} className="table-box" role="group" aria-label={name} tabIndex={0}>
      {children}
    </div>
  );
}
