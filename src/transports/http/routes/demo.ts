import type { FastifyInstance } from 'fastify';
import QRCode from 'qrcode';
import { z } from 'zod';
import { DomainError } from '#shared/errors.ts';
import { zodRoute } from '../route-schema.ts';

export interface DemoRoutesDeps {
  /** Where the demo site says it is (the `requestId` it sends identifies the site: its URL and `?`). */
  siteUrl: string;
  waitTimeSeconds: number;
}

/**
 * A small website that logs its visitors in through the vixpay app (docs/interfaces.md#website-login):
 * its server side calls `auth-user-by-app`, shows the issued requestId as a QR code, polls
 * `auth-user-result-by-app` and greets the user. It calls the public endpoints through the HTTP
 * stack, exactly as an external site's server script would.
 */
export async function demoRoutes(app: FastifyInstance, deps: DemoRoutesDeps): Promise<void> {
  const callAuth = async (path: string, payload: object) => {
    const response = await app.inject({ method: 'POST', url: `/v2/auth/${path}`, payload });
    return { status: response.statusCode, body: response.body ? (response.json() as any) : undefined };
  };

  app.get('/login', { schema: { tags: ['demo'], summary: 'The demo shop\'s login page (HTML)' } }, async (_request, reply) => reply.type('text/html; charset=utf-8').send(page));

  app.post('/api/start', { schema: { tags: ['demo'], summary: 'Start a website login and get its QR code' } }, async () => {
    const started = await callAuth('auth-user-by-app', { requestId: `${deps.siteUrl}?`, waitTime: deps.waitTimeSeconds });
    if (started.status !== 200) throw new DomainError('internal', 'the login service refused the request');
    const qrSvg = await QRCode.toString(started.body.requestId, { type: 'svg', margin: 1, width: 240 });
    return { requestId: started.body.requestId, waitTime: started.body.waitTime, qrSvg };
  });

  const resultBody = z.object({ requestId: z.string().min(1).max(512) }).strict();
  app.post('/api/result', zodRoute({ body: resultBody, tags: ['demo'], summary: 'Poll the website login: done, pending or expired' }), async (request) => {
    const parsed = resultBody.safeParse(request.body);
    if (!parsed.success) throw new DomainError('request.invalid', 'requestId is required');
    const result = await callAuth('auth-user-result-by-app', { requestId: parsed.data.requestId, waitTime: 0 });
    if (result.status === 200) return { status: 'done', userId: result.body.userId, name: result.body.name };
    if (result.status === 401) return { status: 'pending' };
    return { status: 'expired' };
  });
}

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Demo shop: log in with the vixpay app</title>
<style>
 body{font-family:system-ui,sans-serif;max-width:34rem;margin:3rem auto;color:#1d2330}
 #qr svg{border:1px solid #ccd;border-radius:8px}
 code{display:block;word-break:break-all;background:#f3f4f8;padding:.5rem;border-radius:6px;font-size:.8rem}
 #greeting{font-size:1.6rem;color:#0a7a3b}
</style></head>
<body>
<h1>Demo shop</h1>
<div id="waiting">
 <p>Scan this code with the vixpay app to log in.</p>
 <div id="qr">Preparing…</div>
 <p>Request id:</p><code id="request-id"></code>
 <p id="status">Waiting for the app…</p>
</div>
<p id="greeting" hidden></p>
<script>
const $ = (id) => document.getElementById(id);
const post = (url, body) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json());
(async () => {
  const started = await post('/demo/api/start', {});
  $('qr').innerHTML = started.qrSvg;
  $('request-id').textContent = started.requestId;
  document.body.dataset.requestId = started.requestId;
  const poll = async () => {
    const result = await post('/demo/api/result', { requestId: started.requestId });
    if (result.status === 'done') {
      $('waiting').hidden = true;
      $('greeting').hidden = false;
      $('greeting').textContent = 'Welcome, ' + result.name + '!';
      document.body.dataset.loggedIn = result.userId;
    } else if (result.status === 'expired') {
      $('status').textContent = 'The login request expired. Reload to try again.';
    } else {
      setTimeout(poll, 1000);
    }
  };
  poll();
})();
</script>
</body></html>`;
