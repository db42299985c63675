/**
 * The local mail sink: an SMTP server on loopback that keeps every message it receives as a file in
 * .local/mail/ (newest last) and logs a line per message, so an operator can read activation, reset and
 * invitation mails without a real mail server. Started by scripts/start.sh; `SMTP_URL` points elsewhere in production.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SMTPServer } from 'smtp-server';

const port = Number(process.env.MAIL_SINK_PORT ?? 2525);
const dir = path.resolve(process.env.MAIL_SINK_DIR ?? path.join(__dirname, '..', '..', '.local', 'mail'));
fs.mkdirSync(dir, { recursive: true });

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  banner: 'data-service mail sink',
  onData(stream, session, callback) {
    const to = session.envelope.rcptTo.map((r) => r.address).join(',');
    const file = path.join(
      dir,
      `${new Date().toISOString().replace(/[:.]/g, '-')}-${to.replace(/[^A-Za-z0-9@._-]/g, '_')}.eml`,
    );
    const out = fs.createWriteStream(file);
    stream.pipe(out);
    stream.on('end', () => {
      console.log(JSON.stringify({ time: new Date().toISOString(), to, file }));
      callback();
    });
  },
});
server.listen(port, '127.0.0.1', () =>
  console.log(`mail sink listening on 127.0.0.1:${port}, writing to ${dir}`),
);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
