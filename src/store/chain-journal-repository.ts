import type { ChainJournal } from '../chain/chain-journal.ts';
import type { Db } from './db.ts';
import { accountTransferKeyPrefix } from './authorization-repository.ts';

/** The relayer's journal, nonces and deployments in the platform's database. */
// Stryker disable next-line ArithmeticOperator: killed by the journal suite's PostgreSQL half, which the area skips (PostgreSQL returns rows in the order they were last updated; SQLite in the order journaled, already nonce order)
const byNonce = (a: { nonce: number }, b: { nonce: number }) => a.nonce - b.nonce;

export function createChainJournal(db: Db, newId: () => string): ChainJournal {
  return {
    async syncNonce(network, relayer, chainNonce) {
      await db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom('relayer_nonces').select('next_nonce')
          .where('network', '=', network).where('address', '=', relayer).executeTakeFirst();
        if (!row) {
          await trx.insertInto('relayer_nonces').values({ network, address: relayer, next_nonce: chainNonce }).execute();
          return;
        }
        // Stryker disable next-line EqualityOperator: equivalent, at equality the update writes the value the row holds
        if (row.next_nonce < chainNonce) {
          await trx.updateTable('relayer_nonces').set({ next_nonce: chainNonce })
            .where('network', '=', network).where('address', '=', relayer).execute();
        }
      });
    },

    async journal(entry, now, sign) {
      const { network, relayer, intent } = entry;
      return db.transaction().execute(async (trx) => {
        let included: readonly string[] = [];
        if (entry.authorizationNonces !== undefined) {
          // Only what is still reserved goes into the transaction: an authorization the expiry
          // sweep or a refusal ended meanwhile is left out, and one taken here cannot end elsewhere.
          // Stryker disable next-line ConditionalExpression: killed by this suite's PostgreSQL half, which the area skips (an empty `in ()` is a syntax error there); on SQLite it selects nothing (equivalent)
          const taken = entry.authorizationNonces.length === 0 ? [] : await trx.updateTable('authorizations')
            .set({ status: 'submitted', updated_at: now })
            .where('nonce', 'in', [...entry.authorizationNonces]).where('status', '=', 'reserved')
            .returning('nonce').execute();
          const reserved = new Set(taken.map((row) => row.nonce));
          included = entry.authorizationNonces.filter((nonce) => reserved.has(nonce));
          // Rolls the whole journaling back: nothing was stored, so nothing will be broadcast.
          if (included.length === 0) throw new AuthorizationReleased();
        }
        const row = await trx.updateTable('relayer_nonces')
          .set((eb) => ({ next_nonce: eb('next_nonce', '+', 1) }))
          .where('network', '=', network).where('address', '=', relayer)
          .returning('next_nonce').executeTakeFirstOrThrow();
        const nonce = Number(row.next_nonce) - 1;
        const { rawTx, txHash } = await sign(nonce, included);
        const id = newId();
        await trx.insertInto('chain_txs').values({
          id, network, kind: intent.kind, reference: intent.reference ?? null, relayer, nonce, raw_tx: rawTx,
          tx_hash: txHash, from_address: intent.fromAddress ?? null, to_address: intent.toAddress ?? null,
          contract_address: intent.contractAddress ?? null, amount: intent.amount ?? null,
          status: 'signed', block_number: null, error: null, created_at: now, updated_at: now,
        }).execute();
        // Stryker disable next-line ConditionalExpression,EqualityOperator: killed by this suite's PostgreSQL half, which the area skips (an empty `in ()` is a syntax error there); on SQLite it selects nothing (equivalent)
        if (included.length > 0) {
          await trx.updateTable('authorizations').set({ tx_hash: txHash }).where('nonce', 'in', [...included]).execute();
        }
        return { id, rawTx, txHash, included };
      }).catch((error: unknown) => {
        if (error instanceof AuthorizationReleased) return 'released' as const;
        throw error;
      });
    },

    async markMined(id, status, position, now, txHash) {
      await db.transaction().execute(async (trx) => {
        const row = txHash === undefined ? undefined
          : await trx.selectFrom('chain_txs').select(['tx_hash', 'raw_tx']).where('id', '=', id).executeTakeFirst();
        // Stryker disable next-line ConditionalExpression: equivalent, the row's own hash (or none) is never among its superseded versions: the lookup finds nothing
        const version = row && row.tx_hash !== txHash ? await trx.selectFrom('chain_tx_versions').select('raw_tx')
          .where('tx_hash', '=', txHash as string).where('chain_tx_id', '=', id).executeTakeFirst() : undefined;
        if (row && version) {
          // An earlier version was mined, not the re-priced one: the row names what the chain holds.
          await trx.deleteFrom('chain_tx_versions').where('tx_hash', '=', txHash as string).execute();
          await trx.insertInto('chain_tx_versions').values({ tx_hash: row.tx_hash, chain_tx_id: id, raw_tx: row.raw_tx, created_at: now }).execute();
          await trx.updateTable('chain_txs').set({ tx_hash: txHash as string, raw_tx: version.raw_tx }).where('id', '=', id).execute();
          await trx.updateTable('authorizations').set({ tx_hash: txHash as string }).where('tx_hash', '=', row.tx_hash).execute();
        }
        await trx.updateTable('chain_txs')
          .set({
            status, block_number: position.blockNumber, block_timestamp: position.blockTimestamp ?? null, tx_index: position.txIndex ?? null,
            gas_used: position.gasUsed ?? null, fee_wei: position.feeWei?.toString() ?? null,
            l1_fee_wei: position.l1FeeWei?.toString() ?? null, operator_fee_wei: position.operatorFeeWei?.toString() ?? null,
            updated_at: now, error: status === 'failed' ? 'reverted' : null,
          })
          .where('id', '=', id).execute();
      });
    },

    async replace(id, previousTxHash, next, now) {
      return db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom('chain_txs').select('raw_tx')
          .where('id', '=', id).where('tx_hash', '=', previousTxHash).where('status', '=', 'signed').executeTakeFirst();
        if (!row) return false;
        // Conditional on the hash, so two instances re-pricing one transaction at once journal one version.
        const updated = await trx.updateTable('chain_txs').set({ tx_hash: next.txHash, raw_tx: next.rawTx, updated_at: now })
          .where('id', '=', id).where('tx_hash', '=', previousTxHash).where('status', '=', 'signed').executeTakeFirst();
        // Stryker disable next-line ConditionalExpression,BooleanLiteral: unreachable here, the row read above in this transaction is the one updated; only two instances re-pricing at once on PostgreSQL get 0
        if (Number(updated.numUpdatedRows) !== 1) return false;
        await trx.insertInto('chain_tx_versions').values({ tx_hash: previousTxHash, chain_tx_id: id, raw_tx: row.raw_tx, created_at: now }).execute();
        // One recorded used in the version re-priced (seen on chain before its receipt was recorded) is
        // submitted again: that version is not mined as far as the journal knows (the chain may have
        // lost it), and the receipt of the version mined says whether it executed.
        await trx.updateTable('authorizations').set({ tx_hash: next.txHash, status: 'submitted', updated_at: now })
          .where('tx_hash', '=', previousTxHash).where('status', 'in', ['submitted', 'used']).execute();
        return true;
      });
    },

    async hashesOf(id) {
      const [row, versions] = await Promise.all([
        db.selectFrom('chain_txs').select('tx_hash').where('id', '=', id).executeTakeFirst(),
        db.selectFrom('chain_tx_versions').select('tx_hash').where('chain_tx_id', '=', id).orderBy('created_at', 'desc').execute(),
      ]);
      return [...(row ? [row.tx_hash] : []), ...versions.map((v) => v.tx_hash)];
    },

    async markReplaced(id, now) {
      await db.updateTable('chain_txs').set({ status: 'failed', updated_at: now, error: 'replaced' })
        .where('id', '=', id).where('status', '=', 'signed').execute();
    },

    async listUnmined(network, relayer) {
      const rows = await db.selectFrom('chain_txs').select(['id', 'tx_hash', 'raw_tx', 'nonce', 'created_at', 'updated_at'])
        .where('network', '=', network).where('relayer', '=', relayer).where('status', '=', 'signed')
        .orderBy('nonce').execute();
      // Stryker disable next-line ConditionalExpression: killed by this suite's PostgreSQL half, which the area skips (an empty `in ()` is a syntax error there); on SQLite it selects nothing (equivalent)
      const versions = rows.length === 0 ? [] : await db.selectFrom('chain_tx_versions').select(['chain_tx_id', 'tx_hash'])
        .where('chain_tx_id', 'in', rows.map((r) => r.id)).orderBy('created_at', 'desc').execute();
      // Stryker disable next-line ConditionalExpression: killed by this suite's PostgreSQL half, which the area skips (an empty `in ()` is a syntax error there); on SQLite it selects nothing (equivalent)
      const executed = rows.length === 0 ? [] : await db.selectFrom('authorizations').select('tx_hash')
        .where('tx_hash', 'in', rows.map((r) => r.tx_hash)).where('status', '=', 'used').execute();
      return rows.map((r) => ({
        id: r.id, txHash: r.tx_hash, rawTx: r.raw_tx, nonce: Number(r.nonce), createdAt: Number(r.created_at), signedAt: Number(r.updated_at),
        supersededHashes: versions.filter((v) => v.chain_tx_id === r.id).map((v) => v.tx_hash),
        seenExecuted: executed.some((a) => a.tx_hash === r.tx_hash),
      }));
    },

    async listLost(network, chainNonces) {
      // Stryker disable next-line ConditionalExpression: equivalent, an empty `or` matches no row on either database
      if (chainNonces.size === 0) return [];
      const rows = await db.selectFrom('chain_txs')
        .select(['id', 'relayer', 'nonce', 'tx_hash', 'raw_tx', 'status', 'block_number', 'block_timestamp', 'tx_index'])
        .where('network', '=', network).where('status', '!=', 'signed').where('block_number', 'is not', null)
        .where((eb) => eb.or([...chainNonces].map(([relayer, nonce]) => eb.and([eb('relayer', '=', relayer), eb('nonce', '>=', nonce)]))))
        .execute();
      // Block, index, then nonce across lanes too: a lane's transactions of one block whose indexes
      // are not known come in nonce order (a comparator answering 0 between lanes is no order).
      return rows.map((r) => ({
        id: r.id, relayer: r.relayer, nonce: Number(r.nonce), txHash: r.tx_hash, rawTx: r.raw_tx,
        status: r.status as 'confirmed' | 'failed', blockNumber: Number(r.block_number),
        blockTimestamp: r.block_timestamp === null ? undefined : Number(r.block_timestamp),
        txIndex: r.tx_index === null ? undefined : Number(r.tx_index),
      })).sort((a, b) => a.blockNumber - b.blockNumber || (a.txIndex ?? 0) - (b.txIndex ?? 0) || byNonce(a, b));
    },

    async reopenFrom(network, relayer, chainNonce, now) {
      return db.transaction().execute(async (trx) => {
        const reopened = await trx.updateTable('chain_txs').set({ status: 'signed', block_number: null, error: null, updated_at: now })
          .where('network', '=', network).where('relayer', '=', relayer).where('status', '!=', 'signed').where('nonce', '>=', chainNonce)
          .returning('tx_hash').execute();
        // Stryker disable next-line ConditionalExpression,EqualityOperator: killed by this suite's PostgreSQL half, which the area skips (an empty `in ()` is a syntax error there); on SQLite it selects nothing (equivalent)
        if (reopened.length > 0) {
          await trx.updateTable('authorizations').set({ status: 'submitted', updated_at: now })
            .where('network', '=', network).where('status', '=', 'used').where('tx_hash', 'in', reopened.map((row) => row.tx_hash)).execute();
        }
        return reopened.length;
      });
    },

    async lastMinedNonce(network, relayer, since) {
      const row = await db.selectFrom('chain_txs').select((eb) => eb.fn.max('nonce').as('nonce'))
        .where('network', '=', network).where('relayer', '=', relayer).where('status', '!=', 'signed').where('block_number', 'is not', null)
        .where('updated_at', '>=', since).executeTakeFirst();
      return row?.nonce === null || row?.nonce === undefined ? undefined : Number(row.nonce);
    },

    async markAuthorizationsUsed(txHash, nonces, now) {
      await db.transaction().execute(async (trx) => {
        // '' is no row's key: the list is never empty (an empty `in ()` is a syntax error on PostgreSQL).
        // Stryker disable next-line StringLiteral: equivalent (no row's key is the mutant's string either)
        const executed = [...nonces, ''];
        await trx.updateTable('authorizations').set({ status: 'submitted', updated_at: now })
          .where('tx_hash', '=', txHash).where('status', '=', 'used').where('nonce', 'not in', executed).execute();
        await trx.updateTable('authorizations').set({ status: 'used', updated_at: now })
          .where('tx_hash', '=', txHash).where('status', '=', 'submitted').where('nonce', 'in', executed).execute();
      });
    },

    async accountTransfersOf(txHash) {
      const rows = await db.selectFrom('authorizations').select(['nonce', 'network', 'contract_address', 'from_address', 'chain_nonce'])
        .where('tx_hash', '=', txHash).where('status', 'in', ['submitted', 'used']).execute();
      return rows.filter((row) => row.nonce.startsWith(accountTransferKeyPrefix(row.network)) && row.chain_nonce !== null)
        .map((row) => ({ key: row.nonce, token: row.contract_address, from: row.from_address, nonce: String(row.chain_nonce).toLowerCase() }));
    },

    async findLatest(network, kind, reference) {
      const row = await db.selectFrom('chain_txs').select(['tx_hash', 'status'])
        .where('network', '=', network).where('kind', '=', kind).where('reference', '=', reference)
        .orderBy('created_at', 'desc').executeTakeFirst();
      return row && { txHash: row.tx_hash, status: row.status };
    },

    async findConfirmedDeployment(network, reference) {
      const row = await db.selectFrom('chain_txs').select('tx_hash')
        .where('network', '=', network).where('kind', '=', 'deploy').where('reference', '=', reference).where('status', '=', 'confirmed')
        .orderBy('created_at', 'desc').executeTakeFirst();
      return row?.tx_hash;
    },

    async findDeployment(network, name) {
      const row = await db.selectFrom('deployments').select(['chain_id', 'address'])
        .where('network', '=', network).where('name', '=', name).executeTakeFirst();
      return row && { chainId: Number(row.chain_id), address: row.address };
    },

    async recordDeployment(deployment, now) {
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('deployments').where('network', '=', deployment.network).where('name', '=', deployment.name).execute();
        await trx.insertInto('deployments').values({
          network: deployment.network, name: deployment.name, chain_id: deployment.chainId, address: deployment.address,
          tx_hash: deployment.txHash, created_at: now,
        }).execute();
      });
    },
  };
}

class AuthorizationReleased extends Error {
  // Stryker disable next-line StringLiteral: equivalent, caught above and answered `released`; its message is never read
  constructor() { super('no authorization of the entry is reserved any more'); }
}
