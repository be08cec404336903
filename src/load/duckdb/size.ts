/** Sizes in DuckDB's syntax (`128MB`, `1.5GiB`), as the config accepts them (config.ts). */

const UNITS: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** Bytes of a size such as `128MB` (DuckDB counts KB, MB... in powers of 1000); undefined when it is not one. */
export function sizeInBytes(size: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]+)$/i.exec(size.trim());
  const unit = m && UNITS[m[2]!.toLowerCase()];
  return unit ? Number(m[1]) * unit : undefined;
}
