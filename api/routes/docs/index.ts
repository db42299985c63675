import { readFileSync } from 'node:fs';
import path from 'node:path';
import { NotFoundError } from '../../../common/errors';
import { openApiFor } from '../../openapi';
import { route, type Reply } from '../../routing';

/** swagger-ui-dist's files, served from the package (no CDN). */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};
const assetDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const loaded = new Map<string, Buffer>();
function asset(name: string): Buffer {
  let bytes = loaded.get(name);
  if (!bytes) {
    bytes = readFileSync(path.join(assetDir, name));
    loaded.set(name, bytes);
  }
  return bytes;
}

const PAGE = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <title>Data Analysis Service API</title>
    <link rel="stylesheet" type="text/css" href="/docs/swagger-ui.css" />
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js" charset="UTF-8"></script>
    <script src="/docs/swagger-ui-standalone-preset.js" charset="UTF-8"></script>
    <script src="/docs/init.js" charset="UTF-8"></script>
  </body>
</html>
`;

const INIT = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout',
  });
};
`;

export const docsRoutes = [
  route({
    method: 'get',
    path: '/openapi.json',
    summary: 'The OpenAPI 3.1 document of this API',
    tag: 'Docs',
    access: { public: true },
    responses: { 200: { description: 'the document', schema: { type: 'object' } } },
    // the route table this app mounted (including test-only routes in tests)
    handler: async (ctx) => ({ body: openApiFor(ctx.routeTable) }),
  }),
  route({
    method: 'get',
    path: '/docs',
    summary: 'Reference page rendering the OpenAPI document',
    tag: 'Docs',
    access: { public: true },
    responses: { 200: { description: 'HTML page', contentType: 'text/html', schema: { type: 'string' } } },
    handler: async () => ({ body: PAGE, headers: { 'Content-Type': 'text/html; charset=utf-8' } }),
  }),
  route({
    method: 'get',
    path: '/docs/:asset',
    summary: 'Files of the reference page (Swagger UI)',
    tag: 'Docs',
    access: { public: true },
    params: {
      type: 'object',
      properties: { asset: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,64}$' } },
      required: ['asset'],
    },
    responses: {
      200: {
        description: 'the file',
        contentType: [...new Set(['text/javascript', ...Object.values(ASSETS).map((t) => t.split(';')[0])])],
        schema: { type: 'string' },
      },
      404: { description: 'no such file' },
    },
    handler: async (_ctx, { params }): Promise<Reply> => {
      const name = (params as { asset: string }).asset;
      if (name === 'init.js') {
        return { body: INIT, headers: { 'Content-Type': 'text/javascript; charset=utf-8' } };
      }
      const type = ASSETS[name];
      if (!type) throw new NotFoundError(`no such file: ${name}`);
      return {
        body: asset(name),
        headers: { 'Content-Type': type, 'Cache-Control': 'public, max-age=3600' },
      };
    },
  }),
];
