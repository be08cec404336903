/**
 * Files of an export: everything is written into a scratch folder inside DIR first, then moved
 * into place folder by folder (a table's folder, or a partitioned table's day folders), so a
 * re-exported day replaces exactly its folder (`<table>/day=D/`), whatever files it held.
 *
 * Replacing a folder is two renames: the old one aside (into the scratch folder), the new one in;
 * the old ones are deleted only once every folder is in place. Before the first rename, the list
 * of moves is written into the scratch folder (`moves.json`) and removed after the last: a
 * scratch folder that still holds it belongs to an export that stopped while moving (killed,
 * power lost), and the next export moves every folder back (`undoMoves`), so a failed export
 * leaves the previous files as they were. Only a stop between the two renames of one folder
 * leaves that one folder missing until then (POSIX has no rename that swaps two directories).
 */
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { DAY_COLUMN, type DayRange } from './tables.ts';

const PARTITION = new RegExp(`^${DAY_COLUMN}=(\\d{4}-\\d{2}-\\d{2})$`);
/** Scratch folders of exports: `.geo-sync-export-<hex>` (the name older versions used too). */
const SCRATCH = /^\.geo-sync-export-[0-9a-f]+$/;
const JOURNAL = 'moves.json';
const ASIDE = '.aside';

/** One folder to replace: `target` relative to DIR, `fresh` relative to the scratch folder (null: delete). */
export interface Move {
  target: string;
  fresh: string | null;
}

export async function createScratch(out: string): Promise<string> {
  const dir = join(out, `.geo-sync-export-${randomBytes(6).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

function inRange(day: string, range: DayRange): boolean {
  return (range.from === undefined || day >= range.from) && (range.to === undefined || day <= range.to);
}

async function entries(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
}

/**
 * The moves that replace a partitioned table's days in the range with the freshly written ones
 * (a day that has no rows any more disappears); creates the table's folder. `table` is the
 * folder's name in DIR and in the scratch folder.
 */
export async function dayMoves(
  out: string,
  scratch: string,
  table: string,
  range: DayRange,
): Promise<Move[]> {
  await mkdir(join(out, table), { recursive: true });
  const days = new Set<string>();
  for (const name of await entries(join(out, table))) {
    const day = PARTITION.exec(name)?.[1];
    if (day !== undefined && inRange(day, range)) days.add(name);
  }
  const fresh = new Set((await entries(join(scratch, table))).filter((n) => PARTITION.test(n)));
  for (const name of fresh) days.add(name);
  return [...days].sort().map((name) => ({
    target: join(table, name),
    fresh: fresh.has(name) ? join(table, name) : null,
  }));
}

/** The days a partitioned table's moves write. */
export function daysWritten(moves: readonly Move[]): string[] {
  return moves.flatMap((m) => (m.fresh ? [PARTITION.exec(basename(m.target))![1]!] : []));
}

/**
 * Test hook, never set in use: `GEO_SYNC_TEST_EXPORT_PAUSE=<step>:<n>` stops the export the n-th
 * time it reaches `step` (written, journal, aside, moved, committed), says so on stderr and waits
 * to be killed (or, given `signal`, stopped), so a test can stop it at a known point of the move.
 */
const reached = new Map<string, number>();
async function step(name: string, signal?: AbortSignal): Promise<void> {
  const pause = process.env.GEO_SYNC_TEST_EXPORT_PAUSE;
  if (!pause) return;
  const n = (reached.get(name) ?? 0) + 1;
  reached.set(name, n);
  if (pause !== `${name}:${n}`) return;
  process.stderr.write(`paused at ${name}:${n}\n`);
  await new Promise<never>((_, reject) => {
    const timer = setInterval(() => undefined, 60_000);
    signal?.addEventListener('abort', () => {
      clearInterval(timer);
      reject(signal.reason as Error);
    });
  });
}

/** Marks the export as past writing (hook for tests); the process's stop ends its pause. */
export const writtenStep = (signal?: AbortSignal) => step('written', signal);

/**
 * Replaces the folders: the moves' journal first, then per folder the old one aside and the new
 * one in, then the journal removed (from then on the export is done) and the scratch folder with
 * the old folders deleted. A move that fails puts every folder back and throws; if even that
 * fails, the journal stays and the next export puts them back.
 */
export async function applyMoves(out: string, scratch: string, moves: readonly Move[]): Promise<void> {
  const journal = join(scratch, JOURNAL);
  await mkdir(join(scratch, ASIDE), { recursive: true });
  await writeFile(`${journal}.tmp`, JSON.stringify(moves));
  await rename(`${journal}.tmp`, journal);
  await step('journal');
  try {
    for (const [i, m] of moves.entries()) {
      const target = join(out, m.target);
      if (await exists(target)) await rename(target, join(scratch, ASIDE, String(i)));
      await step('aside');
      if (m.fresh) await rename(join(scratch, m.fresh), target);
      await step('moved');
    }
  } catch (e) {
    try {
      await undoMoves(out, scratch, moves);
    } catch (undo) {
      throw new Error(
        `export: moving the new files into ${out} failed (${(e as Error).message}) and so did putting the previous ones back (${(undo as Error).message}); the next export into ${out} puts them back`,
        { cause: e },
      );
    }
    await rm(scratch, { recursive: true, force: true });
    throw e;
  }
  await rm(journal);
  await step('committed');
  await rm(scratch, { recursive: true, force: true });
}

/**
 * Puts the previous folders back, last move first; safe to run again after a stop halfway:
 * each step looks at what is where. A new folder moved in goes back to the scratch folder; an
 * old one set aside comes back. Removes the journal when done.
 */
export async function undoMoves(out: string, scratch: string, moves: readonly Move[]): Promise<void> {
  for (let i = moves.length - 1; i >= 0; i--) {
    const m = moves[i]!;
    const target = join(out, m.target);
    const aside = join(scratch, ASIDE, String(i));
    const fresh = m.fresh ? join(scratch, m.fresh) : null;
    if (fresh && !(await exists(fresh)) && (await exists(target))) await rename(target, fresh);
    if (await exists(aside)) await rename(aside, target);
  }
  await rm(join(scratch, JOURNAL), { force: true });
}

/**
 * Removes the scratch folders of exports into `out` that stopped (killed, power lost), after
 * putting back what one of them had moved (`undoMoves`). Only call it holding the folder's lock
 * (lock.ts): a live export's scratch folder is then never among them. Returns how many it removed
 * and how many of those had moved folders.
 */
export async function removeLeftovers(out: string): Promise<{ removed: number; undone: number }> {
  let removed = 0;
  let undone = 0;
  for (const name of await entries(out)) {
    if (!SCRATCH.test(name)) continue;
    const scratch = join(out, name);
    const text = await readFile(join(scratch, JOURNAL), 'utf8').catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT' || e.code === 'ENOTDIR') return null;
      throw e;
    });
    if (text !== null) {
      await undoMoves(out, scratch, JSON.parse(text) as Move[]);
      undone++;
    }
    await rm(scratch, { recursive: true, force: true });
    removed++;
  }
  return { removed, undone };
}
