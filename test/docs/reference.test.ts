/**
 * The reference says what the code says: the commands `geo-sync --help` lists are the README's
 * table and docs/commands.md's sections, each with the options its own `--help` lists; every
 * variable the configuration reads is in docs/configuration.md.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.ts';
import { ROOT, prose, readPage } from './markdown.ts';

const run = promisify(execFile);

async function help(path: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [BIN, ...path, '--help'], { encoding: 'utf8' });
  return stdout;
}

/** Names of the `Commands:` section of a help text (without `help`). */
function subcommands(text: string): string[] {
  const section = text.split(/^Commands:$/m)[1]?.split(/^\S/m)[0] ?? '';
  return [...section.matchAll(/^ {2}(\S+)/gm)].map((m) => m[1]!).filter((n) => n !== 'help');
}

/** Long options of a help text's `Options:` section (without --help). */
function options(text: string): string[] {
  const section = text.split(/^Options:$/m)[1]?.split(/^\S/m)[0] ?? '';
  return [...section.matchAll(/^ {2}(?:-\w, )?(--[\w-]+)/gm)].map((m) => m[1]!).filter((o) => o !== '--help');
}

interface Tree {
  /** The commands `geo-sync --help` lists. */
  top: string[];
  /** Every command that takes options (no subcommands), by path (`state show`), with its options. */
  leaves: Map<string, string[]>;
}

/**
 * The help text of every command, as `geo-sync <command> --help` prints it, from one process:
 * the built CLI is loaded with commander's parse replaced by a walk of the program that prints
 * each command's `helpInformation()` (what --help writes), instead of one process per command.
 */
const DUMP = `
import { Command } from 'commander';
Command.prototype.parseAsync = async function () {
  const out = {};
  const walk = (cmd, path) => {
    out[path.join(' ')] = cmd.helpInformation();
    for (const sub of cmd.commands) walk(sub, [...path, sub.name()]);
  };
  walk(this, []);
  process.stdout.write(JSON.stringify(out));
  process.exit(0);
};
await import(process.argv[1]);
`;

async function commandTree(): Promise<Tree> {
  const topHelp = await help([]);
  const { stdout } = await run(
    process.execPath,
    ['--input-type=module', '-e', DUMP, new URL('../../dist/cli.js', import.meta.url).href],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
  );
  const helps = JSON.parse(stdout) as Record<string, string>;
  // The dump is the real help: `geo-sync --help` printed the top level's text (and, after it, the
  // exit codes, which commander adds as text of their own).
  expect(topHelp.startsWith(helps['']!)).toBe(true);
  const leaves = new Map<string, string[]>();
  for (const [path, text] of Object.entries(helps)) {
    if (path === '' || subcommands(text).length > 0 || path.endsWith(' help')) continue;
    leaves.set(path, options(text));
  }
  return { top: subcommands(topHelp), leaves };
}

/** The README's commands table: the command cell of each row, unescaped. */
function readmeRows(): string[] {
  const text = readPage('README.md');
  const table = text.slice(text.indexOf('## Commands'), text.indexOf('## Exit codes'));
  return [...table.matchAll(/^\| `(.+?)` +\|/gm)].map((m) => m[1]!.replace(/\\\|/g, '|'));
}

/** docs/commands.md: its `## command` sections' text, by command. */
function commandSections(): Map<string, string> {
  const lines = prose(readPage('docs/commands.md'));
  const out = new Map<string, string>();
  let current: string | null = null;
  for (const line of lines) {
    const h = /^## (.+)$/.exec(line);
    if (h) {
      current = h[1]!;
      out.set(current, '');
    } else if (current !== null) out.set(current, `${out.get(current)}${line}\n`);
  }
  return out;
}

const flagsIn = (text: string) => new Set([...text.matchAll(/--[a-z][\w-]*/g)].map((m) => m[0]));
/** Flags of the section's option list (`- `--flag ...`: ...` items), not of its prose. */
const listedFlags = (text: string) =>
  new Set(
    text
      .split('\n')
      .filter((l) => /^- `--/.test(l))
      .flatMap((l) => [...l.split(/`:/)[0]!.matchAll(/--[a-z][\w-]*/g)].map((m) => m[0])),
  );

describe('the reference says what the command line says', () => {
  let tree: Tree;
  beforeAll(async () => {
    tree = await commandTree();
  }, 120_000);

  it('`geo-sync --help` lists a command for each of the README table’s, and the reverse', () => {
    const tableTop = [...new Set(readmeRows().map((r) => r.split(' ')[0]!))].sort();
    expect(tableTop).toEqual([...tree.top].sort());
  });

  it('every subcommand is in the README’s table (as `group sub` or `group a|b`)', () => {
    const rows = readmeRows();
    const missing = [...tree.leaves.keys()]
      .filter((c) => c.includes(' '))
      .filter((c) => {
        const [g, s] = c.split(' ') as [string, string];
        return !rows.some(
          (r) => r.startsWith(`${g} ${s}`) || new RegExp(`^${g} (\\S+\\|)*${s}(\\|\\S+)*\\b`).test(r),
        );
      });
    expect(missing).toEqual([]);
  });

  it('every option in the README’s table is one its command takes', () => {
    const wrong: string[] = [];
    for (const row of readmeRows()) {
      const words = row.split(' ');
      const path = tree.leaves.has(`${words[0]} ${words[1]}`) ? `${words[0]} ${words[1]}` : words[0]!;
      const takes = new Set(tree.leaves.get(path) ?? []);
      for (const f of flagsIn(row)) if (!takes.has(f)) wrong.push(`${path}: ${f}`);
    }
    expect(wrong).toEqual([]);
  });

  it('docs/commands.md has a section per command, listing every option its --help lists, and no other', () => {
    const sections = commandSections();
    const common = listedFlags(
      sections.get('Options every command that talks to the API or the warehouse takes')!,
    );
    expect(common.size).toBeGreaterThan(5);
    const problems: string[] = [];
    for (const [cmd, opts] of tree.leaves) {
      const text = sections.get(cmd);
      if (text === undefined) {
        problems.push(`${cmd}: no "## ${cmd}" section`);
        continue;
      }
      const said = flagsIn(text);
      const listed = listedFlags(text);
      for (const o of opts) {
        // The common options are described once, at the top of the page.
        if (common.has(o)) continue;
        if (!said.has(o)) problems.push(`${cmd}: ${o} is in --help, not in the docs`);
      }
      for (const f of listed)
        if (!opts.includes(f)) problems.push(`${cmd}: ${f} is in the docs, not in --help`);
    }
    for (const c of common)
      if (!tree.leaves.get('sync')!.includes(c)) problems.push(`common: ${c} is not an option`);
    expect(problems).toEqual([]);
  });
});

describe('the configuration reference', () => {
  it('documents every variable the configuration reads', () => {
    const config = readPage('src/config.ts');
    const vars = [...config.matchAll(/^ {2}(GEO_[A-Z_]+): \{ key:/gm)].map((m) => m[1]!);
    expect(vars.length).toBeGreaterThan(30);
    const page = readPage('docs/configuration.md');
    expect(vars.filter((v) => !page.includes(`\`${v}\``))).toEqual([]);
    expect(page).toContain('`GEO_CONFIG`');
  });
});
