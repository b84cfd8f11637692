import { getAddress, isAddress, zeroAddress, type Address } from 'viem';
import { DomainError } from '#shared/errors.ts';

/** Parses an account address (checksum enforced when mixed case) to its checksummed form. */
export function parseAddress(value: string, field: string): Address {
  // Stryker disable next-line ObjectLiteral: `{}` leaves viem's default, strict (equivalent); said here so a change of that default cannot loosen the check
  if (typeof value !== 'string' || !isAddress(value, { strict: true })) {
    throw new DomainError('request.invalid', `${field} is not a valid address`, { details: field });
  }
  const address = getAddress(value);
  if (address === zeroAddress) throw new DomainError('request.invalid', `${field} must not be the zero address`, { details: field });
  return address;
}
