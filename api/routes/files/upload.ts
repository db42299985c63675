/**
 * The HTTP side of an upload: refusals that need no byte of the body, then the multipart form streamed
 * (busboy → the domain's inspector: byte count, format, dialect, sha256 → object upload into MinIO), then
 * the upload command of the files domain (domain/files/upload.ts), which checks the quota, writes the
 * rows, audits, emits `file.uploaded` and starts the report.
 */
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../../../common/errors';
import type { Visibility } from '../../../db/models';
import { MAX_FILE_BYTES } from '../../../domain/files/formats';
import { TOO_LARGE, type UploadInspector } from '../../../domain/files/inspect';
import {
  completeUpload,
  discardUpload,
  openUpload,
  storeUpload,
  uploadInspector,
  uploadTarget,
  type ReceivedUpload,
  type UploadResult,
  type UploadSlot,
} from '../../../domain/files/upload';
import type { AppContext } from '../../context';
import { principalOf } from '../../middlewares/authenticate';
import { FormFingerprint, readForm, uploadFormParser } from '../../middlewares/formFingerprint';
import { filesDeps } from './deps';
import { nulProblems } from '../../validation';

/** Room for the multipart envelope (boundaries, part headers, small fields) around a 25 MB file. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
const VISIBILITIES: readonly Visibility[] = ['private', 'company'];

interface Received extends ReceivedUpload {
  /** the form's fingerprint (fields, file name, content sha256), for Idempotency-Key */
  fingerprint: string;
}

/**
 * Reads the multipart form: exactly one part `file` (streamed through the inspector into MinIO under
 * the slot's object key) and, for a new file, an optional field `visibility`. Resolves once the form is
 * read and the object is stored; rejects with the first problem, after which the object does not exist.
 */
function receive(ctx: AppContext, slot: UploadSlot): Promise<Received> {
  const req: IncomingMessage = ctx.req;
  const allowVisibility = !slot.existing;
  return new Promise<Received>((resolve, reject) => {
    let settled = false;
    const bb = uploadFormParser(req); // a throw here (no boundary) rejects the promise
    const problems: string[] = [];
    const form = new FormFingerprint();
    let visibility: Visibility | undefined;
    let upload: Promise<Omit<Received, 'fingerprint'>> | undefined;
    let inspecting: UploadInspector | undefined;

    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      // stop reading: the rest of the request is discarded and the connection closed after the answer
      req.unpipe(bb);
      req.resume();
      ctx.set('Connection', 'close');
      // end the file stream with the error, so an upload in flight stops reading and aborts its multipart
      // upload; answer once it has
      inspecting?.destroy(err);
      void (upload ?? Promise.resolve()).catch(() => undefined).finally(() => reject(err));
    };

    bb.on('file', (name: string, stream: Readable, info: busboy.FileInfo) => {
      problems.push(...nulProblems('form.file (its file name)', info.filename ?? ''));
      if (name !== 'file') {
        stream.resume();
        problems.push(`form: unknown part "${name}" (the file goes in the part "file")`);
        return;
      }
      const inspector = uploadInspector(ctx.deps, info.filename || 'upload');
      inspecting = inspector;
      stream.on('error', (err: Error) => inspector.destroy(err));
      stream.on('limit', () => inspector.destroy(new PayloadTooLargeError(TOO_LARGE)));
      stream.pipe(inspector);
      upload = (async () => {
        try {
          const { size } = await storeUpload(ctx.deps, slot, inspector);
          form.file(name, info.filename, inspector.contentSha256);
          return { fileName: info.filename || 'upload', inspector, size };
        } catch (err) {
          stream.unpipe(inspector);
          stream.resume();
          throw err;
        }
      })();
      upload.catch((err: unknown) => fail(err instanceof Error ? err : new Error(String(err))));
    });
    bb.on('field', (name: string, value: string, info: busboy.FieldInfo) => {
      problems.push(...nulProblems(`form.${name}`, value));
      form.field(name, value);
      if (name === 'visibility' && allowVisibility) {
        if (info.valueTruncated || !VISIBILITIES.includes(value as Visibility)) {
          problems.push('form.visibility must be one of private, company');
        } else visibility = value as Visibility;
      } else {
        problems.push(`form: unknown field "${name}"`);
      }
    });
    bb.on('filesLimit', () => problems.push('form: send exactly one file, in the part "file"'));
    bb.on('fieldsLimit', () => problems.push('form: too many fields'));
    bb.on('partsLimit', () => problems.push('form: too many parts'));
    bb.on('close', () => {
      if (settled) return;
      if (!upload) {
        const all = [...problems, 'form.file is required'];
        fail(new BadRequestError(all.length === 1 ? all[0] : all));
        return;
      }
      upload.then(
        (received) => {
          if (settled) return;
          if (problems.length > 0) {
            fail(new BadRequestError(problems.length === 1 ? problems[0] : problems));
            return;
          }
          settled = true;
          resolve({ ...received, visibility, fingerprint: form.digest() });
        },
        () => undefined, // handled by fail()
      );
    });
    // a malformed body, or the client went away mid-body
    readForm(req, bb, fail);
  });
}

/** Refusals that need no byte of the body: wrong content type, Content-Length over 25 MB. */
function checkRequest(ctx: AppContext): void {
  if (!ctx.is('multipart/form-data')) {
    throw new UnsupportedMediaTypeError(
      'unsupported content type: send multipart/form-data with the file in the part "file"',
    );
  }
  const length = Number(ctx.get('Content-Length'));
  if (Number.isFinite(length) && length > MAX_FILE_BYTES + MULTIPART_OVERHEAD_BYTES) {
    ctx.set('Connection', 'close');
    throw new PayloadTooLargeError(TOO_LARGE);
  }
}

/**
 * An upload over HTTP. `fileId` absent: a new file (version 1); present: a new version of that file.
 * The order of refusals: 404 (a file the caller may not see), 415/413 (the request), then the domain's
 * 402/409 (plan, versions, quota), then the body's problems.
 */
export async function upload(ctx: AppContext, fileId?: string): Promise<UploadResult> {
  const actor = principalOf(ctx);
  const deps = filesDeps(ctx);
  const existing = fileId ? await uploadTarget(actor, deps.knex, fileId) : undefined;
  checkRequest(ctx);
  const slot = await openUpload(deps, actor, existing);
  let received: Received;
  try {
    received = await receive(ctx, slot);
  } catch (err) {
    await discardUpload(deps, slot);
    throw err;
  }
  ctx.state.bodyFingerprint = received.fingerprint;
  return completeUpload(deps, slot, received, { correlationId: ctx.state.correlationId });
}
