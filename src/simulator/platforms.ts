/**
 * The AI platforms of spec 4.4 (`ai_platform` values) with the display name and engine a real
 * platform task carries, their family (the vendor), and which of them have product cards.
 * Spec 2.8 rule 1 names four platforms with cards; 4.4 says only two platform families have
 * legacy product data. Both hold, and the legacy and hierarchical reads of one execution agree,
 * because the four are two families of two: Tencent's Yuanbao and ByteDance's Doubao and Douyin.
 */
import { ALLOWED_AI_PLATFORMS } from '../api/endpoints.ts';

export type PlatformKey = (typeof ALLOWED_AI_PLATFORMS)[number];

export interface PlatformDef {
  key: PlatformKey;
  model_name: string;
  engine: string;
  /** The vendor whose assistant this is (4.4 "platform families"). */
  family: string;
  /** Has a reasoning text (`think`) next to the answer. */
  reasons: boolean;
  /** Product card fields in display order when the platform supports cards (spec 2.8), else null. */
  cardFields: readonly string[] | null;
}

const P = (
  key: PlatformKey,
  model_name: string,
  engine: string,
  family: string,
  reasons: boolean,
  cardFields: readonly string[] | null = null,
): PlatformDef => ({ key, model_name, engine, family, reasons, cardFields });

export const PLATFORMS: Readonly<Record<PlatformKey, PlatformDef>> = {
  deepseek: P('deepseek', 'DeepSeek', 'deepseek-r1', 'deepseek', true),
  yuanbao: P('yuanbao', '腾讯元宝', 'hunyuan-t1', 'tencent', true, [
    'product_name',
    'price',
    'source',
    'link',
    'rating',
  ]),
  yuanbao_auto: P('yuanbao_auto', '腾讯元宝（自动）', 'hunyuan-turbos', 'tencent', false, [
    'product_name',
    'price',
    'shop',
    'link',
    'image',
  ]),
  kimi_back: P('kimi_back', 'Kimi', 'kimi-k2', 'moonshot', false),
  wenxiaoyan: P('wenxiaoyan', '文小言', 'ernie-4.5', 'baidu', false),
  nami: P('nami', '纳米AI搜索', 'nami-search', '360', false),
  doubao: P('doubao', '豆包', 'doubao-1.5-pro', 'bytedance', true, [
    'product_name',
    'price',
    'shop',
    'source',
    'link',
    'sales',
    'image',
  ]),
  baidu: P('baidu', '百度AI搜索', 'baidu-ai-search', 'baidu', false),
  baidu_without_search: P('baidu_without_search', '百度（不联网）', 'ernie-x1', 'baidu', true),
  baidu_default: P('baidu_default', '百度（默认）', 'baidu-default', 'baidu', false),
  ai_douyin: P('ai_douyin', '抖音AI搜索', 'douyin-search', 'bytedance', false, [
    'product_name',
    'price',
    'shop',
    'link',
    'sales',
  ]),
  qwen: P('qwen', '通义千问', 'qwen-max', 'alibaba', true),
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
