/**
 * Chinese word lists the world is built from. Realistic enough for a demo and for BI screens;
 * small enough that generating an answer costs a handful of string joins.
 */

export interface Brand {
  /** Full name as a platform's ranking shows it. */
  full: string;
  short: string;
}

export interface Category {
  name: string;
  /** Kind of product, used in card names ("扫地机器人 X20 Pro"). */
  product: string;
  brands: Brand[];
  /** Typical price range in yuan, for card prices and "N元以内" questions. */
  price: [number, number];
  /** Official site of the first brand: the URL of the page project that watches this category. */
  site: string;
}

const b = (full: string, short = full): Brand => ({ full, short });

export const CATEGORIES: readonly Category[] = [
  {
    name: '扫地机器人',
    product: '扫拖一体机器人',
    price: [1299, 5999],
    site: 'https://www.ecovacs.cn/robot/',
    brands: [
      b('科沃斯（ECOVACS）', '科沃斯'),
      b('石头科技（Roborock）', '石头'),
      b('追觅（Dreame）', '追觅'),
      b('云鲸（Narwal）', '云鲸'),
      b('小米米家', '米家'),
      b('美的'),
      b('360'),
      b('iRobot'),
    ],
  },
  {
    name: '空气净化器',
    product: '空气净化器',
    price: [699, 4999],
    site: 'https://www.mi.com/air-purifier/',
    brands: [
      b('小米米家', '米家'),
      b('352'),
      b('飞利浦（Philips）', '飞利浦'),
      b('布鲁雅尔（Blueair）', '布鲁雅尔'),
      b('戴森（Dyson）', '戴森'),
      b('美的'),
      b('霍尼韦尔（Honeywell）', '霍尼韦尔'),
      b('IQAir'),
    ],
  },
  {
    name: '新能源汽车',
    product: '纯电SUV',
    price: [109800, 329800],
    site: 'https://www.bydauto.com.cn/',
    brands: [
      b('比亚迪（BYD）', '比亚迪'),
      b('特斯拉（Tesla）', '特斯拉'),
      b('理想汽车', '理想'),
      b('蔚来（NIO）', '蔚来'),
      b('小鹏汽车', '小鹏'),
      b('问界（AITO）', '问界'),
      b('小米汽车'),
      b('零跑汽车', '零跑'),
    ],
  },
  {
    name: '抗老精华',
    product: '精华液',
    price: [199, 1680],
    site: 'https://www.lancome.com.cn/serum/',
    brands: [
      b('兰蔻（Lancôme）', '兰蔻'),
      b('雅诗兰黛（Estée Lauder）', '雅诗兰黛'),
      b('珀莱雅'),
      b('薇诺娜'),
      b('欧莱雅（L’Oréal）', '欧莱雅'),
      b('修丽可（SkinCeuticals）', '修丽可'),
      b('资生堂'),
      b('玉兰油（OLAY）', '玉兰油'),
    ],
  },
  {
    name: '全自动咖啡机',
    product: '全自动咖啡机',
    price: [1599, 12999],
    site: 'https://www.delonghi.com.cn/coffee/',
    brands: [
      b('德龙（De’Longhi）', '德龙'),
      b('飞利浦（Philips）', '飞利浦'),
      b('雀巢（Nespresso）', '雀巢'),
      b('柏翠'),
      b('小熊电器', '小熊'),
      b('惠家（Welhome）', '惠家'),
      b('东菱'),
      b('百胜图'),
    ],
  },
  {
    name: '智能手表',
    product: '智能手表',
    price: [399, 6499],
    site: 'https://consumer.huawei.com/cn/wearables/',
    brands: [
      b('华为（HUAWEI）', '华为'),
      b('苹果（Apple Watch）', '苹果'),
      b('小米'),
      b('佳明（Garmin）', '佳明'),
      b('OPPO'),
      b('vivo'),
      b('荣耀'),
      b('华米（Amazfit）', '华米'),
    ],
  },
  {
    name: '婴儿奶粉',
    product: '婴幼儿配方奶粉',
    price: [198, 498],
    site: 'https://www.feihe.com/',
    brands: [b('飞鹤'), b('美赞臣'), b('惠氏'), b('爱他美'), b('君乐宝'), b('伊利'), b('合生元'), b('雅培')],
  },
  {
    name: '洗碗机',
    product: '嵌入式洗碗机',
    price: [2499, 9999],
    site: 'https://www.fotile.com/product/dishwasher/',
    brands: [
      b('方太（FOTILE）', '方太'),
      b('西门子（SIEMENS）', '西门子'),
      b('美的'),
      b('海尔'),
      b('老板电器', '老板'),
      b('华帝'),
      b('博世（BOSCH）', '博世'),
      b('松下（Panasonic）', '松下'),
    ],
  },
  {
    name: '降噪耳机',
    product: '主动降噪耳机',
    price: [199, 2999],
    site: 'https://www.sony.com.cn/headphones/',
    brands: [
      b('索尼（SONY）', '索尼'),
      b('苹果（AirPods）', 'AirPods'),
      b('华为'),
      b('漫步者'),
      b('Bose'),
      b('小米'),
      b('OPPO'),
      b('森海塞尔'),
    ],
  },
  {
    name: '跑步鞋',
    product: '缓震跑鞋',
    price: [299, 1499],
    site: 'https://www.anta.com/running/',
    brands: [
      b('安踏'),
      b('李宁'),
      b('特步'),
      b('耐克（Nike）', '耐克'),
      b('阿迪达斯（adidas）', '阿迪达斯'),
      b('361度'),
      b('亚瑟士（ASICS）', '亚瑟士'),
      b('鸿星尔克'),
    ],
  },
];

/** Question templates: {year} {cat} {budget} {brand} {brand2}. */
export const QUESTIONS: readonly string[] = [
  '{year}年性价比最高的{cat}推荐',
  '{cat}哪个牌子好？',
  '{budget}元以内的{cat}怎么选',
  '{brand}和{brand2}的{cat}哪个更值得买',
  '{cat}十大品牌排行榜',
  '适合家庭使用的{cat}有哪些',
  '{cat}选购攻略：需要注意哪些参数',
  '口碑最好的{cat}品牌是哪个',
  '第一次买{cat}，有什么推荐吗',
  '{year}年{cat}品牌排名前五是哪些',
];

export const PROJECT_SUFFIXES: readonly string[] = [
  '品牌监测',
  'GEO曝光监测',
  '口碑追踪',
  'AI搜索排名',
  '竞品对比',
];

export const FEATURES: readonly string[] = [
  '综合性能均衡',
  '性价比突出',
  '做工扎实、质感好',
  '智能化程度高',
  '售后网点覆盖广',
  '续航表现优秀',
  '在专业评测中得分靠前',
  '新品迭代速度快',
  '用户复购率高',
];

export const CHANNELS: readonly string[] = ['京东', '天猫', '知乎', '小红书', '什么值得买', '抖音'];

export const AUDIENCES: readonly string[] = [
  '预算有限的年轻家庭',
  '追求品质的用户',
  '初次购买的用户',
  '对智能功能有要求的用户',
  '注重售后保障的用户',
];

export const INTROS: readonly string[] = [
  '根据{year}年的市场反馈和用户口碑，{cat}领域的主流品牌各有侧重。',
  '选购{cat}时，建议重点关注核心性能、售后服务和长期使用成本。',
  '综合电商销量、专业评测和社交平台讨论，下面整理了几款值得关注的{cat}。',
];

export const CONCLUSIONS: readonly string[] = [
  '总体来看，{brand}综合表现最好；如果预算有限，也可以考虑{brand2}。',
  '建议结合自身预算和使用场景，到官方渠道对比后再下单。',
  '以上排名仅供参考，价格和活动以各平台实时页面为准。',
];

export const THINKS: readonly string[] = [
  '用户想了解{cat}的推荐。我需要从品牌口碑、价格区间和核心参数几个方面整理，并给出排名。',
  '这个问题涉及{cat}的选购。先回忆主流品牌，再按性价比和用户评价排序，最后给出建议。',
  '需要比较几个{cat}品牌。可以参考近期评测和销量数据，注意不要遗漏售后和耗材成本。',
];

export interface SiteDef {
  domain: string;
  name: string;
  /** URL template: {n} number, {h} hex, {q} the category. */
  url: string;
}

export const SITES: readonly SiteDef[] = [
  { domain: 'zhihu.com', name: '知乎', url: 'https://www.zhihu.com/question/{n}/answer/{m}' },
  { domain: 'baike.baidu.com', name: '百度百科', url: 'https://baike.baidu.com/item/{q}/{n}' },
  { domain: 'sohu.com', name: '搜狐', url: 'https://www.sohu.com/a/{n}_{m}' },
  { domain: 'jd.com', name: '京东', url: 'https://item.jd.com/{n}.html' },
  { domain: 'smzdm.com', name: '什么值得买', url: 'https://post.smzdm.com/p/{h}/' },
  { domain: '163.com', name: '网易', url: 'https://www.163.com/dy/article/{H}.html' },
  { domain: 'xiaohongshu.com', name: '小红书', url: 'https://www.xiaohongshu.com/explore/{h}' },
  { domain: 'bilibili.com', name: '哔哩哔哩', url: 'https://www.bilibili.com/video/BV{H}' },
  { domain: 'zol.com.cn', name: '中关村在线', url: 'https://www.zol.com.cn/review/{n}.html' },
  { domain: 'pconline.com.cn', name: '太平洋电脑网', url: 'https://www.pconline.com.cn/x/{n}.html' },
  { domain: 'toutiao.com', name: '今日头条', url: 'https://www.toutiao.com/article/{n}{m}/' },
  { domain: 'thepaper.cn', name: '澎湃新闻', url: 'https://www.thepaper.cn/newsDetail_forward_{n}' },
];

export const SOURCE_TITLES: readonly string[] = [
  '{year}年{cat}推荐：{brand}、{brand2}怎么选？',
  '{cat}哪个牌子好？看完这篇就懂了',
  '{brand}{cat}深度评测：优缺点都在这里',
  '{cat}十大品牌排行榜（{year}最新）',
  '{brand} - 百度百科',
  '实测{n}款{cat}，这几款最值得买',
  '{brand}新品发布，{cat}市场再迎价格战',
];

export const SNIPPETS: readonly string[] = [
  '{brand}在{cat}市场的占有率持续提升，新品在{feature}方面有明显改进。',
  '从实测结果看，{brand}和{brand2}的差距主要在续航与售后，日常使用体验接近。',
  '多位用户反馈{brand}{cat}{feature}，但价格偏高，建议关注大促活动。',
  '{cat}选购时要看核心参数，不要只看宣传页面上的最大值。',
];

/** Per-field Chinese labels of product cards (field_labels). */
export const CARD_LABELS: Readonly<Record<string, string>> = {
  product_name: '商品名称',
  price: '价格',
  shop: '店铺',
  source: '来源',
  link: '链接',
  sales: '销量',
  image: '图片',
  rating: '评分',
};

export const SHOP_SUFFIXES: readonly string[] = ['京东自营旗舰店', '官方旗舰店', '天猫旗舰店', '专卖店'];
export const SHOP_SOURCES: readonly string[] = ['京东', '天猫', '拼多多', '抖音商城', '苏宁易购'];
export const MODEL_SUFFIXES: readonly string[] = ['Pro', 'Max', 'Plus', 'Ultra', 'SE', 'Air'];

export const USER_NAMES: readonly string[] = [
  '王晓明',
  '李娜',
  '张伟',
  '刘洋',
  '陈静',
  '杨帆',
  '赵磊',
  '周婷',
];
export const COMPANY_DOMAINS: readonly string[] = [
  'ecovacs.cn',
  'brand-insight.cn',
  'geo-lab.com.cn',
  'yunshang-tech.com',
  'mingpai.cn',
];

/** Diagnosis vocabulary. */
export const DIAGNOSIS_STEPS: readonly string[] = [
  '抓取页面',
  '解析结构化数据',
  '评估内容可信度',
  '检测AI平台可见性',
  '生成诊断报告',
];
export const DIAGNOSIS_ISSUES: readonly string[] = [
  '首页缺少结构化数据（Schema.org）标记',
  '产品页标题与正文主题不一致',
  '站点缺少常见问题（FAQ）页面',
  '移动端首屏加载时间超过3秒',
  '品牌介绍页未说明核心参数与资质',
  'robots.txt 屏蔽了部分AI爬虫',
];
export const DIAGNOSIS_WINS: readonly string[] = [
  '为产品页补充 Product 与 FAQPage 结构化数据',
  '在品牌介绍页增加权威认证与检测报告',
  '为每个核心问题建立独立的问答页面',
  '压缩首屏图片并启用缓存',
];
export const DIAGNOSIS_MODULES: readonly string[] = [
  '内容质量',
  '技术可抓取性',
  '品牌权威性',
  '结构化数据',
  '用户口碑',
];
export const DIAGNOSIS_ERRORS: readonly string[] = [
  '目标站点连接超时',
  '页面返回 403，无法抓取',
  '诊断服务内部错误，请稍后重试',
];

/** Replace `{name}` placeholders. */
export function fill(template: string, vars: Readonly<Record<string, string | number>>): string {
  let out = '';
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    if (open < 0) break;
    const close = template.indexOf('}', open);
    if (close < 0) break;
    out += template.slice(i, open);
    const v = vars[template.slice(open + 1, close)];
    out += v === undefined ? template.slice(open, close + 1) : String(v);
    i = close + 1;
  }
  return out + template.slice(i);
}
