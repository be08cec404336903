/**
 * What `migrate` has to do (pendingMigrations), and that migrate leaves nothing to do, over an
 * in-memory ledger: the decision the read-only commands (check, report, verify, runs, state show)
 * make before they would write anything.
 */
import { describe, expect, it } from 'vitest';
import {
  pendingMigrations,
  runMigrations,
  viewsHash,
  VIEWS_VERSION,
  type Migration,
  type MigrationSet,
  type MigrationStore,
} from '../../src/load/migrate.ts';

const migration = (version: string, name: string): Migration => ({
  version,
  name,
  id: `${version}_${name}`,
  sql: `-- ${name}`,
});

const SET: MigrationSet = {
  migrations: [migration('001', 'init'), migration('002', 'more')],
  views: 'CREATE OR REPLACE VIEW geo.v AS SELECT 1;',
};

/** A ledger in memory: null is a warehouse never migrated (no geo.schema_migrations). */
function memoryStore(ledger: Map<string, string> | null) {
  let rows = ledger;
  const writes: string[] = [];
  const store: MigrationStore = {
    withMigrationLock: (fn) => fn(),
    ensureLedger: async () => {
      rows ??= new Map();
    },
    hasLedger: async () => rows !== null,
    appliedVersions: async () => new Set([...(rows ?? new Map<string, string>()).keys()]),
    apply: async (m) => {
      writes.push(m.id);
      rows!.set(m.version, m.name);
      return true;
    },
    replaceViews: async (_sql, hash) => {
      writes.push(VIEWS_VERSION);
      rows!.set(VIEWS_VERSION, hash);
    },
    viewsHash: async () => rows?.get(VIEWS_VERSION) ?? null,
    pendingWork: async () => [],
    finishWork: async () => {
      writes.push('fill');
      return [];
    },
    checkpointSchema: async () => {
      writes.push('checkpoint');
    },
  };
  return { store, writes };
}

describe('pendingMigrations', () => {
  it.each([
    { what: 'never migrated', ledger: null, pending: ['001_init', '002_more', 'views'] },
    {
      what: 'a ledger without rows',
      ledger: new Map<string, string>(),
      pending: ['001_init', '002_more', 'views'],
    },
    {
      what: 'one migration behind',
      ledger: new Map([
        ['001', 'init'],
        [VIEWS_VERSION, viewsHash(SET)],
      ]),
      pending: ['002_more'],
    },
    {
      what: 'migrations applied, views of another version',
      ledger: new Map([
        ['001', 'init'],
        ['002', 'more'],
        [VIEWS_VERSION, 'an older hash'],
      ]),
      pending: ['views'],
    },
    {
      what: 'migrations applied by a version that kept no views row',
      ledger: new Map([
        ['001', 'init'],
        ['002', 'more'],
      ]),
      pending: ['views'],
    },
    {
      what: 'up to date',
      ledger: new Map([
        ['001', 'init'],
        ['002', 'more'],
        [VIEWS_VERSION, viewsHash(SET)],
      ]),
      pending: [],
    },
  ])('$what: $pending', async ({ ledger, pending }) => {
    const { store, writes } = memoryStore(ledger && new Map(ledger));
    expect(await pendingMigrations(store, SET)).toEqual(pending);
    expect(writes).toEqual([]);
    // migrate then leaves nothing to do.
    await runMigrations(store, SET);
    expect(await pendingMigrations(store, SET)).toEqual([]);
  });

  it.each([
    {
      what: 'a fresh warehouse',
      ledger: null,
      writes: ['001_init', '002_more', 'checkpoint', 'fill', 'views', 'checkpoint'],
    },
    {
      what: 'up to date (the views are re-created)',
      ledger: new Map([
        ['001', 'init'],
        ['002', 'more'],
      ]),
      writes: ['fill', 'views', 'checkpoint'],
    },
  ])(
    '$what: the schema is checkpointed after the migrations, before the fills, and after the views',
    async (t) => {
      const { store, writes } = memoryStore(t.ledger && new Map(t.ledger));
      await runMigrations(store, SET);
      expect(writes).toEqual(t.writes);
    },
  );

  it('the views hash covers the views and the comments applied with them', () => {
    expect(viewsHash(SET)).toMatch(/^[0-9a-f]{64}$/);
    expect(viewsHash({ ...SET, views: SET.views + "\nCOMMENT ON VIEW geo.v IS 'x';" })).not.toBe(
      viewsHash(SET),
    );
  });
});
