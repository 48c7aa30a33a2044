// Text from outside as the client shows it in an error, as dpdist._shown.shown in Python (byte for byte:
// test/fixtures/shown.json): the client's secrets masked in every form a server could echo them in (each character's
// ``spelling``s, and base64 at any offset), what Python's str.isprintable refuses escaped (by the runtime's Unicode tables), cut.
import { ACK_ANSWER_BYTES, tooManyValues } from './answer.js';
import { CODES } from './codes.js';

export const MASK = '***';
const SHORTEST_SECRET = 4; // a shorter secret would mask common words
const NAMED = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
/** What Python's str.isprintable() refuses: other (Cc, Cf, Cs, Co, Cn), line and paragraph separators, spaces but ' '. */
const UNPRINTABLE = /^(?:[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]|(?! )\p{Zs})$/u;
const literal = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const hex = (number, width) => number.toString(16).padStart(width, '0').replace(/[a-f]/g, (digit) => `[${digit}${digit.toUpperCase()}]`);
const length = (text) => Array.from(text).length;

/** A pattern of one character (a code point) as itself or in each form a text may escape it in (Python's). */
function spelling(character) {
  const code = character.codePointAt(0);
  const forms = [literal(character), Array.from(new TextEncoder().encode(character), (byte) => `%${hex(byte, 2)}`).join(''),
    `&#0{0,3}${code};`, `&#[xX]0{0,3}${hex(code, 1)};`, literal(NAMED[character] ?? character)];
  if (code < 0x10000) forms.push(`\\\\u${hex(code, 4)}`);
  else forms.push(`\\\\u${hex(0xd800 + ((code - 0x10000) >> 10), 4)}\\\\u${hex(0xdc00 + ((code - 0x10000) & 0x3ff), 4)}`, `\\\\U${hex(code, 8)}`);
  if (code < 0x100) forms.push(`\\\\x${hex(code, 2)}`);
  if ('"\'\\/'.includes(character)) forms.push(literal(`\\${character}`));
  if (character === ' ') forms.push('\\+');
  return `(?:${[...new Set(forms)].join('|')})`;
}

/** ``secret`` and its base64 at each offset in a longer text, standard and URL-safe (Python's secret_forms). */
function secretForms(secret) {
  if (length(secret) < SHORTEST_SECRET) return [];
  const data = new TextEncoder().encode(secret);
  const forms = [secret];
  for (let offset = 0; offset < 3; offset += 1) {
    const encoded = btoa(String.fromCharCode(...new Array(offset).fill(0), ...data)).replace(/=+$/, '');
    const start = Math.ceil((8 * offset) / 6);
    for (const form of [encoded.slice(start, Math.floor((8 * (offset + data.length)) / 6)), encoded.slice(start)]) {
      forms.push(form, form.replace(/\+/g, '-').replace(/\//g, '_'));
    }
  }
  return forms.filter((form) => length(form) >= SHORTEST_SECRET);
}

/**
 * One pattern of every form of ``secrets`` that a text of ``room`` characters can hold, the longest first (then in code
 * order, as Python's), or null.  A form spells each of its characters in one character or more, so a longer one never
 * matches and is left out: V8 compiles a credential's pattern, thousands of alternatives, in 0.1-2 CPU-s, and the texts
 * shown (a URL, a refusal's detail) are mostly shorter than the credential.
 */
function patternOf(secrets, room) {
  const forms = [...new Set(secrets.flatMap(secretForms))].filter((form) => length(form) <= room)
    .sort((a, b) => length(b) - length(a) || (a < b ? -1 : a > b ? 1 : 0));
  return forms.length ? new RegExp(forms.map((form) => Array.from(form, spelling).join('')).join('|'), 'g') : null;
}

/** ``character`` as Python's ``repr(character)[1:-1]`` writes an unprintable one: ``\n``, ``\x1b``, ``\u202e``. */
function escaped(character) {
  const code = character.codePointAt(0);
  const [prefix, width] = code < 0x100 ? ['x', 2] : code < 0x10000 ? ['u', 4] : ['U', 8];
  return { '\t': '\\t', '\n': '\\n', '\r': '\\r' }[character] ?? `\\${prefix}${code.toString(16).padStart(width, '0')}`;
}

/** The credential an ``Authorization`` header's value carries (a ``PrivateToken token="..."``'s token too); [] without. */
export function secretsOf(authorization) {
  if (typeof authorization !== 'string') return [];
  const credential = authorization.slice(authorization.indexOf(' ') + 1 || authorization.length).trim();
  const found = [credential, ...Array.from(credential.matchAll(/token="?([^",\s]+)/gu), (match) => match[1])];
  return [...new Set(found.filter((part) => length(part) >= SHORTEST_SECRET))];
}

/** A URL an error about it names (the application's own): its userinfo, query values and fragment read ``***``. */
export function shownUrl(url) {
  return shown(String(url).replace(/\/\/[^/?#]*[@\uff20\ufe6b]/u, '//***@').replace(/([?&][^=&#]*=)[^&#]*/gu, '$1***')
    .replace(/#[\s\S]*/u, '#***'));
}

/** ``text`` as one line: ``secrets`` masked in every form, control characters escaped, cut to ``limit`` (null: all). */
export function shown(text, secrets = [], limit = 200) {
  text = String(text);
  const pattern = patternOf(secrets, length(text));
  if (pattern !== null) text = text.replace(pattern, MASK);
  let out = Array.from(text, (character) => (UNPRINTABLE.test(character) ? escaped(character) : character)).join('');
  const again = out === text ? null : patternOf(secrets, length(out));
  if (again !== null) out = out.replace(again, MASK); // a secret that its escaping spells
  const characters = Array.from(out);
  return limit === null || characters.length <= limit ? out : `${characters.slice(0, limit).join('')}...`;
}

/**
 * ``[code, said]``: a dpdist refusal's code (one of CODES) and ``code: detail`` (``shown``, to ``limit``), or
 * ``[null, 'status N from HOST (not a dpdist answer, N bytes)']`` (Python's dpdist._http._answer.refusal_shown).
 */
export function refusalShown(status, bytes, host, secrets, limit = 2000) {
  let document = null;
  try {
    if (tooManyValues(bytes, ACK_ANSWER_BYTES) === null) document = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch { /* no dpdist answer */ }
  const code = document?.error;
  if (typeof code !== 'string' || !CODES.has(code)) return [null, `status ${status} from ${shown(host, [], 100)} (not a dpdist answer, ${bytes.length} bytes)`];
  const said = typeof document.detail === 'string' ? shown(document.detail, secrets, limit) : '';
  return [code, said.trim() ? `${code}: ${said}` : code];
}
