/**
 * Reading the documentation as the docs tests need it: the pages, their fenced blocks with the
 * marker line before each, their headings' anchors as GitHub makes them, and their links.
 *
 * The marker convention (docs/developing.md, "Documentation"), an HTML comment on the line
 * before a fence, invisible on GitHub:
 *
 *   <!-- example: runs -->                  shell, run; exit 0 expected
 *   <!-- example: runs, exit 3 -->          shell, run; exit 3 expected
 *   <!-- example: sql -->                   SQL, run on DuckDB and PostgreSQL
 *   <!-- example: sql, duckdb -->           SQL, DuckDB only (also: postgres, duckdb-cli)
 *   <!-- example: needs a real account -->  not run: it needs the real API and its IDs
 *   <!-- example: not run: REASON -->       not run, for the reason given
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Generated from src/load/dictionary.ts; its text is the generator's, not the page's. */
export const GENERATED = new Set(['docs/data-dictionary.md']);

/** README.md, then docs/*.md in name order: paths relative to the repository. */
export function docPages(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

export function readPage(page: string): string {
  return readFileSync(join(ROOT, page), 'utf8');
}

export type Marker =
  | { kind: 'runs'; exit: number }
  | { kind: 'sql'; on: 'both' | 'duckdb' | 'postgres' | 'duckdb-cli' }
  | { kind: 'needs-account' }
  | { kind: 'not-run'; reason: string };

export interface Block {
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  /** The block's text, the fence's indentation removed. */
  code: string;
  /** The marker text, when the line before the fence (blank lines aside) is one. */
  markerText?: string;
}

export const SHELL_LANGS = new Set(['sh', 'bash', 'shell', 'console', 'zsh']);

/** Every fenced block of a page, with the marker comment before it if any. */
export function blocks(page: string, text = readPage(page)): Block[] {
  const lines = text.split('\n');
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const l = lines[j]!;
      if (l.trim().startsWith(fence!) && l.trim().replace(/[`~]/g, '') === '') break;
      body.push(l.startsWith(indent!) ? l.slice(indent!.length) : l.trimStart());
    }
    let k = i - 1;
    while (k >= 0 && lines[k]!.trim() === '') k--;
    const marker = k >= 0 ? /^\s*<!--\s*example:\s*(.*?)\s*-->\s*$/.exec(lines[k]!) : null;
    out.push({
      page,
      line: i + 1,
      lang: lang!.toLowerCase(),
      code: body.join('\n'),
      markerText: marker?.[1],
    });
    i = j;
  }
  return out;
}

/** The marker's meaning, or why it is not one. */
export function parseMarker(text: string): Marker | { error: string } {
  let m: RegExpExecArray | null;
  if ((m = /^runs(?:,\s*exit\s+(\d+))?$/.exec(text))) return { kind: 'runs', exit: Number(m[1] ?? 0) };
  if ((m = /^sql(?:,\s*(duckdb|postgres|duckdb-cli))?$/.exec(text))) {
    return { kind: 'sql', on: (m[1] as 'duckdb' | 'postgres' | 'duckdb-cli' | undefined) ?? 'both' };
  }
  if (text === 'needs a real account') return { kind: 'needs-account' };
  if ((m = /^not run:\s*(\S.*)$/.exec(text))) return { kind: 'not-run', reason: m[1]! };
  return {
    error:
      `unknown marker "${text}": use "runs", "runs, exit N", "sql", "sql, duckdb|postgres|duckdb-cli", ` +
      '"needs a real account" or "not run: REASON"',
  };
}

/** Lines outside fenced blocks and with inline code removed: where links and headings live. */
export function prose(text: string): string[] {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of text.split('\n')) {
    const f = /^\s*(`{3,}|~{3,})/.exec(line);
    if (f) {
      if (fence === null) fence = f[1]!;
      else if (line.trim().startsWith(fence)) fence = null;
      out.push('');
      continue;
    }
    out.push(fence === null ? line : '');
  }
  return out;
}

/**
 * The anchors GitHub gives a page's headings (github-slugger): the heading's rendered text
 * lower-cased, every character but letters, digits, marks, `_`, `-` and spaces removed, spaces
 * made `-`; a repeated slug gets `-1`, `-2`, ...
 */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(text)) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const rendered = h[1]!
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links: their text
      .replace(/<[^>]+>/g, '') // HTML tags
      .replace(/`/g, '')
      .replace(/\*\*|__/g, '');
    const base = rendered
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

export interface Link {
  page: string;
  line: number;
  target: string;
}

/** Inline links `[text](target)` of a page's prose (not inside code). */
export function links(page: string, text = readPage(page)): Link[] {
  const out: Link[] = [];
  prose(text).forEach((line, i) => {
    const noCode = line.replace(/`[^`]*`/g, '');
    for (const m of noCode.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      out.push({ page, line: i + 1, target: m[1]! });
    }
  });
  return out;
}
