/**
 * Access rules of comments: a comment follows its file's visibility (files/access.ts `visibleFiles`), so a
 * caller who cannot see the file gets "not found" for its comments and for each of them. Only the author
 * edits a comment; the author or an admin of the company deletes it.
 */
import { ForbiddenError, NotFoundError } from '../../common/errors';
import { Comment } from '../../db/models';
import { visibleFiles, type Db, type FileActor } from '../files/access';

/** The comments the actor may see: those on files the actor sees. */
export function visibleComments(actor: FileActor, db: Db) {
  return Comment.scoped(actor.companyId, db).whereExists(
    visibleFiles(actor, db).select(1).whereColumn('files.id', 'comments.fileId'),
  );
}

/** A comment the actor may see (404 otherwise); `forUpdate` locks it. */
export async function visibleComment(
  actor: FileActor,
  db: Db,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<Comment> {
  const query = visibleComments(actor, db).findById(id);
  const comment = await (options.forUpdate ? query.forUpdate() : query);
  if (!comment) throw new NotFoundError('comment not found');
  return comment;
}

/** A comment the actor may edit: its author only (403 for anyone else who sees it). */
export async function commentToEdit(actor: FileActor, db: Db, id: string): Promise<Comment> {
  const comment = await visibleComment(actor, db, id, { forUpdate: true });
  if (comment.authorPersonId !== actor.personId)
    throw new ForbiddenError('only the author of a comment may edit it');
  return comment;
}

/** A comment the actor may delete: its author, or an admin of the company (403 for anyone else). */
export async function commentToDelete(actor: FileActor, db: Db, id: string): Promise<Comment> {
  const comment = await visibleComment(actor, db, id, { forUpdate: true });
  if (comment.authorPersonId !== actor.personId && actor.role !== 'admin')
    throw new ForbiddenError('only the author of a comment or an admin may delete it');
  return comment;
}
