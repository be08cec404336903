/**
 * writeExecutionBatch and closing units, for every dialect: ONE transaction writes the batch,
 * then closes the `completions` units, so a unit's checkpoint commits with its last rows.
 *
 * Fast path (the usual case): the batch's executions already stored are looked up by primary
 * key; only their rows are deleted (executions, screenshots and product summaries the batch
 * carries; ranks, sources and cards of the executions it replaces) and every collection is then
 * bulk-loaded as plain inserts (COPY, Appender). A first sync deletes nothing and writes each
 * row once. On-conflict upserts cost several times a plain insert (PostgreSQL: staging + ON
 * CONFLICT wrote about 27k rows/s, this path about twice that; DuckDB: 28 ms against 6 ms for
 * 2,000 sources). A stored execution whose times could not be read this time (kept `times`) is
 * the exception: updated in place, every column but created_at/updated_at, on either path.
 *
 * Safe path: after those deletes no key can exist, unless upstream moved a source_id to another
 * execution, or a child row was stored without its execution. Then an insert meets an existing
 * key, the transaction is rolled back and the batch is written again the general way: upserts
 * for executions, screenshots, product summaries and sources; the replaced executions' ranks and
 * cards deleted, then inserted.
 *
 * The per-day aggregates are not touched here: the transaction records the units whose rows it
 * changed in geo.rollup_stale_units (markStale), and the sync refreshes them in transactions of
 * their own (rollups.ts refreshStaleUnits). Each execution row carries its children's counts,
 * taken from the batch (withCounts); only an execution whose batch keeps some stored children
 * (a child that failed to read) has those counted from the tables after the write.
 */
import type {
  ExecutionBatch,
  ExecutionFingerprintRow,
  PromptExecutionRow,
  StoredExecutionRow,
} from '../../transform/rows.ts';
import { isEmptyBatch, prepareBatch, type PreparedBatch } from '../batch.ts';
import {
  EXECUTION_CHILD_TABLES,
  EXECUTION_FINGERPRINTS,
  EXECUTION_PRODUCTS,
  EXECUTION_RANKS,
  EXECUTION_SCREENSHOTS,
  EXECUTION_SOURCES,
  PRODUCT_CARDS,
  PROMPT_EXECUTIONS,
  PROMPT_EXECUTIONS_STORED,
  PROMPT_EXECUTIONS_STORED_BUT_TIMES,
  SYNC_CHECKPOINTS,
  type TableSpec,
} from '../tables.ts';
import { storedRows } from '../text.ts';
import type { UnitCompletion, Written } from '../warehouse.ts';
import type { Connection, Driver } from './driver.ts';
import { columnValues, inListChunks, insertListsSql, rowParams, updateByKeySql } from './statements.ts';
import { dedupeBy, unitKeyOf } from '../values.ts';
import { distinctUnits, Params, scopeWhere, type RollupUnit } from './rollups.ts';
import { markStale } from './stale-units.ts';

/**
 * Merges a batch; `stored`: the batch's executions (and parents of its rows) already stored.
 * Returns the units whose rows it changed beyond the batch's own, and the executions beyond the
 * batch's whose children it changed (a moved source's old unit and old execution).
 */
type Merge = (
  driver: Driver,
  c: Connection,
  b: CountedBatch,
  stored: ReadonlySet<number>,
) => Promise<{ units: RollupUnit[]; recount: number[] }>;

export interface BatchWriteOptions {
  /** Runs last inside the transaction (the fences: ownership checked at commit time). */
  readonly beforeCommit?: (c: Connection) => Promise<void>;
  /** Record the units written as stale for the per-day aggregates (rollups.ts). @default true */
  readonly rollups?: boolean;
}

export async function writeExecutionBatch(
  driver: Driver,
  batch: ExecutionBatch,
  completions: readonly UnitCompletion[] = [],
  { beforeCommit, rollups = true }: BatchWriteOptions = {},
): Promise<Written> {
  if (isEmptyBatch(batch) && completions.length === 0) return { textValuesChanged: 0 };
  const { batch: stored_, changed } = storedBatch(prepareBatch(batch));
  const b = withCounts(stored_);
  const fingerprints = dedupeBy(batch.fingerprints ?? [], (r) => r.prompt_task_id);
  const write = (merge: Merge) =>
    driver.transaction(
      async (c) => {
        // The units whose rows this transaction changes: those its stored rows belong to (an
        // execution that moved leaves its old unit), the batch's, a moved source's old one, and
        // those it deletes from. Recorded as stale; their aggregates are refreshed later.
        const stored = await storedUnitsOf(driver, c, b.keys);
        const changedUnits: RollupUnit[] = [...stored.units, ...b.executions.map(unitOfExecution)];
        const merged = await merge(driver, c, b, stored.ids);
        changedUnits.push(...merged.units);
        await recount(driver, c, [...new Set([...b.recount, ...merged.recount])]);
        await upsertFingerprints(driver, c, fingerprints);
        changedUnits.push(...(await closeUnits(driver, c, completions)));
        if (rollups) await markStale(driver, c, changedUnits);
        if (beforeCommit) await beforeCommit(c);
      },
      { bulk: true },
    );
  try {
    await write(fastPath);
  } catch (e) {
    if (!driver.isDuplicateKey(e)) throw e;
    await write(safePath);
  }
  return { textValuesChanged: changed };
}

/** The batch's rows as the text rule stores them (../text.ts), and how many values it changed. */
function storedBatch(b: PreparedBatch): { batch: PreparedBatch; changed: number } {
  let changed = 0;
  const stored = <R>(spec: TableSpec<R>, rows: readonly R[]): R[] => {
    const r = storedRows(spec, rows);
    changed += r.changed;
    return r.rows as R[];
  };
  const batch: PreparedBatch = {
    ...b,
    executions: stored(PROMPT_EXECUTIONS, b.executions),
    screenshots: stored(EXECUTION_SCREENSHOTS, b.screenshots),
    products: stored(EXECUTION_PRODUCTS, b.products),
    ranks: stored(EXECUTION_RANKS, b.ranks),
    sources: stored(EXECUTION_SOURCES, b.sources),
    cards: stored(PRODUCT_CARDS, b.cards),
  };
  return { batch, changed };
}

const deleteIdsSql = (driver: Driver, table: string) =>
  `DELETE FROM geo.${table} WHERE ${driver.inIds('prompt_task_id', 1)}`;

async function deleteIds(driver: Driver, c: Connection, table: { table: string }, ids: readonly number[]) {
  if (ids.length > 0) await c.execute(deleteIdsSql(driver, table.table), [ids]);
}

const unitOfExecution = (e: PromptExecutionRow): RollupUnit => ({ task_id: e.task_id, date: e.date_time });

/** A batch whose executions carry their children's counts. */
interface CountedBatch extends Omit<PreparedBatch, 'executions'> {
  executions: StoredExecutionRow[];
  /**
   * Ids whose counts come from the tables after the write: executions whose batch keeps some
   * stored children (those failed to read), and ids the batch gives children of without their
   * execution (a stored execution's counts change).
   */
  recount: number[];
}

/**
 * Each execution's counts from the batch's rows, as the views counted them: rank items and
 * those with a position, source rows, product cards, and whether a screenshot URL is stored (the
 * screenshot row's, else the execution's own). Where the batch keeps a stored child, that count
 * is NULL here and the execution is recounted from the tables (recount).
 */
export function withCounts(b: PreparedBatch): CountedBatch {
  const count = new Map<number, { items: number; valid: number; sources: number; cards: number }>();
  const of = (id: number) => {
    let c = count.get(id);
    if (!c) count.set(id, (c = { items: 0, valid: 0, sources: 0, cards: 0 }));
    return c;
  };
  for (const r of b.ranks) {
    const c = of(r.prompt_task_id);
    c.items++;
    if (r.position !== null) c.valid++;
  }
  for (const s of b.sources) of(s.prompt_task_id).sources++;
  for (const k of b.cards) of(k.prompt_task_id).cards++;
  const shots = new Map(b.screenshots.map((s) => [s.prompt_task_id, s.screenshot_url]));
  const replacedSources = new Set(b.replaced.sources);
  const replacedCards = new Set(b.replaced.cards);
  const replacedShots = new Set(b.replaced.screenshots);
  const recount = new Set<number>(b.keys);
  const executions = b.executions.map((e): StoredExecutionRow => {
    const id = e.prompt_task_id;
    recount.delete(id);
    const c = count.get(id) ?? { items: 0, valid: 0, sources: 0, cards: 0 };
    const known = replacedSources.has(id) && replacedCards.has(id) && replacedShots.has(id);
    if (!known) recount.add(id);
    const shot = shots.get(id);
    return {
      ...e,
      rank_items: c.items,
      valid_ranks: c.valid,
      sources: replacedSources.has(id) ? c.sources : null,
      product_cards: replacedCards.has(id) ? c.cards : null,
      has_screenshot: replacedShots.has(id) ? Boolean(shot) || Boolean(e.screenshot_url) : null,
    };
  });
  return { ...b, executions, recount: [...recount] };
}

/** The counts of these executions from their stored children (rows of this transaction included). */
async function recount(driver: Driver, c: Connection, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  const e = 'geo.prompt_executions.prompt_task_id';
  await c.execute(
    `UPDATE geo.prompt_executions SET
       rank_items = (SELECT count(*) FROM geo.execution_ranks r WHERE r.prompt_task_id = ${e}),
       valid_ranks = (SELECT count(r.position) FROM geo.execution_ranks r WHERE r.prompt_task_id = ${e}),
       sources = (SELECT count(*) FROM geo.execution_sources s WHERE s.prompt_task_id = ${e}),
       product_cards = (SELECT count(*) FROM geo.product_cards k WHERE k.prompt_task_id = ${e}),
       has_screenshot = COALESCE(
         NULLIF((SELECT sc.screenshot_url FROM geo.execution_screenshots sc WHERE sc.prompt_task_id = ${e}), ''),
         NULLIF(screenshot_url, '')) IS NOT NULL
     WHERE ${driver.inIds('prompt_task_id', 1)}`,
    [ids],
  );
}

/** Which of `keys` are stored executions, and the units they belong to. */
async function storedUnitsOf(
  driver: Driver,
  c: Connection,
  keys: readonly number[],
): Promise<{ ids: Set<number>; units: RollupUnit[] }> {
  if (keys.length === 0) return { ids: new Set(), units: [] };
  const rows = await c.rows<{ prompt_task_id: number; task_id: number; date_time: string }>(
    `SELECT prompt_task_id, task_id, date_time FROM geo.prompt_executions WHERE ${driver.inIds('prompt_task_id', 1)}`,
    [keys],
  );
  return {
    ids: new Set(rows.map((r) => r.prompt_task_id)),
    units: rows.map((r) => ({ task_id: r.task_id, date: r.date_time })),
  };
}

const fastPath: Merge = async (driver, c, b, stored) => {
  const keys = b.keys;
  if (keys.length === 0) return { units: [], recount: [] };
  // Rows can be stored only for executions stored, or for ids named without their execution.
  const executionIds = new Set(b.executions.map((e) => e.prompt_task_id));
  const cleared = new Set(stored);
  for (const id of keys) if (!executionIds.has(id)) cleared.add(id);
  // Stored executions whose times were not read: updated in place below, never deleted.
  const timesKept = new Set(b.timesKept.filter((id) => cleared.has(id)));
  if (cleared.size > 0) {
    const among = (ids: Iterable<number>) => [...new Set(ids)].filter((id) => cleared.has(id));
    await deleteIds(
      driver,
      c,
      PROMPT_EXECUTIONS,
      among(executionIds).filter((id) => !timesKept.has(id)),
    );
    await deleteIds(driver, c, EXECUTION_SCREENSHOTS, among(b.replaced.screenshots));
    await deleteIds(driver, c, EXECUTION_PRODUCTS, among(b.products.map((r) => r.prompt_task_id)));
    await deleteIds(driver, c, EXECUTION_RANKS, among(b.replaced.ranks));
    await deleteIds(driver, c, EXECUTION_SOURCES, among(b.replaced.sources));
    await deleteIds(driver, c, PRODUCT_CARDS, among(b.replaced.cards));
  }
  await updateKeepingTimes(driver, c, b.executions, timesKept);
  await c.load(
    PROMPT_EXECUTIONS_STORED,
    timesKept.size ? b.executions.filter((e) => !timesKept.has(e.prompt_task_id)) : b.executions,
    'insert',
  );
  await c.load(EXECUTION_SCREENSHOTS, b.screenshots, 'insert');
  await c.load(EXECUTION_PRODUCTS, b.products, 'insert');
  await c.load(EXECUTION_RANKS, b.ranks, 'insert');
  await c.load(EXECUTION_SOURCES, b.sources, 'insert');
  await c.load(PRODUCT_CARDS, b.cards, 'insert');
  // A source that moved from another execution meets its key here: the safe path takes over.
  return { units: [], recount: [] };
};

/**
 * Updates, by key, the stored executions among `ids` with every column but created_at/updated_at
 * (their times could not be read this time: the stored ones stay). Returns the ids it updated.
 */
async function updateKeepingTimes(
  driver: Driver,
  c: Connection,
  executions: readonly StoredExecutionRow[],
  ids: ReadonlySet<number>,
): Promise<Set<number>> {
  const updated = new Set<number>();
  if (ids.size === 0) return updated;
  const sql = updateByKeySql(driver, PROMPT_EXECUTIONS_STORED_BUT_TIMES);
  for (const e of executions) {
    if (!ids.has(e.prompt_task_id) || updated.has(e.prompt_task_id)) continue;
    const n = await c.execute(sql, rowParams(PROMPT_EXECUTIONS_STORED_BUT_TIMES, e));
    if (n > 0) updated.add(e.prompt_task_id);
  }
  return updated;
}

/**
 * The stored executions the stored rows of these sources belong to, with their units (a source
 * upstream moved to another execution leaves them: their aggregates and their count of sources
 * change).
 */
async function ownersOfSources(
  driver: Driver,
  c: Connection,
  sourceIds: readonly number[],
): Promise<{ units: RollupUnit[]; ids: number[] }> {
  if (sourceIds.length === 0) return { units: [], ids: [] };
  const rows = await c.rows<{ prompt_task_id: number; task_id: number; date_time: string }>(
    `SELECT DISTINCT e.prompt_task_id, e.task_id, e.date_time FROM geo.execution_sources s
     JOIN geo.prompt_executions e ON e.prompt_task_id = s.prompt_task_id
     WHERE ${driver.inIds('s.source_id', 1)}`,
    [sourceIds],
  );
  return {
    units: distinctUnits(rows.map((r) => ({ task_id: Number(r.task_id), date: r.date_time }))),
    ids: rows.map((r) => Number(r.prompt_task_id)),
  };
}

const safePath: Merge = async (driver, c, b) => {
  // Before the upsert moves them: the executions (and units) the batch's sources belong to now.
  const owners = await ownersOfSources(
    driver,
    c,
    b.sources.map((s) => s.source_id),
  );
  const inBatch = new Set(b.executions.map((e) => e.prompt_task_id));
  // Executions whose times were not read: updated in place when stored (an update that finds
  // no row means nothing was stored, so there is nothing to keep and the row is upserted).
  const kept = new Set(b.timesKept);
  const updated = await updateKeepingTimes(driver, c, b.executions, kept);
  await c.load(
    PROMPT_EXECUTIONS_STORED,
    b.executions.filter((e) => !updated.has(e.prompt_task_id)),
    'upsert',
  );
  await deleteIds(driver, c, EXECUTION_SCREENSHOTS, b.replaced.screenshots);
  await c.load(EXECUTION_SCREENSHOTS, b.screenshots, 'insert');
  await c.load(EXECUTION_PRODUCTS, b.products, 'upsert');
  await deleteIds(driver, c, EXECUTION_RANKS, b.replaced.ranks);
  await deleteIds(driver, c, EXECUTION_SOURCES, b.replaced.sources);
  await deleteIds(driver, c, PRODUCT_CARDS, b.replaced.cards);
  await c.load(EXECUTION_RANKS, b.ranks, 'insert');
  await c.load(EXECUTION_SOURCES, b.sources, 'upsert');
  await c.load(PRODUCT_CARDS, b.cards, 'insert');
  // An execution of the batch counts its children from the batch; one a source left, from the tables.
  return { units: owners.units, recount: owners.ids.filter((id) => !inBatch.has(id)) };
};

/** Fingerprints go in with their executions' rows, in the same transaction (small: one statement of lists). */
async function upsertFingerprints(
  driver: Driver,
  c: Connection,
  rows: readonly ExecutionFingerprintRow[],
): Promise<void> {
  const sql = insertListsSql(driver, EXECUTION_FINGERPRINTS, true);
  for (const chunk of inListChunks(EXECUTION_FINGERPRINTS, rows))
    await c.execute(sql, columnValues(EXECUTION_FINGERPRINTS, chunk));
}

/**
 * Closes units inside the caller's transaction: deletes each unit's executions the API no longer
 * lists, with their children (unless its listing is not trusted whole: `deleteUnlisted: false`),
 * then upserts the checkpoints. A checkpoint thus never exists without the rows it vouches for
 * (committed by earlier batches) nor with rows it disowns. Returns the units it deleted
 * executions from (stale for the aggregates: the caller records them).
 *
 * A few statements for all the units, not two or more per unit: on DuckDB a statement costs a
 * few milliseconds however little it does, and a group commit closes many small units at once
 * (a nightly run spent more on these statements, one per unit, than on its rows). A unit closed
 * twice in one call is closed in that order, each time alone (rounds): both listings apply, as two
 * calls one after the other would apply them.
 */
export async function closeUnits(
  driver: Driver,
  c: Connection,
  units: readonly UnitCompletion[],
): Promise<RollupUnit[]> {
  const emptied: RollupUnit[] = [];
  for (const round of rounds(units)) {
    emptied.push(
      ...(await deleteUnlisted(
        driver,
        c,
        round.filter((u) => u.deleteUnlisted !== false),
      )),
    );
    const checkpoints = round.map((u) => u.checkpoint);
    const sql = insertListsSql(driver, SYNC_CHECKPOINTS, true);
    for (const chunk of inListChunks(SYNC_CHECKPOINTS, checkpoints))
      await c.execute(sql, columnValues(SYNC_CHECKPOINTS, chunk));
  }
  return emptied;
}

/** The completions in rounds where each unit appears once, in their order. */
function rounds(units: readonly UnitCompletion[]): UnitCompletion[][] {
  const out: UnitCompletion[][] = [];
  const times = new Map<string, number>();
  for (const u of units) {
    const key = unitKeyOf(u.task_id, u.date);
    const n = times.get(key) ?? 0;
    times.set(key, n + 1);
    (out[n] ??= []).push(u);
  }
  return out;
}

/**
 * Deletes, in one statement for all `units`, each unit's executions whose id its listing did not
 * name (a (unit, id) pair, as one statement per unit decided it), then their children. Returns
 * the units it deleted from.
 */
async function deleteUnlisted(
  driver: Driver,
  c: Connection,
  units: readonly UnitCompletion[],
): Promise<RollupUnit[]> {
  if (units.length === 0) return [];
  const p = new Params();
  const where = scopeWhere(driver, { units }, p, 'e.date_time', 'e.task_id');
  const ids = p.add(units.flatMap((u) => u.seenPromptTaskIds));
  const tasks = p.add(units.flatMap((u) => u.seenPromptTaskIds.map(() => u.task_id)));
  const days = p.add(units.flatMap((u) => u.seenPromptTaskIds.map(() => u.date)));
  const gone = await c.rows<{ prompt_task_id: number; task_id: number; date_time: string }>(
    `DELETE FROM geo.prompt_executions AS e
     WHERE ${where}
       AND NOT EXISTS (SELECT 1 FROM (SELECT unnest(CAST(${ids} AS BIGINT[])) AS id,
           unnest(CAST(${tasks} AS BIGINT[])) AS t, CAST(unnest(CAST(${days} AS VARCHAR[])) AS DATE) AS d) s
         WHERE s.id = e.prompt_task_id AND s.t = e.task_id AND s.d = e.date_time)
     RETURNING e.prompt_task_id, e.task_id, e.date_time`,
    p.values,
  );
  const goneIds = gone.map((r) => Number(r.prompt_task_id));
  for (const table of EXECUTION_CHILD_TABLES) await deleteIds(driver, c, { table }, goneIds);
  await deleteIds(driver, c, EXECUTION_FINGERPRINTS, goneIds);
  return distinctUnits(gone.map((r) => ({ task_id: Number(r.task_id), date: r.date_time })));
}
