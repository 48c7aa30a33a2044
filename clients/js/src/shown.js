// Text a server sent, as the client shows it in an error: masked, escaped and cut (as dpdist._shown.shown in Python).
//
// A refusal's code and detail, a redirect's Location, an answer's ids come from whoever answered: dpdist, or a proxy, a
// captive portal, an echo server repeating the request it got.  ``shown`` is the one way such text enters a
// ServiceError's message or code: control characters (ESC, BEL, newlines, bidi overrides) are escaped as ``\x1b`` (so
// a message forwarded to a log or a crash reporter stays one line and cannot clear or retitle a terminal); the
// credential the request carried (``secretsOf``), any ``Bearer``/``Basic`` credential, any ``token=``/``*_token:``,
// ``password:`` or ``Authorization:`` value and URLs' passwords read ``***``; the text is cut.  Byte for byte Python's (tests/clients/test_client_shown.py),
// but for what is escaped among characters newer than a runtime's Unicode tables (Python 3.11: Unicode 14, node 20:
// 15, JDK 17: 13): one may escape a character another shows.  What is masked does not depend on them.

export const MASK = '***';
/** Characters read past a cut, for a credential that begins before it to be masked whole (Python's ``_ROOM``). */
const ROOM = 4096;
/**
 * Of a text ``shownOneLine`` folds, the most characters read before masking: this many times what is shown and its
 * room (Python's ``_FOLDED_READ``: whitespace takes no room once folded, but is masked).
 */
const FOLDED_READ = 8;
/** The shortest credential masked wherever it appears (a shorter one would mask common words). */
const SHORTEST_SECRET = 6;

/** Python's whitespace (str.isspace(), what its ``\s`` reads), as a character class's inside. */
const PY_SPACE = String.raw`\t-\r\x1c- \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000`;

/**
 * ``pattern`` reading whitespace and ``.`` as Python does: ``shown`` masks the raw text (attack118), which may hold a
 * tab, NEL, U+FEFF...: JS's ``\s`` has U+FEFF and not U+001C-U+001F or U+0085, its ``.`` stops at \r, U+2028 and U+2029
 * too.  ``\s``/``\S`` read Python's whitespace, ``.`` all but \n; ``[\s\S]`` (any character) is left as it is.
 */
function pythonic(pattern) {
  const source = pattern.source;
  let out = '';
  let inClass = false;
  for (let at = 0; at < source.length; at += 1) {
    const character = source[at];
    if (!inClass && source.startsWith(String.raw`[\s\S]`, at)) {
      out += String.raw`[\s\S]`;
      at += 5;
    } else if (character === '\\') {
      const next = source[at + 1];
      if (next === 's') out += inClass ? PY_SPACE : `[${PY_SPACE}]`;
      else if (next === 'S') out += `[^${PY_SPACE}]`;
      else out += character + next;
      at += 1;
    } else {
      if (character === '[') inClass = true;
      else if (character === ']') inClass = false;
      out += !inClass && character === '.' ? String.raw`[^\n]` : character;
    }
  }
  return new RegExp(out, pattern.flags);
}

// Every pattern reads a text in a time linear in its length (as Python's; a server's long answer shown whole could
// stall the client): a scheme or a token's name starts only at the start of its run (a lookbehind), a //user: with
// no @ after it matches the rest of its word (shown as it is: no later //user: of the word has one either), an
// encoded name is the whole run, checked to hold a %xx by a lookahead.  Python's IGNORECASE reads an ASCII letter as
// its other case and as U+0130 (İ) and U+0131 (ı) for an i, U+017F (ſ) for an s, U+212A (K) for a k: the u flag's
// case folding has the last two, so the patterns read with the i flag list the first two beside A-Za-z.
// A credential after its scheme, quoted or not (Bearer "...", Bearer \"...\" in a JSON string); a value named as a
// token (token=, token = , "submit_token": "...", \"submit_token\": \"...\", X-Submit-Token: ..., Token: ... at a
// line's start or after a sign, submitToken: ..., token=<...>); a password named with a colon (password: ..., "db_password": "..."): Python's _CREDENTIAL,
// _TOKEN_VALUE and _NAMED_SECRET (a quoted value to its closing quote; whitespace may be escaped, \t).  A named value
// ends at &, an ASCII space, a line break (\n, \r; not a tab, NEL or other whitespace: attack119 F2), a quote, #, ',',
// ';', '<' or '>', and not at a backslash but one before its end (VALUE); a credential at a space, a line break or an
// escaped whitespace (END_WS).
/** Python's IGNORECASE reads an i as U+0130 and U+0131 too (the u flag's case folding does not). */
const I = String.raw`[i\u0130\u0131]`;
const VALUE = String.raw`(?!\s)[^& \n\r'"#,;<>]*[^& \n\r'"#,;<>\\]`;
// whitespace or its escaped form (a raw text may hold \t as two characters: attack117 F3), Python's _WS; just after an
// escaped one (\tBearer: its t does not make Bearer a word's end), Python's _AFTER_WS
const WS = String.raw`(?:\s|\\[tnr]|\\x(?:0[bc]|1[c-f]|85|a0)|\\u(?:1680|200[0-9a]|202[89f]|205f|3000))`;
// what ends an unquoted credential: an ASCII space, a line break or an escaped whitespace (Python's _END_WS)
const END_WS = String.raw`(?:[ \n\r]|\\[tnr]|\\x(?:0[bc]|1[c-f]|85|a0)|\\u(?:1680|200[0-9a]|202[89f]|205f|3000))`;
const AFTER_WS = String.raw`(?<=\\[tnr])|(?<=\\x(?:0[bc]|1[c-f]|85|a0))|(?<=\\u(?:1680|200[0-9a]|202[89f]|205f|3000))`;
// a named value, quoted or not (Python's _QUOTED_VALUE): after \" up to the next "; after " up to its closing quote,
// an escaped \" included (attack117 F4); after ' up to the next '; else up to what ends a value
// a named token's value led by <, ; or , (token=<S>: attack118 F4), read as a password parameter's (Python's _LED_VALUE)
const LED_VALUE = String.raw`(?<!['"])[<;,](?:[^& \n\r'"#]*[^& \n\r'"#\\])?`;
const QUOTED_VALUE = String.raw`(?<=\\")[^"]*[^"\\]|(?<=")(?:\\[\s\S]|[^"\\])+|(?<=')[^']*[^'\\]|(?<!['"])${VALUE}`;
// an authentication scheme's word and the whitespace after it; what is not a credential after Authorization: (a
// placeholder, one word of prose alone): Python's _SCHEME_WORD and _NOT_CREDENTIAL
const SCHEME_WORD = String.raw`(?:[A-Za-z0-9\u0130\u0131!#$%&*+.^_\x60|~-]+${WS}+)`;
const NOT_CREDENTIAL = String.raw`(?!${SCHEME_WORD}?<)(?!(?:requ${I}red|m${I}ss${I}ng|${I}nval${I}d|exp${I}red|den${I}ed|fa${I}led|none|null)(?:[.,;!?'"\\]|(?![\s\S])))`;
const SCHEMES = String.raw`(?:bearer|bas${I}c|d${I}gest|negot${I}ate|token|dpop)`;
const CREDENTIAL = pythonic(new RegExp(String.raw`(?<head>(?:(?<![A-Za-z0-9\u0130\u0131])|${AFTER_WS})(?:Bearer|Bas${I}c)${WS}+(?:\\*['"])?)(?<value>(?!<)(?!\s)(?=(?:(?!${END_WS})(?:[^ \n\r'"\\]|\\(?!['"]))){6})(?:(?!${END_WS})(?:[^ \n\r'"\\]|\\(?!['"])))+)`, 'giu'));
const TOKEN_VALUE = pythonic(new RegExp(String.raw`(?<head>(?:(?<![A-Za-z0-9\u0130\u0131_-])[A-Za-z0-9\u0130\u0131_-]*token(?:\s*=\s*|\\*['"]\s*:\s*|(?<=[A-Za-z0-9\u0130\u0131_-]token)\s*:\s*)|(?:(?<![A-Za-z0-9\u0130\u0131 _-])|${AFTER_WS})token\s*:\s*)(?:\\*['"])?)(?<value>${QUOTED_VALUE}|${LED_VALUE})`, 'giu'));
const NAMED_SECRET = pythonic(new RegExp(String.raw`(?<head>(?<![A-Za-z0-9\u0130\u0131_-])[A-Za-z0-9\u0130\u0131_-]*password(?:\\*['"])?\s*:\s*(?:\\*['"])?)(?<value>${QUOTED_VALUE})`, 'giu'));
// an Authorization or Proxy-Authorization value, any scheme (Python's _AUTHORIZATION, attack117 F3): one scheme word
// kept, the credential masked to the value's end (its closing quote when quoted, else the line's end; unquoted, a
// quoted segment runs to its closing quote across line breaks, and a line break before a space or tab continues it:
// attack119 F3); the kept part is the group of the alternative that matched
const AUTHORIZATION = pythonic(new RegExp(String.raw`(?<head>(?:(?<![A-Za-z0-9\u0130\u0131_-])|${AFTER_WS})(?:proxy-)?author${I}zat${I}on(?:\\*['"])?${WS}*[:=]${WS}*)(?:(?<double>"${WS}*${NOT_CREDENTIAL}${SCHEME_WORD}?)(?!${WS})(?:\\[\s\S]|[^"\\])+|(?<escaped>\\+"${WS}*${NOT_CREDENTIAL}${SCHEME_WORD}?)(?!${WS})[^"]*[^"\\]|(?<single>'${WS}*${NOT_CREDENTIAL}${SCHEME_WORD}?)(?!${WS})[^']*[^'\\]|(?!\\*['"])(?<plain>${NOT_CREDENTIAL}${SCHEME_WORD}?)(?!${WS})(?:"(?:\\[\s\S]|[^"\\])*"?|[^\\\n\r"]|\\(?![nr])|(?:\r\n?|\n)(?=[ \t]))+)`, 'giu'));
const BACKSLASHED_USERINFO = pythonic(/(?<head>[/\\][/\\][^\s/\\:@]*):(?:(?<value>[^\s@]*)@|[^\s@]*)/gu);
// ``scheme://user:password@`` (Python's _redact._USERINFO): the password from the first ``:`` after the user name to
// the last ``@`` of the word; the ``:`` may be a fullwidth U+FF1A, the ``@`` a fullwidth U+FF20 or a small U+FE6B (NFKC
// reads them as ASCII, as some URL parsers do).  The user name is read once: the lookahead and back-reference commit to
// the last ``:`` (or U+FF1A) before the first ``:`` or ``/``, a U+FF1A before an ``@`` in the user name being the second
// choice; a ``//user:`` with no ``@`` after it matches the rest of its word (the last alternative, no ``value``)
const USERINFO = pythonic(/(?<head>(?:(?<![A-Za-z0-9+.-])[0-9+.-]*[A-Za-z][A-Za-z0-9+.-]*:)?\/\/(?:(?=(?<user>[^\s/:]*)[:\uff1a])\k<user>(?=[:\uff1a]\S*[@\uff20\ufe6b])|[^\s/:]*(?=\uff1a[^\s/:\uff1a]*[@\uff20\ufe6b])))[:\uff1a](?<value>\S*)[@\uff20\ufe6b]|(?:(?<![A-Za-z0-9+.-])[0-9+.-]*[A-Za-z][A-Za-z0-9+.-]*:)?\/\/[^\s/:]*[:\uff1a]\S*/gu);
// a password typed with a space (Python's _SPACED_USERINFO): a space before any /, then up to the last @ of the word
// holding the first @ after it, with no // before it (what one scheme://user: reads ends at the next //, the next one's)
const SPACED_USERINFO = pythonic(/(?<head>(?<![A-Za-z0-9+.-])[0-9+.-]*[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/:@]*):(?<value>[^@/\n\s]*\s[^@\n/]*(?:\/(?!\/)[^@\n/]*)*(?:@\S*)?|[^@/\n]*\n[^@/\n]*)@/gu);
// ``／／user:password@`` (Python's _FULLWIDTH_USERINFO): one or both slashes fullwidth (U+FF0F); the password up to the
// last @ of its word (without one, the rest of the word is matched: no value)
const FULLWIDTH_USERINFO = pythonic(/(?<head>(?:(?<![A-Za-z0-9+.-])[0-9+.-]*[A-Za-z][A-Za-z0-9+.-]*:)?(?:\uff0f[/\uff0f]|\/\uff0f)[^\s/\uff0f:\uff1a]*)[:\uff1a](?:(?<value>\S*)[@\uff20\ufe6b]|\S*)/gu);
// ``scheme://user%3Apassword@`` (Python's _ENCODED_USERINFO): the ``:`` percent-encoded; without an ``@`` after it, the
// rest is matched and shown as it is (no ``value``)
const ENCODED_USERINFO = pythonic(/(?<head>(?:(?<![A-Za-z0-9+.-])[0-9+.-]*[A-Za-z][A-Za-z0-9+.-]*:)?\/\/[^\s/:@\uff20]*?%3[Aa])(?:(?<value>[^\s@\uff20]*)[@\uff20\ufe6b]|[^\s@\uff20]*)/gu);
const QUOTED_USERINFO = pythonic(/(?<head>['"][^\s'"/:@]+):(?!\/\/)(?<value>[^'"\n]*)@/gu);
const PARAMETER = pythonic(/(?<head>(?<![A-Za-z0-9\u0130\u0131_-])[A-Za-z0-9\u0130\u0131_-]*password\s*=\s*)(?<value>'(?:\\.|[^'\\])*'?|"(?:\\.|[^"\\])*"?|(?!\s)[^& \n\r'"#]+)/giu);
const ENCODED_PARAMETER = pythonic(/(?<head>(?<![A-Za-z0-9_%])(?=[A-Za-z0-9_%]*?%[0-9A-Fa-f]{2})(?<key>[A-Za-z0-9_%]+)\s*=\s*['"]?)(?<value>(?:\\\S|[^&\s'"#\\])+)/gu);
// a password parameter whose ``=`` is percent-encoded (``?password%3Dsecret``, Python's _ENCODED_SEPARATOR)
const ENCODED_SEPARATOR = pythonic(/(?<head>(?<![A-Za-z0-9\u0130\u0131_])(?:ssl)?password%3D['"]?)(?<value>(?:\\\S|[^&\s'"#\\])+)/giu);
// what a password parameter's mask left of its value (Python's _QUERY_VALUE_LEFT): up to &, a space or a line break, not a quote or a
// #; the quotes just before its end stay
// what the mask of an encoded name's or separator's quoted value left, up to its closing quote (Python's
// _QUOTED_VALUE_LEFT, attack117 F4)
const QUOTED_VALUE_LEFT = pythonic(/(?<head>(?:=|%3[Dd])\s*)(?:"\*\*\*(?:\\.|[^"\\])*"?|'\*\*\*(?:\\.|[^'\\])*'?)/gu);
const QUERY_VALUE_LEFT = pythonic(/(?<head>(?:=|%3[Dd])\s*)\*\*\*(?:[^& \n\r]*[^& \n\r'"])?(?=['"]*(?![^& \n\r]))/gu);
/** What Python's str.isprintable() refuses: other (Cc, Cf, Cs, Co, Cn), line and paragraph separators, spaces but ' '. */
const UNPRINTABLE = /^(?:[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]|(?! )\p{Zs})$/u;

/** What Python's str.split() splits on (its whitespace: str.isspace()). */
const WHITESPACE = /[\t-\r\x1c- \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/u;
/** One character of that whitespace (each is one UTF-16 unit). */
const SPACE = /^[\t-\r\x1c- \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/u;

/** A word of a text folded into one line (``shownOneLine``): a run of what is not that whitespace. */
const WORD = /[^\t-\r\x1c- \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/gu;

/** ``text``'s words joined by one space, as Python's ``" ".join(text.split())``. */
export function oneLine(text) {
  return String(text).split(WHITESPACE).filter(Boolean).join(' ');
}

/**
 * The start of ``text`` that folds into ``length`` characters (code points; its words joined by one space), all of it
 * if it folds into fewer, within its first FOLDED_READ x ``length`` characters: what ``shownOneLine`` masks of a long
 * text (Python's ``_folded_start``).
 */
function foldedStart(text, length) {
  if (text.length <= length) return text;
  const most = FOLDED_READ * length;
  if (text.length > most) text = Array.from(text.slice(0, 2 * most)).slice(0, most).join(''); // code points
  let joined = -1; // the length of the words read so far, joined
  for (const { 0: word, index } of text.matchAll(WORD)) {
    // the word's code points, as many as may be needed (a long word is not made an array whole)
    const points = Array.from(word.length > 2 * length ? word.slice(0, 2 * length) : word);
    if (joined + 1 + points.length >= length) return text.slice(0, index) + points.slice(0, length - joined - 1).join('');
    joined += 1 + points.length;
  }
  return text;
}

/**
 * ``text`` (folded) with each of ``secrets`` that holds whitespace masked in its folded form too (echoed with a tab for
 * its space, it reads so once folded), when that is SHORTEST_SECRET characters long at least (Python's
 * ``_folded_secrets_masked``).
 */
function foldedSecretsMasked(text, secrets) {
  for (const secret of secrets) {
    const folded = oneLine(secret);
    if (WHITESPACE.test(secret) && Array.from(folded).length >= SHORTEST_SECRET) text = text.split(folded).join(MASK);
  }
  return text;
}

/** Python's urllib.parse.unquote: %xx as UTF-8 bytes (invalid sequences: U+FFFD; a BOM kept, as Python keeps it), the rest as is. */
function unquote(text) {
  return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => new TextDecoder('utf-8', { ignoreBOM: true }).decode(Uint8Array.from(run.split('%').slice(1), (pair) => parseInt(pair, 16))));
}

/**
 * ``text`` without that whitespace at either end, as Python's str.strip() (String.prototype.trim takes U+FEFF and leaves
 * U+001C-U+001F and U+0085); read once from each end (a regex's ``\s+$`` reads a long inner run again from each of its
 * characters).
 */
function stripped(text) {
  let start = 0;
  let end = text.length;
  while (start < end && SPACE.test(text[start])) start += 1;
  while (end > start && SPACE.test(text[end - 1])) end -= 1;
  return text.slice(start, end);
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

/** Whether ``key`` (an encoded parameter's name) is a password's once decoded (Python's _encoded_password). */
function passwordKey(key) {
  return ['password', 'sslpassword'].includes(stripped(unquote(key)).toLowerCase());
}

/**
 * The name and ``=`` of the first password parameter in ``text`` (as PARAMETER, ENCODED_SEPARATOR or ENCODED_PARAMETER
 * read one; Python's _parameter_head), or ''.
 */
function parameterHead(text) {
  const found = [text.matchAll(PARAMETER).next().value, text.matchAll(ENCODED_SEPARATOR).next().value,
    Array.from(text.matchAll(ENCODED_PARAMETER)).find((match) => passwordKey(match.groups.key))].filter(Boolean);
  return found.length === 0 ? '' : found.reduce((first, match) => (match.index < first.index ? match : first)).groups.head;
}

/**
 * A userinfo match masked (Python's _masked_userinfo): as it is without a password; where what the pattern took for
 * the password holds a password parameter of the query, that parameter's name kept after the mask.
 */
function maskedUserinfo(match, ...rest) {
  const { head, value } = rest.at(-1);
  if (value === undefined) return match;
  const query = value.indexOf('?');
  return `${head}:${MASK}@${query < 0 ? '' : parameterHead(value.slice(query))}`;
}

/** URLs' passwords masked, as dpdist._redact.redacted_text: its patterns, in its order. */
function redactedText(text) {
  // a //user: (or //user%3A) with no @ after it is matched whole (value undefined) only to be read once: shown as it is
  const masked = (match, ...rest) => (rest.at(-1).value === undefined ? match : `${rest.at(-1).head}:${MASK}@`);
  for (const pattern of [USERINFO, FULLWIDTH_USERINFO]) text = text.replace(pattern, maskedUserinfo);
  text = text.replace(SPACED_USERINFO, masked);
  text = text.replace(ENCODED_USERINFO, (match, ...rest) => (rest.at(-1).value === undefined ? match : `${rest.at(-1).head}${MASK}@`));
  text = text.replace(QUOTED_USERINFO, masked);
  for (const pattern of [PARAMETER, ENCODED_SEPARATOR]) text = text.replace(pattern, (match, ...rest) => `${rest.at(-1).head}${MASK}`);
  text = text.replace(ENCODED_PARAMETER, (match, ...rest) => (passwordKey(rest.at(-1).key) ? `${rest.at(-1).head}${MASK}` : match));
  text = text.replace(QUOTED_VALUE_LEFT, (match, ...rest) => `${rest.at(-1).head}${MASK}`);
  return text.replace(QUERY_VALUE_LEFT, (match, ...rest) => `${rest.at(-1).head}${MASK}`);
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
 * A URL as an error about it shows it: its whole userinfo read ``***`` (``https://***@host/``; the ``@`` may be a
 * fullwidth U+FF20 or a small U+FE6B, which ``shown`` reads as an ``@`` too), then escaped, masked and cut by ``shown``.
 *
 * @param {unknown} url the URL refused (made a string)
 * @returns {string} ``https://***@host/x`` for ``https://user:secret\uff20host/x``
 */
export function shownUrl(url) {
  return shown(String(url).replace(/\/\/[^/?#]*[@\uff20\ufe6b]/u, '//***@'));
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
  return shownFolded(text, secrets, limit, false);
}

/**
 * ``shown``, but each run of whitespace (tabs, line breaks, NBSP...) shown as one space, none at either end (as
 * ``oneLine``: a refusal's detail on one line), once masked: whitespace a credential holds is masked with it
 * (``token=a\tb`` reads ``token=***``; folded first it read ``token=*** b``, attack120 F2). The cut counts the folded
 * text's characters (of at most 8 x ``limit + 4096`` read). Python's ``shown(text, secrets, limit, fold=True)``.
 *
 * @param {unknown} text what a server sent (made a string)
 * @param {string[]} [secrets] the request's own credentials (``secretsOf``), read ``***`` wherever they appear
 * @param {number|null} [limit] the most characters shown (200)
 * @returns {string} ``'a token=*** b'`` for ``'a\ttoken=x\ty\n b'``
 */
export function shownOneLine(text, secrets = [], limit = 200) {
  return shownFolded(text, secrets, limit, true);
}

/** ``shown`` (``fold`` false) or ``shownOneLine`` (true). */
function shownFolded(text, secrets, limit, fold) {
  text = String(text);
  // the secrets first, in the whole text (linear): a copy the cut crossed would show its head (attack75 A)
  for (const secret of secrets) text = text.split(secret).join(MASK);
  if (limit !== null && fold) {
    text = foldedStart(text, limit + ROOM); // a long run of whitespace takes no room (Python's cut)
  } else if (limit !== null && text.length > limit + ROOM) { // only what can be shown is escaped (300 KB took 92 s
    // whole), with room for a credential that starts before the cut (its patterns mask a cut one from its head): the
    // first limit + ROOM characters (code points, as Python's dpdist._shown cuts)
    text = Array.from(text.slice(0, 2 * (limit + ROOM))).slice(0, limit + ROOM).join('');
  }
  // masked before escaping (attack118 F1, F2: an escaped \t or \x1b read as a value or as a word's end)
  text = redactedText(text).replace(CREDENTIAL, (match, ...rest) => `${rest.at(-1).head}${MASK}`);
  text = text.replace(TOKEN_VALUE, (match, ...rest) => `${rest.at(-1).head}${MASK}`);
  text = text.replace(BACKSLASHED_USERINFO, (match, ...rest) => (rest.at(-1).value === undefined ? match : `${rest.at(-1).head}:${MASK}@`));
  text = text.replace(NAMED_SECRET, (match, ...rest) => `${rest.at(-1).head}${MASK}`);
  text = text.replace(AUTHORIZATION, (match, ...rest) => {
    const { head, double, escaped, single, plain } = rest.at(-1);
    return `${head}${[double, escaped, single, plain].find((part) => part !== undefined)}${MASK}`;
  });
  if (fold) text = foldedSecretsMasked(oneLine(text), secrets); // once masked (attack120 F2)
  text = Array.from(text, (character) => (UNPRINTABLE.test(character) ? escaped(character) : character)).join('');
  const characters = Array.from(text);
  return limit === null || characters.length <= limit ? text : `${characters.slice(0, limit).join('')}...`;
}
