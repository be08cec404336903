/**
 * Errors of the process as a whole, in a leaf module below every layer that throws them: the
 * wiring (app.ts), the commands and the distributed queue alike.
 */

/** Bad command-line or configuration input: one line naming the field and the fix; exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}
