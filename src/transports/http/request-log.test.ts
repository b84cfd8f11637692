import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { redactQuery } from './request-log.ts';

// What a request log line shows of a URL: a credential a client put in the query is never written,
// however the client spelled its parameter's name; everything else is logged as it was sent.

const secretNames = ['access_token', 'id_token', 'refresh_token', 'token', 'accessToken', 'csrfToken',
  'client_secret', 'secret', 'password', 'db_password', 'api_key', 'apiKey', 'API-KEY', 'api-key'];

/** `name` as a client may send it: any of its characters percent-encoded, in either hex case. */
const spelled = (name: string) => fc.array(fc.boolean(), { minLength: name.length, maxLength: name.length })
  .chain((encode) => fc.boolean().map((upper) => [...name].map((char, i) => {
    if (!encode[i]) return char;
    const hex = char.charCodeAt(0).toString(16).padStart(2, '0');
    return `%${upper ? hex.toUpperCase() : hex.toLowerCase()}`;
  }).join('')));

/** A secret value that cannot be mistaken for anything else in the URL. */
const secretValue = fc.stringMatching(/^[A-Za-z0-9._~-]{6,40}$/).map((value) => `S3CR3T${value}`);

/** A parameter that is no credential: its name ends in none of token, secret, password, and is no API key. */
const plainParameter = fc.tuple(
  fc.stringMatching(/^[a-z][a-z0-9_]{0,12}$/).filter((name) => !/(?:token|secret|password)$|^api[_-]?key$/i.test(name)),
  fc.stringMatching(/^[A-Za-z0-9%._~-]{0,20}$/),
).map(([name, value]) => `${name}=${value}`);

test('a credential in the query is redacted however its name is percent-encoded, wherever it stands', () => {
  fc.assert(fc.property(
    fc.constantFrom(...secretNames).chain(spelled), secretValue,
    fc.array(plainParameter, { maxLength: 3 }), fc.array(plainParameter, { maxLength: 3 }),
    fc.option(fc.stringMatching(/^[a-z0-9]{0,8}$/), { nil: undefined }),
    (name, value, before, after, fragment) => {
      const query = [...before, `${name}=${value}`, ...after].join('&');
      const url = `/v1/resource?${query}${fragment === undefined ? '' : `#${fragment}`}`;
      const logged = redactQuery(url);
      assert.ok(!logged.includes(value), `${logged} shows the secret`);
      assert.equal(logged, url.replace(`${name}=${value}`, `${name}=[redacted]`));
    },
  ), { numRuns: 500, seed: 20261128 });
});

test('a URL without a credential is logged exactly as sent', () => {
  fc.assert(fc.property(
    fc.stringMatching(/^\/[a-z0-9/]{0,20}$/), fc.array(plainParameter, { maxLength: 5 }),
    (path, parameters) => {
      const url = parameters.length === 0 ? path : `${path}?${parameters.join('&')}`;
      assert.equal(redactQuery(url), url);
    },
  ), { numRuns: 300, seed: 20261128 });
});

test('the cases a reader checks by eye', () => {
  assert.equal(redactQuery('/x?access%5Ftoken=abc&page=2'), '/x?access%5Ftoken=[redacted]&page=2');
  assert.equal(redactQuery('/x?api+key=abc'), '/x?api+key=abc', 'a space is no API key spelling');
  assert.equal(redactQuery('/x?%20password%20=abc'), '/x?%20password%20=[redacted]', 'spaces around a name are no disguise');
  assert.equal(redactQuery('/x?token'), '/x?token=[redacted]', 'a name without a value shows it was sent, not what');
  assert.equal(redactQuery('/x?a=%E0%A4%A&token=abc#frag'), '/x?a=%E0%A4%A&token=[redacted]#frag', 'a malformed escape elsewhere does not stop redaction');
  assert.equal(redactQuery('/x?%E0%A4%Atoken=abc'), '/x?%E0%A4%Atoken=[redacted]', 'a name that does not decode is judged as written');
  assert.equal(redactQuery('/x#token=abc'), '/x#token=abc', 'a fragment is not a query');
});
