/** Per-execution children -> rows: sources (2.6), screenshot (2.7), product cards (2.8). */
import type { DisplayJson, ProductCard, Screenshot, Source } from '../api/schemas/hierarchical.ts';
import type { LegacySource } from '../api/schemas/legacy.ts';
import type {
  ExecutionProductsRow,
  ExecutionScreenshotRow,
  ExecutionSourceRow,
  Json,
  ProductCardRow,
} from './rows.ts';

/**
 * A source row; `legacy` is the legacy source with the same ID (`id` = `source_id`) when the
 * legacy-source enrichment is on. Legacy renames: `task_prompt_id` is the execution,
 * `task_ai_id` the upstream request.
 */
export function toSourceRow(s: Source, legacy?: LegacySource | null): ExecutionSourceRow {
  return {
    source_id: s.source_id,
    prompt_task_id: s.prompt_task_id,
    task_id: s.task_id,
    project_id: s.project_id,
    customer_id: s.customer_id,
    url: s.url,
    title: s.title,
    domain: s.domain,
    cite_index: s.cite_index,
    snippet: s.snippet,
    upstream_task_id: s.upstream_task_id,
    site_name: legacy?.site_name ?? null,
    site_icon: legacy?.site_icon ?? null,
    published_at: legacy?.published_at || null,
    task_ai_id: legacy?.task_ai_id ?? null,
  };
}

export function toScreenshotRow(s: Screenshot): ExecutionScreenshotRow {
  return {
    prompt_task_id: s.prompt_task_id,
    task_id: s.task_id,
    project_id: s.project_id,
    customer_id: s.customer_id,
    screenshot_status: s.screenshot_status,
    screenshot_url: s.screenshot_url,
  };
}

export interface ProductSet {
  cards: readonly ProductCard[];
  total: number;
  supported: boolean | undefined;
  result_status: string | undefined;
  field_order: DisplayJson | undefined;
  field_labels: DisplayJson | undefined;
}

export function toProductsRow(promptTaskId: number, p: ProductSet): ExecutionProductsRow {
  return {
    prompt_task_id: promptTaskId,
    supported: p.supported ?? null,
    // `available` is not a value the spec names, but a supported platform with cards has to be
    // something other than `missing`: when the server leaves it out, derive it from the cards.
    result_status:
      p.result_status ??
      (p.supported === false ? 'unsupported' : p.cards.length > 0 ? 'available' : 'missing'),
    total: p.total,
    field_order: (p.field_order ?? null) as Json,
    field_labels: (p.field_labels ?? null) as Json,
  };
}

/**
 * The common card fields as columns. The complete field list is "not shown" (2.8 rule 6), so
 * each column takes the first present of the names real platforms use.
 */
const CARD_COLUMNS = {
  product_name: ['product_name', 'name', 'title', 'product', 'goods_name'],
  price: ['price', 'sale_price', 'current_price'],
  shop: ['shop', 'shop_name', 'store', 'seller'],
  source: ['source', 'platform', 'site'],
  link: ['link', 'url', 'product_url', 'href'],
} as const;

function pickText(card: ProductCard, names: readonly string[]): string | null {
  for (const n of names) {
    const v = card[n];
    if (typeof v === 'string' && v !== '') return v;
    if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  }
  return null;
}

/** Cards in display order across pages; `position` is 0-based. The whole card is kept as JSON. */
export function toCardRows(promptTaskId: number, cards: readonly ProductCard[]): ProductCardRow[] {
  return cards.map((card, position) => ({
    prompt_task_id: promptTaskId,
    position,
    card: card as Json,
    product_name: pickText(card, CARD_COLUMNS.product_name),
    price: pickText(card, CARD_COLUMNS.price),
    shop: pickText(card, CARD_COLUMNS.shop),
    source: pickText(card, CARD_COLUMNS.source),
    link: pickText(card, CARD_COLUMNS.link),
  }));
}
