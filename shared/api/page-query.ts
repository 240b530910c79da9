/**
 * The query of every list endpoint (`?limit=&page_token=`, paging.ts says what they mean),
 * declared once for validation and the OpenAPI document.
 */
import { z } from 'zod';
import { MAX_PAGE_SIZE } from './paging.ts';

export const PageQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .optional()
    .describe(`Items per page, 1 to ${MAX_PAGE_SIZE} (default ${MAX_PAGE_SIZE}).`),
  page_token: z.string().max(1024).optional().describe('The X-Next-Page-Token header of the previous page.'),
});
export type PageQuery = z.infer<typeof PageQuery>;
