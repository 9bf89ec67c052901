/** Page-number paging of listings: the rows a page reads and the pagination object it shows. */

/** Page-number paging: `page` (1-based) and `per_page`. */
export function paging(page: number, perPage: number) {
  return { limit: perPage, offset: (page - 1) * perPage };
}

/** The pagination object of a page. */
export function pagination(total: number, page: number, perPage: number) {
  return { total, page, per_page: perPage, page_count: Math.ceil(total / perPage) };
}

/** The page and sort order of a sorted listing's query, as its use case takes them. */
export function sortedPage(q: { page: number; per_page: number; sort_direction: 'asc' | 'desc' }) {
  return { page: q.page, perPage: q.per_page, direction: q.sort_direction };
}
