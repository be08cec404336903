/** The AI platforms a monitoring task may watch (`ai_platform` of legacy create and edit). */
export const ALLOWED_AI_PLATFORMS = [
  'deepseek',
  'yuanbao',
  'yuanbao_auto',
  'kimi_back',
  'wenxiaoyan',
  'nami',
  'doubao',
  'baidu',
  'baidu_without_search',
  'baidu_default',
  'ai_douyin',
  'qwen',
] as const;
