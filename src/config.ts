/**
 * Configuration: one zod-validated object from a JSON file (`--config`, GEO_CONFIG) and
 * environment variables, the environment winning over the file and command-line flags winning
 * over both. Every problem is reported at once, one line each, naming the environment variable
 * and the file key, and what is expected. The documented example is config/geo-sync.example.json.
 */
import { constants } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { credentialProblem } from './api/header-value.ts';
import { ConfigSources, rememberSources } from './config-sources.ts';
import { warehouseTargetProblem } from './load/target.ts';
import { maskUrlPassword } from './redact.ts';

/**
 * The longest body that still converts to one string: V8's limit in UTF-16 units, which a UTF-8
 * body of that many bytes never exceeds.
 */
const MAX_STRING_BYTES = constants.MAX_STRING_LENGTH;

const positiveInt = (max: number) => z.number().int().min(1).max(max);
/** A size in DuckDB's syntax; nothing else can reach the SET statements it goes into. */
const duckdbSize = z
  .string()
  .trim()
  .regex(/^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i, 'expected a size such as 64MB or 1GB');

/** A cron expression of 5 or 6 fields (node-cron checks the details when scheduling). */
const CronExpr = z
  .string()
  .trim()
  .refine((s) => [5, 6].includes(s.split(/\s+/).length), 'expected a cron expression of 5 or 6 fields');

/**
 * A credential: never blank, and nothing an HTTP header or a login cannot carry (a key read from
 * a file saved with Windows line endings ends in CR). The message names the character, never
 * the value.
 */
const credential = (inHeader: boolean) =>
  z
    .string()
    .min(1)
    .superRefine((text, ctx) => {
      const problem = credentialProblem(text, inHeader);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });

export const ConfigSchema = z.strictObject({
  /** Base URL of the API, e.g. https://geo.example.com. Unset: `sync` refuses; `demo` uses its simulator. */
  baseUrl: z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' }).optional(),
  /** API key (Authorization: Bearer). Or email + password to log in. */
  apiKey: credential(true).optional(),
  email: credential(false).optional(),
  password: credential(false).optional(),
  /** `duckdb:<file path>` or a `postgres://` URL. @default duckdb:./data/geo-sync.duckdb */
  warehouse: z
    .string()
    .superRefine((text, ctx) => {
      // Parsed where it is used (load/target.ts): one parser, one message.
      const problem = warehouseTargetProblem(text);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .default('duckdb:./data/geo-sync.duckdb'),
  /**
   * PostgreSQL only: where the warehouse lock is held, when GEO_WAREHOUSE goes through a
   * connection pooler in transaction mode (PgBouncer, a hosted service's pooler): a `postgres://`
   * URL of the same database that reaches PostgreSQL directly (or through session pooling).
   * @default the warehouse URL
   */
  lockUrl: z
    .string()
    .superRefine((text, ctx) => {
      if (!/^postgres(ql)?:\/\//i.test(text.trim())) {
        ctx.addIssue({ code: 'custom', message: 'expected a postgres:// URL of the warehouse database' });
        return;
      }
      const problem = warehouseTargetProblem(text);
      if (problem)
        ctx.addIssue({
          code: 'custom',
          message: problem.replace('expected duckdb:<file path> or a postgres:// URL: ', ''),
        });
    })
    .optional(),
  /** DuckDB warehouses only: how the database engine may use the machine. */
  duckdb: z
    .strictObject({
      /** DuckDB's buffer pool (its own default is 80% of RAM); DuckDB's syntax, e.g. 1GB. @default "128MB" */
      memoryLimit: duckdbSize.default('128MB'),
      /** WAL size that triggers a checkpoint (DuckDB's own default is 16MB). @default "64MB" */
      checkpointThreshold: duckdbSize.default('64MB'),
      /** Where DuckDB spills when over the memory limit. @default "<database file>.tmp" */
      tempDirectory: z.string().min(1).optional(),
      /** Threads DuckDB may use. @default DuckDB's own (the machine's cores) */
      threads: positiveInt(1024).optional(),
    })
    .prefault({}),
  /** Page project IDs (`customer_id`) to sync; empty: everything the key can read. @default [] */
  customers: z.array(z.number().int().nonnegative()).default([]),
  /** Requests in flight at once. @default 8 */
  concurrency: positiveInt(256).default(8),
  /** Requests started per second, at most. @default 20 */
  requestsPerSecond: positiveInt(100_000).default(20),
  /** Per-request timeout (headers and body), ms. @default 30000 */
  timeoutMs: positiveInt(600_000).default(30_000),
  /**
   * The largest response body accepted, bytes: a larger one fails its request at once
   * (RESPONSE_TOO_LARGE, not retried) without being held in memory. At most 512 MiB, the longest
   * text Node can hold. @default 67108864 (64 MiB)
   */
  maxResponseBytes: z
    .number()
    .int()
    .min(1024)
    .max(MAX_STRING_BYTES)
    .default(64 * 1024 * 1024),
  /** Attempts per request, the first included (retry budget). @default 6 */
  maxAttempts: positiveInt(50).default(6),
  /** First backoff step, ms (exponential, full jitter). @default 250 */
  retryBaseDelayMs: positiveInt(60_000).default(250),
  /** Backoff cap, ms. @default 30000 */
  retryMaxDelayMs: positiveInt(600_000).default(30_000),
  /**
   * The longest `Retry-After` waited out, seconds: a 429 asking for more fails that request at
   * once (RATE_LIMITED, naming the wait), and the queue never pauses longer. @default 300
   */
  maxRetryAfterSeconds: positiveInt(86_400).default(300),
  /** Executions per warehouse transaction. @default 200 */
  batchSize: positiveInt(10_000).default(200),
  /**
   * The longest a transaction of fewer than `batchSize` executions waits for more, ms: each
   * transaction has a fixed cost, and a run whose API answers slowly would otherwise commit a
   * few executions at a time. 0 commits as soon as anything is read. @default 1000
   */
  writeLingerMs: z.number().int().min(0).max(60_000).default(1000),
  /** PostgreSQL: how long each try of a migration waits for the tables it alters (upgrades-and-backups.md). */
  migrateLockTimeoutMs: z.number().int().min(1).max(600_000).default(5000),
  /**
   * Change detection: an execution whose task/results item is unchanged since it was last read
   * (and whose children were read completely then) is not read again. Assumes children change
   * only together with their listed item; `geo-sync verify` checks it. @default true
   */
  changeDetection: z.boolean().default(true),
  /** Days before yesterday that every sync re-reads, to pick up answers saved late. @default 3 */
  lookbackDays: z.number().int().min(0).max(60).default(3),
  /** When `schedule` runs, in Asia/Shanghai time. @default "30 4 * * *" (04:30) */
  schedule: CronExpr.default('30 4 * * *'),
  /** @default "info" */
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * Distributed backfill: seconds after which a job a worker took and never finished (the worker
   * was killed) expires and is redone by another worker. Keep it well above the slowest healthy
   * unit: a unit still running when its job expires is read twice (harmless, but wasted).
   * @default 900
   */
  jobTimeoutSeconds: z.number().int().min(1).max(86_399).default(900),
  /**
   * Distributed backfill: days a queued job is kept before pg-boss may archive it unrun (its own
   * default is 14, shorter than a long backfill on a small fleet takes). @default 90
   */
  jobRetentionDays: z.number().int().min(1).max(3650).default(90),
  /** Distributed backfill: retries of a failed job before it is kept as failed. @default 3 */
  jobRetries: z.number().int().min(0).max(20).default(3),
  /** Distributed backfill: first retry delay, seconds (doubles each retry, with jitter). @default 10 */
  jobRetryDelaySeconds: z.number().int().min(0).max(3600).default(10),
  /** auto: pretty on a TTY, JSON otherwise. @default "auto" */
  logFormat: z.enum(['auto', 'json', 'pretty']).default('auto'),
  /** What each sync reads besides the daily hierarchy; each costs requests (see README). */
  enrich: z
    .strictObject({
      /** Legacy project detail per monitoring task: week_restart, only_rank, ... (1 request per monitoring task). */
      taskConfig: z.boolean().default(true),
      /** Legacy sources per execution: site_name, site_icon, published_at, task_ai_id (1+ request per execution). */
      legacySources: z.boolean().default(true),
      /** Legacy task detail per execution: created_at, updated_at (1 request per execution). */
      executionTimes: z.boolean().default(true),
      /** Latest site diagnosis per project, GET only (1 request per project). */
      diagnosis: z.boolean().default(true),
      /** Balance snapshot and deduction records (2+ requests per run). */
      finance: z.boolean().default(true),
      /** task/prompts as a cross-check of task/results before a unit deletes (1 request per unit where a deletion is at stake). */
      crossCheck: z.boolean().default(true),
    })
    .prefault({}),
});
export type Config = z.infer<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;

type Kind = 'string' | 'int' | 'intList' | 'bool';

/** Environment variable -> config key, and how its text is read. */
export const ENV_VARS: Record<string, { key: string; kind: Kind }> = {
  GEO_BASE_URL: { key: 'baseUrl', kind: 'string' },
  GEO_API_KEY: { key: 'apiKey', kind: 'string' },
  GEO_EMAIL: { key: 'email', kind: 'string' },
  GEO_PASSWORD: { key: 'password', kind: 'string' },
  GEO_WAREHOUSE: { key: 'warehouse', kind: 'string' },
  GEO_LOCK_URL: { key: 'lockUrl', kind: 'string' },
  GEO_CUSTOMERS: { key: 'customers', kind: 'intList' },
  GEO_CONCURRENCY: { key: 'concurrency', kind: 'int' },
  GEO_REQUESTS_PER_SECOND: { key: 'requestsPerSecond', kind: 'int' },
  GEO_TIMEOUT_MS: { key: 'timeoutMs', kind: 'int' },
  GEO_MAX_RESPONSE_BYTES: { key: 'maxResponseBytes', kind: 'int' },
  GEO_MAX_ATTEMPTS: { key: 'maxAttempts', kind: 'int' },
  GEO_RETRY_BASE_DELAY_MS: { key: 'retryBaseDelayMs', kind: 'int' },
  GEO_RETRY_MAX_DELAY_MS: { key: 'retryMaxDelayMs', kind: 'int' },
  GEO_MAX_RETRY_AFTER_SECONDS: { key: 'maxRetryAfterSeconds', kind: 'int' },
  GEO_BATCH_SIZE: { key: 'batchSize', kind: 'int' },
  GEO_WRITE_LINGER_MS: { key: 'writeLingerMs', kind: 'int' },
  GEO_MIGRATE_LOCK_TIMEOUT_MS: { key: 'migrateLockTimeoutMs', kind: 'int' },
  GEO_LOOKBACK_DAYS: { key: 'lookbackDays', kind: 'int' },
  GEO_CHANGE_DETECTION: { key: 'changeDetection', kind: 'bool' },
  GEO_SCHEDULE: { key: 'schedule', kind: 'string' },
  GEO_JOB_TIMEOUT_SECONDS: { key: 'jobTimeoutSeconds', kind: 'int' },
  GEO_JOB_RETRIES: { key: 'jobRetries', kind: 'int' },
  GEO_JOB_RETENTION_DAYS: { key: 'jobRetentionDays', kind: 'int' },
  GEO_JOB_RETRY_DELAY_SECONDS: { key: 'jobRetryDelaySeconds', kind: 'int' },
  GEO_LOG_LEVEL: { key: 'logLevel', kind: 'string' },
  GEO_LOG_FORMAT: { key: 'logFormat', kind: 'string' },
  GEO_DUCKDB_MEMORY_LIMIT: { key: 'duckdb.memoryLimit', kind: 'string' },
  GEO_DUCKDB_CHECKPOINT_THRESHOLD: { key: 'duckdb.checkpointThreshold', kind: 'string' },
  GEO_DUCKDB_TEMP_DIR: { key: 'duckdb.tempDirectory', kind: 'string' },
  GEO_DUCKDB_THREADS: { key: 'duckdb.threads', kind: 'int' },
  GEO_ENRICH_TASK_CONFIG: { key: 'enrich.taskConfig', kind: 'bool' },
  GEO_ENRICH_LEGACY_SOURCES: { key: 'enrich.legacySources', kind: 'bool' },
  GEO_ENRICH_EXECUTION_TIMES: { key: 'enrich.executionTimes', kind: 'bool' },
  GEO_ENRICH_DIAGNOSIS: { key: 'enrich.diagnosis', kind: 'bool' },
  GEO_ENRICH_FINANCE: { key: 'enrich.finance', kind: 'bool' },
  GEO_ENRICH_CROSS_CHECK: { key: 'enrich.crossCheck', kind: 'bool' },
};

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** The keys whose values are secrets: never logged, never stored. */
export const SECRET_KEYS = ['apiKey', 'password'] as const;

function readEnvValue(env: string, kind: Kind, text: string, problems: string[]): unknown {
  const t = text.trim();
  switch (kind) {
    case 'string':
      return text;
    case 'int':
      if (!/^-?\d+$/.test(t)) {
        problems.push(`${env}: expected an integer, got ${JSON.stringify(text)}`);
        return undefined;
      }
      return Number(t);
    case 'intList': {
      // Set but blank: as if unset (every readable project). A list of separators only is a
      // mistake (an empty variable spliced into "A,$B"), not "every project".
      if (t === '') return [];
      const parts = t.split(/[\s,]+/).filter(Boolean);
      if (parts.length === 0) {
        problems.push(
          `${env}: expected comma-separated page project IDs (integers), got only separators ${JSON.stringify(text)}`,
        );
        return undefined;
      }
      const bad = parts.filter((p) => !/^\d+$/.test(p));
      if (bad.length) {
        problems.push(
          `${env}: expected comma-separated page project IDs (integers), got ${JSON.stringify(text)}`,
        );
        return undefined;
      }
      return parts.map(Number);
    }
    case 'bool':
      if (/^(1|true|yes|on)$/i.test(t)) return true;
      if (/^(0|false|no|off)$/i.test(t)) return false;
      problems.push(`${env}: expected true or false, got ${JSON.stringify(text)}`);
      return undefined;
  }
}

function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let cur = obj;
  for (const p of parts.slice(0, -1)) {
    if (typeof cur[p] !== 'object' || cur[p] === null) cur[p] = {};
    cur = cur[p] as Record<string, unknown>;
  }
  cur[parts[parts.length - 1]!] = value;
}

export interface LoadConfigOptions {
  env?: NodeJS.ProcessEnv;
  /** A JSON config file (the `--config` flag); default GEO_CONFIG. */
  file?: string | undefined;
  /** Command-line values, already typed (they win over everything). */
  overrides?: Partial<Record<string, unknown>>;
  /** The flag that gave each override (`concurrency` -> `--concurrency`), for naming it. */
  overrideFlags?: Readonly<Record<string, string>>;
}

/** The config file's object, or undefined (its problem pushed). */
function readConfigFile(file: string, problems: string[]): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      const input = parsed as Record<string, unknown>;
      delete input.$comment;
      return input;
    }
    problems.push(`config file ${file}: expected a JSON object`);
  } catch (e) {
    problems.push(
      `config file ${file}: ${(e as Error).message} (fix the file or the GEO_CONFIG / --config path)`,
    );
  }
  return undefined;
}

/** Loads, merges and validates; throws ConfigError listing every problem. */
export function loadConfig(opts: LoadConfigOptions = {}): Config {
  const env = opts.env ?? process.env;
  const problems: string[] = [];
  let input: Record<string, unknown> = {};
  // Where each value came from, so a problem names what the user set (a flag wins over GEO_*,
  // which wins over the file).
  const sources = new ConfigSources();

  const file = opts.file ?? env.GEO_CONFIG;
  const fileWhere = opts.file ? `--config ${opts.file}` : `GEO_CONFIG file ${file}`;
  if (file) {
    input = readConfigFile(file, problems) ?? {};
    sources.setFile(input, fileWhere);
  }
  for (const [name, { key, kind }] of Object.entries(ENV_VARS)) {
    const text = env[name];
    if (text === undefined || text === '') continue;
    const value = readEnvValue(name, kind, text, problems);
    if (value === undefined) continue;
    setPath(input, key, value);
    sources.set(key, `${name} (${key})`);
  }
  for (const [key, value] of Object.entries(opts.overrides ?? {})) {
    if (value === undefined) continue;
    setPath(input, key, value);
    const flag = opts.overrideFlags?.[key];
    sources.set(key, flag ? `${flag} (${key})` : `${key} (as given on the command line or in overrides)`);
  }

  const result = ConfigSchema.safeParse(input);
  if (!result.success) {
    for (const issue of result.error.issues) {
      const key = issue.path.join('.');
      const where = key ? (sources.of(key) ?? key) : file ? fileWhere : 'config';
      // Never echo a secret's value back: no message of the schema quotes the value.
      problems.push(`${where}: ${issue.message}`);
    }
  }
  if (problems.length) throw new ConfigError(problems);
  const config = result.data!;
  // The other half named where it was set: GEO_EMAIL, or the file's key or the flag.
  const named = (key: string, env: string) => {
    const source = sources.of(key);
    return !source || source.startsWith(`${env} `) ? env : source;
  };
  if (config.email && !config.password)
    problems.push(`GEO_PASSWORD (password): required when ${named('email', 'GEO_EMAIL')} is set`);
  if (config.password && !config.email)
    problems.push(`GEO_EMAIL (email): required when ${named('password', 'GEO_PASSWORD')} is set`);
  if (config.lockUrl && !/^postgres(ql)?:\/\//i.test(config.warehouse.trim()))
    problems.push(
      `${sources.of('lockUrl') ?? 'GEO_LOCK_URL (lockUrl)'}: only for a PostgreSQL warehouse (${named('warehouse', 'GEO_WAREHOUSE')} is DuckDB, whose lock is a file); unset it`,
    );
  if (problems.length) throw new ConfigError(problems);
  rememberSources(config, sources);
  return config;
}

/** The config as it may be logged or stored in sync_runs: secrets removed, URLs masked. */
export function redactedConfig(config: Config): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config };
  for (const k of SECRET_KEYS) if (out[k] !== undefined) out[k] = '[REDACTED]';
  out.warehouse = maskUrlPassword(config.warehouse);
  if (config.lockUrl !== undefined) out.lockUrl = maskUrlPassword(config.lockUrl);
  return out;
}

/** The one URL password masker (redact.ts), kept exported here for callers of the config. */
export { maskUrlPassword };
