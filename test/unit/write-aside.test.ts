/**
 * `report`'s write aside: stopped by the process's signal, it leaves the previous report as it
 * was and nothing beside it; otherwise the new report replaces it whole.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InterruptedError } from '../../src/abort.ts';
import { writeAside } from '../../src/commands/actions/report.ts';

describe('writeAside', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('stopped: the previous file stays, and nothing is left beside it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'geo-aside-'));
    const path = join(dir, 'report.html');
    writeFileSync(path, 'previous');
    const stop = new AbortController();
    stop.abort(new InterruptedError('SIGTERM'));
    await expect(writeAside(path, 'new', stop.signal)).rejects.toMatchObject({ name: 'AbortError' });
    expect(readFileSync(path, 'utf8')).toBe('previous');
    expect(readdirSync(dir)).toEqual(['report.html']);
  });

  it('not stopped: the new file replaces the previous one', async () => {
    dir = mkdtempSync(join(tmpdir(), 'geo-aside-'));
    const path = join(dir, 'report.html');
    writeFileSync(path, 'previous');
    await writeAside(path, 'new', new AbortController().signal);
    expect(readFileSync(path, 'utf8')).toBe('new');
    expect(readdirSync(dir)).toEqual(['report.html']);
  });
});
