/** Every relative link and #anchor in README.md and docs/*.md resolves, as GitHub renders them. */
import { existsSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, anchors, docPages, links, readPage } from './markdown.ts';

const EXTERNAL = /^(?:[a-z][a-z0-9+.-]*:|\/\/)/i;

/** Why a link does not resolve, or null when it does. */
function broken(page: string, target: string): string | null {
  const [path, anchor] = target.split('#', 2) as [string, string | undefined];
  const file = path === '' ? page : normalize(join(dirname(page), decodeURIComponent(path)));
  if (file.startsWith('..')) return `${file} is outside the repository`;
  const abs = join(ROOT, file);
  if (!existsSync(abs)) return `${relative(ROOT, abs)} does not exist`;
  if (anchor === undefined || anchor === '') return null;
  if (!file.endsWith('.md') || statSync(abs).isDirectory())
    return `#${anchor} on ${file}, which is not a page`;
  const have = anchors(readPage(file));
  return have.has(decodeURIComponent(anchor).toLowerCase()) ? null : `${file} has no heading #${anchor}`;
}

describe('links', () => {
  it('the slug rules are GitHub’s', () => {
    const page = [
      '# What `--dry-run` estimates',
      '## Behind a connection pooler (PgBouncer)',
      '## The per-day aggregates: what the dashboards read',
      '## When to run `geo-sync rollups refresh`',
      '## Units: what is finished, and re-reading some',
      '## Notes',
      '## Notes',
      '```sh',
      '# not a heading',
      '```',
    ].join('\n');
    expect([...anchors(page)]).toEqual([
      'what---dry-run-estimates',
      'behind-a-connection-pooler-pgbouncer',
      'the-per-day-aggregates-what-the-dashboards-read',
      'when-to-run-geo-sync-rollups-refresh',
      'units-what-is-finished-and-re-reading-some',
      'notes',
      'notes-1',
    ]);
  });

  it('a broken link or anchor is found', () => {
    expect(broken('README.md', 'docs/no-such-page.md')).toMatch(/does not exist/);
    expect(broken('README.md', 'docs/commands.md#no-such-heading')).toMatch(/no heading/);
    expect(broken('docs/commands.md', '#exit-codes')).toBeNull();
    expect(broken('docs/commands.md', '../README.md#commands')).toBeNull();
  });

  for (const page of docPages()) {
    it(page, () => {
      const bad = links(page)
        .filter((l) => !EXTERNAL.test(l.target))
        .map((l) => ({ at: `${l.page}:${l.line}`, target: l.target, why: broken(l.page, l.target) }))
        .filter((l) => l.why !== null);
      expect(bad).toEqual([]);
    });
  }

  it('the README links every page of docs/', () => {
    const linked = new Set(
      links('README.md')
        .map((l) => l.target.split('#')[0]!)
        .filter((t) => t.startsWith('docs/')),
    );
    const pages = docPages().filter((p) => p.startsWith('docs/'));
    expect(pages.filter((p) => !linked.has(p))).toEqual([]);
  });
});
