/**
 * The AI platforms of spec 4.4 (`ai_platform` values) with the display name and engine a real
 * platform task carries, and which of them have product cards (spec 2.8 rule 1: four).
 */
import { ALLOWED_AI_PLATFORMS } from '../api/endpoints.ts';

export type PlatformKey = (typeof ALLOWED_AI_PLATFORMS)[number];

export interface PlatformDef {
  key: PlatformKey;
  model_name: string;
  engine: string;
  /** Has a reasoning text (`think`) next to the answer. */
  reasons: boolean;
  /** Product card fields in display order when the platform supports cards (spec 2.8), else null. */
  cardFields: readonly string[] | null;
  /** Legacy task/result with_products=1 returns cards only for two platform families (spec 4.4). */
  legacyProducts: boolean;
}

const P = (
  key: PlatformKey,
  model_name: string,
  engine: string,
  reasons: boolean,
  cardFields: readonly string[] | null = null,
  legacyProducts = false,
): PlatformDef => ({ key, model_name, engine, reasons, cardFields, legacyProducts });

export const PLATFORMS: Readonly<Record<PlatformKey, PlatformDef>> = {
  deepseek: P('deepseek', 'DeepSeek', 'deepseek-r1', true, [
    'product_name',
    'price',
    'shop',
    'link',
    'image',
  ]),
  yuanbao: P(
    'yuanbao',
    '腾讯元宝',
    'hunyuan-t1',
    true,
    ['product_name', 'price', 'source', 'link', 'rating'],
    true,
  ),
  yuanbao_auto: P('yuanbao_auto', '腾讯元宝（自动）', 'hunyuan-turbos', false),
  kimi_back: P('kimi_back', 'Kimi', 'kimi-k2', false, ['product_name', 'price', 'shop', 'link', 'sales']),
  wenxiaoyan: P('wenxiaoyan', '文小言', 'ernie-4.5', false),
  nami: P('nami', '纳米AI搜索', 'nami-search', false),
  doubao: P(
    'doubao',
    '豆包',
    'doubao-1.5-pro',
    true,
    ['product_name', 'price', 'shop', 'source', 'link', 'sales', 'image'],
    true,
  ),
  baidu: P('baidu', '百度AI搜索', 'baidu-ai-search', false),
  baidu_without_search: P('baidu_without_search', '百度（不联网）', 'ernie-x1', true),
  baidu_default: P('baidu_default', '百度（默认）', 'baidu-default', false),
  ai_douyin: P('ai_douyin', '抖音AI搜索', 'douyin-search', false),
  qwen: P('qwen', '通义千问', 'qwen-max', true),
};

export const PLATFORM_KEYS: readonly PlatformKey[] = ALLOWED_AI_PLATFORMS;

export function isPlatformKey(s: string): s is PlatformKey {
  return Object.prototype.hasOwnProperty.call(PLATFORMS, s);
}

/** Monitoring task / platform task status names (spec 2.2). */
export const STATUS_NAMES: Readonly<Record<number, string>> = {
  [-2]: '欠费暂停',
  [-1]: '已暂停',
  0: '待执行',
  1: '进行中',
  2: '已完成',
};
