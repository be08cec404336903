/**
 * The calendar and timestamp functions live in ../time.ts, a leaf module any layer may import
 * (api/ decodes the API's timestamps with them); this name is kept for the modules that import
 * it from here.
 */
export * from '../time.ts';
