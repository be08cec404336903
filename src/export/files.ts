/**
 * Files of an export: everything is written into a scratch folder inside DIR first, then moved
 * into place table by table, so a failed export leaves the previous files as they were, and a
 * re-exported day replaces exactly its folder (`<table>/day=D/`), whatever files it held.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DAY_COLUMN, type DayRange } from './tables.ts';

const PARTITION = new RegExp(`^${DAY_COLUMN}=(\\d{4}-\\d{2}-\\d{2})$`);

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

/**
 * Moves a partitioned table's new day folders from `fresh` into `target`, first removing every
 * day folder of `target` in the exported range (a day that has no rows any more disappears).
 * Returns the days written.
 */
export async function replaceDays(fresh: string, target: string, range: DayRange): Promise<string[]> {
  await mkdir(target, { recursive: true });
  for (const name of await entries(target)) {
    const day = PARTITION.exec(name)?.[1];
    if (day !== undefined && inRange(day, range))
      await rm(join(target, name), { recursive: true, force: true });
  }
  const days: string[] = [];
  for (const name of (await entries(fresh)).sort()) {
    const day = PARTITION.exec(name)?.[1];
    if (day === undefined) continue;
    await rename(join(fresh, name), join(target, name));
    days.push(day);
  }
  return days;
}

/** Replaces an unpartitioned table's folder with the freshly written one. */
export async function replaceTable(fresh: string, target: string): Promise<void> {
  await rm(target, { recursive: true, force: true });
  await rename(fresh, target);
}
