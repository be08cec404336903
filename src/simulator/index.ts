/**
 * The API simulator: a deterministic, fault-injecting HTTP server of the whole v2 API (spec 4),
 * used by the demo, by tests over real sockets and by benchmarks. `world` is its ground truth:
 * the server serves exactly what the world returns.
 */
import { UsageError } from '../errors.ts';
import { AuthStore } from './auth.ts';
import type { FaultOptions } from './faults.ts';
import { FaultInjector } from './faults.ts';
import { listen } from './server.ts';
import type { SimulatorStats } from './stats.ts';
import { Stats } from './stats.ts';
import type { World } from './world-types.ts';
import { SimWorld } from './world.ts';
import { MAX_EXECUTIONS_PER_DAY } from './limits.ts';

export type { FaultOptions } from './faults.ts';
export type { SimulatorStats } from './stats.ts';
export type {
  DayTotals,
  World,
  WorldMutations,
  MonitoringTaskWire,
  PlatformTaskWire,
  SourceWire,
  ScreenshotWire,
  UserWire,
  ProductSet,
  SiteDiagnosisWire,
  DeductionWire,
  BalanceWire,
  WirePromptExecution,
  WirePromptResultItem,
} from './world-types.ts';
export { SimWorld } from './world.ts';

export interface SimulatorOptions {
  /** Default 1. */
  seed?: number;
  /** Days of history ending yesterday (Asia/Shanghai), default 7. */
  days?: number;
  /** Accepted API keys, default ['sim-key']. */
  apiKeys?: string[];
  /** Default { email: 'demo@geo-sync.local', password: 'demo-password' }. */
  login?: { email: string; password: string };
  /** Executions per day over all readable platform tasks, default 2000 (up to 1,000,000). */
  executionsPerDay?: number;
  /** Clock, default () => new Date(). */
  now?: () => Date;
  /** How long each diagnosis state lasts before it progresses, default 15000. */
  diagnosisStepMs?: number;
  /** Share (0..1) of new diagnoses that end failed, decided per diagnosis from the seed; default 0.2. */
  diagnosisFailureRate?: number;
  /** `total` of paged responses varies slightly between pages (paging robustness tests). */
  unstableTotals?: boolean;
  faults?: FaultOptions;
  /** Default '127.0.0.1'. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
}

export interface RunningSimulator {
  /** 'http://127.0.0.1:PORT' */
  url: string;
  port: number;
  stats: SimulatorStats;
  /** Ground truth. */
  world: World;
  /** Change faults at runtime. */
  setFaults(f: FaultOptions): void;
  /** Login tokens issued and not yet revoked by a logout (a client that stopped left them valid). */
  liveLoginTokens(): number;
  /** Closes the server and all keep-alive sockets promptly. */
  close(): Promise<void>;
}

export const DEFAULT_API_KEY = 'sim-key';
export const DEFAULT_LOGIN = { email: 'demo@geo-sync.local', password: 'demo-password' } as const;
export { MAX_EXECUTIONS_PER_DAY };

function check(ok: boolean, message: string): void {
  if (!ok) throw new RangeError(`simulator: ${message}`);
}

function checkRate(name: string, v: number | undefined): void {
  if (v !== undefined) check(Number.isFinite(v) && v >= 0 && v <= 1, `${name} must be between 0 and 1`);
}

function checkNonNegative(name: string, v: number | undefined): void {
  if (v !== undefined) check(Number.isFinite(v) && v >= 0, `${name} must be a non-negative number`);
}

export function validateFaults(f: FaultOptions): void {
  checkNonNegative('faults.latencyMs', f.latencyMs);
  checkNonNegative('faults.latencyJitterMs', f.latencyJitterMs);
  checkNonNegative('faults.rateLimitPerSecond', f.rateLimitPerSecond);
  checkNonNegative('faults.retryAfterSeconds', f.retryAfterSeconds);
  checkNonNegative('faults.slowMs', f.slowMs);
  checkRate('faults.errorRate', f.errorRate);
  checkRate('faults.resetRate', f.resetRate);
  checkRate('faults.malformedRate', f.malformedRate);
  checkRate('faults.slowRate', f.slowRate);
  if (f.rateLimitEvery !== undefined)
    check(
      Number.isInteger(f.rateLimitEvery) && f.rateLimitEvery >= 1,
      'faults.rateLimitEvery must be a positive integer',
    );
  if (f.resultsPerPageCap !== undefined)
    check(
      Number.isInteger(f.resultsPerPageCap) && f.resultsPerPageCap >= 1,
      'faults.resultsPerPageCap must be a positive integer',
    );
  if (f.forbiddenTaskIds !== undefined)
    check(
      Array.isArray(f.forbiddenTaskIds) && f.forbiddenTaskIds.every((id) => Number.isSafeInteger(id)),
      'faults.forbiddenTaskIds must be a list of integers',
    );
}

/** The world alone, without a server (tests of ground truth, dayTotals at scale). */
export function createWorld(opts: SimulatorOptions = {}): SimWorld {
  const seed = opts.seed ?? 1;
  const days = opts.days ?? 7;
  const executionsPerDay = opts.executionsPerDay ?? 2000;
  const diagnosisStepMs = opts.diagnosisStepMs ?? 15_000;
  const diagnosisFailureRate = opts.diagnosisFailureRate ?? 0.2;
  check(Number.isSafeInteger(seed), 'seed must be an integer');
  check(Number.isInteger(days) && days >= 1 && days <= 3650, 'days must be an integer from 1 to 3650');
  check(
    Number.isInteger(executionsPerDay) && executionsPerDay >= 0 && executionsPerDay <= MAX_EXECUTIONS_PER_DAY,
    `executionsPerDay must be an integer from 0 to ${MAX_EXECUTIONS_PER_DAY}`,
  );
  check(Number.isFinite(diagnosisStepMs) && diagnosisStepMs > 0, 'diagnosisStepMs must be a positive number');
  checkRate('diagnosisFailureRate', diagnosisFailureRate);
  return new SimWorld({
    seed,
    days,
    executionsPerDay,
    now: opts.now ?? (() => new Date()),
    diagnosisStepMs,
    diagnosisFailureRate,
    email: (opts.login ?? DEFAULT_LOGIN).email,
    drawShift: drawShiftFromEnv(),
  });
}

/**
 * GEO_SIM_WORLD_SHIFT=N: every world draws its executions as if on other calendar days (the same
 * customers, monitoring and platform tasks; other executions, counts and children). A world is
 * drawn from its seed and the calendar day, so a test that relies on a chance feature of a small
 * world (an execution without a screenshot, a day with product cards) passes today and fails on
 * some later day. `GEO_SIM_WORLD_SHIFT=2 npx vitest run test/integration test/load test/distributed`
 * runs the tests whose worlds follow the calendar against other days' worlds (docs/developing.md).
 */
function drawShiftFromEnv(): number {
  const text = process.env.GEO_SIM_WORLD_SHIFT?.trim();
  if (!text) return 0;
  // Bad configuration: one line and exit 2 from `geo-sync simulate`, like its flags.
  if (!/^\d+$/.test(text))
    throw new UsageError(
      `GEO_SIM_WORLD_SHIFT: expected a whole number, got ${JSON.stringify(text)} (unset it for today's world)`,
    );
  return Number(text);
}

export async function startSimulator(opts: SimulatorOptions = {}): Promise<RunningSimulator> {
  const world = createWorld(opts);
  const login = opts.login ?? DEFAULT_LOGIN;
  const apiKeys = opts.apiKeys ?? [DEFAULT_API_KEY];
  check(
    apiKeys.every((k) => typeof k === 'string' && k.trim() !== ''),
    'apiKeys must be non-empty strings',
  );
  const faultOptions = opts.faults ?? {};
  validateFaults(faultOptions);
  const stats = new Stats();
  const faults = new FaultInjector(world.seed, faultOptions);
  const auth = new AuthStore({ seed: world.seed, apiKeys, email: login.email, password: login.password });
  const server = await listen(
    { world, auth, stats, faults, unstableTotals: opts.unstableTotals ?? false },
    opts.host ?? '127.0.0.1',
    opts.port ?? 0,
  );
  return {
    url: server.url,
    port: server.port,
    stats,
    world,
    setFaults(f: FaultOptions) {
      validateFaults(f);
      faults.set(f);
    },
    liveLoginTokens: () => auth.liveTokens,
    close: () => server.close(),
  };
}
