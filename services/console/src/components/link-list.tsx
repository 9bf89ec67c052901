/** Names as links, separated by commas. */
import { Link } from 'react-router';

export function LinkList({ names, to }: { names: string[]; to: (name: string) => string }) {
  return (
    <>
      {names.map((name, i) => (
        <span key={name}>
          {i > 0 && ', '}
          <Link to={to(name)}>{name}</Link>
        </span>
      ))}
    </>
  );
}
