/**
 * Comments on files: add, list, edit, delete. Each change is audited and its notifications are written in
 * the same unit of work (domain/notifications): the file's uploader hears of a comment on their file, and
 * each person mentioned (mentions.ts) who can see the file hears of the mention. A mention of someone who
 * cannot see the file — or of no one — notifies nobody, and the answer is the same either way.
 */
import { ForbiddenError, NotFoundError } from '../../common/errors';
import { Comment, Person } from '../../db/models';
import type { UnitOfWork } from '../../db/transaction';
import { auditActor, recordAudit } from '../audit/record';
import { visibleFile, visibleFiles, visibleVersion, type Db, type FileActor } from '../files/access';
import { notify } from '../notifications/notify';
import { commentToDelete, commentToEdit, visibleComment, visibleComments } from './access';
import { parseMentions } from './mentions';

export interface NewComment {
  body: string;
  version?: number;
}

/**
 * The people of the company mentioned in `body` who can see the file (admins, everyone for a company-wide
 * file, the uploader for a private one), other than the author.
 */
async function mentionedWhoSee(
  actor: FileActor,
  db: Db,
  file: { id: string; visibility: string; uploadedByPersonId: string },
  body: string,
): Promise<string[]> {
  const { personIds, emails } = parseMentions(body);
  if (personIds.length === 0 && emails.length === 0) return [];
  const rows = await Person.scoped(actor.companyId, db)
    .where('people.status', 'active')
    .whereNot('people.id', actor.personId)
    .where((q) => {
      if (personIds.length > 0) void q.orWhereIn('people.id', personIds);
      if (emails.length > 0) void q.orWhereRaw('lower(people.email) = any(?)', [emails]);
    })
    .where((q) => {
      void q.where('people.role', 'admin').orWhere('people.id', file.uploadedByPersonId);
      if (file.visibility === 'company') void q.orWhereRaw('true');
    })
    .select('people.id');
  return rows.map((r) => r.id);
}

/**
 * Writes the notifications of a comment: the people it mentions (new, or edited with new mentions: each person
 * hears once) and, for a new comment only, the file's uploader.
 */
async function notifyOfComment(
  actor: FileActor,
  uow: UnitOfWork,
  file: { id: string; visibility: string; uploadedByPersonId: string },
  comment: Comment,
  created: boolean,
): Promise<void> {
  const mentioned = await mentionedWhoSee(actor, uow.trx, file, comment.body);
  const data = { fileId: file.id, commentId: comment.id, version: comment.version };
  await notify(uow, {
    companyId: actor.companyId,
    kind: 'comment.mention',
    to: { people: mentioned, except: actor.personId },
    resource: { type: 'comment', id: comment.id },
    data,
    cause: `comment:${comment.id}:mention`,
  });
  // the uploader hears of a new comment, unless they wrote it or are mentioned in it (an edit that drops the
  // mention is not a new comment)
  if (created && !mentioned.includes(file.uploadedByPersonId)) {
    await notify(uow, {
      companyId: actor.companyId,
      kind: 'comment.on_your_file',
      to: { people: [file.uploadedByPersonId], except: actor.personId },
      resource: { type: 'comment', id: comment.id },
      data,
      cause: `comment:${comment.id}:on_your_file`,
    });
  }
}

/** Rule 12: keys can never write comments (the route table refuses them too; MCP and GraphQL come here). */
function refuseKeys(actor: FileActor): void {
  if (actor.apiKeyId) throw new ForbiddenError('API keys cannot write comments');
}

/** Adds a comment to a file the actor sees (404 otherwise; the version, when named, must exist). */
export async function addComment(actor: FileActor, uow: UnitOfWork, fileId: string, input: NewComment) {
  refuseKeys(actor);
  const { trx } = uow;
  // the file row is shared-locked: a delete waits, so no comment outlives its file
  const file = await visibleFiles(actor, trx).findById(fileId).forShare();
  if (!file) throw new NotFoundError('file not found');
  if (input.version !== undefined) await visibleVersion(actor, trx, fileId, input.version);
  const comment = await Comment.scoped(actor.companyId, trx).insertAndFetch({
    fileId,
    version: input.version ?? null,
    authorPersonId: actor.personId,
    body: input.body,
  });
  await recordAudit(trx, {
    ...auditActor(actor, uow.correlationId),
    action: 'comment.created',
    resourceType: 'comment',
    resourceId: comment.id,
    details: { fileId, version: comment.version, length: input.body.length },
  });
  await notifyOfComment(actor, uow, file, comment, true);
  return comment;
}

/**
 * The comments of a file the actor sees (`comments` is a query the adapter pages oldest first; wrapped,
 * since awaiting a query runs it); 404 otherwise.
 */
export async function commentsOf(actor: FileActor, db: Db, fileId: string) {
  const file = await visibleFile(actor, db, fileId);
  return { file, comments: visibleComments(actor, db).where('comments.fileId', fileId) };
}

/** One comment the actor sees (404 otherwise). */
export function getComment(actor: FileActor, db: Db, id: string): Promise<Comment> {
  return visibleComment(actor, db, id);
}

/** Changes a comment's body (its author only); people newly mentioned are notified. */
export async function editComment(actor: FileActor, uow: UnitOfWork, id: string, body: string) {
  refuseKeys(actor);
  const { trx } = uow;
  const current = await commentToEdit(actor, trx, id);
  if (current.body === body) return current;
  const updated = await current.$query(trx).patchAndFetch({ body, editedAt: new Date() });
  await recordAudit(trx, {
    ...auditActor(actor, uow.correlationId),
    action: 'comment.updated',
    resourceType: 'comment',
    resourceId: id,
    details: { changed: ['body'], fileId: current.fileId, length: body.length },
  });
  const file = await visibleFile(actor, trx, current.fileId);
  await notifyOfComment(actor, uow, file, updated, false);
  return updated;
}

/** Deletes a comment (its author, or an admin). */
export async function deleteComment(actor: FileActor, uow: UnitOfWork, id: string): Promise<void> {
  refuseKeys(actor);
  const { trx } = uow;
  const comment = await commentToDelete(actor, trx, id);
  await comment.$query(trx).delete();
  await recordAudit(trx, {
    ...auditActor(actor, uow.correlationId),
    action: 'comment.deleted',
    resourceType: 'comment',
    resourceId: id,
    details: { fileId: comment.fileId, authorPersonId: comment.authorPersonId },
  });
}
