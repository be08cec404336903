/**
 * What one execution owns besides its result: sources (2.6 and the legacy form), product cards
 * (2.8) and the screenshot (2.7). All rebuilt from the execution's hash; sources are generated
 * in order from one sequence, so page n costs the items up to its end and nothing is kept.
 */
import type { Brand } from './corpus.ts';
import {
  CARD_LABELS,
  FEATURES,
  MODEL_SUFFIXES,
  SHOP_SOURCES,
  SHOP_SUFFIXES,
  SITES,
  SNIPPETS,
  SOURCE_TITLES,
  fill,
} from './corpus.ts';
import type { ExecRef } from './executions.ts';
import { cardCount, screenshotUrl, sourceCount } from './executions.ts';
import { encodeSourceId } from './ids.ts';
import { Rng, derive } from './rng.ts';
import { ymdOfDay } from './time.ts';

/** A source with both its hierarchical (2.6) and legacy (2.11) fields. */
export interface SourceRecord {
  customer_id: number | null;
  project_id: number;
  task_id: number;
  prompt_task_id: number;
  source_id: number;
  url: string;
  title: string;
  domain: string;
  cite_index: string;
  snippet: string;
  upstream_task_id: string;
  site_name: string;
  site_icon: string;
  published_at: string;
}

export function upstreamTaskId(ref: ExecRef): string {
  const rng = new Rng(derive(ref.h, 20));
  return `${ref.pt.platform.key}-${rng.hex(24)}`;
}

/**
 * Share of sources that cite the watched brand's own site (the monitoring task's first brand_url),
 * as assistants do for official product pages: what `geo.citations_daily.owned` measures.
 */
const OWN_SITE_RATE = 0.12;

/** Sources of an execution with index < `upTo` (all of them by default), in cite order. */
export function sourcesOf(ref: ExecRef, upTo = Number.POSITIVE_INFINITY): SourceRecord[] {
  const n = Math.min(sourceCount(ref.h, ref.pt.ordinal, ref.k), upTo);
  const rng = new Rng(derive(ref.h, 21));
  // Its own stream: drawing from it leaves every other value of the source as it was.
  const ownRng = new Rng(derive(ref.h, 23));
  const official = ref.pt.mt.brand_urls[0];
  const upstream = upstreamTaskId(ref);
  const brands = ref.pt.mt.brands;
  const cat = ref.pt.mt.brand_cate_desc || (brands[0]?.short ?? '');
  const out: SourceRecord[] = [];
  for (let j = 0; j < n; j++) {
    const site = SITES[rng.int(0, SITES.length - 1)] as (typeof SITES)[number];
    const i1 = rng.int(0, brands.length - 1);
    const i2 = brands.length > 1 ? (i1 + rng.int(1, brands.length - 1)) % brands.length : i1;
    const b1 = (brands[i1] as Brand | undefined)?.short ?? cat;
    const b2 = (brands[i2] as Brand | undefined)?.short ?? cat;
    const vars = { year: 2025, cat, brand: b1, brand2: b2, feature: rng.pick(FEATURES), n: rng.int(3, 12) };
    const url = fill(site.url, {
      n: rng.int(100_000_000, 999_999_999),
      m: rng.int(1_000_000, 9_999_999),
      h: rng.hex(12),
      H: rng.hex(10).toUpperCase(),
      q: encodeURIComponent(b1),
    });
    const published = rng.float() < 0.15 ? '' : ymdOfDay(ref.day - rng.int(1, 720));
    const own = official !== undefined && ownRng.float() < OWN_SITE_RATE ? new URL(official) : null;
    out.push({
      customer_id: ref.pt.mt.customer_id,
      project_id: ref.pt.mt.project_id,
      task_id: ref.pt.task_id,
      prompt_task_id: ref.prompt_task_id,
      source_id: encodeSourceId(ref.prompt_task_id, j),
      url: own ? `${own.origin}${own.pathname.replace(/\/?$/, '/')}${ownRng.int(1000, 9999)}.html` : url,
      title: fill(rng.pick(SOURCE_TITLES), vars),
      domain: own ? own.hostname : site.domain,
      cite_index: String(j + 1),
      snippet: fill(rng.pick(SNIPPETS), vars),
      upstream_task_id: upstream,
      site_name: own ? (brands[0]?.full ?? own.hostname) : site.name,
      site_icon: `https://${own ? own.hostname : site.domain}/favicon.ico`,
      published_at: published,
    });
  }
  return out;
}

/** 2.6 form of a source record. */
export function toSource(s: SourceRecord): Record<string, unknown> {
  return {
    customer_id: s.customer_id,
    project_id: s.project_id,
    task_id: s.task_id,
    prompt_task_id: s.prompt_task_id,
    source_id: s.source_id,
    url: s.url,
    title: s.title,
    domain: s.domain,
    cite_index: s.cite_index,
    snippet: s.snippet,
    upstream_task_id: s.upstream_task_id,
  };
}

/** Legacy (2.11) form: `id` is the source_id, so both forms join on it. */
export function toLegacySource(s: SourceRecord): Record<string, unknown> {
  return {
    id: s.source_id,
    task_ai_id: s.upstream_task_id,
    task_prompt_id: s.prompt_task_id,
    url: s.url,
    title: s.title,
    site_name: s.site_name,
    site_icon: s.site_icon,
    cite_index: s.cite_index,
    published_at: s.published_at,
    snippet: s.snippet,
    domain: s.domain,
  };
}

export interface ProductSet {
  supported: boolean;
  result_status: 'available' | 'missing' | 'unsupported';
  cards: Record<string, unknown>[];
  field_order: string[];
  field_labels: Record<string, string>;
}

/** Product cards of an execution (2.8): unsupported platforms have none and say so. */
export function productsOf(ref: ExecRef): ProductSet {
  const fields = ref.pt.platform.cardFields;
  if (!fields)
    return { supported: false, result_status: 'unsupported', cards: [], field_order: [], field_labels: {} };
  const field_order = fields.slice();
  const field_labels: Record<string, string> = {};
  for (const f of field_order) field_labels[f] = CARD_LABELS[f] ?? f;
  const n = cardCount(ref.h, ref.pt);
  if (n === 0) return { supported: true, result_status: 'missing', cards: [], field_order, field_labels };
  const rng = new Rng(derive(ref.h, 22));
  const category = ref.pt.mt.category;
  const pool = category ? category.brands : ref.pt.mt.brands;
  const [lo, hi] = category ? category.price : [99, 999];
  const cards: Record<string, unknown>[] = [];
  for (let i = 0; i < n; i++) {
    const brand = pool[rng.int(0, pool.length - 1)] as Brand;
    const model = `${String.fromCharCode(65 + rng.int(0, 25))}${rng.int(1, 30)} ${rng.pick(MODEL_SUFFIXES)}`;
    const price = Math.round(lo + rng.float() * (hi - lo));
    const card: Record<string, unknown> = {};
    for (const f of field_order) {
      // Absent fields are omitted (spec 2.8 rule 3): optional ones go missing on some cards.
      if ((f === 'sales' || f === 'image' || f === 'rating') && rng.chance(0.25)) continue;
      if (f === 'shop' && rng.chance(0.1)) continue;
      switch (f) {
        case 'product_name':
          card[f] = category ? `${brand.short} ${category.product} ${model}` : `${brand.short} ${model}`;
          break;
        case 'price':
          card[f] = `¥${thousands(price)}.00`;
          break;
        case 'shop':
          card[f] = `${brand.short}${rng.pick(SHOP_SUFFIXES)}`;
          break;
        case 'source':
          card[f] = rng.pick(SHOP_SOURCES);
          break;
        case 'link':
          card[f] = `https://item.jd.com/${rng.int(10_000_000, 99_999_999)}.html`;
          break;
        case 'sales':
          card[f] = rng.chance(0.5) ? `已售${rng.int(1, 50)}万+` : `月销${rng.int(1, 99) * 100}+`;
          break;
        case 'image':
          card[f] = `https://img.sim.geo-sync.local/p/${rng.hex(16)}.jpg`;
          break;
        case 'rating':
          card[f] = `${(4 + rng.float()).toFixed(1)}分`;
          break;
      }
    }
    cards.push(card);
  }
  return { supported: true, result_status: 'available', cards, field_order, field_labels };
}

export interface ScreenshotRecord {
  customer_id: number | null;
  project_id: number;
  task_id: number;
  prompt_task_id: number;
  screenshot_status: number;
  screenshot_url: string;
}

/** 2.7; null when the execution has no screenshot (its screenshot_url is null). */
export function screenshotOf(ref: ExecRef): ScreenshotRecord | null {
  const url = screenshotUrl(ref);
  if (url === null) return null;
  return {
    customer_id: ref.pt.mt.customer_id,
    project_id: ref.pt.mt.project_id,
    task_id: ref.pt.task_id,
    prompt_task_id: ref.prompt_task_id,
    screenshot_status: 2,
    screenshot_url: url,
  };
}

/**
 * What prompt/screenshot serves (2.7): the screenshot, or for an execution without one the same
 * object with an empty `screenshot_url` (2.7 gives it as a string) and status 0. The execution
 * exists, so the answer is 200, not 404.
 */
export function screenshotObjectOf(ref: ExecRef): ScreenshotRecord {
  return (
    screenshotOf(ref) ?? {
      customer_id: ref.pt.mt.customer_id,
      project_id: ref.pt.mt.project_id,
      task_id: ref.pt.task_id,
      prompt_task_id: ref.prompt_task_id,
      screenshot_status: 0,
      screenshot_url: '',
    }
  );
}

/** 12345 -> "12,345" (Intl is too slow for the request path). */
function thousands(n: number): string {
  const s = String(n);
  let out = '';
  for (let i = 0; i < s.length; i++) {
    if (i > 0 && (s.length - i) % 3 === 0) out += ',';
    out += s[i];
  }
  return out;
}
