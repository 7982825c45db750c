import { MOCK_TOKEN } from '../config/environments.js';

/** Tokens the emulator understands; the valid one is the `local` environment's default. */
export const MOCK_TOKENS = {
  valid: MOCK_TOKEN,
  expired: 'mock-expired',
  exhausted: 'mock-exhausted',
  disabled: 'mock-disabled',
} as const;

export const MOCK_TOKEN_PREFIX = 'mock-';
