import type { Migration } from 'kysely';
import * as foundation from './0001-foundation.ts';

/** Every migration, in order. Each domain adds its own file and one line here. */
export const migrations: Record<string, Migration> = {
  '0001-foundation': foundation,
};
