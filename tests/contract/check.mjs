// The contract test: checks recorded exchanges (tests/blackbox/harness.py's recording, one JSON
// object a line: method, path, status, headers, body) against docs/openapi.yaml.
//
//     node tests/contract/check.mjs [--description docs/openapi.yaml] EXCHANGES.jsonl
//
// Each exchange is matched to the description's path and method and to the response of its
// status, and its body is validated against that response's schema (ajv, JSON Schema 2020-12,
// as OpenAPI 3.1 uses). An undocumented path, method, status, Content-Type or member of an
// answer fails it, with the exchange named; so does a request the server accepted (2xx) that
// the operation's requestBody schema refuses (a description stricter than the server). Streams,
// HTML and static files are checked for their status and Content-Type only, the streams'
// events against the schemas their answer names (x-holdfast-events). The conventions the
// description states once rather than per path are checked here: HEAD is answered as GET without a body; OPTIONS answers 204;
// a method the path lacks answers 405; both with `Allow` listing the path's methods; a path
// no route has answers 404 `not_found`; the HTTP layer's answers (x-holdfast-any-route) may
// come on any path; every answer carries the headers of x-holdfast-every-answer (Date).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const DEFAULT_DESCRIPTION = path.resolve(HERE, '../../docs/openapi.yaml');

// The order of methods in `Allow` (docs/API.md, "HTTP").
const ALLOW_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const SCHEMA_ID = 'openapi';

export function loadDescription(file = DEFAULT_DESCRIPTION) {
  return YAML.parse(fs.readFileSync(file, 'utf8'));
}

function escapePointer(token) {
  return String(token).replace(/~/g, '~0').replace(/\//g, '~1');
}

function mediaType(contentType) {
  return (contentType || '').split(';')[0].trim().toLowerCase();
}

function isJson(media) {
  return media === 'application/json' || media.endsWith('+json');
}

export class Checker {
  constructor(doc) {
    this.doc = doc;
    this.ajv = new Ajv2020({ strict: false, allErrors: true, verbose: true, validateSchema: false });
    addFormats(this.ajv);
    this.ajv.addSchema(doc, SCHEMA_ID);
    this.validators = new Map();
    this.routes = Object.entries(doc.paths || {}).map(([template, item]) => {
      const segments = template.split('/');
      const pattern = segments
        .map((segment) => (/^\{[^}]+\}$/.test(segment) ? '[^/]+'
          : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/');
      const literals = segments.filter((segment) => !segment.startsWith('{')).length;
      return { template, item, regex: new RegExp(`^${pattern}$`), literals };
    });
    // A literal segment wins over a parameter: the most literal template first.
    this.routes.sort((a, b) => b.literals - a.literals);
    this.used = new Map();   // "METHOD template" -> count, for the coverage report
  }

  // Follows a local $ref ("#/components/...") and returns [object, its JSON pointer].
  resolve(object, pointer) {
    let current = object;
    let where = pointer;
    for (let depth = 0; current && current.$ref && depth < 16; depth++) {
      const ref = current.$ref;
      if (!ref.startsWith('#/')) throw new Error(`${where}: only local $refs are read (${ref})`);
      where = ref;
      current = ref.slice(2).split('/')
        .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'))
        .reduce((node, token) => (node == null ? undefined : node[token]), this.doc);
      if (current === undefined) throw new Error(`${pointer}: $ref ${ref} names nothing`);
    }
    return [current, where];
  }

  validator(pointer) {
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${SCHEMA_ID}${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }

  route(urlPath) {
    return this.routes.find((route) => route.regex.test(urlPath)) || null;
  }

  static allowOf(item) {
    const methods = new Set(OPERATION_METHODS.filter((m) => item[m]).map((m) => m.toUpperCase()));
    if (methods.has('GET')) methods.add('HEAD');
    methods.add('OPTIONS');
    return ALLOW_ORDER.filter((m) => methods.has(m)).join(', ');
  }

  // The candidate responses for a status: [response object, pointer], the operation's first.
  candidates(responses, responsesPointer, status) {
    const found = [];
    const key = String(status);
    for (const name of [key, `${key[0]}XX`, 'default']) {
      if (responses && responses[name]) {
        found.push([responses[name], `${responsesPointer}/${escapePointer(name)}`]);
        break;
      }
    }
    const anyRoute = this.doc['x-holdfast-any-route']?.responses;
    if (anyRoute && anyRoute[key]) {
      found.push([anyRoute[key], `#/x-holdfast-any-route/responses/${key}`]);
    }
    return found;
  }

  // Problems of one exchange against one response object ([] when it conforms).
  checkResponse(exchange, response, pointer, { headOnly = false, allow = null } = {}) {
    const problems = [];
    const [object, where] = this.resolve(response, pointer);
    const headers = exchange.headers || {};
    for (const [name, header] of Object.entries(object.headers || {})) {
      const [definition] = this.resolve(header, `${where}/headers/${escapePointer(name)}`);
      const value = headers[name.toLowerCase()];
      if (value === undefined) {
        if (definition.required) problems.push(`the header ${name} is missing`);
        continue;
      }
      if (name.toLowerCase() === 'allow' && allow !== null && value !== allow) {
        problems.push(`Allow is "${value}", the description's methods make "${allow}"`);
      }
    }
    const content = object.content;
    const media = mediaType(headers['content-type']);
    if (!content) {
      if (exchange.body) problems.push(`a body where the description has none (${where})`);
      if (media) problems.push(`a Content-Type (${media}) where the description has no body`);
      return problems;
    }
    const mediaKey = Object.keys(content).find((key) => mediaType(key) === media);
    if (mediaKey === undefined) {
      problems.push(`Content-Type "${headers['content-type'] || ''}" is not one of ` +
                    `${Object.keys(content).join(', ')} (${where})`);
      return problems;
    }
    if (headOnly) {
      if (exchange.body) problems.push('HEAD answered with a body');
      return problems;
    }
    if (exchange.streamed || !isJson(media)) return problems;
    if (exchange.body === null || exchange.body === undefined) return problems;
    let document;
    try {
      document = JSON.parse(exchange.body);
    } catch (error) {
      problems.push(`the body is not JSON: ${error.message}`);
      return problems;
    }
    if (!content[mediaKey].schema) return problems;
    const schemaPointer = `${where}/content/${escapePointer(mediaKey)}/schema`;
    const validate = this.validator(schemaPointer);
    if (!validate(document)) problems.push(...describeErrors(validate.errors, schemaPointer));
    return problems;
  }

  // Problems of one event of a stream: its name and data against the x-holdfast-events of the
  // stream's text/event-stream answer.
  checkStreamEvent(exchange) {
    const urlPath = String(exchange.path || '').split('?')[0];
    const route = this.route(urlPath);
    const operation = route?.item.get;
    const where = route && `#/paths/${escapePointer(route.template)}/get/responses/200`;
    const [response, responsePointer] = operation?.responses?.['200']
      ? this.resolve(operation.responses['200'], where) : [null, null];
    const events = response?.content?.['text/event-stream']?.['x-holdfast-events'];
    if (!events) return [`a stream event on ${urlPath}, which describes no stream`];
    this.count(`event ${exchange.event} ${route.template}`);
    if (!events[exchange.event]) {
      return [`undocumented stream event "${exchange.event}" (the description has ` +
              `${Object.keys(events).join(', ')})`];
    }
    let document;
    try {
      document = JSON.parse(exchange.data);
    } catch (error) {
      return [`the data of event "${exchange.event}" is not JSON: ${error.message}`];
    }
    const pointer = `${responsePointer}/content/text~1event-stream/x-holdfast-events/` +
                    escapePointer(exchange.event);
    const validate = this.validator(pointer);
    return validate(document) ? [] : describeErrors(validate.errors, pointer);
  }

  // Problems of one exchange ([] when it conforms to the description).
  check(exchange) {
    if (exchange.kind === 'sse') return this.checkStreamEvent(exchange);
    return [...this.checkEveryAnswer(exchange), ...this.checkRoute(exchange)];
  }

  // The headers every answer carries whatever its route and status (x-holdfast-every-answer:
  // Date): present when required, and of their schema's pattern.
  checkEveryAnswer(exchange) {
    const problems = [];
    const headers = exchange.headers || {};
    const every = this.doc['x-holdfast-every-answer']?.headers || {};
    for (const [name, header] of Object.entries(every)) {
      const [definition] = this.resolve(header,
        `#/x-holdfast-every-answer/headers/${escapePointer(name)}`);
      const value = headers[name.toLowerCase()];
      const pattern = definition.schema?.pattern;
      if (value === undefined) {
        if (definition.required) problems.push(`the header ${name} is missing`);
      } else if (pattern && !new RegExp(pattern).test(value)) {
        problems.push(`the header ${name} is "${value}", not of the form ${pattern}`);
      }
    }
    return problems;
  }

  checkRoute(exchange) {
    const method = String(exchange.method || '').toUpperCase();
    const urlPath = String(exchange.path || '').split('?')[0];
    const status = exchange.status;
    const route = this.route(urlPath);
    // A HEAD's answer is its GET's head (or the 404 or 405 of any other method), no body.
    const headOnly = method === 'HEAD';
    if (!route) {
      const unknown = this.doc['x-holdfast-unknown-path']?.responses || {};
      const found = this.candidates(unknown, '#/x-holdfast-unknown-path/responses', status);
      if (found.length === 0) {
        return [`undocumented path: no path of the description matches ${urlPath}, and ` +
                `${status} is not the answer to an unknown path`];
      }
      return this.firstPassing(exchange, found, { headOnly }, `unknown path ${urlPath}`);
    }
    const allow = Checker.allowOf(route.item);
    const basePointer = `#/paths/${escapePointer(route.template)}`;
    const every = this.doc['x-holdfast-every-path']?.responses || {};
    let operationMethod = method.toLowerCase();
    if (method === 'OPTIONS') {
      this.count(`OPTIONS ${route.template}`);
      const found = status === 204 && every.OPTIONS
        ? [[every.OPTIONS, '#/x-holdfast-every-path/responses/OPTIONS']]
        : this.candidates({}, '', status);
      if (found.length === 0) return [`OPTIONS answered ${status}, not 204`];
      return this.firstPassing(exchange, found, { allow }, `OPTIONS ${route.template}`);
    }
    if (method === 'HEAD' && route.item.get) operationMethod = 'get';
    const operation = OPERATION_METHODS.includes(operationMethod) ? route.item[operationMethod]
      : undefined;
    if (!operation) {
      const found = status === 405 && every['other-methods']
        ? [[every['other-methods'], '#/x-holdfast-every-path/responses/other-methods']]
        : this.candidates({}, '', status);
      if (found.length === 0) {
        return [`undocumented method: ${route.template} has no ${method} (only ${allow}), ` +
                `and the answer is ${status}, not 405`];
      }
      return this.firstPassing(exchange, found, { allow, headOnly },
                               `${method} ${route.template}`);
    }
    this.count(`${operationMethod.toUpperCase()} ${route.template}`);
    const responsesPointer = `${basePointer}/${operationMethod}/responses`;
    const found = this.candidates(operation.responses, responsesPointer, status);
    if (found.length === 0) {
      return [`undocumented status: ${operationMethod.toUpperCase()} ${route.template} does ` +
              `not describe ${status} (it has ${Object.keys(operation.responses).join(', ')})`];
    }
    const problems = this.firstPassing(exchange, found, { headOnly, allow }, '');
    if (status >= 200 && status < 300) {
      problems.push(...this.checkAcceptedRequest(exchange, operation,
        `${basePointer}/${operationMethod}/requestBody`));
    }
    return problems;
  }

  // A request the server accepted (2xx) must fit the operation's requestBody: a description
  // stricter than the server (a bound, a required member, a pattern) fails here.
  checkAcceptedRequest(exchange, operation, pointer) {
    if (!operation.requestBody || !exchange.request_body) return [];
    const [body, where] = this.resolve(operation.requestBody, pointer);
    if (!body.content?.['application/json']?.schema) return [];
    let document;
    try {
      document = JSON.parse(exchange.request_body);
    } catch {
      return [];   // not JSON yet accepted: only a route that ignores its body does that
    }
    const schemaPointer = `${where}/content/application~1json/schema`;
    const validate = this.validator(schemaPointer);
    if (validate(document)) return [];
    return describeErrors(validate.errors, schemaPointer)
      .map((line) => `the request, which the server accepted, does not fit: ${line}`);
  }

  // [] when one of the candidates passes, else the first candidate's problems.
  firstPassing(exchange, found, options, what) {
    let first = null;
    for (const [response, pointer] of found) {
      const problems = this.checkResponse(exchange, response, pointer, options);
      if (problems.length === 0) return [];
      if (first === null) first = problems;
    }
    return what ? first.map((problem) => `${what}: ${problem}`) : first;
  }

  count(key) {
    this.used.set(key, (this.used.get(key) || 0) + 1);
  }

  // The operations no exchange reached, "METHOD /path".
  unexercised() {
    const all = [];
    for (const { template, item } of this.routes) {
      for (const method of OPERATION_METHODS) {
        if (item[method] && !this.used.has(`${method.toUpperCase()} ${template}`)) {
          all.push(`${method.toUpperCase()} ${template}`);
        }
      }
    }
    return all.sort();
  }
}

// ajv's errors as sentences; an undocumented member is named as such.
function describeErrors(errors, schemaPointer) {
  const seen = new Set();
  const lines = [];
  for (const error of errors || []) {
    // An if's error only says which branch failed: that branch's own errors say why.
    if (error.keyword === 'if') continue;
    const at = error.instancePath || '(the body)';
    let line;
    if (error.keyword === 'additionalProperties') {
      line = `${at}: undocumented member "${error.params.additionalProperty}"`;
    } else if (error.keyword === 'unevaluatedProperties') {
      line = `${at}: undocumented member "${error.params.unevaluatedProperty}"`;
    } else if (error.keyword === 'enum') {
      line = `${at}: ${JSON.stringify(error.data)} is not one of ${JSON.stringify(error.params.allowedValues)}`;
    } else {
      line = `${at}: ${error.message}`;
    }
    if (!seen.has(line)) {
      seen.add(line);
      lines.push(line);
    }
  }
  // oneOf's branches repeat each other's complaints: keep the report short.
  return lines.slice(0, 8).map((line) => `${line} (schema ${schemaPointer})`);
}

export function readExchanges(file) {
  const text = fs.readFileSync(file, 'utf8');
  const exchanges = [];
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    try {
      exchanges.push(JSON.parse(line));
    } catch (error) {
      exchanges.push({ unreadable: `${file}:${index + 1}: ${error.message}` });
    }
  });
  return exchanges;
}

export function exchangeName(exchange) {
  if (exchange.kind === 'sse') {
    return `${exchange.test || '(no test)'}: GET ${exchange.path} event ${exchange.event}`;
  }
  return `${exchange.test || '(no test)'}: ${exchange.method} ${exchange.path} -> ${exchange.status}`;
}

// Checks every exchange; returns { checked, failures: [{ name, problems }] }.
export function checkAll(checker, exchanges) {
  const failures = [];
  for (const exchange of exchanges) {
    if (exchange.unreadable) {
      failures.push({ name: exchange.unreadable, problems: ['not a JSON line'] });
      continue;
    }
    const problems = checker.check(exchange);
    if (problems.length > 0) failures.push({ name: exchangeName(exchange), problems });
  }
  return { checked: exchanges.length, failures };
}

function main(argv) {
  let description = DEFAULT_DESCRIPTION;
  const files = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--description') description = argv[++i];
    else files.push(argv[i]);
  }
  if (files.length !== 1) {
    console.error('usage: node check.mjs [--description docs/openapi.yaml] EXCHANGES.jsonl');
    return 2;
  }
  if (!fs.existsSync(files[0])) {
    console.error(`FAIL contract: no recording at ${files[0]} (run the black-box suite with ` +
                  'HOLDFAST_CONTRACT_RECORD set)');
    return 1;
  }
  const checker = new Checker(loadDescription(description));
  const exchanges = readExchanges(files[0]);
  if (exchanges.length === 0) {
    console.error(`FAIL contract: ${files[0]} holds no exchange`);
    return 1;
  }
  const { checked, failures } = checkAll(checker, exchanges);
  const shown = 50;
  for (const failure of failures.slice(0, shown)) {
    console.log(`FAIL ${failure.name}`);
    for (const problem of failure.problems) console.log(`    ${problem}`);
  }
  if (failures.length > shown) console.log(`... and ${failures.length - shown} more`);
  const idle = checker.unexercised();
  if (idle.length > 0) {
    console.log(`operations no exchange reached (${idle.length}): ${idle.join(', ')}`);
  }
  console.log(`contract: ${checked} exchanges checked against ${path.relative(process.cwd(), description)}, ` +
              `${failures.length} do not conform`);
  return failures.length === 0 ? 0 : 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
