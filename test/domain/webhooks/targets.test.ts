import type { LookupAddress } from 'node:dns';
import { expect } from 'chai';
import {
  checkTargetUrl,
  checkUrlShape,
  guardedLookup,
  refusedRange,
  type Resolver,
  type TargetPolicy,
} from '../../../domain/webhooks/targets';
import { ALWAYS_REFUSED_FORMS, embeddingForms, REFUSED_HOSTS } from '../../helpers/refusedTargets';

const DEFAULT: TargetPolicy = { allowHttp: false, allowPrivateTargets: false };

function resolverOf(table: Record<string, string[] | Error>): Resolver {
  return (hostname, _options, callback) => {
    const answer = table[hostname];
    if (!answer)
      return callback(Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
    if (answer instanceof Error) return callback(answer, []);
    callback(
      null,
      answer.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  };
}

describe('webhook target addresses', () => {
  describe('refused by default, in every form', () => {
    for (const [host, what] of REFUSED_HOSTS) {
      it(`refuses https://${host}/ (${what})`, async () => {
        const problem = await checkTargetUrl(`https://${host}/hook`, DEFAULT);
        expect(problem, `https://${host}/hook`)
          .to.be.a('string')
          .and.to.match(/not a public address/);
      });
    }
  });

  it('refuses a host name that resolves to a private address (any of its answers), or does not resolve', async () => {
    const resolver = resolverOf({
      'internal.example': ['10.0.0.5'],
      'mixed.example': ['93.184.216.34', '10.0.0.5'],
      'metadata.example': ['169.254.169.254'],
      'v6.example': ['::1'],
      'public.example': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    });
    expect(await checkTargetUrl('https://internal.example/x', DEFAULT, resolver)).to.match(
      /internal\.example resolves to 10\.0\.0\.5 is not a public address \(private\)/,
    );
    expect(await checkTargetUrl('https://mixed.example/x', DEFAULT, resolver)).to.match(/10\.0\.0\.5/);
    expect(await checkTargetUrl('https://metadata.example/x', DEFAULT, resolver)).to.match(/linkLocal/);
    expect(await checkTargetUrl('https://v6.example/x', DEFAULT, resolver)).to.match(/loopback/);
    expect(await checkTargetUrl('https://nowhere.example/x', DEFAULT, resolver)).to.match(/does not resolve/);
    expect(await checkTargetUrl('https://public.example/x', DEFAULT, resolver)).to.equal(null);
  });

  it('refuses localhost through the system resolver', async () => {
    expect(await checkTargetUrl('https://localhost/hook', DEFAULT)).to.match(
      /not a public address \(loopback\)/,
    );
  });

  it('accepts public addresses', async () => {
    expect(await checkTargetUrl('https://93.184.216.34/hook', DEFAULT)).to.equal(null);
    expect(await checkTargetUrl('https://[2606:4700::1111]:8443/hook?a=1', DEFAULT)).to.equal(null);
    expect(refusedRange('8.8.8.8')).to.equal(null);
    expect(refusedRange('::ffff:8.8.8.8')).to.equal(null);
  });

  it('wants an absolute https URL without credentials; plain http only with WEBHOOK_ALLOW_HTTP', () => {
    const problem = (url: string, policy = DEFAULT) => {
      const r = checkUrlShape(url, policy);
      return 'problem' in r ? r.problem : null;
    };
    expect(problem('/relative/path')).to.equal('url must be an absolute URL');
    expect(problem('not a url')).to.equal('url must be an absolute URL');
    expect(problem('ftp://93.184.216.34/')).to.equal('url must use https');
    expect(problem('http://93.184.216.34/')).to.match(/https.*WEBHOOK_ALLOW_HTTP/);
    expect(problem('http://93.184.216.34/', { allowHttp: true, allowPrivateTargets: false })).to.equal(null);
    expect(problem('https://user:pw@93.184.216.34/')).to.equal('url must not contain credentials');
  });

  it('lets the test-only setting reach loopback (and only that setting)', async () => {
    const tests: TargetPolicy = { allowHttp: true, allowPrivateTargets: true };
    expect(await checkTargetUrl('http://127.0.0.1:9999/hook', tests)).to.equal(null);
    expect(
      await checkTargetUrl('http://127.0.0.1:9999/hook', { ...tests, allowPrivateTargets: false }),
    ).to.match(/loopback/);
  });

  it('checks at connect time: a lookup answer that turned private (DNS rebinding) refuses the connection', async () => {
    const answers = [['93.184.216.34'], ['127.0.0.1']];
    let calls = 0;
    const rebinding: Resolver = (_host, _options, callback) =>
      callback(
        null,
        answers[Math.min(calls++, 1)].map((address) => ({ address, family: 4 })),
      );
    expect(await checkTargetUrl('https://rebind.example/hook', DEFAULT, rebinding)).to.equal(null);
    const lookup = guardedLookup(rebinding);
    const outcome = await new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
      lookup('rebind.example', { all: true }, (err, address) => resolve({ err, address })),
    );
    expect(outcome.err?.message).to.equal(
      'rebind.example resolves to 127.0.0.1 is not a public address (loopback)',
    );
    const single = await new Promise<{
      err: NodeJS.ErrnoException | null;
      address: unknown;
      family?: number;
    }>((resolve) =>
      guardedLookup(resolverOf({ 'ok.example': ['93.184.216.34'] }))(
        'ok.example',
        {},
        (err, address, family) => resolve({ err, address, family }),
      ),
    );
    expect(single).to.deep.equal({ err: null, address: '93.184.216.34', family: 4 });
  });

  describe('IPv6 forms that embed an IPv4 address are judged by the embedded address (issue 10)', () => {
    const lookupOf = (address: string) =>
      new Promise<NodeJS.ErrnoException | null>((resolve) =>
        guardedLookup(resolverOf({ 'name.example': [address] }))('name.example', { all: true }, (err) =>
          resolve(err),
        ),
      );
    const privates: Array<[string, string]> = [
      ['127.0.0.1', 'loopback'],
      ['10.0.0.1', 'private'],
      ['172.16.5.4', 'private'],
      ['192.168.1.1', 'private'],
      ['169.254.169.254', 'linkLocal'],
      ['100.64.0.1', 'carrierGradeNat'],
      ['0.1.2.3', 'unspecified'],
      ['224.0.0.1', 'multicast'],
      ['255.255.255.255', 'broadcast'],
    ];
    for (const [v4, v4range] of privates) {
      it(`refuses every form embedding ${v4} (${v4range}), at creation and at connect time`, async () => {
        for (const [form, address] of embeddingForms(v4)) {
          const what = `${form} ${address}`;
          // the range names the form and the embedded address's class
          expect(refusedRange(address), what).to.equal(`${form} ${v4} ${v4range}`);
          // creation: an IP literal in the URL, and a name resolving to the address
          expect(await checkTargetUrl(`https://[${address}]/hook`, DEFAULT), what).to.match(
            /not a public address/,
          );
          const named = await checkTargetUrl(
            'https://name.example/hook',
            DEFAULT,
            resolverOf({ 'name.example': [address] }),
          );
          expect(named, what).to.match(
            new RegExp(`not a public address \\(${form} ${v4.replace(/\./g, '\\.')} `),
          );
          // connect time: the guarded lookup, and the socket's remote address (as Node writes it)
          expect((await lookupOf(address))?.message, what).to.match(/not a public address/);
          expect(refusedRange(ipv6Text(address)), what).to.not.equal(null);
        }
      });
    }

    it('a public embedded address passes only in the forms that are globally routable', async () => {
      for (const [form, address] of embeddingForms('93.184.216.34')) {
        const refused = ALWAYS_REFUSED_FORMS.includes(form);
        const expected = refused ? `${form} 93.184.216.34 (not globally routable)` : null;
        expect(refusedRange(address), `${form} ${address}`).to.equal(expected);
        const problem = await checkTargetUrl(`https://[${address}]/hook`, DEFAULT);
        if (refused) expect(problem, address).to.match(/not a public address/);
        else expect(problem, address).to.equal(null);
        expect((await lookupOf(address)) === null, address).to.equal(!refused);
      }
      // the examples
      for (const host of ['[::127.0.0.1]', '[::7f00:1]', '[::a00:1]']) {
        expect(await checkTargetUrl(`https://${host}/`, DEFAULT), host).to.match(/ipv4Compatible/);
      }
    });
  });
});

/** An IPv6 address in the compressed text form Node's sockets report (`::7f00:1`). */
function ipv6Text(address: string): string {
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}
