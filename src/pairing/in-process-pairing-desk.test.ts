import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPairingDesk, inspectPairingDesk } from './in-process-pairing-desk.ts';
import type { SessionEvent } from './session-events.ts';
import { DomainError } from '#shared/errors.ts';
import { waitFor } from '../../test/support/wait-for.ts';

const sink = () => {
  const events: SessionEvent[] = [];
  return { events, send: (event: SessionEvent) => { events.push(event); } };
};
const arrival = (userUuid: string, s = sink()) => ({ userUuid, userId: 'u1', userAddress: '0xA', sink: s });
const credentials = { tempKey: 't', hashKey: 'h', signature: '0xs', comment: 'c' };
const live = () => new AbortController().signal;

describe('in-process pairing desk', () => {
  test('app first, then POS: paired at once; TRANSFER resolves the wait', async () => {
    const desk = createPairingDesk({ appWaitMs: 1000 });
    const connection = desk.connectApp(arrival('q1'));
    const app = await desk.takeApp('q1', 1000, live());
    assert.equal(app.userAddress, '0xA');
    const waiting = app.awaitTransfer(1000, live());
    connection.submitTransfer(credentials);
    assert.deepEqual(await waiting, credentials);
  });

  test('POS first: waits for the app within the window, else 03', async () => {
    const desk = createPairingDesk({ appWaitMs: 1000 });
    const pending = desk.takeApp('q2', 1000, live());
    assert.deepEqual(inspectPairingDesk(desk), { apps: [], pos: ['q2'] });
    desk.connectApp(arrival('q2'));
    assert.equal((await pending).userId, 'u1');
    await assert.rejects(desk.takeApp('q3', 20, live()), { code: 'payment.expired' });
    assert.deepEqual(inspectPairingDesk(desk).pos, []);
  });

  test('the app hanging up before TRANSFER is 01; a TRANSFER already given is kept', async () => {
    const desk = createPairingDesk({ appWaitMs: 1000 });
    const first = desk.connectApp(arrival('q4'));
    const app = await desk.takeApp('q4', 1000, live());
    const waiting = app.awaitTransfer(1000, live());
    first.hangUp();
    await assert.rejects(waiting, { code: 'payment.canceled_by_user' });

    const second = desk.connectApp(arrival('q5'));
    const paired = await desk.takeApp('q5', 1000, live());
    second.submitTransfer(credentials);
    second.hangUp();
    assert.deepEqual(await paired.awaitTransfer(1000, live()), credentials);
  });

  test('no TRANSFER in time is 03; the POS aborting is 01', async () => {
    const desk = createPairingDesk({ appWaitMs: 1000 });
    desk.connectApp(arrival('q6'));
    const app = await desk.takeApp('q6', 1000, live());
    await assert.rejects(app.awaitTransfer(20, live()), { code: 'payment.expired' });
    const abort = new AbortController();
    const waiting = app.awaitTransfer(1000, abort.signal);
    abort.abort();
    await assert.rejects(waiting, { code: 'payment.canceled_by_user' });
  });

  test('an app nobody picks up is told 03; a user_uuid in use is refused', async () => {
    const desk = createPairingDesk({ appWaitMs: 20 });
    const s = sink();
    desk.connectApp(arrival('q7', s));
    assert.throws(() => desk.connectApp(arrival('q7')), { code: 'request.invalid' });
    await waitFor(() => s.events.length > 0, { timeoutMs: 5000, message: 'the app nobody picked up is told' });
    assert.equal(s.events[0]?.type, 'failed');
    assert.equal(s.events[0]?.type === 'failed' && s.events[0].error.code, 'payment.expired');
    assert.deepEqual(inspectPairingDesk(desk), { apps: [], pos: [] });
  });

  test('a waiting app is told when the POS attempt fails before pairing', () => {
    const desk = createPairingDesk({ appWaitMs: 1000 });
    const s = sink();
    const connection = desk.connectApp(arrival('q8', s));
    desk.failWaitingApp('q8', { error: new DomainError('payment.expired', 'the QR code has expired'), tranNo: 'N8' });
    assert.equal(s.events.length, 1);
    assert.deepEqual(inspectPairingDesk(desk).apps, []);
    connection.hangUp();
  });

  test('a POS coming for an app that already hung up is told 01 at once', async () => {
    const desk = createPairingDesk({ appWaitMs: 1000 });
    desk.connectApp(arrival('q9')).hangUp();
    await assert.rejects(desk.takeApp('q9', 1000, live()), { code: 'payment.canceled_by_user' });
  });

  test('inspection shows apps waiting and POSes waiting, not paired apps; only for in-process desks', async () => {
    const desk = createPairingDesk({ appWaitMs: 1000 });
    desk.connectApp(arrival('q10'));
    assert.deepEqual(inspectPairingDesk(desk), { apps: ['q10'], pos: [] });
    await desk.takeApp('q10', 1000, live());
    assert.deepEqual(inspectPairingDesk(desk), { apps: [], pos: [] });
    assert.throws(() => inspectPairingDesk({ ...desk }), /not an in-process pairing desk/);
  });
});
