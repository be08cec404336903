/**
 * ReadShortcuts decides which child requests a run makes. prompt/products: the first
 * ask of a platform task goes alone, its executions started meanwhile wait for its answer and are
 * answered from it when it says `unsupported`; a supported or failed first answer lets them ask.
 * Per instance (a run): a new run asks again. prompt/screenshot: asked only where the listed item
 * names one.
 */
import { describe, expect, it } from 'vitest';
import { emptyProducts, type ProductsResult } from '../../src/extract/port.ts';
import { isUnsupportedAnswer, ReadShortcuts } from '../../src/extract/shortcuts.ts';

const unsupported = (): ProductsResult => ({
  ...emptyProducts(),
  supported: false,
  result_status: 'unsupported',
  field_order: [],
  field_labels: {},
});
const supported = (): ProductsResult => ({
  ...emptyProducts(),
  supported: true,
  result_status: 'missing',
  field_order: ['price'],
  field_labels: { price: '价格' },
});

/** An ask whose answer the test releases, counting the asks made. */
function asker(answer: () => Promise<ProductsResult>) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const made = { n: 0 };
  return { made, release, ask: () => (made.n++, gate.then(answer)) };
}

describe('ReadShortcuts: products', () => {
  it('executions started while the first ask is in flight take its unsupported answer', async () => {
    const s = new ReadShortcuts();
    const a = asker(async () => unsupported());
    const answers = [1, 2, 3].map(() => s.products(7, a.ask));
    expect(a.made.n).toBe(1);
    a.release();
    const got = await Promise.all(answers);
    expect(a.made.n).toBe(1);
    expect(got.map((g) => g.asked)).toEqual([true, false, false]);
    for (const g of got) expect(g.products).toEqual(unsupported());
    // Later executions of the task too, without waiting; another task asks for itself.
    expect(await s.products(7, a.ask)).toEqual({ products: unsupported(), asked: false });
    expect(s.notAsked.products).toBe(3);
    const b = asker(async () => unsupported());
    const other = s.products(8, b.ask);
    b.release();
    expect((await other).asked).toBe(true);
  });

  it('a supported answer lets the waiting executions ask, each for its own', async () => {
    const s = new ReadShortcuts();
    const a = asker(async () => supported());
    const answers = [1, 2, 3].map(() => s.products(7, a.ask));
    a.release();
    expect((await Promise.all(answers)).map((g) => g.asked)).toEqual([true, true, true]);
    expect(a.made.n).toBe(3);
    expect(s.notAsked.products).toBe(0);
  });

  it('a failed first ask lets the others ask; a new run asks again', async () => {
    const s = new ReadShortcuts();
    let first = true;
    const a = asker(async () => {
      if (first) {
        first = false;
        throw new Error('503 after retries');
      }
      return unsupported();
    });
    const answers = [1, 2].map(() => s.products(7, a.ask));
    a.release();
    const [one, two] = await Promise.allSettled(answers);
    expect(one!.status).toBe('rejected');
    expect(two).toEqual({ status: 'fulfilled', value: { products: unsupported(), asked: true } });
    // Known from then on, in this run; not in the next.
    expect((await s.products(7, a.ask)).asked).toBe(false);
    const next = new ReadShortcuts();
    const c = asker(async () => unsupported());
    const again = next.products(7, c.ask);
    c.release();
    expect((await again).asked).toBe(true);
  });

  it.each([
    ['supported=false', { supported: false }, true],
    ['result_status unsupported', { result_status: 'unsupported' }, true],
    ['supported says otherwise', { supported: true, result_status: 'unsupported' }, false],
    ['missing', { supported: true, result_status: 'missing' }, false],
    ['a 404 read nothing', {}, false],
    ['cards after all', { supported: false, total: 1 }, false],
  ])('which answers are unsupported: %s', (_n, o, want) => {
    expect(isUnsupportedAnswer({ ...emptyProducts(), ...o })).toBe(want);
  });
});

describe('ReadShortcuts: screenshots', () => {
  it('asks only where the listed item names one (null or empty: none), counting the others', () => {
    const s = new ReadShortcuts();
    expect(s.asksScreenshot({ screenshot_url: 'https://img.example/1.png' })).toBe(true);
    expect(s.asksScreenshot({ screenshot_url: null })).toBe(false);
    expect(s.asksScreenshot({ screenshot_url: '' })).toBe(false);
    expect(s.notAsked.screenshots).toBe(2);
  });
});
