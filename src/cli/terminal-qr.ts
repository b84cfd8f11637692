import QRCode from 'qrcode';

/**
 * A QR code drawn with block characters, two rows per line (`small`), as a phone camera reads it
 * off a terminal: what `vixpay app` shows for the POS to scan.
 */
export function terminalQrCode(text: string): Promise<string> {
  return QRCode.toString(text, { type: 'terminal', small: true, errorCorrectionLevel: 'L' });
}

/** Prints `text` as a QR code (the app's payment QR: user_uuid, user_address, expiration_time, contract_address, token_symbol). */
export async function printQrCode(text: string, out: NodeJS.WritableStream = process.stdout): Promise<void> {
  out.write(await terminalQrCode(text));
}
