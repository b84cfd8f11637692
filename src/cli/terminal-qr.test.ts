import assert from 'node:assert/strict';
import { test } from 'node:test';
import QRCode from 'qrcode';
import { terminalQrCode } from './terminal-qr.ts';

test('the app\'s QR code is drawn for a terminal, one line per two module rows', async () => {
  const text = JSON.stringify({
    user_uuid: 'alice', user_address: '0x9a2bD1c3e4F5a6B7c8D9e0F1a2B3c4D5e6F7a8B9', expiration_time: '1767225780',
    contract_address: '0x5FbDB2315678afecb367f032d93F642f64180aa3', token_symbol: 'VIXP',
  });
  const drawn = await terminalQrCode(text);
  const modules = QRCode.create(text, { errorCorrectionLevel: 'L' }).modules.size;
  const lines = drawn.trimEnd().split('\n');
  // The symbol plus a quiet zone on each side, two module rows per line.
  assert.ok(Math.abs(lines.length - Math.ceil((modules + 4) / 2)) <= 1, `${lines.length} lines for ${modules} modules`);
  assert.match(drawn, /[█▀▄]/);
});
