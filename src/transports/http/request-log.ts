import type { FastifyRequest } from 'fastify';

/**
 * Query parameters whose values are credentials: `access_token`, `id_token`, `refresh_token`,
 * `token`, `accessToken`, anything else ending in `token`, `secret` or `password`, and any spelling
 * of an API key (`api_key`, `apiKey`, `API-KEY`). Clients that cannot set a header put them in the URL; the
 * platform never accepts them there, and never writes them to a log line either.
 */
const secretParameter = /^(?:.*(?:token|secret|password)|api[_-]?key)$/i;

const decoded = (name: string) => {
  try {
    return decodeURIComponent(name.replaceAll('+', ' '));
  } catch {
    return name;
  }
};

/** `url` with the value of every secret query parameter replaced by `[redacted]`. */
export function redactQuery(url: string): string {
  const start = url.indexOf('?');
  if (start === -1) return url;
  const [query, fragment] = splitOnce(url.slice(start + 1), '#');
  const parameters = query.split('&').map((part) => {
    const [name] = splitOnce(part, '=');
    return secretParameter.test(decoded(name).trim()) ? `${name}=[redacted]` : part;
  });
  return `${url.slice(0, start)}?${parameters.join('&')}${fragment === undefined ? '' : `#${fragment}`}`;
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at === -1 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

/** Fastify's request serializer (what a request log line shows), with the query's secrets redacted. */
export function requestLogSerializer(request: FastifyRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: redactQuery(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
