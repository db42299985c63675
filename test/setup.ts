/** mocha root hooks: one isolated environment for the whole run. */
import { setUpEnv, tearDownEnv } from './helpers/env';

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(120_000);
    await setUpEnv();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await tearDownEnv();
  },
};
