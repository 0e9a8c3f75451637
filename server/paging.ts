import { z } from 'zod';

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
