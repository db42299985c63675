import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { BadRequestError, PayloadTooLargeError } from '../../common/errors';
import { MAX_FILE_BYTES } from '../../domain/files/formats';
import { TOO_LARGE } from '../../domain/files/inspect';

/** The multipart limits of an upload form (api/routes/files/upload.ts reads the same form). */
export const UPLOAD_FORM_LIMITS = {
  files: 1,
  fields: 5,
  parts: 6,
  fieldSize: 1024,
  fileSize: MAX_FILE_BYTES + 1,
} as const;

const MALFORMED = 'the multipart body is malformed';

/** A parser of an upload form (its limits, UTF-8 file names as browsers and fetch send them); 400 without a boundary. */
export function uploadFormParser(req: IncomingMessage): busboy.Busboy {
  try {
    return busboy({ headers: req.headers, defParamCharset: 'utf8', limits: UPLOAD_FORM_LIMITS });
  } catch {
    throw new BadRequestError('the multipart body has no boundary');
  }
}

/** Streams the request into the form parser; `fail` gets a malformed body or an upload interrupted mid-body. */
export function readForm(req: IncomingMessage, bb: busboy.Busboy, fail: (err: Error) => void): void {
  bb.on('error', () => fail(new BadRequestError(MALFORMED)));
  // a form cut short inside a file part ends that part's stream with an error too: unhandled, it would
  // bring the process down, whichever part it is (one the reader uses, or one it only drains)
  bb.on('file', (_name: string, stream: NodeJS.ReadableStream) =>
    stream.on('error', () => fail(new BadRequestError(MALFORMED))),
  );
  req.on('close', () => {
    if (!req.complete) fail(new BadRequestError('the upload was interrupted'));
  });
  req.pipe(bb);
}

/**
 * What makes two multipart forms "the same request" for Idempotency-Key: each field's name and value and
 * each file part's name, file name and sha256 of its content, in any order. The boundary and the part
 * headers are left out: a client retrying builds a new boundary.
 */
export class FormFingerprint {
  private readonly parts: string[] = [];

  field(name: string, value: string): void {
    this.parts.push(JSON.stringify(['field', name, value]));
  }

  file(name: string, fileName: string | undefined, sha256: string): void {
    this.parts.push(JSON.stringify(['file', name, fileName ?? '', sha256]));
  }

  digest(): string {
    return createHash('sha256')
      .update([...this.parts].sort().join('\n'))
      .digest('hex');
  }
}

/**
 * Reads a multipart body only to fingerprint it, keeping nothing (the answer to a retried upload is a
 * replay or a 422, never a second stored file). The file parts are hashed as they stream past.
 */
export function fingerprintMultipart(req: IncomingMessage): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const bb = uploadFormParser(req); // a throw here (no boundary) rejects the promise
    const form = new FormFingerprint();
    const files: Array<Promise<void>> = [];
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      req.unpipe(bb);
      req.resume();
      reject(err);
    };
    bb.on('file', (name: string, stream: NodeJS.ReadableStream, info: busboy.FileInfo) => {
      const hash = createHash('sha256');
      files.push(
        new Promise<void>((done) => {
          stream.on('data', (chunk: Buffer) => hash.update(chunk));
          stream.on('limit', () => fail(new PayloadTooLargeError(TOO_LARGE)));
          stream.on('end', () => {
            form.file(name, info.filename, hash.digest('hex'));
            done();
          });
        }),
      );
    });
    bb.on('field', (name: string, value: string) => form.field(name, value));
    bb.on('close', () => {
      void Promise.all(files).then(() => {
        if (settled) return;
        settled = true;
        resolve(form.digest());
      });
    });
    readForm(req, bb, fail);
  });
}
