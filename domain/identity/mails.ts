import type { Config } from '../../common/config';
import type { Logger } from '../../common/logger';
import type { Mail, Mailer } from '../../common/mailer';
import type { UnitOfWork } from '../../db/transaction';

/**
 * Sends a mail once the unit of work that needs it has committed (never when it rolls back). A mail server
 * that is down does not undo the change: the failure is logged (the logger carries the correlation id) and
 * the person can ask again (resend activation, forgot password). With `wait: false` the answer does not
 * wait for SMTP, so endpoints that answer the same for known and unknown addresses do not tell them apart by
 * their timing either.
 */
export function mailAfterCommit(
  deps: { mailer: Mailer; logger: Logger },
  uow: Pick<UnitOfWork, 'afterCommit'>,
  mail: Mail,
  options: { wait: boolean },
): void {
  uow.afterCommit(async () => {
    const sending = deps.mailer.send(mail).catch((err: unknown) => {
      deps.logger.error({ err, to: mail.to, subject: mail.subject }, 'mail could not be sent');
    });
    if (options.wait) await sending;
  });
}

/**
 * The service has no front end of its own: each mail carries the token and the API call that uses it (no
 * link: a page under PUBLIC_BASE_URL would be a route the API does not have).
 */
export function activationMail(config: Config, to: string, token: string): Mail {
  return {
    to,
    subject: 'Activate your account',
    text: [
      'Welcome! Activate your account with this token (valid 48 hours):',
      '',
      `token: ${token}`,
      '',
      `POST ${config.publicBaseUrl}/auth/activate with {"token": "<token>"}`,
    ].join('\n'),
  };
}

export function passwordResetMail(config: Config, to: string, token: string): Mail {
  return {
    to,
    subject: 'Reset your password',
    text: [
      'Someone asked to reset the password of this account. If it was not you, ignore this mail.',
      'Reset token (valid 1 hour):',
      '',
      `token: ${token}`,
      '',
      `POST ${config.publicBaseUrl}/auth/reset-password with {"token": "<token>", "password": "<new password>"}`,
    ].join('\n'),
  };
}

export function invitationMail(config: Config, to: string, token: string, companyName: string): Mail {
  return {
    to,
    subject: `You are invited to ${companyName}`,
    text: [
      `You have been invited to join ${companyName}. Accept within 7 days with this token:`,
      '',
      `token: ${token}`,
      '',
      `POST ${config.publicBaseUrl}/auth/accept-invite with {"token": "<token>", "password": "<your password>"}`,
    ].join('\n'),
  };
}
