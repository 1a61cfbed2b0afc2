/**
 * The SET side of bench/missions-entry.bench.ts: real ES256-signed lifecycle SETs (a fresh,
 * strictly growing version per Mission, alternating active/suspended so every one applies), the
 * raw node:crypto verification they are compared with, and the plain-SQL durable-commit ceilings.
 */
import { createPublicKey, KeyObject, verify as rawVerify } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import { signJwsWithKey, type ForeignSigningKey } from '../src/core/jose.js';
import { formatRfc3339 } from '../src/core/time.js';
import { LIFECYCLE_EVENT, localMissionKeys, type MissionKeySource } from '../src/missions/index.js';
import type { StoreEngine } from '../src/store/engine.js';

export interface SetSource {
  readonly keys: MissionKeySource;
  /** The next SET of `missionId` (version + 1). */
  next(missionId: string): Promise<string>;
  /** Raw ES256 verification of `set` on the main thread (what the target compares with). */
  rawVerify(set: string): boolean;
  /** The same verification through node:crypto's callback form (libuv's thread pool). */
  rawVerifyAsync(set: string): Promise<boolean>;
}

export async function setSource(iss: string, aud: string, nowMs: number): Promise<SetSource> {
  const es = await generateKeyPair('ES256', { extractable: true });
  const signer: ForeignSigningKey = {
    privateKey: KeyObject.from(es.privateKey),
    kid: 'bench-key',
    alg: 'ES256',
  };
  const publicKey = createPublicKey(KeyObject.from(es.privateKey));
  const keys = localMissionKeys({ keys: [{ ...(await exportJWK(es.publicKey)), kid: 'bench-key' }] });
  const versions = new Map<string, number>();
  const nowS = Math.floor(nowMs / 1000);
  const split = (set: string): [Buffer, Buffer] => {
    const dot = set.lastIndexOf('.');
    return [Buffer.from(set.slice(0, dot)), Buffer.from(set.slice(dot + 1), 'base64url')];
  };
  const key = { key: publicKey, dsaEncoding: 'ieee-p1363' as const };
  return {
    keys,
    async next(missionId) {
      const version = (versions.get(missionId) ?? 0) + 1;
      versions.set(missionId, version);
      const state = version % 2 === 1 ? 'active' : 'suspended';
      const claims = {
        iss,
        aud,
        iat: nowS,
        exp: nowS + 3600,
        jti: `set_${missionId}_${version}`,
        events: {
          [LIFECYCLE_EVENT]: {
            mission_id: missionId,
            mission_origin: iss,
            state,
            ...(version > 1 && { prior_state: state === 'active' ? 'suspended' : 'active' }),
            version,
            committed_at: formatRfc3339(nowMs),
          },
        },
      };
      return signJwsWithKey(Buffer.from(JSON.stringify(claims)), signer, 'secevent+jwt');
    },
    rawVerify(set) {
      const [input, signature] = split(set);
      return rawVerify('sha256', input, key, signature);
    },
    rawVerifyAsync(set) {
      const [input, signature] = split(set);
      return new Promise((resolve, reject) =>
        rawVerify('sha256', input, key, signature, (error, ok) => (error ? reject(error) : resolve(ok))),
      );
    },
  };
}

/**
 * The store side's ceilings in plain SQL on the same file: what the replay table + view +
 * evidence cannot beat. `perSet`: one durable transaction per SET inserting its jti and body;
 * `concurrent`: the same from concurrent lanes (group commit); `perBatch`: all of a batch in one.
 */
export async function sqlCeilings(engine: StoreEngine): Promise<{
  perSet(sets: readonly string[]): Promise<number>;
  /** `concurrent` with each SET's raw verification on the thread pool first: a push's floor. */
  verifiedConcurrent(
    lanes: readonly (readonly string[])[],
    verify: (set: string) => Promise<boolean>,
  ): Promise<number>;
  perBatch(sets: readonly string[]): Promise<number>;
  concurrent(lanes: readonly (readonly string[])[]): Promise<number>;
}> {
  await engine.transaction((tx) =>
    tx.run('CREATE TABLE bench_ceiling (jti TEXT PRIMARY KEY, body TEXT NOT NULL)'),
  );
  let n = 0;
  const insert = (tx: Parameters<Parameters<StoreEngine['transaction']>[0]>[0], set: string) =>
    tx.run('INSERT INTO bench_ceiling (jti, body) VALUES (?, ?)', [`${set.slice(-24)}-${++n}`, set]);
  return {
    async perSet(sets) {
      const start = performance.now();
      for (const set of sets) await engine.transaction((tx) => insert(tx, set));
      return sets.length / ((performance.now() - start) / 1000);
    },
    /** One transaction per SET from concurrent lanes: what the engine's group commit allows pushes. */
    async concurrent(lanes) {
      const start = performance.now();
      await Promise.all(
        lanes.map(async (lane) => {
          for (const set of lane) await engine.transaction((tx) => insert(tx, set));
        }),
      );
      return lanes.reduce((a, l) => a + l.length, 0) / ((performance.now() - start) / 1000);
    },
    async verifiedConcurrent(lanes, verify) {
      const start = performance.now();
      await Promise.all(
        lanes.map(async (lane) => {
          for (const set of lane) {
            if (!(await verify(set))) throw new Error('raw verify failed');
            await engine.transaction((tx) => insert(tx, set));
          }
        }),
      );
      return lanes.reduce((a, l) => a + l.length, 0) / ((performance.now() - start) / 1000);
    },
    async perBatch(sets) {
      const start = performance.now();
      await engine.transaction(async (tx) => {
        for (const set of sets) await insert(tx, set);
      });
      return sets.length / ((performance.now() - start) / 1000);
    },
  };
}
