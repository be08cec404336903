/**
 * kysely as a query builder only (its documented "build, compile, execute separately" use): it
 * compiles typed statements to SQL + parameters, and the adapter runs them on the pg client of
 * its choice, inside the transactions it manages (COPY needs the raw pg client, which kysely's
 * own executor does not expose).
 */
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  sql,
  type CompiledQuery,
  type RawBuilder,
} from 'kysely';
import type { Queryable } from './pool.ts';
import type { GeoDatabase } from './schema.ts';

export const db = new Kysely<GeoDatabase>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new PostgresIntrospector(k),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

/** Runs a compiled statement; returns its rows. */
export async function run<R>(q: Queryable, query: CompiledQuery<R>): Promise<R[]> {
  const result = await q.query(query.sql, query.parameters as unknown[]);
  return result.rows as R[];
}

/**
 * `{ col: excluded.col, ... }` for ON CONFLICT DO UPDATE: every listed column takes the value
 * the insert proposed. (Typed `never` so it fits any column's update type: the value is the
 * column's own.)
 */
export function fromExcluded<C extends string>(columns: readonly C[]): Record<C, RawBuilder<never>> {
  const set = {} as Record<C, RawBuilder<never>>;
  for (const c of columns) set[c] = sql<never>`${sql.ref(`excluded.${c}`)}`;
  return set;
}

/** `now()`, for synced_at. */
export const now = sql<string>`now()`;
