/** A labelled form field: its label, then the input (and anything said about it). */
import type { ReactNode } from 'react';

export function Field({
  id,
  label,
  wide,
  children,
}: {
  id: string;
  label: string;
  wide?: boolean;
  children: ReactNode;
}) {
  return (
    <div className={wide ? 'field field-wide' : 'field'}>
      <label htmlFor={id}>{label}</label>
      {children}
    </div>
  );
}
