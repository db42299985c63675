import type { Visibility } from '../../../db/models';
import {
  changeVisibility,
  deleteFile,
  getFile,
  getVersion,
  listFiles,
  listVersions,
  previewVersion,
  versionDownloadLink,
} from '../../../domain/files/files';
import { FILE_FORMATS } from '../../../domain/files/formats';
import { presentFile, presentVersion } from '../../../domain/files/present';
import { route } from '../../routing';
import { inUnitOfWork } from '../../unitOfWork';
import { MAX_INT4 } from '../../validation';
import { signedLinkQuery, signedLinkResponse, uuidParams } from '../../schemas';
import { principalOf } from '../../middlewares/authenticate';
import { filesDeps } from './deps';
import {
  cursorEnvelope,
  cursorList,
  cursorQuerySchema,
  pageEnvelope,
  pageList,
  pageQuerySchema,
} from '../../lists';
import { upload } from './upload';
import { fileSchema, versionSchema } from './schemas';

const TAG = 'Files';
const read = { roles: ['admin', 'employee'], keyScope: 'files:read' } as const;
const write = { roles: ['admin', 'employee'], keyScope: 'files:write' } as const;

export const versionParams = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'version'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    version: { type: 'integer', minimum: 1, maximum: MAX_INT4 },
  },
} as const;

const uploadForm = (withVisibility: boolean) => ({
  type: 'object',
  required: ['file'],
  properties: {
    file: {
      type: 'string',
      format: 'binary',
      description:
        'the spreadsheet: XLSX, CSV or TSV (UTF-8, Windows-1252, Windows-1250, Mac Roman or UTF-16), at most 25 MB; judged by its content. ' +
        "A CSV's first line `sep=;` (Excel's separator line; `sep=,`, `sep=<tab>`) names its delimiter and is no " +
        'row: the header is the next line',
    },
    ...(withVisibility
      ? {
          visibility: {
            enum: ['private', 'company'],
            default: 'private',
            description: 'private: the uploader (and admins) only; company: everyone in the company',
          },
        }
      : {}),
  },
});

const errors = {
  400: { description: 'not a spreadsheet, an absurd sheet (rows, columns, unpacked size), or a bad form' },
  402: { description: 'the file quota of the period is used up (Free, Basic), or no plan chosen' },
  413: { description: 'the file is over 25 MB' },
  415: { description: 'the body is not multipart/form-data' },
};

export const filesRoutes = [
  route({
    method: 'post',
    path: '/files',
    summary:
      'Upload a new file (multipart/form-data: part `file`, optional field `visibility`); it becomes version 1',
    tag: TAG,
    access: write,
    idempotent: true,
    multipart: { description: 'the file and who may see it', schema: uploadForm(true) },
    responses: {
      201: {
        description: 'saved: the file and its version 1',
        schema: { ...fileSchema, properties: { ...fileSchema.properties, version: versionSchema } },
      },
      ...errors,
    },
    handler: async (ctx) => {
      const { file, version } = await upload(ctx);
      return {
        status: 201,
        headers: { Location: `/files/${file.id}` },
        body: { ...presentFile(file), version: presentVersion(version) },
      };
    },
  }),
  route({
    method: 'get',
    path: '/files',
    summary: 'Files the caller may see, newest first (cursor list)',
    tag: TAG,
    access: read,
    query: cursorQuerySchema,
    responses: { 200: { description: 'a page of files', schema: cursorEnvelope(fileSchema) } },
    handler: async (ctx, { query }: { query: { cursor?: string; limit: number } }) => {
      const auth = principalOf(ctx);
      return {
        body: await cursorList(listFiles(auth, ctx.deps.knex), query, {
          list: 'files',
          companyId: auth.companyId,
          secretKey: ctx.deps.config.secretKey,
          present: presentFile,
        }),
      };
    },
  }),
  route({
    method: 'get',
    path: '/files/:id',
    summary: 'One file',
    tag: TAG,
    access: read,
    params: uuidParams,
    responses: { 200: { description: 'the file', schema: fileSchema }, 404: { description: 'not found' } },
    handler: async (ctx, { params }: { params: { id: string } }) => {
      return { body: presentFile(await getFile(principalOf(ctx), ctx.deps.knex, params.id)) };
    },
  }),
  route({
    method: 'patch',
    path: '/files/:id',
    summary:
      'Change who can see a file (its uploader or an admin); made company-visible, each version whose report found sensitive data and was not announced yet sends file.sensitive_data_found',
    tag: TAG,
    access: write,
    params: uuidParams,
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['visibility'],
      properties: { visibility: { enum: ['private', 'company'] } },
    },
    responses: {
      200: { description: 'the file', schema: fileSchema },
      403: { description: 'the caller sees the file but neither uploaded it nor is an admin' },
      404: { description: 'not found' },
    },
    handler: async (ctx, { params, body }: { params: { id: string }; body: { visibility: Visibility } }) => {
      const file = await inUnitOfWork(ctx, (uow) =>
        changeVisibility(principalOf(ctx), uow, params.id, body.visibility),
      );
      return { body: presentFile(file) };
    },
  }),
  route({
    method: 'delete',
    path: '/files/:id',
    summary: 'Delete a file with all its versions (its uploader or an admin)',
    tag: TAG,
    access: write,
    params: uuidParams,
    responses: {
      204: { description: 'deleted; later reads give 404' },
      403: { description: 'the caller sees the file but neither uploaded it nor is an admin' },
      404: { description: 'not found' },
    },
    handler: async (ctx, { params }: { params: { id: string } }) => {
      await inUnitOfWork(ctx, (uow) => deleteFile(filesDeps(ctx), principalOf(ctx), uow, params.id));
      return { status: 204 };
    },
  }),
  route({
    method: 'post',
    path: '/files/:id/versions',
    summary: 'Upload a new version of a file (multipart/form-data: part `file`)',
    tag: TAG,
    access: write,
    params: uuidParams,
    idempotent: true,
    multipart: { description: 'the new version', schema: uploadForm(false) },
    responses: {
      201: { description: 'saved: the new version', schema: versionSchema },
      404: { description: 'not found' },
      409: { description: 'the file has as many versions as the plan keeps' },
      ...errors,
    },
    handler: async (ctx, { params }: { params: { id: string } }) => {
      const { file, version } = await upload(ctx, params.id);
      return {
        status: 201,
        headers: { Location: `/files/${file.id}/versions/${version.version}` },
        body: presentVersion(version),
      };
    },
  }),
  route({
    method: 'get',
    path: '/files/:id/versions',
    summary: 'Versions of a file, newest first (page-number list)',
    tag: TAG,
    access: read,
    params: uuidParams,
    query: pageQuerySchema,
    responses: {
      200: { description: 'a page of versions', schema: pageEnvelope(versionSchema) },
      404: { description: 'not found' },
    },
    handler: async (
      ctx,
      { params, query }: { params: { id: string }; query: { page: number; limit: number } },
    ) => {
      const { versions } = await listVersions(principalOf(ctx), ctx.deps.knex, params.id);
      return { body: await pageList(versions, query, presentVersion) };
    },
  }),
  route({
    method: 'get',
    path: '/files/:id/versions/:version',
    summary: 'One version of a file',
    tag: TAG,
    access: read,
    params: versionParams,
    responses: {
      200: { description: 'the version', schema: versionSchema },
      404: { description: 'not found' },
    },
    handler: async (ctx, { params }: { params: { id: string; version: number } }) => ({
      body: presentVersion(await getVersion(principalOf(ctx), ctx.deps.knex, params.id, params.version)),
    }),
  }),
  route({
    method: 'get',
    path: '/files/:id/versions/:version/preview',
    summary:
      'The first rows and the columns of a version (of an XLSX: the worksheet named by `sheet`, else the first), as JSON',
    tag: TAG,
    access: read,
    params: versionParams,
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        rows: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
        sheet: {
          type: 'string',
          minLength: 1,
          maxLength: 255,
          description:
            'XLSX only: the name of the sheet to preview (default: the first sheet with cells); 400 for CSV/TSV, an unknown name or a sheet without cells (a chart or dialog sheet)',
        },
      },
    },
    responses: {
      200: {
        description:
          'columns (header names, at most 100), rows (at most `rows`, cells cut at 1000 characters), and whether there are more',
        schema: {
          type: 'object',
          properties: {
            fileId: { type: 'string' },
            version: { type: 'integer' },
            format: { enum: FILE_FORMATS },
            columns: { type: 'array', items: { type: 'string' } },
            rows: { type: 'array', items: { type: 'array' } },
            moreRows: { type: 'boolean' },
            moreColumns: { type: 'boolean' },
            sheet: { type: ['string', 'null'], description: 'XLSX: the sheet shown; CSV/TSV: null' },
            sheets: {
              type: ['array', 'null'],
              items: { type: 'string' },
              description:
                "XLSX: the names of the workbook's sheets, in order (chart and dialog sheets too); CSV/TSV: null",
            },
          },
        },
      },
      404: { description: 'not found' },
      422: {
        description:
          'the stored version cannot be read for a preview: a workbook part that is not well-formed XML or does not unpack (`the workbook cannot be read: …` naming the part and the position), a CSV/TSV whose quote is never closed or with a record over 1 MiB (`the file cannot be read: …`); never cell values',
      },
    },
    handler: async (
      ctx,
      { params, query }: { params: { id: string; version: number }; query: { rows: number; sheet?: string } },
    ) => {
      return {
        body: await previewVersion(
          ctx.deps,
          principalOf(ctx),
          params.id,
          params.version,
          query.rows,
          query.sheet,
        ),
      };
    },
  }),
  route({
    method: 'get',
    path: '/files/:id/versions/:version/download-link',
    summary: 'A short-lived signed link that downloads exactly this version',
    tag: TAG,
    access: read,
    params: versionParams,
    query: signedLinkQuery,
    responses: {
      200: signedLinkResponse,
      404: { description: 'not found' },
    },
    handler: async (
      ctx,
      { params, query }: { params: { id: string; version: number }; query: { expiresIn?: number } },
    ) => {
      const { knex, config } = ctx.deps;
      const auth = principalOf(ctx);
      return {
        body: await versionDownloadLink({ knex, config }, auth, params.id, params.version, query.expiresIn),
      };
    },
  }),
];
