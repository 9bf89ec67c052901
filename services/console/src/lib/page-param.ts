/** A page number kept in the address (`?name=`), 1 when absent or not a positive number. */
import { useSearchParams } from 'react-router';

export function usePageParam(name: string): [number, (page: number) => void] {
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get(name) ?? '1') || 1);
  const setPage = (next: number) => {
    const changed = new URLSearchParams(params);
    changed.set(name, String(next));
    setParams(changed);
  };
  return [page, setPage];
}
