import { TenantModel } from './base';

/** A comment on a file (domain/comments); it goes with its file. */
export class Comment extends TenantModel {
  static override tableName = 'comments';

  fileId!: string;
  version!: number | null;
  authorPersonId!: string;
  body!: string;
  editedAt!: Date | null;
}
