/**
 * GraphQL over HTTP (graphql-http's spec-following handler) with this service's protections: a bounded
 * document, depth and complexity limits checked with validation (before anything runs), and errors without
 * internals — a typed error of the domain keeps its message with a `code`; anything else is logged and
 * answered as `internal server error` with the request's correlation id. Authentication, the request
 * budget and the refusal of API keys happen before, in the route chain (api/routes/graphql).
 */
import { GraphQLError, type ExecutionResult, type ValidationRule } from 'graphql';
import { createHandler, type Request as GraphQLRequest } from 'graphql-http';
import depthLimit from 'graphql-depth-limit';
import { createComplexityRule, fieldExtensionsEstimator, simpleEstimator } from 'graphql-query-complexity';
import { AppError } from '../../common/errors';
import type { AppContext } from '../context';
import { principalOf } from '../middlewares/authenticate';
import { graphqlContext, type GraphQLContext } from './context';
import { schema } from './schema';

/** The longest document accepted, in characters. */
export const MAX_DOCUMENT_CHARS = 10_000;
/** The deepest selection accepted (graphql-depth-limit counts from the operation's fields, 0-based). */
export const MAX_DEPTH = 10;
/** The most costly query accepted: each field 1, each connection its page size times its selection. */
export const MAX_COMPLEXITY = 10_000;

/** The deepest nesting of braces, brackets and parentheses a document may have before it is parsed. */
export const MAX_NESTING = 64;

/**
 * The deepest nesting of `{`, `[` and `(` in a GraphQL document, outside strings, block strings and comments.
 * graphql-js parses recursively: a 10,000-character document can nest thousands deep and overflow the stack
 * before the depth rule (which runs on the parsed document) could refuse it.
 */
export function documentNesting(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '#') {
      while (i < text.length && text[i] !== '\n' && text[i] !== '\r') i++;
    } else if (ch === '"') {
      if (text.startsWith('"""', i)) {
        // a block string ends at the first triple quote that is not escaped (\""")
        for (i += 3; i < text.length; i++) {
          if (text.startsWith('\\"""', i)) i += 3;
          else if (text.startsWith('"""', i)) {
            i += 2;
            break;
          }
        }
      } else {
        for (i++; i < text.length && text[i] !== '"' && text[i] !== '\n'; i++) if (text[i] === '\\') i++;
      }
    } else if (ch === '{' || ch === '[' || ch === '(') {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (ch === '}' || ch === ']' || ch === ')') {
      depth = Math.max(0, depth - 1);
    }
  }
  return deepest;
}

const CODES: Record<number, string> = {
  400: 'BAD_REQUEST',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  422: 'UNPROCESSABLE',
};

/** An error as the caller may see it: a typed refusal keeps its message, anything else is generic. */
function publicError(err: GraphQLError, ctx: GraphQLContext): GraphQLError {
  const original = err.originalError;
  if (!original || original instanceof GraphQLError) return err;
  const options = { nodes: err.nodes, path: err.path, positions: err.positions, source: err.source };
  if (original instanceof AppError && original.statusCode < 500) {
    return new GraphQLError(err.message, {
      ...options,
      extensions: { code: CODES[original.statusCode] ?? 'BAD_REQUEST', statusCode: original.statusCode },
    });
  }
  ctx.log.error({ err: original, path: err.path }, 'GraphQL resolver failed');
  return new GraphQLError('internal server error', {
    ...options,
    extensions: { code: 'INTERNAL_SERVER_ERROR', correlationId: ctx.correlationId },
  });
}

const handle = createHandler<unknown, GraphQLContext, GraphQLContext>({
  schema,
  context: (req) => req.context,
  onSubscribe: (_req, params) => {
    if (params.query.length > MAX_DOCUMENT_CHARS) {
      return [
        new GraphQLError(`the document has ${params.query.length} characters: at most ${MAX_DOCUMENT_CHARS}`),
      ];
    }
    if (documentNesting(params.query) > MAX_NESTING) {
      return [
        new GraphQLError(
          `the document nests deeper than ${MAX_NESTING} levels of braces, brackets and parentheses`,
        ),
      ];
    }
    return undefined;
  },
  validationRules: (_req, args, specified): ValidationRule[] => [
    ...specified,
    depthLimit(MAX_DEPTH) as ValidationRule,
    createComplexityRule({
      maximumComplexity: MAX_COMPLEXITY,
      variables: (args.variableValues as Record<string, unknown> | undefined) ?? {},
      estimators: [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 1 })],
      createError: (max, actual) =>
        new GraphQLError(
          `the query's complexity is ${actual}: at most ${max} (ask for smaller pages or fewer fields)`,
        ),
    }),
  ],
  onOperation: (req, _args, result) => {
    const r = result as ExecutionResult;
    if (!r.errors) return undefined;
    return { ...r, errors: r.errors.map((e) => publicError(e, req.context)) };
  },
});

/** Runs the request's GraphQL operation and returns the HTTP answer graphql-http chose. */
export async function serveGraphQL(ctx: AppContext) {
  const context = graphqlContext({
    actor: principalOf(ctx),
    db: ctx.deps.knex,
    storage: ctx.deps.storage,
    secretKey: ctx.deps.config.secretKey,
    log: ctx.state.log,
    correlationId: ctx.state.correlationId,
  });
  const req: GraphQLRequest<unknown, GraphQLContext> = {
    method: ctx.method,
    url: ctx.url,
    headers: ctx.headers,
    body: ctx.method === 'POST' ? (ctx.request.body as Record<string, unknown>) : null,
    raw: ctx.req,
    context,
  };
  const [body, init] = await handle(req);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(init.headers ?? {})) if (typeof v === 'string') headers[k] = v;
  // a refusal graphql-http answers without a body (406 for Accept, 405, 415) gets the service's error body
  if (body === null && init.status >= 400) {
    throw new AppError(
      init.status,
      init.status === 406
        ? 'not acceptable: send Accept application/graphql-response+json or application/json'
        : (init.statusText ?? 'request refused'),
    );
  }
  // so does its 405 for a mutation sent with GET (a GraphQL `errors` text it would send as text/plain), with
  // its Allow header; only the 400 of a document that does not parse or validate keeps GraphQL's `errors`
  if (init.status === 405) {
    throw new AppError(405, 'a mutation cannot be sent with GET: send it with POST', headers);
  }
  return { status: init.status, body: body ?? undefined, headers };
}
