/**
 * A realistic, deterministic batch of warehouse rows for the load scenario, shaped as
 * src/transform/rows.ts: per execution about 4 ranks, 10 sources (6..14), 3 product cards
 * (0..6), a screenshot (92 %) and a product summary; answers of a few hundred characters of
 * Chinese text, 5 % missing; every legacy enrichment column filled, as a default sync leaves it.
 */
import type {
  ExecutionBatch,
  ExecutionProductsRow,
  ExecutionRankRow,
  ExecutionScreenshotRow,
  ExecutionSourceRow,
  ProductCardRow,
  PromptExecutionRow,
} from '../src/transform/rows.ts';

/** mulberry32: small, fast, deterministic. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const BRANDS = [
  '小米汽车',
  '理想汽车',
  '蔚来（NIO）',
  '比亚迪',
  '特斯拉',
  '问界',
  '极氪',
  '小鹏汽车',
  '零跑',
  '岚图',
];
const DOMAINS = [
  'xiaohongshu.com',
  'toutiao.com',
  'zhihu.com',
  'autohome.com.cn',
  'dongchedi.com',
  'bilibili.com',
];
const SITE_NAMES = ['小红书', '今日头条', '知乎', '汽车之家', '懂车帝', '哔哩哔哩'];
const PHRASES = [
  '新能源汽车市场的占有率持续提升，',
  '在售后网点覆盖广方面有明显改进。',
  '多位用户反馈新品迭代速度快，但价格偏高，',
  '建议关注大促活动与置换补贴政策。',
  '综合续航、智能驾驶与空间表现来看，',
  '家庭用户更看重安全配置和乘坐舒适性；',
  'The ranking considers price, range and after-sales service. ',
  '从口碑和保值率的角度，',
];
const ENGINES = [
  ['DeepSeek', 'deepseek-r1'],
  ['豆包', 'doubao'],
  ['Kimi', 'kimi'],
  ['文心一言', 'ernie'],
] as const;

export interface LoadData {
  batches: ExecutionBatch[];
  executions: number;
  rows: number;
  perTable: Record<string, number>;
}

function text(r: () => number, chars: number): string {
  let s = '';
  while (s.length < chars) s += PHRASES[Math.floor(r() * PHRASES.length)]!;
  return s.slice(0, chars);
}

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

/**
 * The question an execution asks: one of its platform task's five, as a monitoring task asks its
 * few questions every day (the simulator: 3 to 6). Each execution asked a question of its own
 * before, which made the per-question aggregates as large as the ranks. `drawn`, the text drawn
 * for it, is ignored: drawing it keeps every other value of the data the same.
 */
function promptOf(task_id: number, nth: number, drawn: string): string {
  void drawn;
  const k = nth % 5;
  return `${text(rng(task_id * 5 + k), 16)}（问题 ${task_id}-${k + 1}）`;
}

/** `executions` executions split into batches of `batchSize` (the product's default is 200). */
export function generateLoadData(
  executions: number,
  batchSize: number,
  seed = 20_261_121,
  /**
   * Units (platform task, day) the executions spread over, in order: 40 (one day of 40 platform
   * tasks, as one large unit per task) by default; more for a first read of many small units.
   */
  units = 40,
): LoadData {
  const r = rng(seed);
  const perUnit = Math.max(1, Math.ceil(executions / Math.max(1, units)));
  const batches: ExecutionBatch[] = [];
  const perTable: Record<string, number> = {
    prompt_executions: 0,
    execution_ranks: 0,
    execution_sources: 0,
    execution_screenshots: 0,
    execution_products: 0,
    product_cards: 0,
  };
  let sourceId = 91_000_000_000_000;
  /** Executions generated per platform task so far: its questions are asked in turn. */
  const asked = new Map<number, number>();
  let batch: ExecutionBatch = emptyBatch();
  for (let i = 0; i < executions; i++) {
    const prompt_task_id = 44_000_000_000 + i;
    // The default interleaves 40 tasks on one day; more units are read one after the other (a
    // first read: each small unit's executions together, days in order).
    const unit = units === 40 ? i % 40 : Math.floor(i / perUnit);
    const task_id = 330_000 + (unit % 40);
    const date = new Date(Date.UTC(2026, 10, 20) - Math.floor(unit / 40) * 86_400_000)
      .toISOString()
      .slice(0, 10);
    // As the API has them: a platform task belongs to one monitoring task (project_id) of one
    // page project (customer_id), and asks one engine. (Drawn per execution before, which made
    // every unit's aggregates several times larger than any account's; the draw is kept so that
    // every other value, and every row count, stays the same.)
    const project_id = 47_000 + (task_id % 10);
    const customer_id = 5_900 + ((project_id - 47_000) % 3);
    pick(r, ENGINES);
    const [model, engine] = ENGINES[task_id % ENGINES.length]!;
    const missing = r() < 0.05;
    const minute = String(Math.floor(r() * 60)).padStart(2, '0');
    const hour = String(Math.floor(r() * 24)).padStart(2, '0');
    const nRanks = 2 + Math.floor(r() * 5); // 2..6, mean 4
    const exec: PromptExecutionRow = {
      prompt_task_id,
      task_id,
      project_id,
      customer_id,
      prompt_name: promptOf(task_id, asked.get(task_id) ?? 0, text(r, 12 + Math.floor(r() * 8))),
      date_time: date,
      hours: Number(hour),
      status: 2,
      model,
      engine,
      brand_exposure: `${Math.floor(r() * 100)}%`,
      screenshot_url: `https://screenshots.example.com/${date}/${prompt_task_id}.png`,
      result_status: missing ? 'missing' : 'available',
      answer: missing ? null : text(r, 300 + Math.floor(r() * 600)),
      think: missing ? null : text(r, 50 + Math.floor(r() * 150)),
      rank_exposure: r() < 0.5 ? '' : `${Math.floor(r() * 100)}%`,
      rank_exposure_number: String(nRanks),
      created_at: `${date}T${hour}:${minute}:10+08:00`,
      updated_at: `${date}T${hour}:${minute}:55+08:00`,
    };
    batch.executions.push(exec);
    asked.set(task_id, (asked.get(task_id) ?? 0) + 1);
    for (let k = 0; k < nRanks; k++) {
      const brand = BRANDS[(i + k) % BRANDS.length]!;
      const rank: ExecutionRankRow = {
        prompt_task_id,
        ordinal: k,
        brand,
        brand_short: brand.slice(0, 2),
        position: r() < 0.15 ? null : k + 1,
        visibility: Math.floor(r() * 100),
        score: Math.floor(r() * 100),
        raw_values: null,
      };
      batch.ranks.push(rank);
    }
    const nSources = 6 + Math.floor(r() * 9); // 6..14, mean 10
    for (let k = 0; k < nSources; k++) {
      const d = Math.floor(r() * DOMAINS.length);
      const upstream = `${engine}-${(prompt_task_id * 2_654_435_761).toString(16).slice(0, 24)}`;
      const source: ExecutionSourceRow = {
        source_id: sourceId++,
        prompt_task_id,
        task_id,
        project_id,
        customer_id,
        url: `https://www.${DOMAINS[d]}/article/${Math.floor(r() * 1e12)}/`,
        title: text(r, 14 + Math.floor(r() * 10)),
        domain: DOMAINS[d]!,
        cite_index: String(k + 1),
        snippet: text(r, 30 + Math.floor(r() * 30)),
        upstream_task_id: upstream,
        site_name: SITE_NAMES[d]!,
        site_icon: `https://${DOMAINS[d]}/favicon.ico`,
        published_at: `2025-${String(1 + Math.floor(r() * 12)).padStart(2, '0')}-1${Math.floor(r() * 10)}`,
        task_ai_id: upstream,
      };
      batch.sources.push(source);
    }
    if (r() < 0.92) {
      const shot: ExecutionScreenshotRow = {
        prompt_task_id,
        task_id,
        project_id,
        customer_id,
        screenshot_status: 2,
        screenshot_url: exec.screenshot_url!,
      };
      batch.screenshots.push(shot);
    }
    const nCards = missing ? 0 : Math.floor(r() * 7); // 0..6, mean 3
    const products: ExecutionProductsRow = {
      prompt_task_id,
      supported: true,
      result_status: missing ? 'missing' : 'available',
      total: nCards,
      field_order: ['product_name', 'price', 'shop', 'link', 'image'],
      field_labels: { product_name: '商品名称', price: '价格', shop: '店铺', link: '链接', image: '图片' },
    };
    batch.products.push(products);
    for (let k = 0; k < nCards; k++) {
      const brand = pick(r, BRANDS);
      const product_name = `${brand} 纯电SUV V${Math.floor(r() * 30)} Pro`;
      const price = `¥${Math.floor(100_000 + r() * 200_000).toLocaleString('en-US')}.00`;
      const shop = `${brand}京东自营旗舰店`;
      const link = `https://item.jd.com/${Math.floor(r() * 1e8)}.html`;
      const card: ProductCardRow = {
        prompt_task_id,
        position: k,
        card: {
          product_name,
          price,
          shop,
          link,
          image: `https://img.example.com/p/${prompt_task_id}-${k}.jpg`,
        },
        product_name,
        price,
        shop,
        source: null,
        link,
      };
      batch.cards.push(card);
    }
    if (batch.executions.length === batchSize || i === executions - 1) {
      perTable.prompt_executions! += batch.executions.length;
      perTable.execution_ranks! += batch.ranks.length;
      perTable.execution_sources! += batch.sources.length;
      perTable.execution_screenshots! += batch.screenshots.length;
      perTable.execution_products! += batch.products.length;
      perTable.product_cards! += batch.cards.length;
      batches.push(batch);
      batch = emptyBatch();
    }
  }
  const rows = Object.values(perTable).reduce((a, b) => a + b, 0);
  return { batches, executions, rows, perTable };
}

function emptyBatch(): ExecutionBatch {
  return { executions: [], ranks: [], sources: [], screenshots: [], products: [], cards: [] };
}
