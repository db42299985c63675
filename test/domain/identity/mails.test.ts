/**
 * The mails the identity domain sends (activation, password reset, invitation): each carries its token and
 * names only calls the API answers, under PUBLIC_BASE_URL — the service has no front end, so a link to a
 * page would be a dead link.
 */
import { expect } from 'chai';
import { routes } from '../../../api/routes';
import { activationMail, invitationMail, passwordResetMail } from '../../../domain/identity/mails';
import { testEnv } from '../../helpers/env';

describe('identity mails', () => {
  it('carry their token and name only routes of the API', () => {
    const { config } = testEnv();
    const token = 'tok_0123456789abcdef';
    const known = new Set(routes.map((r) => `${r.method.toUpperCase()} ${r.path}`));
    const base = config.publicBaseUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    for (const mail of [
      activationMail(config, 'a@example.test', token),
      passwordResetMail(config, 'a@example.test', token),
      invitationMail(config, 'a@example.test', token, 'Acme'),
    ]) {
      expect(mail.text, mail.subject).to.include(`token: ${token}`);
      // every address under the public base URL, with the method written before it (GET when none)
      const named = [
        ...mail.text.matchAll(new RegExp(`(?:(GET|POST|PATCH|PUT|DELETE) )?${base}(/[^\\s?]*)`, 'g')),
      ];
      expect(named, mail.subject).to.not.deep.equal([]);
      for (const [, method, pathname] of named) {
        expect(
          known.has(`${method ?? 'GET'} ${pathname}`),
          `${mail.subject}: ${method ?? 'GET'} ${pathname}`,
        ).to.equal(true);
      }
    }
  });
});
