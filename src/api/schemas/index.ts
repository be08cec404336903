export * from './common.ts';
export * from './envelope.ts';
export * from './hierarchical.ts';
export * from './rank-number.ts';
export * from './legacy.ts';
export * from './diagnosis.ts';
export * from './account.ts';
