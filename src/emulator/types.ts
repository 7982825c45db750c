import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LawFirm } from '../api/types.js';
import type { DigestEncoding } from '../webhook/sign.js';
import type { ReferenceData } from './data/reference-data.js';
import type { ReferralStore } from './data/referral-data.js';
import type { FaultPlan } from './faults.js';
import type { WebhookSender } from './webhooks.js';

export interface MockOptions {
  port?: number;
  /** The port of the second, "storage" origin (0, the default, picks a free one). */
  storagePort?: number;
  host?: string;
  seed?: number;
  referrals?: number;
  allowance?: number | undefined;
  latencyMs?: number | undefined;
  /** Shape of GET /referrals (not published): `{ referrals, meta }` (default) or a bare array. */
  referralListShape?: 'object' | 'bare';
  /** GET /referrals answers as if `q` were not there (to try a client's fallback). */
  ignoreSearch?: boolean;
  webhookUrl?: string | undefined;
  /** Loopback ports an auto-book request's own webhook_url may name, beside webhookUrl's. */
  webhookPorts?: number[] | undefined;
  webhookKey?: Buffer | undefined;
  webhookEncoding?: DigestEncoding;
  webhookRetryDelayMs?: number;
  webhookMaxAttempts?: number;
  faults?: string[];
  faultDelayMs?: number;
  hostile?: boolean;
  /** Every visit under way takes a step this often (ms); none: visits move only when told. */
  advanceEveryMs?: number | undefined;
  /** How long an auto-book attempt stays `processing` (ms; default 2s). */
  autoBookDelayMs?: number | undefined;
}

export interface RequestLogEntry {
  method: string;
  path: string;
  status: number;
  requestId: string;
}

export interface Ctx {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  requestId: string;
  token: string;
  body: Buffer;
  params: Record<string, string>;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  raw?: string | Buffer;
}

export interface EmulatorState {
  options: MockOptions;
  data: ReferenceData;
  lawFirms: LawFirm[];
  referrals: ReferralStore;
  idRand: () => number;
  ssoTokens: Map<string, boolean>;
  webhooks: WebhookSender;
  faults: FaultPlan;
  requests: RequestLogEntry[];
  /** Successful API requests by token, for --allowance. */
  used: Map<string, number>;
  port: number;
}

export type Handler = (c: Ctx, s: EmulatorState) => Promise<Reply> | Reply;

export interface Route {
  method: string;
  path: string;
  handler: Handler;
}
