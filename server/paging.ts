import { asc, desc, type AnyColumn, type SQL } from 'drizzle-orm';
import { z } from 'zod';
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

/** `sort` is `<field>,<asc|desc>`; the direction defaults to asc. */
export const sortParam = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*(,(asc|desc|ASC|DESC))?$/, { error: 'must have the form <field>,<asc or desc>' })
  .transform((s): SortRequest => {
    const [field, dir] = s.split(',');
    return { field, direction: dir?.toLowerCase() === 'desc' ? 'desc' : 'asc' };
  });

/** Query parameters shared by every paged list. */
export const pagedQuery = {
  page: z.number().int().min(0).default(0),
  size: z.number().int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
  sort: sortParam.optional(),
};

export const pageInfoSchema = z.object({
  size: z.number().int(),
  number: z.number().int(),
  total_elements: z.number().int(),
  total_pages: z.number().int(),
});

export const pageSchema = <T extends z.ZodType>(item: T) => z.object({ content: z.array(item), page: pageInfoSchema });

export function pageOf<T>(content: T[], req: { page: number; size: number }, total: number) {
  return {
    content,
    page: { size: req.size, number: req.page, total_elements: total, total_pages: Math.ceil(total / req.size) },
  };
}

/**
 * `sort` restricted to the fields a list can order by: an unknown field is a 422 on `sort` at parse time, so a list
 * never silently falls back to another order (and the whitelist is the only way a name reaches ORDER BY).
 */
export const sortParamOver = (fields: readonly [string, ...string[]]) =>
  sortParam
    .refine((s) => fields.includes(s.field), { error: `must name one of the fields: ${fields.join(', ')}` })
    .describe(`<field>,<asc or desc>; field is one of: ${fields.join(', ')}`);

/** `pagedQuery` whose `sort` accepts only the given fields. */
export const pagedQueryOver = (fields: readonly [string, ...string[]]) => ({ ...pagedQuery, sort: sortParamOver(fields).optional() });

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
