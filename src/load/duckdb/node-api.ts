/**
 * @duckdb/node-api, loaded with require(). The package is CommonJS, ~120 files re-exported from
 * its index: imported as ESM, Node lexes each of them for its export names first, which costs more
 * than loading them (about 150 ms of every process that opens DuckDB). Its types are its own.
 */
import { createRequire } from 'node:module';
import type * as Api from '@duckdb/node-api';

const api = createRequire(import.meta.url)('@duckdb/node-api') as typeof Api;

export type * from '@duckdb/node-api';
// Each typed as the package types it (the declarations name no module of its own dependencies).
export const BIGINT: typeof Api.BIGINT = api.BIGINT;
export const BOOLEAN: typeof Api.BOOLEAN = api.BOOLEAN;
export const DOUBLE: typeof Api.DOUBLE = api.DOUBLE;
export const DuckDBDataChunk: typeof Api.DuckDBDataChunk = api.DuckDBDataChunk;
export const DuckDBDecimalType: typeof Api.DuckDBDecimalType = api.DuckDBDecimalType;
export const DuckDBInstance: typeof Api.DuckDBInstance = api.DuckDBInstance;
export const DuckDBResultReader: typeof Api.DuckDBResultReader = api.DuckDBResultReader;
export const DuckDBTypeId: typeof Api.DuckDBTypeId = api.DuckDBTypeId;
export const INTEGER: typeof Api.INTEGER = api.INTEGER;
export const JSDuckDBValueConverter: typeof Api.JSDuckDBValueConverter = api.JSDuckDBValueConverter;
export const LIST: typeof Api.LIST = api.LIST;
export const StatementType: typeof Api.StatementType = api.StatementType;
export const VARCHAR: typeof Api.VARCHAR = api.VARCHAR;
export const dateValue: typeof Api.dateValue = api.dateValue;
export const decimalValue: typeof Api.decimalValue = api.decimalValue;
export const listValue: typeof Api.listValue = api.listValue;
export const quotedIdentifier: typeof Api.quotedIdentifier = api.quotedIdentifier;
export const quotedString: typeof Api.quotedString = api.quotedString;
export const timestampTZValue: typeof Api.timestampTZValue = api.timestampTZValue;
// The classes and enums above are types too.
export type DuckDBDataChunk = Api.DuckDBDataChunk;
export type DuckDBDecimalType = Api.DuckDBDecimalType;
export type DuckDBInstance = Api.DuckDBInstance;
export type DuckDBResultReader = Api.DuckDBResultReader;
export type DuckDBTypeId = Api.DuckDBTypeId;
export type StatementType = Api.StatementType;
