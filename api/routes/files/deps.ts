import type { FilesDeps } from '../../../domain/files/files';
import type { AppContext } from '../../context';

/** The files domain's dependencies for one request: the app's, with the request's logger. */
export function filesDeps(ctx: AppContext): FilesDeps {
  const { knex, storage, config, temporal } = ctx.deps;
  return { knex, storage, config, temporal, log: ctx.state.log };
}
