import { MAX_COMPLEXITY, MAX_DEPTH, MAX_DOCUMENT_CHARS, serveGraphQL } from '../../graphql/http';
import { route } from '../../routing';

const TAG = 'GraphQL';
// sessions of both roles; keys never (rule 12): no keyScope, so a key gets 403 before anything runs
const access = { roles: ['admin', 'employee'] } as const;

const description =
  'GraphQL over HTTP (read only: no mutations; the schema is api/graphql/schema.graphql, introspection open to ' +
  `signed-in callers). Documents of at most ${MAX_DOCUMENT_CHARS} characters, depth at most ${MAX_DEPTH}, ` +
  `complexity at most ${MAX_COMPLEXITY} (each field 1, a connection its page size times its selection). ` +
  'Answers follow the GraphQL over HTTP specification: `application/graphql-response+json` (400 for a ' +
  'document that does not parse or validate) or `application/json` (200 with `errors`). A resolver’s refusal ' +
  'or failure is an entry of `errors` (code NOT_FOUND, FORBIDDEN, BAD_REQUEST, INTERNAL_SERVER_ERROR with the ' +
  'correlationId), never internals. Authentication, the request budget and the refusal of API keys (403) ' +
  'answer with the error body before any execution.';

/** What graphql-http answers, chosen by Accept (application/graphql-response+json when it is allowed). */
const GRAPHQL_MEDIA_TYPES = ['application/graphql-response+json', 'application/json'] as const;

const answers = {
  200: {
    description: 'the execution result (`data`, `errors`)',
    contentType: GRAPHQL_MEDIA_TYPES,
    schema: { type: 'object' },
  },
  400: {
    description:
      'the service’s error body for a request it refuses before GraphQL (a body that is not JSON, an unknown ' +
      'field or parameter, a missing query); GraphQL’s `errors` for one graphql-http refuses (variables that ' +
      'are not JSON) or a document that does not parse or validate under application/graphql-response+json',
    contentType: GRAPHQL_MEDIA_TYPES,
    schema: {
      anyOf: [
        {
          type: 'object',
          required: ['statusCode', 'message', 'correlationId', 'timestamp'],
          properties: {
            statusCode: { type: 'integer' },
            message: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
            correlationId: { type: 'string' },
            timestamp: { type: 'string' },
          },
        },
        { type: 'object', required: ['errors'], properties: { errors: { type: 'array' } } },
      ],
    },
  },
  406: { description: 'no acceptable media type in Accept' },
};

/** GET only: GraphQL over HTTP refuses a mutation sent with GET (the error body, with `Allow: POST`). */
const getAnswers = {
  ...answers,
  405: { description: 'the document is a mutation, which GET may not carry (`Allow: POST`)' },
};

export const graphqlRoutes = [
  route({
    method: 'post',
    path: '/graphql',
    summary: 'Run a GraphQL query (session only; API keys get 403)',
    operationId: 'postGraphql',
    tag: TAG,
    // POST is GraphQL's transport, not a write (the schema has no mutations): the read-only demo may use it
    access: { ...access, demoAllowed: true },
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['query'],
      properties: {
        query: { type: 'string', description: description },
        variables: { type: ['object', 'null'] },
        operationName: { type: ['string', 'null'] },
        extensions: { type: ['object', 'null'] },
      },
    },
    responses: answers,
    handler: (ctx) => serveGraphQL(ctx),
  }),
  route({
    method: 'get',
    path: '/graphql',
    summary: 'Run a GraphQL query sent in the query string (session only; API keys get 403)',
    operationId: 'getGraphql',
    tag: TAG,
    access,
    query: {
      type: 'object',
      additionalProperties: false,
      required: ['query'],
      properties: {
        query: { type: 'string', description },
        variables: { type: 'string', description: 'JSON object' },
        operationName: { type: 'string' },
        extensions: { type: 'string', description: 'JSON object' },
      },
    },
    responses: getAnswers,
    handler: (ctx) => serveGraphQL(ctx),
  }),
];
