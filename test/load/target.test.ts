import { describe, expect, it } from 'vitest';
import { openWarehouse, parseWarehouseTarget } from '../../src/load/index.ts';
import { maskPassword } from '../../src/load/target.ts';

describe('parseWarehouseTarget', () => {
  it('duckdb:<file path>, resolved against the working directory', () => {
    expect(parseWarehouseTarget('duckdb:./data/geo.duckdb', '/srv/app')).toEqual({
      dialect: 'duckdb',
      path: '/srv/app/data/geo.duckdb',
      description: 'duckdb:/srv/app/data/geo.duckdb',
    });
    expect(parseWarehouseTarget('duckdb:/abs/w.duckdb').dialect).toBe('duckdb');
  });

  it('postgres:// and postgresql:// URLs; the description masks the password', () => {
    const t = parseWarehouseTarget('postgres://geo:s3cr%40t@db.example:5433/warehouse?sslmode=require');
    expect(t).toMatchObject({
      dialect: 'postgres',
      url: 'postgres://geo:s3cr%40t@db.example:5433/warehouse?sslmode=require',
      description: 'postgres://geo:***@db.example:5433/warehouse?sslmode=require',
      password: 's3cr@t',
    });
    expect(t.description).not.toContain('s3cr');
    const q = parseWarehouseTarget('postgresql://geo@db/w?password=hunter22');
    expect(q.description).toBe('postgresql://geo@db/w?password=***');
    expect(q.dialect === 'postgres' && q.password).toBe('hunter22');
    expect(parseWarehouseTarget('postgres://db/w').description).toBe('postgres://db/w');
  });

  it.each([
    ['mysql://u:pw123@h/db', 'unsupported warehouse "mysql://u:***@h/db"'],
    ['', 'no warehouse given'],
    ['duckdb:', 'no file path'],
    ['duckdb::memory:', 'in-memory'],
    ['./geo.duckdb', 'unsupported warehouse'],
    ['postgres://', 'no host'],
  ])('refuses %j with one line naming GEO_WAREHOUSE and the accepted forms', (target, detail) => {
    let message = '';
    try {
      parseWarehouseTarget(target);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain(detail);
    expect(message).toMatch(/^GEO_WAREHOUSE: /);
    expect(message).toContain('duckdb:<file path>');
    expect(message).toContain('postgres://');
    expect(message).not.toContain('\n');
    expect(message).not.toContain('pw123');
  });

  it('openWarehouse rejects a bad target with the same error', async () => {
    await expect(openWarehouse('sqlite:x.db')).rejects.toThrow(
      /^GEO_WAREHOUSE: unsupported warehouse "sqlite:x.db"/,
    );
  });
});

describe('maskPassword', () => {
  it('masks URL passwords and leaves other text alone', () => {
    expect(maskPassword('postgres://u:p@h/d')).toBe('postgres://u:***@h/d');
    expect(maskPassword('postgres://u@h/d')).toBe('postgres://u@h/d');
    expect(maskPassword('not a url u:p@h')).toBe('not a url u:p@h');
  });
});
