/**
 * The no-overlap lock, DuckDB: `<database file>.lock`, created with O_EXCL and holding the
 * holder text with its pid and host. A lock file whose pid is not alive on this host is stale
 * and taken over. (Two processes cannot race for a stale lock in practice: DuckDB itself lets
 * only one process open the database file.)
 */
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import type { LockResult } from '../warehouse.ts';

interface LockContent {
  holder: string;
  pid: number;
  host: string;
  since: string;
}

/** An unreadable lock file younger than this may be one being written: respected. */
const UNREADABLE_GRACE_MS = 10_000;

export function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class LockFile {
  private written: string | null = null;

  constructor(readonly path: string) {}

  async tryLock(holder: string): Promise<LockResult> {
    if (this.written !== null) return { acquired: true };
    const content: LockContent = {
      holder,
      pid: process.pid,
      host: hostname(),
      since: new Date().toISOString(),
    };
    const text = `${JSON.stringify(content)}\n`;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await writeFile(this.path, text, { flag: 'wx' });
        this.written = text;
        return { acquired: true };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      const existing = await this.read();
      if (existing === 'gone') continue;
      if (existing !== 'stale') return { acquired: false, holder: existing.holder };
      await rm(this.path, { force: true });
    }
    return { acquired: false, holder: 'unknown (the lock file keeps changing)' };
  }

  /** The holder recorded in the lock file when it is held and not stale; otherwise undefined. */
  async liveHolder(): Promise<string | undefined> {
    const existing = await this.read();
    return typeof existing === 'object' ? existing.holder : undefined;
  }

  /** Removes the lock file if it is still the one this instance wrote. */
  async unlock(): Promise<void> {
    const written = this.written;
    this.written = null;
    if (written === null) return;
    const now = await readFile(this.path, 'utf8').catch(() => null);
    if (now === written) await rm(this.path, { force: true });
  }

  private async read(): Promise<LockContent | 'stale' | 'gone'> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
      throw e;
    }
    let content: LockContent | null = null;
    try {
      const parsed = JSON.parse(text) as Partial<LockContent>;
      if (
        typeof parsed.holder === 'string' &&
        typeof parsed.pid === 'number' &&
        typeof parsed.host === 'string'
      ) {
        content = parsed as LockContent;
      }
    } catch {
      content = null;
    }
    if (!content) {
      const age = await stat(this.path).then(
        (s) => Date.now() - s.mtimeMs,
        () => Infinity,
      );
      return age > UNREADABLE_GRACE_MS
        ? 'stale'
        : { holder: text.trim() || 'unknown', pid: 0, host: '', since: '' };
    }
    if (content.host === hostname() && !isPidAlive(content.pid)) return 'stale';
    return content;
  }
}
