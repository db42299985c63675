/**
 * docker-compose.yml and the Dockerfile cannot be run on these machines (no Docker engine): these tests keep
 * them correct by reading them. The Compose file is checked against the Compose Specification's JSON schema
 * (vendored, test/fixtures/compose-spec/SOURCE.md) and against what README promises; the Dockerfile against
 * the install path of scripts/install.sh.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import draft7 from 'ajv/dist/refs/json-schema-draft-07.json';
import { expect } from 'chai';
import { parse } from 'yaml';
import { ROOT } from '../helpers/env';

const SCHEMA_PATH = path.join(ROOT, 'test/fixtures/compose-spec/compose-spec.json');
const SCHEMA_SHA256 = '1f91e091f16b2dd50ab8860e02bb391d22df553d91c145eacedb1b6eff9c3f0e';

interface Service {
  image?: string;
  build?: string | { context?: string; dockerfile?: string; dockerfile_inline?: string };
  command?: string | string[];
  ports?: string[];
  healthcheck?: { test: string | string[]; interval?: string; retries?: number };
  depends_on?: Record<string, { condition: string }>;
  environment?: Record<string, string>;
}
interface ComposeFile {
  services: Record<string, Service>;
}

function readCompose(text = readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')): ComposeFile {
  // `<<` merge keys (YAML 1.1) are what the file uses for shared environment blocks; Compose resolves them
  return parse(text, { merge: true }) as ComposeFile;
}

function validator() {
  const raw = readFileSync(SCHEMA_PATH);
  expect(createHash('sha256').update(raw).digest('hex'), 'vendored schema changed: see SOURCE.md').to.equal(
    SCHEMA_SHA256,
  );
  // the schema is draft-07 with annotation keywords ajv does not know in strict mode ("deprecated")
  const ajv = new Ajv({ strict: false, allErrors: true });
  // it names draft-07 by its https address, without the trailing '#': the same meta-schema under that name
  ajv.addMetaSchema({ ...draft7, $id: 'https://json-schema.org/draft-07/schema' });
  return ajv.compile(JSON.parse(raw.toString('utf8')) as object);
}

describe('docker-compose.yml', () => {
  it('is valid against the Compose Specification JSON schema', () => {
    const validate = validator();
    const ok = validate(readCompose());
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 1)).to.deep.equal([]);
    expect(ok).to.equal(true);
  });

  it('the schema check can fail: a mistyped depends_on condition or an unknown service key is refused', () => {
    const validate = validator();
    const text = readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
    const typo = text.replace('condition: service_completed_successfully', 'condition: service_completed');
    expect(typo).to.not.equal(text);
    expect(validate(readCompose(typo))).to.equal(false);
    const unknownKey = readCompose();
    (unknownKey.services.api as Record<string, unknown>).healthcheck_typo = {};
    expect(validate(unknownKey)).to.equal(false);
  });

  it('has the services README promises, each with a pinned image', () => {
    const { services } = readCompose();
    for (const name of ['postgres', 'temporal', 'temporal-ui', 'minio', 'api', 'worker']) {
      expect(services, name).to.have.property(name);
    }
    expect(services.postgres.image).to.match(/^postgres:\d+/);
    expect(services.temporal.image).to.match(/^temporalio\/server:\d+\.\d+\.\d+$/);
    expect(services['temporal-ui'].image).to.match(/^temporalio\/ui:\d+\.\d+\.\d+$/);
    // MinIO is built from source at the version scripts/services.sh builds
    const minioBuild = services.minio.build as { dockerfile_inline: string };
    const pinned = /github\.com\/minio\/minio@(v[\w.-]+)/.exec(minioBuild.dockerfile_inline)?.[1];
    expect(pinned, 'MinIO version in dockerfile_inline').to.be.a('string');
    expect(services.minio.image).to.equal(`dataservice-minio:${pinned}`);
    expect(readFileSync(path.join(ROOT, 'scripts/services.sh'), 'utf8')).to.include(pinned);
    // api and worker: the project's Dockerfile, one image
    for (const name of ['api', 'worker']) {
      expect(services[name].build, name).to.equal('.');
      expect(services[name].image, name).to.equal('dataservice:local');
    }
    for (const [name, service] of Object.entries(services)) {
      if (service.image && !service.build) {
        expect(service.image, `${name}: a pinned tag, never latest`).to.match(/:[\w.-]+$/);
        expect(service.image, name).to.not.match(/:latest$/);
      }
      for (const port of service.ports ?? [])
        expect(port, `${name} publishes on loopback only`).to.match(/^127\.0\.0\.1:/);
    }
  });

  it('has healthchecks and depends_on conditions that start the stack in order', () => {
    const { services } = readCompose();
    for (const name of ['postgres', 'temporal', 'minio', 'api']) {
      expect(services[name].healthcheck?.test, `${name} healthcheck`).to.be.an('array').that.is.not.empty;
    }
    expect((services.api.healthcheck!.test as string[]).join(' ')).to.include('/ready');
    const needs = (name: string) =>
      Object.fromEntries(Object.entries(services[name].depends_on ?? {}).map(([s, d]) => [s, d.condition]));
    expect(needs('temporal')).to.deep.equal({ 'temporal-schema': 'service_completed_successfully' });
    expect(needs('temporal-ui')).to.deep.equal({ temporal: 'service_healthy' });
    expect(needs('createbucket')).to.deep.equal({ minio: 'service_healthy' });
    const app = {
      postgres: 'service_healthy',
      'temporal-setup': 'service_completed_successfully',
      createbucket: 'service_completed_successfully',
    };
    expect(needs('api')).to.deep.equal(app);
    // the worker starts after the api applied the migrations
    expect(needs('worker')).to.deep.equal({ ...app, api: 'service_healthy' });
    expect(services.api.command).to.satisfy((c: string[]) => c.join(' ').includes('dist/db/migrate.js'));
    // every condition names an existing service that can meet it
    for (const [name, service] of Object.entries(services)) {
      for (const [target, { condition }] of Object.entries(service.depends_on ?? {})) {
        expect(services, `${name} depends on ${target}`).to.have.property(target);
        if (condition === 'service_healthy')
          expect(services[target].healthcheck, `${target} needs a healthcheck for ${name}`).to.not.equal(
            undefined,
          );
        if (condition === 'service_completed_successfully')
          expect(services[target].ports, `${target} is a one-shot job`).to.equal(undefined);
      }
    }
  });
});

describe('Dockerfile', () => {
  const dockerfile = () => readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  /** The instructions, with continued lines joined and comments dropped. */
  const instructions = () =>
    dockerfile()
      .replace(/\\\n/g, ' ')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));

  it('installs the npm packages the way scripts/install.sh does, never with a bare npm ci', () => {
    const lines = instructions();
    const runs = lines.filter((l) => l.startsWith('RUN '));
    // npm ci refuses this lock file (it lacks other platforms' optional @swc/core-* entries)
    for (const run of runs) expect(run, run).to.not.match(/\bnpm ci\b/);
    const install = lines.findIndex((l) => /^RUN .*scripts\/install\.sh --deps-only/.test(l));
    expect(install, 'RUN bash scripts/install.sh --deps-only').to.be.greaterThan(-1);
    // what the script needs is in the image before it runs
    const copiedBefore = lines
      .slice(0, install)
      .filter((l) => l.startsWith('COPY '))
      .join(' ');
    for (const file of ['package.json', 'package-lock.json', 'scripts/install.sh']) {
      expect(copiedBefore, file).to.include(file);
    }
    const script = readFileSync(path.join(ROOT, 'scripts/install.sh'), 'utf8');
    expect(script).to.include('--deps-only');
    expect(script).to.include('npm install --no-save');
  });
});
