/** Account resources (spec 2.10, 4.1): user, login, balance, deduction record. */
import { z } from 'zod';
import { DateTimeText, Decimal, Id } from './common.ts';

export const User = z.looseObject({
  id: Id,
  name: z.string(),
  email: z.string(),
  uuid: z.string(),
  last_login_time: DateTimeText,
  amount: Decimal,
  block_reason: z.string().nullable(),
  created_at: DateTimeText,
});
export type User = z.infer<typeof User>;

export const LoginData = z.looseObject({
  token: z.string().min(1),
  token_type: z.string(),
  user: z.looseObject({ id: Id, name: z.string(), email: z.string() }),
});
export type LoginData = z.infer<typeof LoginData>;

export const Balance = z.looseObject({
  amount: Decimal,
  user_id: Id,
  user_name: z.string(),
});
export type Balance = z.infer<typeof Balance>;

/** Deduction record: its `project_id` is a prompt execution ID (`prompt_task_id`), spec 1. */
export const Deduction = z.looseObject({
  id: Id,
  user_id: Id,
  project_id: Id,
  diff_amount: Decimal,
  before_amount: Decimal,
  after_amount: Decimal,
  remark: z.string(),
  created_at: DateTimeText,
});
export type Deduction = z.infer<typeof Deduction>;
