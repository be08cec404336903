/**
 * Logging with pino: JSON by default, pretty on a TTY, child loggers carrying run, task and date.
 * Secrets never reach a line: known secret fields are redacted by path, and every secret value
 * the process knows (API key, password, login token, database password) is registered here and
 * scrubbed from every string of every line, wherever it appears.
 */
import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';

const secretValues = new Set<string>();

/** Registers a secret value so it is scrubbed from every log line (ignores short values). */
export function registerSecret(value: string | undefined | null): void {
  if (value && value.length >= 4) secretValues.add(value);
}

export function scrubSecrets(text: string): string {
  let out = text;
  for (const s of secretValues) if (out.includes(s)) out = out.split(s).join('[REDACTED]');
  return out;
}

function scrubDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrubSecrets(value);
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) {
    return {
      type: value.name,
      message: scrubSecrets(value.message),
      code: (value as { code?: unknown }).code,
    };
  }
  if (Array.isArray(value)) return value.map((v) => scrubDeep(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = scrubDeep(v, depth + 1);
  return out;
}

export const REDACT_PATHS = [
  'apiKey',
  'password',
  'token',
  'authorization',
  'headers.authorization',
  '*.apiKey',
  '*.password',
  '*.token',
  '*.authorization',
  '*.headers.authorization',
];

export interface LoggerOptions {
  level?: string;
  format?: 'auto' | 'json' | 'pretty';
  /** Where lines go; default stderr, so stdout stays for command output. */
  destination?: NodeJS.WritableStream;
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const dest = opts.destination ?? process.stderr;
  const isTty = Boolean((dest as { isTTY?: boolean }).isTTY);
  const usePretty = opts.format === 'pretty' || (opts.format !== 'json' && isTty);
  const stream = usePretty
    ? pretty({ destination: dest, colorize: isTty, sync: true, translateTime: 'SYS:HH:MM:ss' })
    : dest;
  return pino(
    {
      level: opts.level ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      // Errors are already serialized (and scrubbed) by the log formatter below.
      serializers: { err: (e: unknown) => e },
      formatters: { log: (obj) => scrubDeep(obj) as Record<string, unknown> },
      hooks: {
        logMethod(args, method) {
          const scrubbed = args.map((a) => (typeof a === 'string' ? scrubSecrets(a) : a));
          method.apply(this, scrubbed as Parameters<typeof method>);
        },
      },
    },
    stream,
  );
}

/** A logger that writes nothing (library use, tests). */
export const silentLogger: Logger = pino({ level: 'silent' });
