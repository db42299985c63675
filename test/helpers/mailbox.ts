/** A real SMTP server on loopback that keeps the mails the service sends during the run. */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  subject: string;
  text: string;
}

const received: ReceivedMail[] = [];
let server: SMTPServer | undefined;

function decodeQuotedPrintable(body: string): string {
  return body
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

function parse(raw: string, to: string[]): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split);
  let body = raw.slice(split + 4);
  const subject = /^Subject: (.*)$/im.exec(head)?.[1]?.trim() ?? '';
  if (/Content-Transfer-Encoding: quoted-printable/i.test(head)) body = decodeQuotedPrintable(body);
  if (/Content-Transfer-Encoding: base64/i.test(head)) body = Buffer.from(body, 'base64').toString('utf8');
  return { to, subject, text: body };
}

export async function startMailbox(): Promise<number> {
  server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push(
          parse(
            Buffer.concat(chunks).toString('utf8'),
            session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          ),
        );
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.server.address() as AddressInfo).port;
}

export async function stopMailbox(): Promise<void> {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
}

/** Mails received so far for the address. */
export function mailsTo(address: string): ReceivedMail[] {
  return received.filter((m) => m.to.includes(address.toLowerCase()));
}

/** Waits (at most 5 s) for a mail to the address whose subject matches, and returns its token. */
export async function tokenFromMail(address: string, subject: RegExp): Promise<string> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const mail = mailsTo(address)
      .filter((m) => subject.test(m.subject))
      .pop();
    const token = mail && /^token: ([A-Za-z0-9_-]+)\s*$/m.exec(mail.text)?.[1];
    if (token) return token;
    if (Date.now() > deadline) throw new Error(`no mail matching ${String(subject)} to ${address}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
