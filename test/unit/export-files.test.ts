/**
 * The moves of an export (src/export/files.ts) on a real folder. A move that fails
 * puts every folder back; putting back is safe to repeat (an export killed while putting back).
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyMoves, createScratch, undoMoves, type Move } from '../../src/export/files.ts';

let out: string;
const put = (path: string, text: string) => {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
};
const read = (path: string) => readFileSync(join(out, path), 'utf8');

beforeEach(() => {
  out = mkdtempSync(join(tmpdir(), 'geo-export-files-'));
  put(join(out, 't', 'day=2026-11-01', 'a.parquet'), 'old 1');
  put(join(out, 't', 'day=2026-11-02', 'a.parquet'), 'old 2');
});
afterEach(() => rmSync(out, { recursive: true, force: true }));

describe('export moves', () => {
  it('a move that fails puts the folders already moved back, and removes the scratch folder', async () => {
    const scratch = await createScratch(out);
    put(join(scratch, 't', 'day=2026-11-01', 'b.parquet'), 'new 1');
    const moves: Move[] = [
      { target: 't/day=2026-11-01', fresh: 't/day=2026-11-01' },
      // Its new folder is not there: the rename fails after the old one was set aside.
      { target: 't/day=2026-11-02', fresh: 't/day=2026-11-02' },
    ];
    await expect(applyMoves(out, scratch, moves)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(readdirSync(join(out, 't', 'day=2026-11-01'))).toEqual(['a.parquet']);
    expect(read('t/day=2026-11-01/a.parquet')).toBe('old 1');
    expect(read('t/day=2026-11-02/a.parquet')).toBe('old 2');
    expect(readdirSync(out)).toEqual(['t']);
  });

  it('putting back twice gives the same folders (stopped halfway, then run again)', async () => {
    const scratch = await createScratch(out);
    put(join(scratch, 't', 'day=2026-11-01', 'b.parquet'), 'new 1');
    put(join(scratch, 't', 'day=2026-11-03', 'b.parquet'), 'new 3');
    const moves: Move[] = [
      { target: 't/day=2026-11-01', fresh: 't/day=2026-11-01' },
      { target: 't/day=2026-11-02', fresh: null },
      { target: 't/day=2026-11-03', fresh: 't/day=2026-11-03' },
    ];
    // The moves as a killed export left them: all three done, the journal still there.
    mkdirSync(join(scratch, '.aside'));
    writeFileSync(join(scratch, 'moves.json'), JSON.stringify(moves));
    await rename(join(out, 't', 'day=2026-11-01'), join(scratch, '.aside', '0'));
    await rename(join(scratch, 't', 'day=2026-11-01'), join(out, 't', 'day=2026-11-01'));
    await rename(join(out, 't', 'day=2026-11-02'), join(scratch, '.aside', '1'));
    await rename(join(scratch, 't', 'day=2026-11-03'), join(out, 't', 'day=2026-11-03'));
    expect(readdirSync(join(out, 't')).sort()).toEqual(['day=2026-11-01', 'day=2026-11-03']);
    await undoMoves(out, scratch, moves);
    await undoMoves(out, scratch, moves);
    expect(readdirSync(join(out, 't')).sort()).toEqual(['day=2026-11-01', 'day=2026-11-02']);
    expect(read('t/day=2026-11-01/a.parquet')).toBe('old 1');
    expect(read('t/day=2026-11-02/a.parquet')).toBe('old 2');
    expect(readdirSync(scratch).sort()).toEqual(['.aside', 't']);
  });
});
