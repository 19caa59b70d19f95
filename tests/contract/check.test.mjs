// The contract checker's own tests (node --test tests/contract/): fake exchanges against the
// real docs/openapi.yaml, so that a checker that let an undocumented member, status, path or
// method through would fail here; and the lint of a broken copy of the description.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { Checker, checkAll, loadDescription } from './check.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const doc = loadDescription();
const checker = new Checker(doc);

const HOLD_ID = 'res_01a216431764ce3081244d1cca44cb0b1481';
const ORDER_ID = 'ord_01a21643240157c015310417ded19a8dff2f';
const JSON_TYPE = { 'content-type': 'application/json' };
const DATE = 'Tue, 01 Dec 2026 21:55:42 GMT';

function hold(extra = {}) {
  return {
    reservation_id: HOLD_ID, event: 'eras_n1', user_id: 'u1', status: 'held',
    seats: ['FLOOR-A-10', 'FLOOR-A-11'], pools: { GA: 2 }, total: 109800, currency: 'USD',
    created_at: '2026-11-26T05:10:25.380Z', expires_at: '2026-11-26T05:15:25.380Z',
    expires_in_ms: 300000, ...extra,
  };
}

function exchange(method, urlPath, status, body, headers = JSON_TYPE) {
  return {
    test: 'fake', method, path: urlPath, status, headers: { date: DATE, ...headers },
    streamed: false,
    body: body === undefined ? '' : (typeof body === 'string' ? body : JSON.stringify(body)),
  };
}

function error(code, extra = {}) {
  return { error: { code, message: 'words', ...extra } };
}

function problems(x) {
  return checker.check(x);
}

test('every $ref of the description names something', () => {
  const refs = [];
  (function walk(node, where) {
    if (Array.isArray(node)) node.forEach((item, i) => walk(item, `${where}/${i}`));
    else if (node && typeof node === 'object') {
      if (typeof node.$ref === 'string') refs.push([node, where]);
      for (const [key, value] of Object.entries(node)) walk(value, `${where}/${key}`);
    }
  })(doc, '#');
  assert.ok(refs.length > 100, `only ${refs.length} $refs found`);
  for (const [node, where] of refs) assert.doesNotThrow(() => checker.resolve(node, where));
});

test('a documented answer passes', () => {
  assert.deepEqual(problems(exchange('POST', '/v1/events/eras_n1/holds', 201, hold())), []);
  assert.deepEqual(problems(exchange('GET', `/v1/holds/${HOLD_ID}`, 200,
    hold({ status: 'confirmed', expires_in_ms: 0, order_id: ORDER_ID }))), []);
  assert.deepEqual(problems(exchange('POST', `/v1/holds/${HOLD_ID}/extend`, 200,
    hold({ capped: true }))), []);
});

test('an undocumented member of an answer fails, named with its exchange', () => {
  const bad = exchange('GET', `/v1/holds/${HOLD_ID}`, 200, hold({ holder_email: 'a@b' }));
  const found = problems(bad);
  assert.equal(found.length, 1, found.join('\n'));
  assert.match(found[0], /undocumented member "holder_email"/);
  const { failures } = checkAll(checker, [bad]);
  assert.match(failures[0].name, /^fake: GET \/v1\/holds\/res_\w+ -> 200$/);
  // A member documented for one answer only (extend's `capped`) is undocumented in another.
  assert.match(problems(exchange('GET', `/v1/holds/${HOLD_ID}`, 200, hold({ capped: false })))
    .join('\n'), /undocumented member "capped"/);
  // Inside nested objects too: a pool of the summary, an error's detail.
  assert.match(problems(exchange('GET', '/v1/holds/x', 404,
    error('hold_not_found', { holder: 'u1' }))).join('\n'), /undocumented member "holder"/);
});

test('a missing or mistyped member fails', () => {
  const missing = hold();
  delete missing.expires_at;
  assert.match(problems(exchange('GET', `/v1/holds/${HOLD_ID}`, 200, missing)).join('\n'),
    /must have required property 'expires_at'/);
  assert.notDeepEqual(problems(exchange('GET', `/v1/holds/${HOLD_ID}`, 200,
    hold({ total: '109800' }))), []);
  assert.notDeepEqual(problems(exchange('GET', `/v1/holds/${HOLD_ID}`, 200,
    hold({ created_at: '2026-11-26T05:10:25Z' }))), []);
  assert.notDeepEqual(problems(exchange('GET', `/v1/holds/${HOLD_ID}`, 200,
    hold({ status: 'pending' }))), []);
});

test('a request the server accepted must fit the description\'s requestBody', () => {
  const created = (request) => ({ ...exchange('POST', '/v1/events/eras_n1/holds', 201, hold()),
    request_body: JSON.stringify(request) });
  assert.deepEqual(problems(created({ user_id: 'u1', seats: ['FLOOR-A-10'], ttl_s: 0.5 })), []);
  // user_id may be left out (a user token's sub stands for it), but not be of another type.
  assert.deepEqual(problems(created({ seats: ['FLOOR-A-10'] })), []);
  assert.match(problems(created({ user_id: 7, seats: ['FLOOR-A-10'] })).join('\n'),
    /the request, which the server accepted, does not fit: .*user_id/);
  assert.match(problems(created({ user_id: 'u1' })).join('\n'), /does not fit/);
  // A refused request is not held to it: it may be as wrong as its test wants.
  assert.deepEqual(problems({ ...exchange('POST', '/v1/events/eras_n1/holds', 400,
    error('invalid_request', { field: 'user_id' })), request_body: '{"seats":[]}' }), []);
});

test('an undocumented status fails', () => {
  const found = problems(exchange('POST', '/v1/events', 418, error('teapot')));
  assert.equal(found.length, 1);
  assert.match(found[0], /undocumented status: POST \/v1\/events does not describe 418/);
  assert.match(problems(exchange('GET', `/v1/holds/${HOLD_ID}`, 409, error('hold_not_active')))
    .join('\n'), /undocumented status/);
});

test('an error code not documented for its status and route fails', () => {
  assert.deepEqual(problems(exchange('GET', '/v1/holds/x', 404, error('hold_not_found'))), []);
  assert.match(problems(exchange('GET', '/v1/holds/x', 404, error('event_not_found')))
    .join('\n'), /"event_not_found" is not one of \["hold_not_found"\]/);
  assert.notDeepEqual(problems(exchange('GET', '/v1/holds/x', 404, { error: { code: 'hold_not_found' } })), []);
});

test('the HTTP layer answers pass on any route, and only with their own codes', () => {
  assert.deepEqual(problems(exchange('POST', '/v1/events', 400, error('bad_request'))), []);
  assert.deepEqual(problems(exchange('GET', '/healthz', 431, error('head_too_large'))), []);
  assert.notDeepEqual(problems(exchange('GET', '/healthz', 431, error('invalid_json'))), []);
});

test('an undocumented path fails unless it is answered 404 not_found', () => {
  assert.deepEqual(problems(exchange('GET', '/v1/nowhere', 404, error('not_found'))), []);
  assert.match(problems(exchange('GET', '/v1/nowhere', 200, { ok: true })).join('\n'),
    /undocumented path/);
  assert.notDeepEqual(problems(exchange('GET', '/v1/nowhere', 404, error('event_not_found'))), []);
});

test('an undocumented method fails unless it is a 405 with the path\'s methods in Allow', () => {
  const allow = { ...JSON_TYPE, allow: 'GET, HEAD, POST, OPTIONS' };
  assert.deepEqual(problems(exchange('DELETE', '/v1/events', 405, error('method_not_allowed'),
    allow)), []);
  assert.match(problems(exchange('DELETE', '/v1/events', 200, { events: [] })).join('\n'),
    /undocumented method/);
  assert.match(problems(exchange('DELETE', '/v1/events', 405, error('method_not_allowed'),
    { ...JSON_TYPE, allow: 'GET, POST' })).join('\n'), /Allow is "GET, POST"/);
  assert.match(problems(exchange('DELETE', '/v1/events', 405, error('method_not_allowed')))
    .join('\n'), /the header Allow is missing/);
});

test('OPTIONS is 204 with Allow, HEAD is GET without a body', () => {
  assert.deepEqual(problems(exchange('OPTIONS', `/v1/holds/${HOLD_ID}/commit`, 204, '',
    { allow: 'POST, OPTIONS' })), []);
  assert.match(problems(exchange('OPTIONS', `/v1/holds/${HOLD_ID}/commit`, 204, '',
    { allow: 'GET, POST, OPTIONS' })).join('\n'), /Allow is/);
  assert.match(problems(exchange('OPTIONS', '/v1/events', 200, { events: [] })).join('\n'),
    /OPTIONS answered 200/);
  assert.deepEqual(problems(exchange('HEAD', '/v1/events/demo', 200, '')), []);
  assert.match(problems(exchange('HEAD', '/v1/events/demo', 200, '{}')).join('\n'),
    /HEAD answered with a body/);
  assert.match(problems(exchange('HEAD', '/v1/webhooks/payments', 200, '')).join('\n'),
    /undocumented method/);
  assert.deepEqual(problems(exchange('HEAD', '/v1/webhooks/payments', 405, '',
    { ...JSON_TYPE, allow: 'POST, OPTIONS' })), []);
  assert.deepEqual(problems(exchange('HEAD', '/v1/nowhere', 404, '')), []);
});

test('headers the description requires are checked', () => {
  const body = error('unauthorized');
  assert.deepEqual(problems(exchange('GET', '/v1/events', 401, body,
    { ...JSON_TYPE, 'www-authenticate': 'Bearer' })), []);
  assert.match(problems(exchange('GET', '/v1/events', 401, body)).join('\n'),
    /the header WWW-Authenticate is missing/);
});

test('every answer carries Date, an IMF-fixdate (x-holdfast-every-answer)', () => {
  const answer = exchange('GET', '/v1/events/demo', 404, error('event_not_found'));
  assert.deepEqual(problems(answer), []);
  assert.match(problems({ ...answer, headers: JSON_TYPE }).join('\n'),
    /the header Date is missing/);
  assert.match(problems({ ...answer, headers: { ...JSON_TYPE, date: '2026-12-01T21:55:42Z' } })
    .join('\n'), /the header Date is "2026-12-01T21:55:42Z", not of the form/);
  assert.match(problems(exchange('GET', '/v1/nowhere', 404, error('not_found'), { date: undefined,
    ...JSON_TYPE })).join('\n'), /the header Date is missing/);
});

test('streams and pages are checked for status and Content-Type only', () => {
  const stream = { ...exchange('GET', '/v1/events/demo/stream?access_token=k', 200, null,
    { 'content-type': 'text/event-stream' }), streamed: true, body: null };
  assert.deepEqual(problems(stream), []);
  assert.match(problems({ ...stream, headers: JSON_TYPE }).join('\n'), /Content-Type/);
  assert.deepEqual(problems(exchange('GET', '/ui/app.css', 200, 'body{}',
    { 'content-type': 'text/css; charset=utf-8' })), []);
  assert.match(problems(exchange('GET', '/ui/app.css', 200, 'body{}',
    { 'content-type': 'text/plain' })).join('\n'), /Content-Type "text\/plain" is not one of/);
});

test('a stream\'s events are checked against their schemas', () => {
  const event = (name, data) => ({ test: 'fake', kind: 'sse', method: 'GET',
    path: '/v1/events/demo/stream', event: name, data: JSON.stringify(data) });
  assert.deepEqual(problems(event('seat', { id: 'F-A-1', status: 'held', version: 2 })), []);
  assert.deepEqual(problems(event('pool', { id: 'GA', available: 1, held: 1, sold: 0 })), []);
  assert.match(problems(event('seat', { id: 'F-A-1', status: 'held', version: 2, user_id: 'u1' }))
    .join('\n'), /undocumented member "user_id"/);
  assert.match(problems(event('hold', { id: 'x' })).join('\n'), /undocumented stream event "hold"/);
  assert.notDeepEqual(problems(event('snapshot', { id: 'demo' })), []);
  assert.match(problems({ ...event('seat', {}), path: '/v1/events' }).join('\n'),
    /describes no stream/);
});

test('a documented path wins over a parameter', () => {
  // /ui/events/{event} (a page) is not /ui/{file}: a JSON answer there is undocumented.
  assert.match(problems(exchange('GET', '/ui/events/demo', 200, {})).join('\n'),
    /Content-Type "application\/json" is not one of text\/html/);
});

test('the lint fails on a broken description', () => {
  const broken = YAML.parse(fs.readFileSync(path.resolve(HERE, '../../docs/openapi.yaml'), 'utf8'));
  // A response without its description, and a $ref to nothing.
  delete broken.paths['/v1/events'].get.responses['200'].description;
  broken.paths['/v1/events'].post.responses['409'] = { $ref: '#/components/responses/Nothing' };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-openapi-'));
  try {
    const file = path.join(dir, 'openapi.yaml');
    fs.writeFileSync(file, YAML.stringify(broken));
    const redocly = path.join(HERE, 'node_modules', '.bin', 'redocly');
    let output = '';
    let status = 0;
    try {
      execFileSync(redocly, ['lint', '--config', path.join(HERE, 'redocly.yaml'), '--format',
        'stylish', file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (failure) {
      status = failure.status;
      output = `${failure.stdout}${failure.stderr}`;
    }
    assert.notEqual(status, 0, 'the lint passed a broken description');
    assert.match(output, /no-unresolved-refs/);
    assert.match(output, /description/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// ---- the description against the server's own tables ----

const ROOT = path.resolve(HERE, '../..');

function sourcesUnder(dir) {
  const files = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourcesUnder(full));
    else if (entry.name.endsWith('.c')) files.push(full);
  }
  return files;
}

// (status, code) pairs some response of the description allows.
function documentedCodes() {
  const pairs = new Set();
  const visit = (responses, pointer) => {
    for (const [status, response] of Object.entries(responses || {})) {
      const [object] = checker.resolve(response, `${pointer}/${status}`);
      // The codes are the enum beside the schema's $ref to ErrorBody.
      const schema = object.content?.['application/json']?.schema || {};
      for (const code of schema.properties?.error?.properties?.code?.enum || []) {
        pairs.add(`${status} ${code}`);
      }
    }
  };
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (operation && operation.responses) visit(operation.responses, `#/paths/${template}/${method}`);
    }
  }
  visit(doc['x-holdfast-any-route'].responses, '#/x-holdfast-any-route/responses');
  visit(doc['x-holdfast-unknown-path'].responses, '#/x-holdfast-unknown-path/responses');
  visit({ 405: doc['x-holdfast-every-path'].responses['other-methods'] }, '#/x-holdfast-every-path');
  return pairs;
}

test('every route of the server is in the description, with its method', () => {
  const documented = new Set();
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch']) {
      if (item[method]) documented.add(`${method.toUpperCase()} ${template.replace(/\{[^}]+\}/g, '{}')}`);
    }
  }
  const routes = [];
  const rooms = ['src/api', 'src/cluster', 'src/engine'];
  for (const file of rooms.flatMap((room) => sourcesUnder(path.join(ROOT, room)))) {
    const text = fs.readFileSync(file, 'utf8');
    for (const match of text.matchAll(/\{"(GET|POST|PUT|PATCH|DELETE)", "(\/[^"]*)"/g)) {
      routes.push(`${match[1]} ${match[2]}`);
    }
  }
  assert.ok(routes.length >= 25, `only ${routes.length} routes read from ${rooms.join(', ')}`);
  const missing = routes.filter((route) => !documented.has(route));
  assert.deepEqual(missing, [], `routes of the server missing from docs/openapi.yaml`);
});

test('every error code of the server is documented under its status', () => {
  const documented = documentedCodes();
  const codes = [];
  const errors = fs.readFileSync(path.join(ROOT, 'src/engine/errors.c'), 'utf8');
  for (const match of errors.matchAll(/\{"([a-z_]+)", (\d{3}),/g)) codes.push(`${match[2]} ${match[1]}`);
  for (const file of sourcesUnder(path.join(ROOT, 'src/net'))) {
    const text = fs.readFileSync(file, 'utf8');
    for (const match of text.matchAll(/connection_reject\(connection, (\d{3}), "([a-z_]+)"/g)) {
      codes.push(`${match[1]} ${match[2]}`);
    }
  }
  assert.ok(codes.length >= 30, `only ${codes.length} error codes read from the sources`);
  const missing = [...new Set(codes)].filter((pair) => !documented.has(pair));
  assert.deepEqual(missing, [], 'error codes (status code) missing from docs/openapi.yaml');
});
