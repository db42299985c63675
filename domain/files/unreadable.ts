import { AppError } from '../../common/errors';

/**
 * A stored version that cannot be read for what was asked (a preview, a header): its bytes were accepted at
 * upload, but a part is malformed (XML that is not well-formed, data that does not unpack, a CSV quote never
 * closed). 422 with the error body. The message names what is wrong and where (a part, a line and column,
 * a record number), never cell values.
 */
export class UnreadableFileError extends AppError {
  constructor(message: string) {
    super(422, message);
  }
}
