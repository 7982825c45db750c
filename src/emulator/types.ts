import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LawFirm } from '../api/types.js';
import type { DigestEncoding } from '../webhook/sign.js';
import type { ReferenceData } from './data/reference-data.js';
import type { ReferralStore } from './data/referral-data.js';
import type { FaultPlan } from './faults.js';
import type { WebhookSender } from './webhooks.js';

export interface MockOptions {
  port?: number;
  host?: string;
  seed?: number;
  referrals?: number;
  /** Successful requests per token before 429 sandbox_request_limit_reached. */
  allowance?: number | undefined;
  /** Delay added to every answer, in ms. */
  latencyMs?: number | undefined;
  /** Shape of GET /referrals (not published): `{ referrals, meta }` (default) or a bare array. */
  referralListShape?: 'object' | 'bare';
  /** Where events go (the group's api_credentials webhook_url), and how they are signed. */
  webhookUrl?: string | undefined;
  webhookKey?: Buffer | undefined;
  webhookEncoding?: DigestEncoding;
  webhookRetryDelayMs?: number;
  webhookMaxAttempts?: number;
  /** Faults to inject (MODE[:COUNT][@AFTER]); more can be added at run time with POST /__mock/faults. */
  faults?: string[];
  /** How long a `slow` fault holds its answer, in ms. */
  faultDelayMs?: number;
  /** Serve hostile strings in every string field, header and reason phrase (emulator/hostile.ts). */
  hostile?: boolean;
}

export interface RequestLogEntry {
  method: string;
  path: string;
  status: number;
  requestId: string;
}

/** One request as a route sees it. `token` is set once the Bearer check has passed. */
export interface Ctx {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  requestId: string;
  token: string;
  body: Buffer;
  /** Path parameters, decoded, by the names in the route's pattern. */
  params: Record<string, string>;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  raw?: string | Buffer;
}

/** What one emulator instance holds; every route reads and changes only this. */
export interface EmulatorState {
  options: MockOptions;
  data: ReferenceData;
  lawFirms: LawFirm[];
  referrals: ReferralStore;
  /** Seeded source of the ids of what the emulator creates. */
  idRand: () => number;
  /** One-time portal tokens minted by POST /api/v2/auth/sso. */
  ssoTokens: Map<string, boolean>;
  webhooks: WebhookSender;
  faults: FaultPlan;
  requests: RequestLogEntry[];
  baseUrl(): string;
}

export type Handler = (c: Ctx, s: EmulatorState) => Promise<Reply> | Reply;

export interface Route {
  method: string;
  /** Literal segments and `:name` parameters, e.g. `/api/v2/referrals/:id/payments`. */
  path: string;
  handler: Handler;
}
