import type Redis from 'ioredis';
import { PagedReadOptions } from '../paged-read-options';

/** Redis layout of live node state; this file is the only place that knows it. */
export const REDIS_KEYS = {
  node: (id: string) => `gantry:node:${id}`,
  /** ZSET nodeId -> when the control plane last heard the node (its own clock, ms). */
  lastSeen: 'gantry:nodes:last-seen',
  /** Hash of running sums over the nodes heard within the dead timeout: nodes, gpus, gpuUtilMilli, cpuUtilMilli. */
  utilisation: 'gantry:cluster:utilisation',
  /** String: last-seen score up to which silent nodes have been taken out of the running sums. */
  utilisationSweptUntil: 'gantry:cluster:utilisation:swept-until',
} as const;

export interface LiveBeat {
  nodeId: string;
  bootId: string;
  seq: number;
  sentAt: number;
  receivedAt: number;
  /** The running set as JSON; in every beat. */
  running: string;
  /** gpus, cpu and memory as JSON; absent in a liveness beat, which leaves the stored telemetry as it is. */
  telemetry?: string;
  /** sentAt of the beat the telemetry came with (it may be older than this beat); default sentAt. */
  telemetryAt?: number;
  /** What the node adds to the cluster's utilisation sums; with the telemetry it comes from. */
  contribution?: { gpus: number; gpuUtilMilli: number; cpuUtilMilli: number };
  /**
   * The beat cursor this write moves on from (judgeBeat decided the beat is newer than it): the
   * write happens only if it is still the stored one, else another writer got there first and
   * this beat is not written. null: the node must have no cursor yet. Absent: write regardless.
   */
  expected?: { bootId: string; seq: number } | null;
  /** The cursor's other parts (BeatCursor): boots replaced, newest first, and the beat's offset. */
  pastBoots?: readonly string[];
  offset?: string;
}

/** What a node's telemetry adds to the utilisation sums (UtilisationContribution in the domain). */
export interface UtilisationContributionFields {
  gpus: number;
  gpuUtilMilli: number;
  cpuUtilMilli: number;
}

/** A node's stored beat cursor (see judgeBeat). */
export interface StoredBeatCursor {
  bootId: string;
  seq: number;
  pastBoots: string[];
  offset: string;
}

/** A node's stored live fields. `telemetryAt` is the sentAt of the beat the telemetry came with. */
export interface LiveFields {
  sentAt: number;
  receivedAt: number;
  running: string;
  telemetry: string | null;
  telemetryAt: number | null;
}

/**
 * Records a batch of beats, each only if the node's stored cursor is still the one it was judged
 * against (`expected`): which beat is newer is decided in one place, judgeBeat in the domain, and
 * this script only refuses to let two writers both move a node on from the same cursor. A beat
 * with telemetry (its telemetry argument not empty) replaces the stored telemetry and the node's
 * known contribution to the cluster's utilisation sums (kg, kgu, kcu); a liveness beat keeps both.
 * The counted contribution (cg, cgu, ccu; absent when the node is not counted, e.g. after the
 * sweep took a silent node out) then moves to the known one, and the differences go into the sums,
 * so the summary reads four integers instead of 50,000 hashes. A node whose telemetry is not known
 * yet is not counted. Returns how many beats were written and the nodes that had no hash before
 * (new, expired, removed, or Redis restarted), which the ingester registers again in Postgres.
 * One call per batch rather than per beat: the per-call cost (ioredis command, Redis script
 * invocation) was most of the ingester's Redis time (ADR 0010).
 * KEYS: lastSeen, utilisation, then one node hash per beat. ARGV: ttl, then BEAT_ARGS per beat.
 * Returns one flag per beat (1 written, 0 not: the cursor had moved) and the nodes written that had no live state before.
 */
const BEAT_ARGS = 16;
const RECORD_BEATS = `
local ttl = ARGV[1]
local written, dn, dg, dgu, dcu = {}, 0, 0, 0, 0
local fresh = {}
for i = 3, #KEYS do
  local key = KEYS[i]
  local o = 1 + (i - 3) * ${BEAT_ARGS}
  local bootId, seq, sentAt, receivedAt = ARGV[o + 1], ARGV[o + 2], ARGV[o + 3], ARGV[o + 4]
  local telemetry, nodeId, running, telemetryAt = ARGV[o + 5], ARGV[o + 6], ARGV[o + 7], ARGV[o + 8]
  local check, expectBoot, expectSeq, boots, offset = ARGV[o + 12], ARGV[o + 13], ARGV[o + 14], ARGV[o + 15], ARGV[o + 16]
  local cur = redis.call('HMGET', key, 'bootId', 'seq', 'cg', 'cgu', 'ccu', 'kg', 'kgu', 'kcu')
  local ok = true
  if check == '1' then
    if expectBoot == '' then ok = not cur[1] else ok = (cur[1] == expectBoot and cur[2] == expectSeq) end
  end
  if ok then
    written[#written + 1] = 1
    if not cur[1] then fresh[#fresh + 1] = nodeId end
    -- One HSET per beat, not up to three: a redis.call costs far more than a field (bench:heartbeats: Redis CPU per beat -14 %).
    local f = {'bootId', bootId, 'seq', seq, 'sentAt', sentAt, 'receivedAt', receivedAt, 'running', running, 'boots', boots, 'offset', offset}
    local g, gu, cu
    if telemetry ~= '' then
      g, gu, cu = tonumber(ARGV[o + 9]), tonumber(ARGV[o + 10]), tonumber(ARGV[o + 11])
      f[15], f[16], f[17], f[18], f[19], f[20], f[21], f[22], f[23], f[24] = 'telemetry', telemetry, 'telemetryAt', telemetryAt, 'kg', g, 'kgu', gu, 'kcu', cu
    elseif cur[6] then
      g, gu, cu = tonumber(cur[6]), tonumber(cur[7]), tonumber(cur[8])
    end
    if g then
      local counted = false
      if cur[3] then
        local pg, pgu, pcu = tonumber(cur[3]), tonumber(cur[4]), tonumber(cur[5])
        if g ~= pg or gu ~= pgu or cu ~= pcu then
          dg, dgu, dcu = dg + g - pg, dgu + gu - pgu, dcu + cu - pcu
          counted = true
        end
      else
        dn, dg, dgu, dcu = dn + 1, dg + g, dgu + gu, dcu + cu
        counted = true
      end
      if counted then
        local n = #f
        f[n + 1], f[n + 2], f[n + 3], f[n + 4], f[n + 5], f[n + 6] = 'cg', g, 'cgu', gu, 'ccu', cu
      end
    end
    redis.call('HSET', key, unpack(f))
    redis.call('PEXPIRE', key, ttl)
    redis.call('ZADD', KEYS[1], receivedAt, nodeId)
  else
    written[#written + 1] = 0
  end
end
if dn ~= 0 then redis.call('HINCRBY', KEYS[2], 'nodes', dn) end
if dg ~= 0 then redis.call('HINCRBY', KEYS[2], 'gpus', dg) end
if dgu ~= 0 then redis.call('HINCRBY', KEYS[2], 'gpuUtilMilli', dgu) end
if dcu ~= 0 then redis.call('HINCRBY', KEYS[2], 'cpuUtilMilli', dcu) end
return {written, fresh}
`;

/**
 * Forgets a removed node: its hash, its last-seen entry, and its counted share of the utilisation
 * sums (as the silent-node sweep takes it out), atomically. KEYS: lastSeen, utilisation, node hash.
 */
const FORGET_NODE = `
local c = redis.call('HMGET', KEYS[3], 'cg', 'cgu', 'ccu')
if c[1] then
  redis.call('HINCRBY', KEYS[2], 'nodes', -1)
  redis.call('HINCRBY', KEYS[2], 'gpus', 0 - tonumber(c[1]))
  redis.call('HINCRBY', KEYS[2], 'gpuUtilMilli', 0 - tonumber(c[2]))
  redis.call('HINCRBY', KEYS[2], 'cpuUtilMilli', 0 - tonumber(c[3]))
end
redis.call('DEL', KEYS[3])
return redis.call('ZREM', KEYS[1], ARGV[1])
`;
/** kg, kgu, kcu of each node hash in KEYS, flat; '' three times where the node has none. */
const READ_CONTRIBUTIONS = `
local out = {}
for i = 1, #KEYS do
  local v = redis.call('HMGET', KEYS[i], 'kg', 'kgu', 'kcu')
  if v[1] and v[2] and v[3] then
    out[#out + 1] = v[1]; out[#out + 1] = v[2]; out[#out + 1] = v[3]
  else
    out[#out + 1] = ''; out[#out + 1] = ''; out[#out + 1] = ''
  end
end
return out
`;
/** Nodes per contributions read: about a millisecond of Redis time per call. */
const CONTRIBUTIONS_PER_CALL = 2000;
/** Members per page when reading the last-seen index (see heardSince). */
const HEARD_PAGE = 2000;
/** Beats per script call: bounds how long one call holds Redis (about a millisecond). */
const BEATS_PER_CALL = 200;

export class NodeLiveStore {
  constructor(
    private readonly redis: Redis,
    private readonly ttlMs: number,
  ) {
    this.redis.defineCommand('gantryRecordBeats', { lua: RECORD_BEATS });
    this.redis.defineCommand('gantryForgetNode', { numberOfKeys: 3, lua: FORGET_NODE });
    this.redis.defineCommand('gantryReadContributions', { lua: READ_CONTRIBUTIONS });
  }

  /** Forgets a removed node's live state (see FORGET_NODE); true if it was in the last-seen index. */
  async forget(nodeId: string): Promise<boolean> {
    const forget = (this.redis as unknown as Record<string, (...a: unknown[]) => Promise<number>>).gantryForgetNode;
    return (await forget.call(this.redis, REDIS_KEYS.lastSeen, REDIS_KEYS.utilisation, REDIS_KEYS.node(nodeId), nodeId)) === 1;
  }

  /**
   * Records a batch of beats (one script call per BEATS_PER_CALL, pipelined); returns, per beat,
   * whether it was written (false: its node's cursor was not `expected` any more), and the nodes
   * written that Redis held nothing for before. A node should appear once per batch (its newest beat).
   */
  async recordBeats(beats: LiveBeat[]): Promise<{ written: boolean[]; firstSeen: string[] }> {
    if (beats.length === 0) return { written: [], firstSeen: [] };
    const pipeline = this.redis.pipeline() as unknown as Record<string, (...a: unknown[]) => void> & { exec(): Promise<Array<[Error | null, unknown]> | null> };
    for (let i = 0; i < beats.length; i += BEATS_PER_CALL) {
      const chunk = beats.slice(i, i + BEATS_PER_CALL);
      const keys: string[] = [REDIS_KEYS.lastSeen, REDIS_KEYS.utilisation];
      const args: Array<string | number> = [this.ttlMs];
      for (const b of chunk) {
        const c = b.contribution ?? { gpus: 0, gpuUtilMilli: 0, cpuUtilMilli: 0 };
        keys.push(REDIS_KEYS.node(b.nodeId));
        args.push(
          b.bootId,
          b.seq,
          b.sentAt,
          b.receivedAt,
          b.telemetry ?? '',
          b.nodeId,
          b.running,
          b.telemetryAt ?? b.sentAt,
          c.gpus,
          c.gpuUtilMilli,
          c.cpuUtilMilli,
          b.expected === undefined ? '0' : '1',
          b.expected?.bootId ?? '',
          b.expected ? String(b.expected.seq) : '',
          JSON.stringify(b.pastBoots ?? []),
          b.offset ?? '-1',
        );
      }
      pipeline.gantryRecordBeats(keys.length, ...keys, ...args);
    }
    const written: boolean[] = [];
    const firstSeen: string[] = [];
    for (const [err, value] of (await pipeline.exec()) ?? []) {
      if (err) throw err;
      const [flags, fresh] = value as [number[], string[]];
      for (const flag of flags) written.push(flag === 1);
      firstSeen.push(...fresh);
    }
    return { written, firstSeen };
  }

  /** The stored beat cursor of each node that has one; one pipeline. */
  async beatCursors(nodeIds: string[]): Promise<Map<string, StoredBeatCursor>> {
    const result = new Map<string, StoredBeatCursor>();
    if (nodeIds.length === 0) return result;
    const pipeline = this.redis.pipeline();
    for (const id of nodeIds) pipeline.hmget(REDIS_KEYS.node(id), 'bootId', 'seq', 'boots', 'offset');
    ((await pipeline.exec()) ?? []).forEach(([err, v], i) => {
      if (err) throw err;
      const [bootId, seq, boots, offset] = v as Array<string | null>;
      if (bootId !== null && seq !== null)
        result.set(nodeIds[i], { bootId, seq: Number(seq), pastBoots: boots ? (JSON.parse(boots) as string[]) : [], offset: offset ?? '-1' });
    });
    return result;
  }

  /**
   * nodeId -> last heard (ms) for every node heard since `sinceMs`. Read in pages of HEARD_PAGE by
   * score, so Redis is never blocked by one reply of the whole fleet (during which every beat and
   * every summary request waits; ADR 0007). Not a snapshot: a node read twice keeps its later
   * score, and a node can be missed when another one at the page boundary's score beats between two
   * pages (the LIMIT offset then skips one too many). A caller that judges absence must re-read the
   * nodes it finds absent or silent with lastSeenMany, as the failure detector does.
   */
  async heardSince(sinceMs: number, paging: PagedReadOptions = {}): Promise<Map<string, number>> {
    const pageSize = paging.pageSize ?? HEARD_PAGE;
    const result = new Map<string, number>();
    let from = sinceMs;
    let skip = 0; // members already read at score `from`
    for (;;) {
      const asked = performance.now();
      const flat = await this.redis.zrangebyscore(REDIS_KEYS.lastSeen, from, '+inf', 'WITHSCORES', 'LIMIT', skip, pageSize);
      for (let i = 0; i < flat.length; i += 2) {
        const score = Number(flat[i + 1]);
        result.set(flat[i], score);
        if (score === from) skip++;
        else [from, skip] = [score, 1];
      }
      if (flat.length < pageSize * 2) return result;
      await paging.betweenPages?.(performance.now() - asked);
    }
  }

  /** When the newest beat of any node was written: the ingestion watermark. */
  async newestBeat(): Promise<number | null> {
    const top = await this.redis.zrevrange(REDIS_KEYS.lastSeen, 0, 0, 'WITHSCORES');
    return top.length === 2 ? Number(top[1]) : null;
  }

  /** nodeId -> last heard, for every node ever heard since Redis last started. */
  async allLastSeen(): Promise<Map<string, number>> {
    return this.heardSince(0);
  }

  async lastSeen(nodeId: string): Promise<number | null> {
    const score = await this.redis.zscore(REDIS_KEYS.lastSeen, nodeId);
    return score === null ? null : Number(score);
  }

  async livePayload(nodeId: string): Promise<Record<string, string> | null> {
    const h = await this.redis.hgetall(REDIS_KEYS.node(nodeId));
    return Object.keys(h).length ? h : null;
  }

  /** Last heard (ms) for each id, null where never heard; one round trip (ZMSCOREs of HEARD_PAGE ids, pipelined). */
  async lastSeenMany(nodeIds: string[]): Promise<Map<string, number | null>> {
    const result = new Map<string, number | null>();
    if (nodeIds.length === 0) return result;
    const pipeline = this.redis.pipeline();
    for (let i = 0; i < nodeIds.length; i += HEARD_PAGE) pipeline.call('ZMSCORE', REDIS_KEYS.lastSeen, ...nodeIds.slice(i, i + HEARD_PAGE));
    let i = 0;
    for (const [err, scores] of (await pipeline.exec()) ?? []) {
      if (err) throw err;
      for (const score of scores as Array<string | null>) result.set(nodeIds[i++], score === null ? null : Number(score));
    }
    return result;
  }

  /**
   * Each node's last known utilisation contribution (the one its latest telemetry gave; kept while
   * the node is silent), null where none is known. One script call per CONTRIBUTIONS_PER_CALL nodes
   * answering one flat array: 50,000 separate HMGET replies cost the client several times more to
   * read than the server to answer.
   */
  async contributionsMany(nodeIds: string[]): Promise<Array<UtilisationContributionFields | null>> {
    const read = (this.redis as unknown as Record<string, (...a: unknown[]) => Promise<string[]>>).gantryReadContributions;
    const result: Array<UtilisationContributionFields | null> = [];
    for (let i = 0; i < nodeIds.length; i += CONTRIBUTIONS_PER_CALL) {
      const keys = nodeIds.slice(i, i + CONTRIBUTIONS_PER_CALL).map((id) => REDIS_KEYS.node(id));
      const flat = await read.call(this.redis, keys.length, ...keys);
      for (let k = 0; k < flat.length; k += 3) {
        result.push(flat[k] === '' ? null : { gpus: Number(flat[k]), gpuUtilMilli: Number(flat[k + 1]), cpuUtilMilli: Number(flat[k + 2]) });
      }
    }
    return result;
  }

  /** The stored live fields of each node, absent where none; one pipeline. */
  async liveMany(nodeIds: string[]): Promise<Map<string, LiveFields>> {
    const result = new Map<string, LiveFields>();
    if (nodeIds.length === 0) return result;
    const pipeline = this.redis.pipeline();
    for (const id of nodeIds) pipeline.hmget(REDIS_KEYS.node(id), 'sentAt', 'receivedAt', 'running', 'telemetry', 'telemetryAt');
    const replies = (await pipeline.exec()) ?? [];
    replies.forEach(([err, v], i) => {
      if (err) throw err;
      const [sentAt, receivedAt, running, telemetry, telemetryAt] = v as Array<string | null>;
      if (sentAt !== null && receivedAt !== null) {
        result.set(nodeIds[i], {
          sentAt: Number(sentAt),
          receivedAt: Number(receivedAt),
          running: running ?? '[]',
          telemetry,
          telemetryAt: telemetryAt === null ? null : Number(telemetryAt),
        });
      }
    });
    return result;
  }
}
