import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, registerSecret } from '../../src/log.ts';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { lines, stream };
}

describe('logger redaction', () => {
  it('redacts secret fields by path and scrubs registered secret values everywhere', () => {
    const { lines, stream } = capture();
    const log = createLogger({ format: 'json', destination: stream });
    registerSecret('key-abcdef-123');
    registerSecret('pg-password-xyz');
    log.info({ apiKey: 'key-abcdef-123', config: { password: 'other-pw-77' } }, 'start');
    log.warn({ url: 'postgres://u:pg-password-xyz@h/db' }, 'connecting with key-abcdef-123');
    log.error({ err: new Error('failed for token key-abcdef-123') }, 'boom');
    log.child({ headers: { authorization: 'Bearer key-abcdef-123' } }).info('child');
    const text = lines.join('');
    expect(lines).toHaveLength(4);
    for (const secret of ['key-abcdef-123', 'pg-password-xyz', 'other-pw-77'])
      expect(text).not.toContain(secret);
    expect(text).toContain('[REDACTED]');
  });
});
