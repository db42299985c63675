/**
 * Quality rule kinds, their params and the checks a rule must pass before it is saved. Pure: no database,
 * no HTTP. Every problem is listed (the API answers 400 with all of them at once).
 *
 * A `pattern` regex is RE2 syntax (validated here with re2js, a linear-time RE2 port) and is evaluated by
 * DuckDB's RE2 `regexp_full_match` in the report pass: no backtracking engine ever runs a user's pattern.
 */
import { RE2JS } from 're2js';
import { INFERRED_TYPES, type InferredType } from '../reports/engine/types';

export const RULE_KINDS = [
  'not_null',
  'unique',
  'range',
  'length',
  'pattern',
  'allowed_values',
  'type',
  'row_count',
] as const;
export type RuleKind = (typeof RULE_KINDS)[number];

export const SEVERITIES = ['error', 'warn'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** The types a `type` rule may require: the report's inferred types. */
export const VALUE_TYPES = INFERRED_TYPES;
export type ValueType = InferredType;

/** Kinds whose units are the rows of one column; the others (`row_count`) are dataset rules with one unit. */
export const COLUMN_KINDS: readonly RuleKind[] = [
  'not_null',
  'unique',
  'range',
  'length',
  'pattern',
  'allowed_values',
  'type',
];

export const MAX_ALLOWED_VALUES = 1000;
export const MAX_REGEX_LENGTH = 1000;
export const MAX_VALUE_LENGTH = 1000;

export type Dimension = 'completeness' | 'validity' | 'uniqueness' | 'volume';

export const DIMENSION_OF: Readonly<Record<RuleKind, Dimension>> = {
  not_null: 'completeness',
  unique: 'uniqueness',
  range: 'validity',
  length: 'validity',
  pattern: 'validity',
  allowed_values: 'validity',
  type: 'validity',
  row_count: 'volume',
};

export type RuleParams =
  | Record<string, never>
  | { min?: number; max?: number }
  | { regex: string }
  | { values: string[] }
  | { type: ValueType };

/** Which params each kind takes: name → whether required. */
const PARAMS_OF: Readonly<Record<RuleKind, Record<string, 'required' | 'optional'>>> = {
  not_null: {},
  unique: {},
  range: { min: 'optional', max: 'optional' },
  length: { min: 'optional', max: 'optional' },
  pattern: { regex: 'required' },
  allowed_values: { values: 'required' },
  type: { type: 'required' },
  row_count: { min: 'optional', max: 'optional' },
};

export function isColumnKind(kind: RuleKind): boolean {
  return COLUMN_KINDS.includes(kind);
}

/** The RE2 syntax error of a pattern, or null when RE2 accepts it. */
export function regexProblem(regex: string): string | null {
  try {
    RE2JS.compile(regex);
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

export interface RuleShape {
  kind: RuleKind;
  column: string | null;
  params: Record<string, unknown>;
}

/**
 * Every problem of a rule's kind, column and params, as `body.<field>: <problem>` messages. Called on the
 * whole rule after a PATCH is applied too, so a changed kind with old params is caught.
 */
export function ruleProblems(rule: RuleShape): string[] {
  const problems: string[] = [];
  const { kind, column, params } = rule;
  if (isColumnKind(kind)) {
    if (column === null || column === undefined) problems.push(`body.column: required for a ${kind} rule`);
  } else if (column !== null && column !== undefined) {
    problems.push(`body.column: a ${kind} rule applies to the whole sheet and takes no column`);
  }
  const allowed = PARAMS_OF[kind];
  for (const name of Object.keys(params)) {
    if (!Object.hasOwn(allowed, name)) {
      const takes = Object.keys(allowed);
      problems.push(
        `body.params.${name}: not a param of a ${kind} rule (${takes.length ? `it takes ${takes.join(', ')}` : 'it takes none'})`,
      );
    }
  }
  for (const [name, need] of Object.entries(allowed)) {
    if (need === 'required' && params[name] === undefined) {
      problems.push(`body.params.${name}: required for a ${kind} rule`);
    }
  }
  const num = (name: string, integer: boolean, minimum?: number): number | undefined => {
    const v = params[name];
    if (v === undefined || !Object.hasOwn(allowed, name)) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      problems.push(`body.params.${name}: must be a number`);
      return undefined;
    }
    if (integer && !Number.isInteger(v)) {
      problems.push(`body.params.${name}: must be an integer`);
      return undefined;
    }
    if (minimum !== undefined && v < minimum) {
      problems.push(`body.params.${name}: must be at least ${minimum}`);
      return undefined;
    }
    return v;
  };
  switch (kind) {
    case 'range':
    case 'length':
    case 'row_count': {
      const integer = kind !== 'range';
      const min = num('min', integer, integer ? 0 : undefined);
      const max = num('max', integer, integer ? 0 : undefined);
      if (params.min === undefined && params.max === undefined) {
        problems.push(`body.params: a ${kind} rule needs min, max or both`);
      }
      if (min !== undefined && max !== undefined && min > max) {
        problems.push(`body.params: min (${min}) is greater than max (${max})`);
      }
      break;
    }
    case 'pattern': {
      const regex = params.regex;
      if (regex === undefined) break;
      if (typeof regex !== 'string' || regex.length === 0) {
        problems.push('body.params.regex: must be a non-empty string');
      } else if (regex.length > MAX_REGEX_LENGTH) {
        problems.push(`body.params.regex: at most ${MAX_REGEX_LENGTH} characters`);
      } else if (regex.includes('\u0000')) {
        problems.push('body.params.regex: must not contain NUL');
      } else {
        const problem = regexProblem(regex);
        if (problem) problems.push(`body.params.regex: not a valid RE2 regular expression (${problem})`);
      }
      break;
    }
    case 'allowed_values': {
      const values = params.values;
      if (values === undefined) break;
      if (!Array.isArray(values) || values.length === 0) {
        problems.push('body.params.values: must be a non-empty array of strings');
      } else if (values.length > MAX_ALLOWED_VALUES) {
        problems.push(`body.params.values: at most ${MAX_ALLOWED_VALUES} values (got ${values.length})`);
      } else {
        values.forEach((v, i) => {
          if (typeof v !== 'string') problems.push(`body.params.values[${i}]: must be a string`);
          else if (v.length > MAX_VALUE_LENGTH)
            problems.push(`body.params.values[${i}]: at most ${MAX_VALUE_LENGTH} characters`);
        });
      }
      break;
    }
    case 'type': {
      const type = params.type;
      if (type !== undefined && !VALUE_TYPES.includes(type as ValueType)) {
        problems.push(`body.params.type: must be one of ${VALUE_TYPES.join(', ')}`);
      }
      break;
    }
    default:
      break;
  }
  return problems;
}
