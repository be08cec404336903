/**
 * Account finance (spec 2.10, 4.5): one deduction per platform task per day of history that
 * references one of that day's executions (the deduction `project_id` is a prompt_task_id),
 * plus two top-ups. Amounts are kept in integer cents so before/after chain exactly; the wire
 * carries yuan with at most 2 decimals. A few hundred records per week of history: built per
 * history window and cached.
 */
import type { z } from 'zod';
import type { Balance, Deduction } from '../api/schemas/account.ts';
import type { Catalog } from './catalog.ts';
import type { ExecutionModel } from './executions.ts';
import { encodePromptTaskId } from './ids.ts';
import { hash32, tag } from './rng.ts';
import { wallTime } from './time.ts';

export type DeductionWire = z.input<typeof Deduction>;
export type BalanceWire = z.input<typeof Balance>;

interface Ledger {
  key: string;
  /** Chronological (oldest first). */
  records: DeductionWire[];
  balanceCents: number;
}

export class Finance {
  private cached: Ledger | null = null;

  constructor(
    private readonly seed: number,
    private readonly catalog: Catalog,
    private readonly model: ExecutionModel,
  ) {}

  /** Ledger over history days [first, last] (day numbers). */
  ledger(first: number, last: number): Ledger {
    const key = `${first}:${last}`;
    if (this.cached?.key === key) return this.cached;
    const userId = this.catalog.user.id;
    const perDay: { day: number; slot: number; ptid: number; cents: number; remark: string }[][] = [];
    let totalCost = 0;
    for (let day = first; day <= last; day++) {
      const plan = this.model.plan(day);
      const list: (typeof perDay)[number] = [];
      this.catalog.executing.forEach((pt, i) => {
        const count = plan[i] ?? 0;
        if (count === 0) return;
        const h = hash32(this.seed, tag('deduction'), pt.ordinal, day);
        const centsPerRun = 2 + (h % 9); // 0.02-0.10 yuan per execution
        const cents = count * centsPerRun;
        totalCost += cents;
        list.push({
          day,
          slot: i + 1,
          ptid: encodePromptTaskId(pt.ordinal, day, (h >>> 8) % count),
          cents,
          remark: `GEO监测扣费：${pt.mt.project_name}-${pt.platform.model_name}，${count}次执行`,
        });
      });
      perDay.push(list);
    }
    const opening = 500_000 + (hash32(this.seed, tag('opening')) % 1_500_000);
    const topUp1 = Math.ceil(totalCost / 2 / 100) * 100 + 100_000;
    const topUp2 = Math.ceil(totalCost / 2 / 100) * 100 + 50_000;
    const mid = first + Math.floor((last - first + 1) / 2);

    const records: DeductionWire[] = [];
    let amount = opening;
    const push = (id: number, ptid: number, diff: number, at: string, remark: string) => {
      records.push({
        id,
        user_id: userId,
        project_id: ptid,
        diff_amount: diff / 100,
        before_amount: amount / 100,
        after_amount: (amount + diff) / 100,
        remark,
        created_at: at,
      });
      amount += diff;
    };
    // IDs from (day, slot): stable while the history window moves.
    for (const list of perDay) {
      const day = list[0]?.day;
      if (day === undefined) continue;
      if (day === first) push(day * 1000, 0, topUp1, wallTime(day, 8 * 3600), '账户充值（对公转账）');
      if (day === mid && mid !== first)
        push(day * 1000, 0, topUp2, wallTime(day, 8 * 3600), '账户充值（在线支付）');
      for (const d of list)
        push(day * 1000 + d.slot, d.ptid, -d.cents, wallTime(day, 22 * 3600 + d.slot * 37), d.remark);
    }
    this.cached = { key, records, balanceCents: amount };
    return this.cached;
  }
}
