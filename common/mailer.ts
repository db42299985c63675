import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from './config';
import type { Logger } from './logger';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
}

/** SMTP through nodemailer; the local default is the mail sink of scripts/mail-sink.ts on 127.0.0.1:2525. */
export function createMailer(config: Config, logger: Logger): Mailer {
  let transport: Transporter | undefined;
  return {
    async send(mail) {
      if (!transport) {
        const url = new URL(config.mail.smtpUrl);
        transport = nodemailer.createTransport({
          host: url.hostname,
          port: Number(url.port || (url.protocol === 'smtps:' ? 465 : 25)),
          secure: url.protocol === 'smtps:',
          auth: url.username
            ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) }
            : undefined,
          connectionTimeout: 5_000,
          greetingTimeout: 5_000,
          socketTimeout: 10_000,
        });
      }
      await transport.sendMail({
        from: config.mail.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
      });
      logger.info({ to: mail.to, subject: mail.subject }, 'mail sent');
    },
  };
}
