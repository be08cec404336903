/**
 * Where each configured value came from (a flag, an environment variable, the config file), so a
 * problem names what the user set: a bad `--concurrency` is not blamed on GEO_CONCURRENCY, nor a
 * key of the `--config` file on the variable that was never set. Kept per loaded config, so a
 * check made after loading (`schedule`'s cron expression) names the same source.
 */

export class ConfigSources {
  readonly #labels = new Map<string, string>();

  /** Records that `path` (dotted, e.g. `duckdb.memoryLimit`) was set by `label`. */
  set(path: string, label: string): void {
    this.#labels.set(path, label);
  }

  /** Records every member of a config file's object, nested objects member by member. */
  setFile(value: Record<string, unknown>, where: string, prefix = ''): void {
    for (const [k, v] of Object.entries(value)) {
      const path = prefix ? `${prefix}.${k}` : k;
      this.set(path, `${where}: ${path}`);
      if (typeof v === 'object' && v !== null && !Array.isArray(v))
        this.setFile(v as Record<string, unknown>, where, path);
    }
  }

  /**
   * The source of the value at `path`, or of the nearest enclosing value set whole (a file's
   * `"duckdb": 5` for `duckdb.memoryLimit`); undefined for a default.
   */
  of(path: string): string | undefined {
    for (let p = path; p !== ''; p = p.includes('.') ? p.slice(0, p.lastIndexOf('.')) : '') {
      const label = this.#labels.get(p);
      if (label) return label;
    }
    return undefined;
  }
}

const BY_CONFIG = new WeakMap<object, ConfigSources>();

export function rememberSources(config: object, sources: ConfigSources): void {
  BY_CONFIG.set(config, sources);
}

/**
 * How a problem with `key` of a loaded config names its source: `--cron (schedule)`,
 * `GEO_SCHEDULE (schedule)`, `--config geo.json: schedule`, or the bare key for a default.
 */
export function configSource(config: object, key: string): string {
  return BY_CONFIG.get(config)?.of(key) ?? key;
}
