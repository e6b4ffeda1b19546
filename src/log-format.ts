/**
 * The readable log mode (issue 19): when stdout is a terminal, each JSON log line becomes
 * `12:04:05 INFO  web: message key=value ...`; files and pipes keep the JSON lines machines read.
 */
import type { DestinationStream } from 'pino';

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const COLOURS: Record<number, string> = { 40: '\x1b[33m', 50: '\x1b[31m', 60: '\x1b[31m' };
const OMITTED = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg', 'err']);

/** A value as `key=value` shows it: strings bare unless they hold spaces, the rest as JSON. */
function shown(value: unknown): string {
  if (typeof value === 'string') return /[\s"=]/.test(value) || value === '' ? JSON.stringify(value) : value;
  return JSON.stringify(value);
}

/** One JSON log line as a person reads it; a line that is not JSON passes through unchanged. */
export function readableLine(line: string, colour: boolean): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const level = Number(entry.level);
  const time = new Date(Number(entry.time)).toISOString().slice(11, 19);
  const label = (LEVELS[level] ?? String(level)).padEnd(5);
  const fields = Object.entries(entry)
    .filter(([k]) => !OMITTED.has(k))
    .map(([k, v]) => `${k}=${shown(v)}`);
  const err = entry.err as { message?: string; stack?: string } | undefined;
  const text =
    `${time} ${colour && COLOURS[level] ? `${COLOURS[level]}${label}\x1b[0m` : label} ` +
    `${entry.name ?? ''}: ${entry.msg ?? ''}${fields.length ? `  ${fields.join(' ')}` : ''}`;
  return `${text}${err ? `\n${err.stack ?? err.message ?? ''}` : ''}\n`;
}

/** A pino destination writing readable lines to `out` (a terminal). */
export function readableDestination(out: NodeJS.WriteStream): DestinationStream {
  return { write: (line: string) => void out.write(readableLine(line.trimEnd(), out.hasColors?.() ?? false)) };
}
