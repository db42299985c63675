import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

/**
 * The ajv instances (bodies; query and path): strict types (strict mode includes strictNumbers, so NaN and
 * ±Infinity are never numbers), every mistake listed; schemas are compiled once and cached by object
 * identity. Query strings and path parameters are text: `coerceParameters` turns the plain ones into
 * numbers and booleans first (ajv's own coercion takes "Infinity", "1e400", "0x10" and " 5" as numbers).
 */
function build(): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    strict: true,
    coerceTypes: false,
    useDefaults: true,
    removeAdditional: false,
  });
  addFormats(ajv);
  // OpenAPI annotations that may appear in our schemas
  ajv.addKeyword({ keyword: 'example' });
  ajv.addKeyword({ keyword: 'x-sensitive' });
  return ajv;
}

/** Bodies. */
export const bodyAjv = build();
/** Query strings and path parameters, after coerceParameters (ajv itself never coerces). */
export const queryAjv = build();

type JsonSchemaObject = Record<string, unknown>;

/**
 * The largest PostgreSQL `integer` (2^31 - 1): the upper bound of page numbers and version numbers, so a
 * larger one is refused by the schema (400 naming the parameter) instead of by the database.
 */
export const MAX_INT4 = 2_147_483_647;

/** A plain integer: optional minus sign and decimal digits only. */
const PLAIN_INTEGER = /^-?[0-9]+$/;
/** A plain decimal number: no exponent, no hexadecimal, no spaces, no Infinity. */
const PLAIN_NUMBER = /^-?[0-9]+(\.[0-9]+)?$/;

function typesOf(schema: unknown): string[] {
  const type = (schema as { type?: unknown } | undefined)?.type;
  return Array.isArray(type) ? (type as string[]) : typeof type === 'string' ? [type] : [];
}

/**
 * Query and path values arrive as text. Those whose schema takes an integer, a number or a boolean are
 * converted when they are written plainly (`20`, `-3`, `0.5`, `true`); anything else stays text, so the
 * schema refuses it (`query.limit must be integer`) instead of coercing `Infinity` or `1e400`. A number too
 * large to be exact fails the schema's maximum; every integer parameter has one.
 */
export function coerceParameters(
  schema: JsonSchemaObject | undefined,
  values: Record<string, unknown>,
): Record<string, unknown> {
  const props = (schema?.properties ?? {}) as Record<string, unknown>;
  const convert = (name: string, value: unknown): unknown => {
    const types = Object.hasOwn(props, name) ? typesOf(props[name]) : [];
    if (typeof value !== 'string') return value;
    if (types.includes('integer') && PLAIN_INTEGER.test(value)) return Number(value);
    if (types.includes('number') && PLAIN_NUMBER.test(value)) return Number(value);
    if (types.includes('boolean') && (value === 'true' || value === 'false')) return value === 'true';
    return value;
  };
  // defined, not assigned: `out.__proto__ = 'x'` would call the prototype setter and drop the parameter, which
  // then escaped the schema's "unknown query parameter"
  return Object.fromEntries(Object.entries(values).map(([name, value]) => [name, convert(name, value)]));
}

const NUL = '\u0000';

/**
 * PostgreSQL text cannot hold the NUL character: one rule for every string of every request (body at any
 * depth, field names included, query strings and path parameters), applied before any route's schema.
 */
export function nulProblems(where: string, value: unknown): string[] {
  const problems: string[] = [];
  const visit = (v: unknown, at: string) => {
    if (typeof v === 'string') {
      if (v.includes(NUL)) problems.push(`${at} must not contain the NUL character (\\u0000)`);
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => visit(item, `${at}[${i}]`));
    } else if (v && typeof v === 'object') {
      for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
        if (k.includes(NUL)) {
          problems.push(`${at} (a field name) must not contain the NUL character (\\u0000)`);
          continue;
        }
        visit(item, `${at}.${k}`);
      }
    }
  };
  visit(value, where);
  return [...new Set(problems)];
}

const cache = new WeakMap<object, Map<Ajv, ValidateFunction>>();

/**
 * A text that must not be blank (a name, a comment): at least one character that is not white space. Its
 * failure reads `body.name must not be blank` (describeErrors). Here rather than in ./schemas, which lists.ts
 * (importing MAX_INT4 from this module) is re-exported by: no import cycle.
 */
export const NOT_BLANK = '\\S';

export function compile(ajv: Ajv, schema: object): ValidateFunction {
  let byAjv = cache.get(schema);
  if (!byAjv) {
    byAjv = new Map();
    cache.set(schema, byAjv);
  }
  let fn = byAjv.get(ajv);
  if (!fn) {
    fn = ajv.compile(schema);
    byAjv.set(ajv, fn);
  }
  return fn;
}

/** Human messages naming where each mistake is: `body.name must NOT have more than 80 characters`. */
export function describeErrors(
  where: 'body' | 'query' | 'path' | 'arguments',
  errors: ErrorObject[],
): string[] {
  // an empty text fails minLength and NOT_BLANK at once: its minLength message says it
  const tooShort = new Set(errors.filter((e) => e.keyword === 'minLength').map((e) => e.instancePath));
  const messages = errors.flatMap((e) => {
    if (
      e.keyword === 'pattern' &&
      (e.params as { pattern: string }).pattern === NOT_BLANK &&
      tooShort.has(e.instancePath)
    )
      return [];
    const pointer = e.instancePath
      .split('/')
      .filter(Boolean)
      .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`))
      .join('');
    const at = `${where}${pointer}`;
    switch (e.keyword) {
      case 'additionalProperties': {
        const name = (e.params as { additionalProperty: string }).additionalProperty;
        return where === 'query' ? `unknown query parameter "${name}"` : `${at}: unknown field "${name}"`;
      }
      case 'required':
        return `${at}.${(e.params as { missingProperty: string }).missingProperty} is required`;
      case 'uniqueItems':
        return `${at} must not repeat items`;
      case 'pattern':
        if ((e.params as { pattern: string }).pattern === NOT_BLANK) return `${at} must not be blank`;
        return `${at} ${e.message ?? 'is invalid'}`;
      case 'enum':
        return `${at} must be one of ${((e.params as { allowedValues: unknown[] }).allowedValues ?? []).map(String).join(', ')}`;
      default:
        return `${at} ${e.message ?? 'is invalid'}`;
    }
  });
  return [...new Set(messages)];
}
