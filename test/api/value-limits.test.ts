/**
 * What a schema accepts, both warehouses store exactly (api/schemas/common.ts): integers within
 * their column, days and instants of the years 0001-9999, money NUMERIC(18,4) holds as sent, JSON
 * without a number JSON cannot spell, keys a btree holds. Past a limit the value fails its record
 * with a reason that names the field and the value; a record that is read alone (a diagnosis, the
 * balance) is quarantined like a list item, and the run goes on.
 */
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { RejectedRecord } from '../../src/api/decode.ts';
import { Balance, Deduction } from '../../src/api/schemas/account.ts';
import {
  Count,
  DateTimeText,
  Decimal,
  Id,
  Int32,
  isCalendarDay,
  MAX_KEY_TEXT_BYTES,
  Ymd,
} from '../../src/api/schemas/common.ts';
import { SiteDiagnosis } from '../../src/api/schemas/diagnosis.ts';
import { PageObject } from '../../src/api/schemas/envelope.ts';
import { ProductCard, PromptExecution } from '../../src/api/schemas/hierarchical.ts';
import { apiPortFromClient } from '../../src/extract/client-port.ts';
import { silentLogger } from '../../src/log.ts';
import { syncDiagnoses, syncFinance } from '../../src/sync/account-data.ts';
import type { RunContext } from '../../src/sync/context.ts';
import { apiTimestampToIso } from '../../src/time.ts';
import { toDeductionRow } from '../../src/transform/account.ts';
import { ok, pageBody, route, setup } from './helpers.ts';

/** The reason a schema gives for `v` (`path: message`), or null when it accepts it. */
function reason(schema: z.ZodType, v: unknown): string | null {
  const r = schema.safeParse(v);
  if (r.success) return null;
  const issue = r.error.issues[0]!;
  return `${issue.path.join('.')}: ${issue.message}`;
}

describe('integers: IDs are BIGINT within 2^53-1; statuses, hours and counts are INTEGER', () => {
  it.each<[z.ZodType, unknown, string | null]>([
    [Id, 0, null],
    [Id, -0, null],
    [Id, 2 ** 53 - 1, null],
    [
      Id,
      2 ** 53,
      ': 9007199254740992 is not an ID: expected an integer from 0 to 2^53-1 (larger ones lose digits in JSON)',
    ],
    [Id, -1, ': -1 is not an ID: expected an integer from 0 to 2^53-1 (larger ones lose digits in JSON)'],
    [Id, 1.5, ': 1.5 is not an integer'],
    [Int32, 2 ** 31 - 1, null],
    [Int32, -(2 ** 31), null],
    [Int32, -0, null],
    [Int32, 2 ** 31, ': 2147483648 is beyond INTEGER (-2147483648 to 2147483647)'],
    [Int32, -(2 ** 31) - 1, ': -2147483649 is beyond INTEGER (-2147483648 to 2147483647)'],
    [Int32, 2 ** 53, ': 9007199254740992 is beyond INTEGER (-2147483648 to 2147483647)'],
    [Count, 2 ** 31, ': 2147483648 is not a count from 0 to 2147483647'],
  ])('%#: %j', (schema, v, want) => {
    expect(reason(schema, v)).toBe(want);
  });

  it('a JSON number too large for a double (1e400, read as Infinity) is no integer', () => {
    expect(Int32.safeParse(JSON.parse('1e400')).success).toBe(false);
    expect(Id.safeParse(JSON.parse('-1e400')).success).toBe(false);
  });

  it('an execution with hours past INTEGER names the field and the value', () => {
    const item = { ...execution(1), hours: 2 ** 31 };
    expect(reason(PromptExecution, item)).toBe(
      'hours: 2147483648 is beyond INTEGER (-2147483648 to 2147483647)',
    );
  });

  it('page numbers and totals are INTEGER: a page object past it is malformed', () => {
    const page = { current_page: 1, data: [], total: 2 ** 31, per_page: 100, last_page: 1 };
    expect(reason(PageObject, page)).toBe('total: 2147483648 is not a count from 0 to 2147483647');
  });
});

describe('days: YYYY-MM-DD of the proleptic Gregorian calendar, years 0001-9999', () => {
  it.each([
    ['2024-02-29', true],
    ['2023-02-29', false],
    ['2000-02-29', true],
    ['1900-02-29', false],
    ['0004-02-29', true],
    ['0048-02-29', true],
    ['0050-02-29', false],
    ['0001-01-01', true],
    ['0000-01-01', false], // PostgreSQL has no year 0
    ['0000-02-29', false],
    ['9999-12-31', true],
    ['2026-13-01', false],
    ['2026-04-31', false],
    ['2026-1-01', false],
  ])('%s -> %s', (day, valid) => {
    expect(isCalendarDay(day)).toBe(valid);
    expect(Ymd.safeParse(day).success).toBe(valid);
  });

  it('the reason names the day', () => {
    expect(reason(Ymd, '2023-02-29')).toBe(': not a calendar day of the years 0001-9999: "2023-02-29"');
  });
});

describe('instants: years 0001-9999 in Asia/Shanghai, where both warehouses read them back as written', () => {
  it.each([
    ['0001-01-01 00:00:00', '0001-01-01T00:00:00+08:00'],
    ['0001-01-01T00:00:00Z', '0001-01-01T08:00:00+08:00'],
    ['9999-12-31 23:59:59.999999', '9999-12-31T23:59:59.999999+08:00'],
    ['9999-12-31T15:59:59Z', '9999-12-31T23:59:59+08:00'],
    ['0099-12-31 23:59:59', '0099-12-31T23:59:59+08:00'],
    ['2024-02-29 12:00:00', '2024-02-29T12:00:00+08:00'],
  ])('%s -> %s', (text, iso) => {
    expect(apiTimestampToIso(text)).toBe(iso);
    expect(DateTimeText.safeParse(text).success).toBe(true);
  });

  it.each([
    [
      '9999-12-31T23:00:00-05:00',
      'is in the year 10000 in Asia/Shanghai, outside the years 0001-9999 both warehouses store',
    ],
    ['9999-12-31T16:00:00Z', 'is in the year 10000 in Asia/Shanghai'],
    ['0001-01-01T00:00:00+14:00', 'is in the year 0 in Asia/Shanghai'],
    ['0000-06-01 00:00:00', 'is in the year 0 in Asia/Shanghai'],
    ['2023-02-29 00:00:00', 'expected YYYY-MM-DD HH:MM:SS'],
  ])('%s is refused: %s', (text, why) => {
    expect(apiTimestampToIso(text)).toBeNull();
    expect(reason(DateTimeText, text)).toContain(why);
    expect(reason(DateTimeText, text)).toContain(JSON.stringify(text));
  });
});

describe('money: exactly what NUMERIC(18,4) holds, as sent', () => {
  it.each<[unknown, string]>([
    ['12.50', '12.50'],
    ['-0', '-0'],
    [-0, '0'],
    ['99999999999999.9999', '99999999999999.9999'],
    ['-99999999999999.9999', '-99999999999999.9999'],
    ['00000000000000000001.1000000', '00000000000000000001.1000000'],
    [0.1, '0.1'],
    [12.5, '12.5'],
    [12345678901234.5, '12345678901234.5'],
    [-0.0001, '-0.0001'],
  ])('%j -> %j', (v, text) => {
    expect(Decimal.parse(v)).toBe(text);
  });

  it.each<[unknown, string]>([
    ['100000000000000', 'is beyond NUMERIC(18,4): at most 14 digits before the decimal point'],
    [1e14, 'is beyond NUMERIC(18,4)'],
    [1e21, 'is beyond NUMERIC(18,4)'],
    ['1.23456', 'has more than 4 decimal places: NUMERIC(18,4) would round it'],
    [1e-7, 'has more than 4 decimal places'],
    [0.30000000000000004, 'has more than 4 decimal places'],
    [1234567890123.456, 'more significant digits than a JSON number carries exactly (15)'],
    ['1e3', 'expected a decimal number'],
    ['+1', 'expected a decimal number'],
    ['.5', 'expected a decimal number'],
    ['１２', 'expected a decimal number'],
  ])('%j is refused: %s', (v, why) => {
    expect(reason(Decimal, v)).toContain(why);
  });

  it('a deduction whose amount would be rounded is refused with the field', () => {
    const d = {
      id: 1,
      user_id: 2,
      project_id: 3,
      diff_amount: '-0.12345',
      before_amount: '10',
      after_amount: '9.87655',
      remark: 'r',
      created_at: '2026-01-01 00:00:00',
    };
    expect(reason(Deduction, d)).toBe(
      'diff_amount: "-0.12345" has more than 4 decimal places: NUMERIC(18,4) would round it',
    );
    expect(
      toDeductionRow(Deduction.parse({ ...d, diff_amount: '-0.1234', after_amount: '9.8766' })),
    ).toMatchObject({
      diff_amount: '-0.1234',
      after_amount: '9.8766',
    });
  });
});

describe('JSON stored whole: any JSON but a number read as Infinity', () => {
  it('a product card with 1e400 anywhere is refused at that member', () => {
    const card = JSON.parse('{"title":"x","specs":[1,{"weight":1e400}]}') as unknown;
    expect(reason(ProductCard, card)).toMatch(/^specs\.1\.weight: a number too large for a double/);
    expect(ProductCard.safeParse({ title: 'x', n: 1e308, m: -0, deep: [[[5e-324]]] }).success).toBe(true);
  });

  it('a diagnosis report member or error with one is refused; a score too large reads as unknown', () => {
    const base = { status: 'completed', diagnosis_id: 9, result_ready: true };
    const report = JSON.parse('{"result_json":{"a":[-1e999]}}') as unknown;
    expect(reason(SiteDiagnosis, { ...base, result: report })).toMatch(
      /^result\.result_json\.a\.0: a number too large/,
    );
    expect(reason(SiteDiagnosis, { ...base, error: JSON.parse('{"code":1e400}') })).toMatch(/^error\.code: /);
    const d = SiteDiagnosis.parse({
      ...base,
      progress_percent: '9'.repeat(400),
      result: { composite_score: 85 },
    });
    expect(d.progress_percent).toBeNull();
    expect(d.result?.composite_score).toBe(85);
  });
});

describe('text keys: site_diagnoses.diagnosis_id fits a btree entry', () => {
  it(`up to ${MAX_KEY_TEXT_BYTES} bytes of UTF-8 is a key; longer fails the diagnosis with its size`, () => {
    const base = { status: 'completed' };
    expect(SiteDiagnosis.safeParse({ ...base, diagnosis_id: 'd'.repeat(MAX_KEY_TEXT_BYTES) }).success).toBe(
      true,
    );
    // 256 four-byte characters: 1,024 bytes. One more is past it.
    expect(SiteDiagnosis.safeParse({ ...base, diagnosis_id: '😀'.repeat(256) }).success).toBe(true);
    expect(reason(SiteDiagnosis, { ...base, diagnosis_id: '😀'.repeat(257) })).toMatch(
      /^diagnosis_id: a key of 1028 bytes .*longer than the 1024 bytes a key is stored with/,
    );
  });
});

describe('a record read alone that fails its schema is quarantined, and the run goes on', () => {
  function context(rejects: RejectedRecord[], stored: string[]) {
    const { pool, client } = setup();
    const ctx = {
      api: apiPortFromClient(client),
      logger: silentLogger,
      counters: { diagnosesNotStarted: 0 },
      now: () => new Date('2026-01-01T00:00:00Z'),
      runId: 'run',
      reject: (r: RejectedRecord) => rejects.push(r),
      wrote: () => undefined,
      addRows: (table: string, n: number) => stored.push(`${table}:${n}`),
      flushRejects: async () => undefined,
      // The run's write of a list of records (its isolation of a refused one is not exercised here).
      writeRecords: async <R>(rows: readonly R[], write: (rows: readonly R[]) => Promise<unknown>) => {
        if (rows.length) await write(rows);
        return rows.length;
      },
      warehouse: {
        upsertSiteDiagnoses: async () => ({ textValuesChanged: 0 }),
        insertBalanceSnapshot: async () => ({ textValuesChanged: 0 }),
        upsertDeductions: async () => ({ textValuesChanged: 0 }),
        latestDeductionDay: async () => null,
      },
    } as unknown as RunContext;
    return { pool, ctx };
  }

  it('a diagnosis whose key is too long; a balance NUMERIC(18,4) would round', async () => {
    const rejects: RejectedRecord[] = [];
    const stored: string[] = [];
    const { pool, ctx } = context(rejects, stored);
    route(pool, 'GET', '/api/v2/projects/1/site-diagnosis', () => ({
      body: ok({ status: 'completed', diagnosis_id: 'x'.repeat(3000) }),
    }));
    route(pool, 'GET', '/api/v2/projects/2/site-diagnosis', () => ({
      body: ok({ status: 'completed', diagnosis_id: 'ok' }),
    }));
    route(pool, 'GET', '/api/v2/finance/balance', () => ({
      body: ok({ amount: '1.00001', user_id: 1, user_name: 'u' }),
    }));
    route(pool, 'GET', '/api/v2/finance/deduction/details', () => ({
      body: pageBody([], { current_page: 1, last_page: 1 }),
    }));
    await syncDiagnoses(ctx, [1, 2]);
    await syncFinance(ctx);
    // The other diagnosis is stored; no balance snapshot.
    expect(stored).toEqual(['site_diagnoses:1']);
    expect(rejects.map((r) => [r.endpoint, r.reason.replace(/\(".*"\.\.\.\)/, '(...)')])).toEqual([
      [
        'GET /api/v2/projects/{project_id}/site-diagnosis',
        'invalid response (data.diagnosis_id: a key of 3000 bytes (...): longer than the 1024 bytes a key is stored with): GET /api/v2/projects/{project_id}/site-diagnosis (project_id=1)',
      ],
      [
        'GET /api/v2/finance/balance',
        'invalid response (data.amount: "1.00001" has more than 4 decimal places: NUMERIC(18,4) would round it): GET /api/v2/finance/balance',
      ],
    ]);
  });

  it('a balance within NUMERIC(18,4) is stored', () => {
    expect(Balance.parse({ amount: 12.34, user_id: 1, user_name: 'u' }).amount).toBe('12.34');
  });
});

function execution(prompt_task_id: number) {
  return {
    customer_id: 1,
    project_id: 2,
    task_id: 3,
    prompt_task_id,
    prompt_name: 'q',
    date_time: '2026-01-01',
    hours: 9,
    status: 2,
    model: 'm',
    engine: 'e',
    brand_exposure: '',
    screenshot_url: null,
  };
}
