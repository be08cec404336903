/** Reading what `schedule --metrics-port` serves: its URL from the log, its text as numbers. */

/** `name{a="b"} 1` lines of Prometheus text, keyed by `name{a="b"}` (labels as written). */
export function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

/** The /metrics URL the scheduler logged when its endpoint started listening. */
export function metricsUrl(stderr: string): string {
  const m = /"url":"(http:\/\/127\.0\.0\.1:\d+\/metrics)"/.exec(stderr);
  if (!m) throw new Error(`no metrics URL logged:\n${stderr.slice(-2000)}`);
  return m[1]!;
}
