/** Response envelopes and the page object (spec 2.1, 4.3 common rule 2). */
import { z } from 'zod';
import { Count, PageNumber } from './common.ts';

/** Successful responses: `success: true` and `data`. */
export function envelope<T extends z.ZodType>(data: T) {
  return z.looseObject({ success: z.literal(true).optional(), message: z.string().optional(), data });
}

/**
 * Page object: `current_page`, `data`, `total`, `per_page`, `last_page`.
 * Items are kept as `unknown` here and validated one by one by the client, so one bad record is
 * quarantined without losing the other records of its page.
 */
export const PageObject = z.looseObject({
  current_page: PageNumber,
  data: z.array(z.unknown()),
  total: Count,
  per_page: PageNumber,
  last_page: Count,
});
export type PageObject = z.infer<typeof PageObject>;

/**
 * Failure bodies: legacy failures carry `success: false` and `message`; a 404 from the platform
 * task list carries only `message`; 401/403/422 bodies are "not shown", so everything is optional.
 */
export const ErrorBody = z.looseObject({
  success: z.boolean().optional(),
  message: z.string().optional(),
  errors: z.unknown().optional(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

/** Write endpoints that answer with a message only (logout, legacy edit). */
export const MessageOnly = z.looseObject({ success: z.boolean().optional(), message: z.string().optional() });
export type MessageOnly = z.infer<typeof MessageOnly>;
