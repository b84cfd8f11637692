import { DomainError } from '#shared/errors.ts';
import { validateNewUser, type UserService } from './users.ts';

/** A new custodial wallet account (the wallet service's `createAddress`). */
export interface NewWalletAccount {
  address: string;
  secretKey: string;
  mnemonic: string;
}

export interface AddUserDeps {
  users: Pick<UserService, 'createUser' | 'findUser'>;
  createWalletAccount: () => Promise<NewWalletAccount>;
}

export interface AddUserParameters {
  id: string;
  password: string;
  name: string;
  email?: string | undefined;
  tel?: string | undefined;
}

/** Shown once to the operator; `secretKey` and `mnemonic` are not stored in the clear anywhere else. */
export interface AddUserReturnType {
  userId: string;
  address: string;
  secretKey: string;
  mnemonic: string;
}

/**
 * `vixpay user add`: a user with a custodial wallet account of their own.
 * Bad input and taken ids are refused before the wallet account is made, so a mistake does not
 * leave an orphan account behind (a lost race for the id still can; the account is then unused).
 *
 * @example
 * const { userId, address, secretKey, mnemonic } = await addUser(
 *   { users, createWalletAccount: () => wallet.createAddress() },
 *   { id: 'alice', password: 'correct horse battery', name: 'Alice Kim' },
 * );
 */
export async function addUser(deps: AddUserDeps, params: AddUserParameters): Promise<AddUserReturnType> {
  const input = validateNewUser(params);
  if (await deps.users.findUser(input.id)) throw new DomainError('auth.user_exists', `user ${input.id} already exists`);
  const account = await deps.createWalletAccount();
  const user = await deps.users.createUser({ ...input, walletAddress: account.address });
  return { userId: user.id, address: account.address, secretKey: account.secretKey, mnemonic: account.mnemonic };
}
