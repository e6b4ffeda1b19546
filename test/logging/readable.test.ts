/** The readable log mode (issue 19): a JSON log line as a person reads it on a terminal. */
import test from 'ava';
import { readableLine } from '../../src/log-format.ts';
import { loadConfig } from '../../src/config.ts';

const at = Date.parse('2026-11-24T12:04:05.123Z');

test('a request line: time, level, process, message, then its fields as key=value', (t) => {
  const line = JSON.stringify({
    level: 30,
    time: at,
    pid: 1,
    hostname: 'h',
    name: 'web',
    requestId: 'r-1',
    method: 'GET',
    path: '/readyz',
    status: 200,
    ms: 3.2,
    msg: 'request',
  });
  t.is(
    readableLine(line, false),
    '12:04:05 INFO  web: request  requestId=r-1 method=GET path=/readyz status=200 ms=3.2\n',
  );
});

test('strings with spaces are quoted, objects are JSON, an error keeps its stack on the following lines', (t) => {
  const line = JSON.stringify({
    level: 50,
    time: at,
    name: 'billing',
    msg: 'job failed',
    queue: 'render pdf',
    data: { a: 1 },
    err: { message: 'boom', stack: 'Error: boom\n    at x' },
  });
  t.is(
    readableLine(line, false),
    '12:04:05 ERROR billing: job failed  queue="render pdf" data={"a":1}\nError: boom\n    at x\n',
  );
});

test('colour marks warnings and errors only when asked; a line that is not JSON passes through', (t) => {
  t.true(
    readableLine(JSON.stringify({ level: 40, time: at, name: 'web', msg: 'w' }), true).includes('\x1b[33mWARN \x1b[0m'),
  );
  t.false(readableLine(JSON.stringify({ level: 30, time: at, name: 'web', msg: 'i' }), true).includes('\x1b['));
  t.is(readableLine('plain text', false), 'plain text');
});

test('LOG_FORMAT is auto unless set to json or pretty; anything else is refused naming the variable', (t) => {
  t.is(loadConfig({}).LOG_FORMAT, 'auto');
  t.is(loadConfig({ LOG_FORMAT: 'json' }).LOG_FORMAT, 'json');
  t.throws(() => loadConfig({ LOG_FORMAT: 'fancy' }), { message: /LOG_FORMAT/ });
});
