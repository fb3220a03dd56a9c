// Type declarations of the sqlq package (lib/index.js).  See docs/node.md.
/// <reference types="node" />
import { EventEmitter } from "node:events";

/** Bytes: a Buffer or Uint8Array, or a string taken as UTF-8. */
export type Bytes = Buffer | Uint8Array | ArrayBuffer | string;
/** An integer from the database: a number, or a BigInt for tokens. */
export type Int = number | bigint;

export const status: Readonly<{
  OK: 0; ERROR: 1; MISUSE: 2; TOOBIG: 3; NOTFOUND: 4; STALE: 5; BUSY: 6; TIMEOUT: 7;
  INTERRUPTED: 8; UNAVAILABLE: 9; NOMEM: 10; SCHEMA: 11; PAUSED: 12; LOCK_LOST: 13;
}>;
export const state: Readonly<{ READY: 1; RUNNING: 2; DEAD: 3; SCHEDULED: 4; DONE: 5; WAITING: 6 }>;
export const subscription: Readonly<{ ACTIVE: 0; NO_TABLE: 1; NO_TRIGGER: 2; MOVED: 3 }>;
export const ON_INSERT: 1;
export const ON_UPDATE: 2;
export const ON_DELETE: 4;
export const SUB_ROWS: 1;
export const version: string;
export const versionNumber: number;
export function statusName(status: number): string;

/** A failed call: status is the code (sqlq.status), code its name ("SQLQ_STALE"). */
export class SqlqError extends Error {
  constructor(message: string, status?: number);
  readonly status: number;
  readonly code: string;
}
export class MisuseError extends SqlqError {}
export class TooBigError extends SqlqError {}
export class NotFoundError extends SqlqError {}
export class StaleError extends SqlqError {}
export class BusyError extends SqlqError {}
export class TimeoutError extends SqlqError {}
export class InterruptedError extends SqlqError {}
export class UnavailableError extends SqlqError {}
export class NomemError extends SqlqError {}
export class SchemaError extends SqlqError {}
export class PausedError extends SqlqError {}
export class LockLostError extends SqlqError {}

export interface OpenOptions {
  /** Largest payload enqueue() accepts, in bytes (default 1 MiB). */
  payloadLimit?: number;
  /** Copy each acked job into the history table. */
  keepHistory?: boolean;
  /** Seconds a statement waits for a lock held elsewhere (default 5). */
  busyTimeout?: number;
}

export interface EnqueueOptions {
  priority?: number;
  /** Seconds before the job may run. */
  delay?: number;
  maxAttempts?: number;
  dedupeKey?: string | null;
  groupKey?: string | null;
}

export interface BatchJob extends EnqueueOptions {
  payload: Bytes;
}

export interface JobRef {
  id: Int;
  token: Int;
}

/** What claim() and list() say of a job. */
export interface JobFields {
  id: number;
  payload: Buffer;
  priority: number;
  attempts: number;
  maxAttempts: number;
  runAtUs: number;
  createdAtUs: number;
  leaseUntilUs: number;
  groupKey: string | null;
  dedupeKey: string | null;
}

/** A claimed job. */
export interface Job extends JobFields {
  token: bigint;
  queue: string;
}

/** A job as list() shows it. */
export interface JobInfo extends JobFields {
  state: number;
  lastError: string | null;
}

export interface QueueStats {
  queue: string;
  ready: number;
  scheduled: number;
  running: number;
  dead: number;
  paused: boolean;
}

/** A count of summary() that stops at its limit. */
export type SummaryCount = "ready" | "scheduled" | "running" | "dead";

/** The counts of one queue as summary() gives them (libsqlq 1.1). */
export interface QueueSummary {
  queue: string;
  ready: number;
  scheduled: number;
  running: number;
  dead: number;
  /** The counts that reached the limit (each is then the limit: there are at least that many). */
  more: SummaryCount[];
  paused: boolean;
  /** Seconds the longest-waiting ready job has been due (the database's clock); null when none is. */
  oldestReadyAge: number | null;
}

export interface SummaryOptions {
  /** One queue (default: every queue). */
  queue?: string | null;
  /** Where each count stops, 1 to 10^9 (default 10,000). */
  limit?: number;
}

/** One named lock held now (locks(), libsqlq 1.1). */
export interface LockInfo {
  /** The name, or null where the backend keeps only the key (PostgreSQL, SQLite). */
  name: Buffer | null;
  /** What the backend locks: lockKey(name) of the name. */
  key: bigint;
  /** The holder's session on the server (backend pid, connection id); 0: unknown. */
  pid: number;
  /** Who holds it, in words, or null when unknown. */
  holder: string | null;
  /** When the holder's session began, in microseconds since the epoch; 0: unknown. */
  sinceAtUs: number;
  /** A lease's expiry, in microseconds since the epoch; 0 for a session's lock. */
  expiresAtUs: number;
  /** A lease's fencing token; 0n otherwise. */
  fence: bigint;
}

/** One ring (rings(), libsqlq 1.1). */
export interface RingInfo {
  name: string;
  capacity: number;
  /** Entries it holds now. */
  entries: number;
  /** The newest entry's sequence number (0: none). */
  lastSeq: number;
  createdAtUs: number;
}

/** One pool (pools(), libsqlq 1.1). */
export interface PoolInfo {
  name: string;
  items: number;
  /** Of which held now. */
  held: number;
  /** When an item was last handed out, in microseconds since the epoch; 0: never. */
  lastUsedAtUs: number;
}

/** Where a listing of rings() or pools() starts, and how many it gives. */
export interface ListOptions {
  /** List the names that sort (bytewise) after this one (default: from the first). */
  after?: string | null;
  /** At most this many, 1 to 10,000 (default 100). */
  limit?: number;
}

/** One item of health() (docs/health.md). */
export interface HealthItem {
  /** "oldest_xmin_age", "wal_bytes", ...: one of docs/health.md's. */
  name: string;
  /** The measure now, in unit. */
  value: number;
  /** "s", "bytes", "rows", "frames" or "transactions". */
  unit: string;
  /** The default limit past which it holds the queues back. */
  threshold: number;
  /** value is over threshold. */
  over: boolean;
  /** Who holds it (process id, user, application, client address, slot), or null. */
  holder: string | null;
  /** When the holder began, in microseconds since the epoch; 0: unknown. */
  startedAtUs: number;
  /** More, in words, or null. */
  detail: string | null;
}

export interface FailOptions {
  /** Base of the exponential backoff in seconds (default 1). */
  backoff?: number;
  retryNow?: boolean;
  dead?: boolean;
}

export interface RingEntry {
  seq: number;
  pushedAtUs: number;
  payload: Buffer;
}

export interface PoolItem {
  id: number;
  item: string;
  lastUsedAtUs: number;
  uses: number;
  heldUntilUs: number;
  token: bigint;
}

export interface Subscription {
  table: string;
  tag: string;
  actions: number;
  flags: number;
  createdAtUs: number;
  status: number;
}

/** A schedule of periodic jobs (cronList, libsqlq 1.1). */
export interface Schedule {
  name: string;
  spec: string;
  zone: string;
  queue: string;
  payload: Buffer;
  /** "skip", "once", "all", or the most missed ticks a late pass enqueues. */
  missed: "skip" | "once" | "all" | number;
  paused: boolean;
  nextAtUs: number;
  /** The latest tick enqueued; 0: none yet. */
  lastAtUs: number;
}

export interface CronOptions {
  /** A name of the tz database (default "UTC"). */
  zone?: string;
  /** What a late pass does with missed ticks (default "skip"). */
  missed?: "skip" | "once" | "all" | number;
}

/** What wait() and ringWait() saw. */
export type WaitResult = "ready" | "timeout" | "interrupted";

/** A held lock (lockAcquire). */
export interface Lock {
  /** Resolves while the lock is certainly held; rejects with LockLostError otherwise. */
  check(timeout?: number): Promise<void>;
  unlock(): Promise<void>;
  held(): boolean;
}

/** One connection to a database; its calls run one at a time, in order. */
export class Database {
  private constructor();
  readonly backend: string;
  readonly url: string;
  readonly payloadLimit: number;
  readonly closed: boolean;
  close(): Promise<void>;
  /** Make the current or next wait() return "interrupted"; any time, from the main thread. */
  interrupt(): void;
  init(): Promise<number>;
  enqueue(queue: string, payload: Bytes, options?: EnqueueOptions): Promise<{ id: number; duplicate: boolean }>;
  enqueueBatch(queue: string, jobs: Array<Bytes | BatchJob>, options?: { after?: Int[] }): Promise<number[]>;
  claim(queue: string, max?: number, options?: { lease?: number }): Promise<Job[]>;
  ack(job: JobRef): Promise<void>;
  ack(id: Int, token: Int): Promise<void>;
  /** Resolves with the number acked; stale tokens are skipped, not an error. */
  ackBatch(jobs: JobRef[]): Promise<number>;
  fail(job: JobRef, error?: string | null, options?: FailOptions): Promise<void>;
  fail(id: Int, token: Int, error?: string | null, options?: FailOptions): Promise<void>;
  release(job: JobRef, delay?: number): Promise<void>;
  release(id: Int, token: Int, delay?: number): Promise<void>;
  touch(job: JobRef, lease: number): Promise<number>;
  touch(id: Int, token: Int, lease: number): Promise<number>;
  wait(queue: string, timeout?: number): Promise<WaitResult>;
  pause(queue: string): Promise<void>;
  resume(queue: string): Promise<void>;
  stats(queue?: string | null): Promise<QueueStats[]>;
  /** What holds the database's queues back (libsqlq 1.1, docs/health.md). */
  health(): Promise<HealthItem[]>;
  /** Counts per queue, each stopping at a limit, in one statement whose cost does not grow with the queues (libsqlq 1.1). */
  summary(options?: SummaryOptions): Promise<QueueSummary[]>;
  list(queue: string, options?: { state?: number; limit?: number }): Promise<JobInfo[]>;
  retry(queue: string, ids?: Int[] | null): Promise<number>;
  /** Cancel jobs (libsqlq 1.1): ready or running ones become dead, marked cancelled;
   *  resolves to how many.  A cancelled job's ack, fail or touch rejects with Stale. */
  cancel(ids: Int[]): Promise<number>;
  purge(queue: string): Promise<number>;
  begin(): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
  transaction<T>(fn: (db: Database) => Promise<T> | T): Promise<T>;
  lockAcquire(name: Bytes, timeout?: number): Promise<Lock>;
  withLock<T>(name: Bytes, timeout: number, fn: (lock: Lock) => Promise<T> | T): Promise<T>;
  lockXact(name: Bytes, timeout?: number): Promise<void>;
  /** The named locks held now, by any process (libsqlq 1.1); UnavailableError on Firebird. */
  locks(options?: { limit?: number }): Promise<LockInfo[]>;
  /** The key locks() lists the lock name by. */
  lockKey(name: Bytes): Promise<bigint>;
  ringCreate(ring: string, capacity: number): Promise<void>;
  ringPush(ring: string, payload: Bytes): Promise<number>;
  ringPushBatch(ring: string, payloads: Bytes[]): Promise<number>;
  ringRead(ring: string, since?: Int, limit?: number): Promise<RingEntry[]>;
  ringWait(ring: string, since?: Int, timeout?: number): Promise<WaitResult>;
  ringDrop(ring: string): Promise<void>;
  rings(options?: ListOptions): Promise<RingInfo[]>;
  poolAdd(pool: string, item: string): Promise<boolean>;
  poolRemove(pool: string, item: string): Promise<void>;
  poolList(pool: string): Promise<PoolItem[]>;
  poolNext(pool: string, hold?: number): Promise<PoolItem>;
  poolRelease(pool: string, item: PoolItem): Promise<void>;
  poolRelease(pool: string, item: string, token: Int): Promise<void>;
  pools(options?: ListOptions): Promise<PoolInfo[]>;
  subscribe(table: string, actions: number, tag: string, flags?: number): Promise<void>;
  unsubscribe(table: string, tag: string): Promise<void>;
  subscriptions(): Promise<Subscription[]>;
  cronAdd(name: string, spec: string, queue: string, payload?: Bytes, options?: CronOptions): Promise<void>;
  cronRemove(name: string): Promise<void>;
  cronPause(name: string): Promise<void>;
  cronResume(name: string): Promise<void>;
  cronList(): Promise<Schedule[]>;
  cronTick(nowAtUs?: number): Promise<{ enqueued: number; nextAtUs: number }>;
  retentionSet(queue: string, options?: { keepFor?: number; keepCount?: number }): Promise<void>;
  retentionGet(queue: string): Promise<{ keepFor: number; keepCount: number }>;
  historyPrune(queue: string, max?: number): Promise<number>;
  concurrencySet(queue: string, maxRunning: number): Promise<void>;
  concurrencyGet(queue: string): Promise<number>;
  rateSet(queue: string, maxStarts: number, period?: number): Promise<void>;
  rateGet(queue: string): Promise<{ maxStarts: number; period: number }>;
  groupLimitSet(queue: string, perGroup: number): Promise<void>;
  groupLimitGet(queue: string): Promise<number>;
  fairSet(queue: string, fair: boolean): Promise<void>;
  fairGet(queue: string): Promise<boolean>;
}

export function open(url: string, options?: OpenOptions): Promise<Database>;

export interface WorkerOptions {
  /** Jobs claimed at a time (default 100). */
  batch?: number;
  /** Handlers running at once (default: batch). */
  concurrency?: number;
  /** Lease of each claimed job, in seconds (default 30). */
  lease?: number;
  /** Base of the retry backoff of a failed job, in seconds (default 1). */
  backoff?: number;
  /** Longest idle wait before claiming again anyway, in seconds (default 60; negative: no limit). */
  waitTimeout?: number;
  /** Connections that ack and fail finished jobs (default 2). */
  ackConnections?: number;
  /** Stop gracefully on SIGTERM and SIGINT (default true). */
  handleSignals?: boolean;
  /** Options of the worker's connections. */
  open?: OpenOptions;
}

export class Worker extends EventEmitter {
  constructor(url: string, queue: string, options?: WorkerOptions);
  readonly counts: { acked: number; failed: number; released: number };
  handle(fn: (job: Job) => unknown): this;
  start(): Promise<void>;
  stop(): Promise<void>;
  on(event: "error", listener: (err: Error) => void): this;
  on(event: "stopped", listener: () => void): this;
  on(event: string | symbol, listener: (...args: any[]) => void): this;
}
