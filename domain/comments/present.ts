import type { Comment } from '../../db/models';

/** The fields a comment shows, one by one. */
export function presentComment(c: Comment) {
  return {
    id: c.id,
    fileId: c.fileId,
    version: c.version,
    authorId: c.authorPersonId,
    body: c.body,
    editedAt: c.editedAt ? new Date(c.editedAt).toISOString() : null,
    createdAt: new Date(c.createdAt).toISOString(),
  };
}
