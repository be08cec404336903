/**
 * Logging with pino: JSON by default, pretty on a TTY, child loggers carrying run, task and date.
 * Secrets never reach a line: known secret fields are redacted by path and by name at any depth,
 * every secret value the process knows (API key, password, login token, database password) is
 * registered (redact.ts) and scrubbed from every string of every line and binding, and URL
 * passwords are masked. Errors keep their evidence: class, code, message, stack, own context and
 * the whole cause chain, each scrubbed the same way.
 */
import { createRequire } from 'node:module';
import { pino, type Bindings, type ChildLoggerOptions, type Logger } from 'pino';
import type { build as prettyStream } from 'pino-pretty';
import { scrubDeep, scrubSecrets } from './redact.ts';

export { maskUrlPassword, registerSecret, scrubDeep, scrubSecrets } from './redact.ts';

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

/**
 * pino-pretty, loaded the first time a logger is pretty: a process that logs JSON (a service, a
 * script, every test) does not pay for loading it.
 */
function pretty(): typeof prettyStream {
  return (createRequire(import.meta.url)('pino-pretty') as { build: typeof prettyStream }).build;
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const dest = opts.destination ?? process.stderr;
  const isTty = Boolean((dest as { isTTY?: boolean }).isTTY);
  const usePretty = opts.format === 'pretty' || (opts.format !== 'json' && isTty);
  const stream = usePretty
    ? pretty()({ destination: dest, colorize: isTty, sync: true, translateTime: 'SYS:HH:MM:ss' })
    : dest;
  const logger = pino(
    {
      level: opts.level ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      // Errors are already serialized (and scrubbed) by the log formatter below.
      serializers: { err: (e: unknown) => e },
      formatters: {
        log: (obj) => scrubDeep(obj) as Record<string, unknown>,
        bindings: (bindings) => scrubDeep(bindings) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          const scrubbed = args.map((a) => (typeof a === 'string' ? scrubSecrets(a) : a));
          method.apply(this, scrubbed as Parameters<typeof method>);
        },
      },
    },
    stream,
  );
  // pino serializes a child's bindings once, at creation, without the formatters above (children
  // reset the bindings formatter): scrub them on the way in. Children are created with
  // Object.create(parent), so every descendant inherits this method.
  type ChildFn = (this: unknown, b: Bindings, o?: ChildLoggerOptions) => Logger;
  const child = logger.child as unknown as ChildFn;
  const scrubbedChild: ChildFn = function (bindings, options) {
    return child.call(this, scrubDeep(bindings) as Bindings, options);
  };
  logger.child = scrubbedChild as unknown as Logger['child'];
  return logger;
}

/** A logger that writes nothing (library use, tests). */
export const silentLogger: Logger = pino({ level: 'silent' });
