import type { Writable } from 'node:stream';
import { wrapMessage } from './wrap.js';

// The one sanitiser: human output goes through a HumanStream, which writes SafeText (built only by `safe`
// and `style` here) as is and cleans any plain string (control, escape, bidi and format characters escaped).

const SAFE_ASCII = /^[\x20-\x7e]*$/;
const SAFE_ASCII_BLOCK = /^[\t\n\x20-\x7e]*$/;
const BREAKS = /[\t\n\v\f\r\u0085\u2028\u2029]+/g;
// Default_Ignorable_Code_Point: what draws nothing yet is not Cf, so two values never differ invisibly.
// Built when first needed: a Unicode property class costs its tables at creation, and ASCII never needs it.
let unsafe: RegExp | undefined;
const UNSAFE = () => (unsafe ??= /[\p{Cc}\p{Cf}\p{Cs}\p{Default_Ignorable_Code_Point}\u2028\u2029]/gu);

function escapeChar(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  if (code === 0x7f) return '\u2421';
  return `<U+${code.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/** One value, one line: line breaks become a space, controls and format characters visible escapes. */
export function clean(value: unknown): string {
  const s = typeof value === 'string' ? value : String(value);
  if (SAFE_ASCII.test(s)) return s;
  return s.replace(BREAKS, ' ').replace(UNSAFE(), escapeChar);
}

/** A block of text: like `clean`, but its newlines and tabs are kept. */
export function cleanBlock(text: string): string {
  if (SAFE_ASCII_BLOCK.test(text)) return text;
  return text.replace(UNSAFE(), (ch) => (ch === '\n' || ch === '\t' ? ch : escapeChar(ch)));
}

const BRAND = Symbol('SafeText');

/** Text that is safe for a terminal: only this module makes one. */
export class SafeText {
  readonly text: string;
  constructor(brand: typeof BRAND, text: string) {
    if (brand !== BRAND) throw new TypeError('SafeText is made by safe`…` or style()');
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
  get length(): number {
    return this.text.length;
  }
}

function piece(value: unknown): string {
  return value instanceof SafeText ? value.text : clean(value);
}

// The literal parts are the tool's own text, kept as written; every `${value}` is cleaned to one line.
export function safe(strings: TemplateStringsArray, ...values: unknown[]): SafeText {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += piece(values[i]) + (strings[i + 1] ?? '');
  return new SafeText(BRAND, out);
}

/** Joins pieces (plain strings are cleaned to one line each) with a separator of the tool's. */
export function joinSafe(parts: readonly unknown[], separator = ''): SafeText {
  return new SafeText(BRAND, parts.map(piece).join(separator));
}

const SGR = {
  bold: ['1', '22'],
  dim: ['2', '22'],
  red: ['31', '39'],
  green: ['32', '39'],
  yellow: ['33', '39'],
  redBold: ['31;1', '22;39'],
} as const;
export type Style = keyof typeof SGR;

/** The tool's own colour: cleaned text between SGR codes, or the cleaned text alone when `on` is false. */
export function style(name: Style, text: unknown, on: boolean): SafeText {
  const inner = piece(text);
  if (!on) return new SafeText(BRAND, inner);
  const [open, close] = SGR[name];
  return new SafeText(BRAND, `\u001b[${open}m${inner}\u001b[${close}m`);
}

// The text is cleaned first, then wrapped in a styling function of ours (chalk's, for the error block).
export function paint(styler: (text: string) => string, text: unknown): SafeText {
  return new SafeText(BRAND, styler(piece(text)));
}

/**
 * A human-output writer around a raw stream: SafeText as it is, plain strings cleaned as a block.
 * `redact` runs on everything shown (the token in use, which a server may echo back in any text).
 */
export class HumanStream {
  /** `width`: a terminal's columns; lines written with `line()` are word-wrapped to it. */
  constructor(
    readonly target: Writable,
    readonly width?: number | undefined,
    readonly redact: (text: string) => string = (text) => text,
  ) {}
  write(text: SafeText | string): boolean {
    return this.target.write(this.redact(text instanceof SafeText ? text.text : cleanBlock(text)));
  }
  // Word-wrapped to the terminal's width, so the terminal never breaks it mid-word.
  line(text: SafeText | string): boolean {
    const clean = text instanceof SafeText ? text.text : cleanBlock(text);
    return this.target.write(`${this.fit(clean)}\n`);
  }
  /** A block of lines (a detail view, a verdict), each word-wrapped to the terminal's width. */
  block(text: SafeText): boolean {
    return this.target.write(this.fit(text.text));
  }
  /** A cleaned block wrapped to the width (for the error block and other multi-line messages). */
  fit(clean: string): string {
    const shown = this.redact(clean);
    if (!this.width) return shown;
    return wrapMessage(shown, this.width);
  }
}
