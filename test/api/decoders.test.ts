/** One decoder per GET endpoint: the client's methods and the bench's validation floor share it. */
import { describe, expect, it } from 'vitest';
import { GET_DECODERS } from '../../src/api/client-decoders.ts';
import { ENDPOINTS } from '../../src/api/endpoints.ts';

describe('GET_DECODERS', () => {
  it('has a decoder for every GET endpoint, and only for those', () => {
    const gets = Object.entries(ENDPOINTS)
      .filter(([, e]) => e.method === 'GET')
      .map(([name]) => name)
      .sort();
    expect(Object.keys(GET_DECODERS).sort()).toEqual(gets);
  });

  it('a decoder rejects a body of the wrong shape with the endpoint in the error', () => {
    const ctx = { endpoint: 'GET /api/v2/geo/task/info' as const, params: { task_id: 1 } };
    expect(() => GET_DECODERS.taskInfo({ success: true, data: { task_id: 'x' } }, ctx)).toThrow(
      /GET \/api\/v2\/geo\/task\/info/,
    );
  });
});
