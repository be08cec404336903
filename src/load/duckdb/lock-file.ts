/**
 * The no-overlap lock, DuckDB: `<database file>.lock`, created with O_EXCL and holding the
 * holder text with its pid, host, the machine's boot id and the process's start time. A lock
 * file of this host is stale, and taken over, when its pid is not alive, when the machine has
 * booted since (another boot id), or when the pid now belongs to a process that started at
 * another time. The last rule is the container one: a restarted container runs geo-sync as
 * PID 1 again, under the same hostname and on the same kernel (same boot id), so only the start
 * time tells the old PID 1 from the new. A lock file of another host cannot be checked and is
 * respected. (Two processes cannot race for a stale lock in practice: DuckDB itself lets only
 * one process open the database file.)
 */
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import type { LockResult } from '../warehouse.ts';

interface LockContent {
  holder: string;
  pid: number;
  host: string;
  since: string;
  /** /proc/sys/kernel/random/boot_id of the machine then; absent off Linux and in old files. */
  bootId?: string;
  /** The holder's start time, clock ticks after boot (/proc/<pid>/stat); absent as bootId. */
  startTime?: string;
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

/** This boot of the machine (Linux), or undefined where the kernel does not say. */
export async function bootId(): Promise<string | undefined> {
  const text = await readFile('/proc/sys/kernel/random/boot_id', 'utf8').catch(() => undefined);
  return text?.trim() || undefined;
}

/**
 * When process `pid` started, in clock ticks after boot (field 22 of /proc/<pid>/stat), or
 * undefined where /proc does not say. Together with the boot id it names one process for good:
 * a pid is reused, a (boot, pid, start time) is not.
 */
export async function processStartTime(pid: number): Promise<string | undefined> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (!text) return undefined;
  // The command name (field 2) is in parentheses and may hold spaces or ')': fields are
  // counted after the last ')', where field 3 (state) starts.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const start = fields[22 - 3];
  return start && /^\d+$/.test(start) ? start : undefined;
}

export class LockFile {
  private written: string | null = null;

  constructor(readonly path: string) {}

  async tryLock(holder: string): Promise<LockResult> {
    if (this.written !== null) return { acquired: true };
    const [boot, startTime] = await Promise.all([bootId(), processStartTime(process.pid)]);
    const content: LockContent = {
      holder,
      pid: process.pid,
      host: hostname(),
      since: new Date().toISOString(),
      ...(boot ? { bootId: boot } : {}),
      ...(startTime ? { startTime } : {}),
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
        content = {
          holder: parsed.holder,
          pid: parsed.pid,
          host: parsed.host,
          since: String(parsed.since ?? ''),
          ...(typeof parsed.bootId === 'string' ? { bootId: parsed.bootId } : {}),
          ...(typeof parsed.startTime === 'string' ? { startTime: parsed.startTime } : {}),
        };
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
    return (await isStale(content)) ? 'stale' : content;
  }
}

/** Whether the holder recorded in a readable lock file is surely gone (see the file's header). */
async function isStale(content: LockContent): Promise<boolean> {
  if (content.host !== hostname()) return false;
  if (!isPidAlive(content.pid)) return true;
  if (content.bootId !== undefined) {
    const boot = await bootId();
    if (boot !== undefined && boot !== content.bootId) return true;
  }
  if (content.startTime !== undefined) {
    const started = await processStartTime(content.pid);
    if (started !== undefined && started !== content.startTime) return true;
  }
  return false;
}
