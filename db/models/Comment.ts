import { TenantModel } from './base';

/** A comment on a file (domain/comments); it goes with its file. */
export class Comment extends TenantModel {
  static override tableName = 'comments';

  fileId!: string;
  version!: number | null;
  /** null once the author was removed from the company */
  authorPersonId!: string | null;
  body!: string;
  editedAt!: Date | null;
}
