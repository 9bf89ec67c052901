/** pino options: JSON in production, pretty on a terminal, the Authorization header never logged. */
import type { LoggerOptions } from 'pino';

/** Logger options for the API process. */
export function loggerOptions(level: string, pretty = process.stdout.isTTY === true): LoggerOptions {
  return {
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        'headers.authorization',
        'request.headers.authorization',
        '*.apiKey',
        '*.key',
      ],
      censor: '[redacted]',
    },
    ...(pretty
      ? {
          transport: {
            target: 'pino-pretty',
            options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' },
          },
        }
      : {}),
  };
}
