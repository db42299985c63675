import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

/**
 * One ajv for bodies (strict types) and one for query strings (coerces "20" to 20). Both list every
 * mistake; schemas are compiled once and cached by object identity.
 */
function build(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    strict: true,
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
  });
  addFormats(ajv);
  // OpenAPI annotations that may appear in our schemas
  ajv.addKeyword({ keyword: 'example' });
  ajv.addKeyword({ keyword: 'x-sensitive' });
  return ajv;
}

export const bodyAjv = build(false);
export const queryAjv = build(true);

const cache = new WeakMap<object, Map<Ajv, ValidateFunction>>();

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
export function describeErrors(where: 'body' | 'query' | 'path', errors: ErrorObject[]): string[] {
  const messages = errors.map((e) => {
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
      case 'enum':
        return `${at} must be one of ${((e.params as { allowedValues: unknown[] }).allowedValues ?? []).map(String).join(', ')}`;
      default:
        return `${at} ${e.message ?? 'is invalid'}`;
    }
  });
  return [...new Set(messages)];
}
