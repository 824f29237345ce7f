import { pino, type Logger } from 'pino';

/** The process logger: JSON lines; credentials are redacted wherever they might appear. */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: ['token', 'secret', 'password', 'auth_password', '*.token', '*.secret', '*.password', 'req.headers.authorization', 'headers.authorization'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
