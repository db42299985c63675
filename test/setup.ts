/** mocha root hooks: one isolated environment for the whole run. */
import { setUpEnv, tearDownEnv } from './helpers/env';

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(120_000);
    await setUpEnv();
  },
  async afterAll(this: Mocha.Context) {
    // the workers' shutdown, then the Temporal cleanup (at most 20 s, test/helpers/temporalCleanup.ts)
    this.timeout(90_000);
    await tearDownEnv();
  },
};
