import { asc, desc, type AnyColumn, type SQL } from 'drizzle-orm';
import { invalid } from './errors';

/** Lists page from 0 (the specification's rule); widget data is the one exception and pages from 1. */
export const MAX_PAGE_SIZE = 1000;
export const DEFAULT_PAGE_SIZE = 20;

export interface SortRequest {
  field: string;
  direction: 'asc' | 'desc';
}
export interface PageRequest {
  page: number;
  size: number;
  sort?: SortRequest;
}

export function pageOf<T>(content: T[], req: { page: number; size: number }, total: number) {
  return {
    content,
    page: { size: req.size, number: req.page, total_elements: total, total_pages: Math.ceil(total / req.size) },
  };
}

/**
 * ORDER BY for a whitelisted sort, always ending with a unique tie-breaker so that pages do not overlap or skip rows.
 */
export function orderByOf(
  sort: SortRequest | undefined,
  columns: Record<string, AnyColumn | SQL>,
  fallback: SQL[],
  tieBreaker: AnyColumn,
): SQL[] {
  if (!sort) return [...fallback, asc(tieBreaker)];
  const column = columns[sort.field];
  if (!column) throw invalid({ sort: `must name one of the fields: ${Object.keys(columns).join(', ')}` });
  return [sort.direction === 'desc' ? desc(column) : asc(column), asc(tieBreaker)];
}

/** ILIKE pattern for "contains": the user's %, _ and \ are matched literally, not as wildcards. */
export const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
