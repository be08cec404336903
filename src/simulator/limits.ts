/** The simulator's bounds that its command line names too (in a module of its own, so the CLI's help loads no simulator). */
export const MAX_EXECUTIONS_PER_DAY = 1_000_000;
