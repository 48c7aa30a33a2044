// Text a server sent, as the client shows it in an error: escaped, masked and cut (as dpdist._shown.shown in Python).
//
// A refusal's code and detail, a redirect's Location, an answer's ids come from whoever answered: dpdist, or a proxy, a
// captive portal, an echo server repeating the request it got.  ``shown`` is the one way such text enters a
// ServiceError's message or code: control characters (ESC, BEL, newlines, bidi overrides) are escaped as ``\x1b`` (so
// a message forwarded to a log or a crash reporter stays one line and cannot clear or retitle a terminal); the
// credential the request carried (``secretsOf``), any ``Bearer``/``Basic`` credential, any ``token=``/``*_token:``
// value and URLs' passwords read ``***``; the text is cut.  Byte for byte Python's (tests/clients/test_js_shown.py).

export const MASK = '***';
/** Characters read past a cut, for a credential that begins before it to be masked whole (Python's ``_ROOM``). */
const ROOM = 4096;
/** The shortest credential masked wherever it appears (a shorter one would mask common words). */
const SHORTEST_SECRET = 6;

// Every pattern reads a text in a time linear in its length (as Python's; a server's long answer shown whole could
// stall the client): a scheme or a token's name starts only at the start of its run (a lookbehind), a //user: with
// no @ after it matches the rest of its word (shown as it is: no later //user: of the word has one either), an
// encoded name is the whole run, checked to hold a %xx by a lookahead.
const CREDENTIAL = /(?<head>(?<![A-Za-z0-9])(?:Bearer|Basic)\s+)(?<value>[A-Za-z0-9._~+/=-]{6,})/giu;
const TOKEN_VALUE = /(?<head>(?<![A-Za-z0-9_-])[A-Za-z0-9_-]*token(?:=['"]?|['"]\s*:\s*['"]?))(?<value>[^&\s'"#,;<>]+)/giu;
const BACKSLASHED_USERINFO = /(?<head>[/\\][/\\][^\s/\\:@]*):(?:(?<value>[^\s@]*)@|[^\s@]*)/gu;
const USERINFO = /(?<head>(?:(?<![A-Za-z0-9+.-])[0-9+.-]*[A-Za-z][A-Za-z0-9+.-]*:)?\/\/[^\s/:]*):(?:(?<value>\S*)@|\S*)/gu;
const SPACED_USERINFO = /(?<head>(?<![A-Za-z0-9+.-])[0-9+.-]*[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/:@]*):(?<value>[^@/\n\s]*\s[^@/\n]*|[^@/\n]*\n[^@/\n]*)@/gu;
const QUOTED_USERINFO = /(?<head>['"][^\s'"/:@]+):(?!\/\/)(?<value>[^'"\n]*)@/gu;
const PARAMETER = /(?<head>(?<![A-Za-z0-9_])(?:ssl)?password\s*=\s*)(?<value>'(?:\\.|[^'\\])*'?|[^&\s'"#]+)/giu;
const ENCODED_PARAMETER = /(?<head>(?<![A-Za-z0-9_%])(?=[A-Za-z0-9_%]*?%[0-9A-Fa-f]{2})(?<key>[A-Za-z0-9_%]+)\s*=\s*)(?<value>[^&\s'"#]+)/gu;
/** What Python's str.isprintable() refuses: other (Cc, Cf, Cs, Co, Cn), line and paragraph separators, spaces but ' '. */
const UNPRINTABLE = /^(?:[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]|(?! )\p{Zs})$/u;

/** What Python's str.split() splits on (its whitespace: str.isspace()). */
const WHITESPACE = /[\t-\r\x1c- \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/u;

/** ``text``'s words joined by one space, as Python's ``" ".join(text.split())``. */
export function oneLine(text) {
  return String(text).split(WHITESPACE).filter(Boolean).join(' ');
}

/** Python's urllib.parse.unquote: %xx as UTF-8 bytes (invalid sequences: U+FFFD), the rest as is. */
function unquote(text) {
  return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => new TextDecoder().decode(Uint8Array.from(run.split('%').slice(1), (pair) => parseInt(pair, 16))));
}

/** ``character`` as Python's ``repr(character)[1:-1]`` writes an unprintable one: ``\n``, ``\x1b``, ``\u202e``. */
function escaped(character) {
  const special = { '\t': '\\t', '\n': '\\n', '\r': '\\r' }[character];
  if (special !== undefined) return special;
  const code = character.codePointAt(0);
  if (code < 0x100) return `\\x${code.toString(16).padStart(2, '0')}`;
  if (code < 0x10000) return `\\u${code.toString(16).padStart(4, '0')}`;
  return `\\U${code.toString(16).padStart(8, '0')}`;
}

/** URLs' passwords masked, as dpdist._redact.redacted_text. */
function redactedText(text) {
  // a //user: with no @ after it is matched whole (value undefined) only to be read once: shown as it is
  const masked = (match, ...rest) => (rest.at(-1).value === undefined ? match : `${rest.at(-1).head}:${MASK}@`);
  for (const pattern of [USERINFO, SPACED_USERINFO, QUOTED_USERINFO]) text = text.replace(pattern, masked);
  text = text.replace(PARAMETER, (match, ...rest) => `${rest.at(-1).head}${MASK}`);
  return text.replace(ENCODED_PARAMETER, (match, ...rest) => {
    const { head, key } = rest.at(-1);
    return ['password', 'sslpassword'].includes(unquote(key).trim().toLowerCase()) ? `${head}${MASK}` : match;
  });
}

/**
 * The credential an ``Authorization`` header's value carries (without its scheme; a ``PrivateToken token="..."``'s
 * token too), longest first, to be masked in whatever the answer repeats; [] without one.
 */
export function secretsOf(authorization) {
  if (typeof authorization !== 'string') return [];
  const space = authorization.indexOf(' ');
  const credential = space < 0 ? '' : authorization.slice(space + 1).trim();
  const found = [credential, ...Array.from(credential.matchAll(/token="?([^",\s]+)/gu), (match) => match[1])];
  return [...new Set(found.filter((part) => Array.from(part).length >= SHORTEST_SECRET))].sort((a, b) => b.length - a.length);
}

/**
 * ``text`` as one line to show: ``secrets`` and any credential masked, control characters escaped, cut to ``limit``
 * characters (``...`` marks a cut; null: all).
 *
 * @param {unknown} text what a server sent (made a string)
 * @param {string[]} [secrets] the request's own credentials (``secretsOf``), read ``***`` wherever they appear
 * @param {number|null} [limit] the most characters shown (200)
 * @returns {string} ``'x\\x1b[2J Bearer ***'`` for ``'x\x1b[2J Bearer admin-token'``
 */
export function shown(text, secrets = [], limit = 200) {
  text = String(text);
  // the secrets first, in the whole text (linear): a copy the cut crossed would show its head (attack75 A)
  for (const secret of secrets) text = text.split(secret).join(MASK);
  if (limit !== null && text.length > limit + ROOM) { // only what can be shown is escaped (300 KB took 92 s whole),
    // with room for a credential that starts before the cut (its patterns mask a cut one from its head): the first
    // limit + ROOM characters (code points, as Python's dpdist._shown cuts)
    text = Array.from(text.slice(0, 2 * (limit + ROOM))).slice(0, limit + ROOM).join('');
  }
  text = Array.from(text, (character) => (UNPRINTABLE.test(character) ? escaped(character) : character)).join('');
  text = redactedText(text).replace(CREDENTIAL, (match, ...rest) => `${rest.at(-1).head}${MASK}`);
  text = text.replace(TOKEN_VALUE, (match, ...rest) => `${rest.at(-1).head}${MASK}`);
  text = text.replace(BACKSLASHED_USERINFO, (match, ...rest) => (rest.at(-1).value === undefined ? match : `${rest.at(-1).head}:${MASK}@`));
  const characters = Array.from(text);
  return limit === null || characters.length <= limit ? text : `${characters.slice(0, limit).join('')}...`;
}
