package org.dpdist.client;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Text a server sent, as the client shows it in a {@link ServiceError}: masked, escaped and cut, as Python's
 * {@code dpdist._shown.shown}, byte for byte ({@code clients/js/test/fixtures/shown.json}), but for what is escaped
 * among characters newer than the runtime's Unicode tables (JDK 17: Unicode 13; Python 3.11: 14): one may escape a
 * character the other shows.  What is masked does not depend on them.
 *
 * <p>A refusal's code and detail, a redirect's {@code Location}, an answer's ids come from whoever answered: dpdist, or a
 * proxy, a captive portal, an echo server repeating the request it got.  Control characters (ESC, BEL, newlines, bidi
 * overrides) are escaped as {@code \x1b}, so a message forwarded to a log or a crash reporter stays one line and cannot
 * clear or retitle a terminal; the credential the request carried, any {@code Bearer}/{@code Basic} credential, any
 * {@code token=}/{@code *_token:}, {@code password:} or {@code Authorization:} value and URLs' passwords read
 * {@code ***}; the text is cut.
 */
final class Shown {
    /** Characters read past a cut, for a credential that begins before it to be masked whole (Python's {@code _ROOM}). */
    private static final int ROOM = 4096;
    /**
     * Of a text {@link #shownOneLine} folds, the most characters read before masking: this many times what is shown and
     * its room (Python's {@code _FOLDED_READ}: whitespace takes no room once folded, but is masked).
     */
    private static final int FOLDED_READ = 8;

    static final String MASK = "***";
    /** The shortest credential masked wherever it appears (a shorter one would mask common words). */
    private static final int SHORTEST_SECRET = 6;
    /** Python's whitespace (str.isspace(), what its {@code \s} reads), as a character class's inside. */
    private static final String PY_SPACE = "\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
    private static final int IGNORE_CASE = Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE;
    // Every pattern reads a text in a time linear in its length (as Python's): a scheme or a token's name starts only at
    // the start of its run (a lookbehind), a //user: with no @ after it matches the rest of its word (no later //user:
    // of the word has one either), an encoded name is the whole run, checked to hold a %xx by a lookahead.  Python's
    // IGNORECASE reads an i as U+0130 (İ) and U+0131 (ı) too, an s as U+017F (ſ), a k as U+212A (K): the JDK's
    // IGNORE_CASE does, the patterns list the first two beside A-Za-z for a runtime whose case folding has not them
    // (ICU's, Android's, folds U+0130 to two characters and U+0131 to none).
    // A credential after its scheme, quoted or not; a value named as a token (token=, token = , "submit_token": "...",
    // \\"submit_token\\": \\"...\\", X-Submit-Token: ..., Token: ... after a sign, submitToken: ...); a password named with a colon
    // (password: ..., "db_password": "..."): Python's _CREDENTIAL, _TOKEN_VALUE and _NAMED_SECRET.  An unquoted named
    // value ends at &, an ASCII space, a line break (not a tab, NEL or other whitespace: attack119 F2), a quote, #, ',',
    // ';', '<' or '>', and not at a backslash but one before its end (a credential at a space, a line break or an escaped
    // whitespace); a
    // quoted one at its closing quote (an escaped one not).  Whitespace may be escaped (a raw text may hold \t as two
    // characters), its loops possessive.
    private static final Pattern CREDENTIAL = pythonic(
        "((?:(?<![A-Za-z0-9\\u0130\\u0131])|(?<=\\\\[tnr])|(?<=\\\\x(?:0[bc]|1[c-f]|85|a0))|(?<=\\\\u(?:1680|200[0-9a]|202[89f]|205f|3000)))(?:Bearer|Bas[i\\u0130\\u0131]c)(?:\\s|\\\\[tnr]|\\\\x(?:0[bc]|1[c-f]|85|a0)|\\\\u(?:1680|200[0-9a]|202[89f]|205f|3000))++(?:\\\\*['\"])?)((?!<)(?!\\s)(?=(?:(?!(?:[ \\n\\r]|\\\\[tnr]|\\\\x(?:0[bc]|1[c-f]|85|a0)|\\\\u(?:1680|200[0-9a]|202[89f]|205f|3000)))(?:[^ \\n\\r'\"\\\\]|\\\\(?!['\"]))){6})(?:(?!(?:[ \\n\\r]|\\\\[tnr]|\\\\x(?:0[bc]|1[c-f]|85|a0)|\\\\u(?:1680|200[0-9a]|202[89f]|205f|3000)))(?:[^ \\n\\r'\"\\\\]|\\\\(?!['\"])))++)", IGNORE_CASE);
    private static final Pattern TOKEN_VALUE = pythonic(
        "((?:(?<![A-Za-z0-9\\u0130\\u0131_-])[A-Za-z0-9\\u0130\\u0131_-]*token(?:\\s*=\\s*|\\\\*['\"]\\s*:\\s*|(?<=[A-Za-z0-9\\u0130\\u0131_-]token)\\s*:\\s*)|(?:(?<![A-Za-z0-9\\u0130\\u0131 _-])|(?<=\\\\[tnr])|(?<=\\\\x(?:0[bc]|1[c-f]|85|a0))|(?<=\\\\u(?:1680|200[0-9a]|202[89f]|205f|3000)))token\\s*:\\s*)(?:\\\\*['\"])?)((?<=\\\\\")[^\"]*[^\"\\\\]|(?<=\")(?:\\\\[\\s\\S]|[^\"\\\\])++|(?<=')[^']*[^'\\\\]|(?<!['\"])(?!\\s)[^& \\n\\r'\"#,;<>]*[^& \\n\\r'\"#,;<>\\\\]|(?<!['\"])[<;,](?:[^& \\n\\r'\"#]*[^& \\n\\r'\"#\\\\])?)", IGNORE_CASE);
    private static final Pattern NAMED_SECRET = pythonic(
        "((?<![A-Za-z0-9\\u0130\\u0131_-])[A-Za-z0-9\\u0130\\u0131_-]*password(?:\\\\*['\"])?\\s*:\\s*(?:\\\\*['\"])?)((?<=\\\\\")[^\"]*[^\"\\\\]|(?<=\")(?:\\\\[\\s\\S]|[^\"\\\\])++|(?<=')[^']*[^'\\\\]|(?<!['\"])(?!\\s)[^& \\n\\r'\"#,;<>]*[^& \\n\\r'\"#,;<>\\\\])", IGNORE_CASE);
    /**
     * An {@code Authorization} or {@code Proxy-Authorization} value, any scheme (Python's {@code _AUTHORIZATION},
     * attack117 F3): one scheme word kept, the credential masked to the value's end (its closing quote when quoted, else
     * the line's end; unquoted, a quoted segment runs to its closing quote across line breaks, and a line break before
     * a space or tab continues it: attack119 F3); the kept part is the group (2 to 5) of the alternative that matched.  Whitespace may be escaped
     * (a raw text may hold {@code \t} as two characters); the group loops possessive (see SPACED_USERINFO), which here
     * match as greedy ones: what they give back is never what may follow them.
     */
    private static final Pattern AUTHORIZATION = pythonic(
        "((?:(?<![A-Za-z0-9\\u0130\\u0131_-])|(?<=\\\\[tnr])|(?<=\\\\x(?:0[bc]|1[c-f]|85|a0))|(?<=\\\\u(?:1680|200[0-9a]|202[89f]|205f|3000)))(?:proxy-)?author[i\\u0130\\u0131]zat[i\\u0130\\u0131]on(?:\\\\*['\"])?(?:\\s|\\\\[tnr]|\\\\x(?:0[bc]|1[c-f]|85|a0)|\\\\u(?:1680|200[0-9a]|202[89f]|205f|3000))*+[:=](?:\\s|\\\\[tnr]|\\\\x(?:0[bc]|1[c-f]|85|a0)|\\\\u(?:1680|200[0-9a]|202[89f]|205f|3000))*+)(?:(\"(?:\\s|\\\\[tnr]|\\\\x(?:0[bc]|1[c-f]|85|a0)|\\\\u(?:1680|200[0-9a]|202[89f]|205f|3000))*+(?!(?:[A-Za-z0-9\\u0130\\u0131!#$%&*+.^_`|~-]+(?:\\s|\\\\[tnr]|\\\\x(?:0[bc]|1[c-f]|85|a0)|\\\\u(?:1680|200[0-9a]|202[89f]|205f|3000))++)?<)(?!(?:requ[i\\u0130\\u0131]red|m[i\\u0130\\u0131]ss[i\\u0130\\u0131]ng|[i\\u0130\\u0131]nval[i\\u0130\\u0131]d|exp[i\\u0130\\u0131]red|den[i\\u0130\\u0131]ed|fa[i\\u0130\\u0131]led|none|null)(?:[.,;!?'\"\\\\]|(?![\\s\\S])))(?:[A-Za-z0-9\\u0130\\u0131!#$%&*+.^_`|~-]+(?:\\s|\\\\[tnr]|\\\\x(?:0[bc]|1[c-f]|85|a0)|\\\\u(?:1680|200[0-9a]|202[89f]|205f|3000))++)?)(?!(?:\\s|\\\\[tnr]|\\\\x(?:0[bc]|1[c-f]|85|a0)|\\\\u(?:1680|200[0-9a]|202[89f]|205f|3000)))(?:\\\\[\\s\\S]|[^\"\\\\])++|(\\\\+\"(?:\\s|\\\\[tnr]|\\\\x(?:0[bc]|1[c-f]|85|a0)|\\\\u(?:1680|200[0-9a]|202[89f]|205f|3000))*+(?!(?:[A-Za-z0-9\\u0130\\u0131!#$%&*+.^_`|~-]+(?:\\s|\\\\[tnr]|\\\\x(?:0[bc]|1[c-f]|85|a0)|\\\\u(?:1680|200[0-9a]|202[89f]|205f|3000))++)?<)(?!(?:requ[i\\u0130\\u0131]red|m[i\\u0130\\u0131]ss[i\\u0130\\u0131]ng|[i\\u0130\\u0131]nval[i\\u0130\\u0131]d|exp[i\\u0130\\u0131]red|den[i\\u0130\\u0131]ed|fa[i\\u0130\\u0131]led|none|null)(?:[.,;!?'\"\\\\]|(?![\\s\\S])))(?:[A-Za-z0-9\\u0130\\u0131!#$%&*+.^_`|~-]+(?:\\s|\\\\[tnr]|\\\\x(?:0[bc]|1[c-f]|85|a0)|\\\\u(?:1680|200[0-9a]|202[89f]|205f|3000))++)?)(?!(?:\\s|\\\\[tnr]|\\\\x(?:0[bc]|1[c-f]|85|a0)|\\\\u(?:1680|200[0-9a]|202[89f]|205f|3000)))[^\"]*[^\"\\\\]|('(?:\\s|\\\\[tnr]|\\\\x(?:0[bc]|1[c-f]|85|a0)|\\\\u(?:1680|200[0-9a]|202[89f]|205f|3000))*+(?!(?:[A-Za-z0-9\\u0130\\u0131!#$%&*+.^_`|~-]+(?:\\s|\\\\[tnr]|\\\\x(?:0[bc]|1[c-f]|85|a0)|\\\\u(?:1680|200[0-9a]|202[89f]|205f|3000))++)?<)(?!(?:requ[i\\u0130\\u0131]red|m[i\\u0130\\u0131]ss[i\\u0130\\u0131]ng|[i\\u0130\\u0131]nval[i\\u0130\\u0131]d|exp[i\\u0130\\u0131]red|den[i\\u0130\\u0131]ed|fa[i\\u0130\\u0131]led|none|null)(?:[.,;!?'\"\\\\]|(?![\\s\\S])))(?:[A-Za-z0-9\\u0130\\u0131!#$%&*+.^_`|~-]+(?:\\s|\\\\[tnr]|\\\\x(?:0[bc]|1[c-f]|85|a0)|\\\\u(?:1680|200[0-9a]|202[89f]|205f|3000))++)?)(?!(?:\\s|\\\\[tnr]|\\\\x(?:0[bc]|1[c-f]|85|a0)|\\\\u(?:1680|200[0-9a]|202[89f]|205f|3000)))[^']*[^'\\\\]|(?!\\\\*['\"])((?!(?:[A-Za-z0-9\\u0130\\u0131!#$%&*+.^_`|~-]+(?:\\s|\\\\[tnr]|\\\\x(?:0[bc]|1[c-f]|85|a0)|\\\\u(?:1680|200[0-9a]|202[89f]|205f|3000))++)?<)(?!(?:requ[i\\u0130\\u0131]red|m[i\\u0130\\u0131]ss[i\\u0130\\u0131]ng|[i\\u0130\\u0131]nval[i\\u0130\\u0131]d|exp[i\\u0130\\u0131]red|den[i\\u0130\\u0131]ed|fa[i\\u0130\\u0131]led|none|null)(?:[.,;!?'\"\\\\]|(?![\\s\\S])))(?:[A-Za-z0-9\\u0130\\u0131!#$%&*+.^_`|~-]+(?:\\s|\\\\[tnr]|\\\\x(?:0[bc]|1[c-f]|85|a0)|\\\\u(?:1680|200[0-9a]|202[89f]|205f|3000))++)?)(?!(?:\\s|\\\\[tnr]|\\\\x(?:0[bc]|1[c-f]|85|a0)|\\\\u(?:1680|200[0-9a]|202[89f]|205f|3000)))(?:\"(?:\\\\[\\s\\S]|[^\"\\\\])*+\"?+|[^\\\\\\n\\r\"]|\\\\(?![nr])|(?:\\r\\n?|\\n)(?=[ \\t]))++)", IGNORE_CASE);
    private static final Pattern BACKSLASHED_USERINFO = pythonic("([/\\\\][/\\\\][^\\s/\\\\:@]*):(?:([^\\s@]*)@|[^\\s@]*)");
    /** A URL's scheme ({@code http:}), read from the start of its run of scheme characters (Python's {@code _SCHEME}). */
    private static final String SCHEME = "(?:(?<![A-Za-z0-9+.-])[0-9+.-]*[A-Za-z][A-Za-z0-9+.-]*:)";
    /**
     * {@code scheme://user:password@} (Python's {@code _redact._USERINFO}): the password (group 3) from the first {@code :}
     * after the user name to the last {@code @} of the word; the {@code :} may be a fullwidth U+FF1A, the {@code @} a
     * fullwidth U+FF20 or a small U+FE6B (NFKC reads them as ASCII, as some URL parsers do).  The user name is read once:
     * the lookahead and back-reference commit to the last {@code :} (or U+FF1A) before the first {@code :} or {@code /}, a
     * U+FF1A before an {@code @} in the user name being the second choice; a {@code //user:} with no {@code @} after it
     * matches the rest of its word (the last alternative, no group 3).
     */
    private static final Pattern USERINFO = pythonic("(" + SCHEME + "?//(?:(?=([^\\s/:]*)[:\\uff1a])\\2(?=[:\\uff1a]\\S*[@\\uff20\\ufe6b])"
        + "|[^\\s/:]*(?=\\uff1a[^\\s/:\\uff1a]*[@\\uff20\\ufe6b])))[:\\uff1a](\\S*)[@\\uff20\\ufe6b]|" + SCHEME + "?//[^\\s/:]*[:\\uff1a]\\S*");
    /**
     * A password typed with a space (Python's {@code _SPACED_USERINFO}; group 2): a space before any {@code /}, then up to
     * the last {@code @} of the word holding the first {@code @} after it, with no {@code //} before it (what one
     * {@code scheme://user:} reads ends at the next {@code //}, the next one's).  The loops are possessive
     * (as greedy here: what they give back is never an {@code @}): the JDK's greedy group loop recurses once an
     * iteration, a long text overflowed its stack.
     */
    private static final Pattern SPACED_USERINFO = pythonic(
        "(" + SCHEME + "//[^\\s/:@]*):([^@/\\n\\s]*\\s[^@\\n/]*+(?:/(?!/)[^@\\n/]*+)*+(?:@\\S*)?|[^@/\\n]*\\n[^@/\\n]*)@");
    /**
     * {@code ／／user:password@} (Python's {@code _FULLWIDTH_USERINFO}): one or both slashes fullwidth (U+FF0F); the
     * password (group 2) up to the last {@code @} of its word (without one, the rest of the word is matched: no group 2).
     */
    private static final Pattern FULLWIDTH_USERINFO = pythonic(
        "(" + SCHEME + "?(?:\\uff0f[/\\uff0f]|/\\uff0f)[^\\s/\\uff0f:\\uff1a]*)[:\\uff1a](?:(\\S*)[@\\uff20\\ufe6b]|\\S*)");
    /**
     * {@code scheme://user%3Apassword@} (Python's {@code _ENCODED_USERINFO}): the {@code :} percent-encoded; without an
     * {@code @} after it, the rest is matched and shown as it is (no group 2).
     */
    private static final Pattern ENCODED_USERINFO = pythonic(
        "(" + SCHEME + "?//[^\\s/:@\\uff20]*?%3[Aa])(?:([^\\s@\\uff20]*)[@\\uff20\\ufe6b]|[^\\s@\\uff20]*)");
    private static final Pattern QUOTED_USERINFO = pythonic("(['\"][^\\s'\"/:@]+):(?!//)([^'\"\\n]*)@");
    /** A password parameter (Python's {@code _PARAMETER}): its quoted values' loops possessive (see SPACED_USERINFO). */
    private static final Pattern PARAMETER = pythonic(
        "((?<![A-Za-z0-9\\u0130\\u0131_-])[A-Za-z0-9\\u0130\\u0131_-]*password\\s*=\\s*)('(?:\\\\.|[^'\\\\])*+'?|\"(?:\\\\.|[^\"\\\\])*+\"?|(?!\\s)[^& \\n\\r'\"#]+)", IGNORE_CASE);
    private static final Pattern ENCODED_PARAMETER = pythonic(
        "((?<![A-Za-z0-9_%])(?=[A-Za-z0-9_%]*?%[0-9A-Fa-f]{2})([A-Za-z0-9_%]+)\\s*=\\s*['\"]?)((?:\\\\\\S|[^&\\s'\"#\\\\])++)");
    /** A password parameter whose {@code =} is percent-encoded ({@code ?password%3Dsecret}, Python's {@code _ENCODED_SEPARATOR}). */
    private static final Pattern ENCODED_SEPARATOR = pythonic(
        "((?<![A-Za-z0-9\\u0130\\u0131_])(?:ssl)?password%3D['\"]?)((?:\\\\\\S|[^&\\s'\"#\\\\])++)", IGNORE_CASE);
    /** What the mask of an encoded name's or separator's quoted value left, to its closing quote (Python's {@code _QUOTED_VALUE_LEFT}). */
    private static final Pattern QUOTED_VALUE_LEFT = pythonic("((?:=|%3[Dd])\\s*)(?:\"\\*\\*\\*(?:\\\\.|[^\"\\\\])*+\"?|'\\*\\*\\*(?:\\\\.|[^'\\\\])*+'?)");
    /**
     * What a password parameter's mask left of its value (Python's {@code _QUERY_VALUE_LEFT}): up to {@code &}, a space or a line break,
     * not a quote or a {@code #}; the quotes just before its end stay.
     */
    private static final Pattern QUERY_VALUE_LEFT = pythonic("((?:=|%3[Dd])\\s*)\\*\\*\\*(?:[^& \\n\\r]*[^& \\n\\r'\"])?(?=['\"]*(?![^& \\n\\r]))");
    /** What Python's str.split() splits on (str.isspace()). */
    private static final Pattern WHITESPACE = Pattern.compile("[\\t-\\r\\x1c- \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]+");
    /** A word of a text folded into one line ({@link #shownOneLine}): a run of what is not Python's whitespace. */
    private static final Pattern WORD = Pattern.compile("[^" + PY_SPACE + "]+");

    private Shown() {}

    /**
     * {@code source} compiled reading whitespace and {@code .} as Python does: {@link #shown} masks the raw text
     * (attack118), which may hold a tab, NEL, U+2028...: the JDK's {@code \s} is ASCII whitespace only, its {@code .}
     * stops at \r, U+0085, U+2028 and U+2029 too.  {@code \s}/{@code \S} read Python's whitespace (str.isspace()),
     * {@code .} all but \n; {@code [\s\S]} (any character) is left as it is.
     */
    private static Pattern pythonic(String source, int flags) {
        StringBuilder out = new StringBuilder();
        boolean inClass = false;
        for (int at = 0; at < source.length(); at++) {
            char c = source.charAt(at);
            if (!inClass && source.startsWith("[\\s\\S]", at)) {
                out.append("[\\s\\S]");
                at += 5;
            } else if (c == '\\') {
                char next = source.charAt(at + 1);
                if (next == 's') out.append(inClass ? PY_SPACE : "[" + PY_SPACE + "]");
                else if (next == 'S') out.append("[^").append(PY_SPACE).append(']');
                else out.append(c).append(next);
                at++;
            } else {
                if (c == '[') inClass = true;
                else if (c == ']') inClass = false;
                if (!inClass && c == '.') out.append("[^\\n]");
                else out.append(c);
            }
        }
        return Pattern.compile(out.toString(), flags);
    }

    private static Pattern pythonic(String source) {
        return pythonic(source, 0);
    }

    /**
     * The credential an {@code Authorization} header's value carries (without its scheme; a {@code PrivateToken
     * token="..."}'s token too), longest first, to be masked in whatever the answer repeats; empty without one.
     */
    static List<String> secretsOf(String authorization) {
        List<String> found = new ArrayList<>();
        if (authorization == null) return found;
        int space = authorization.indexOf(' ');
        String credential = space < 0 ? "" : authorization.substring(space + 1).trim();
        LinkedHashSet<String> parts = new LinkedHashSet<>();
        parts.add(credential);
        Matcher token = Pattern.compile("token=\"?([^\",\\s]+)").matcher(credential);
        while (token.find()) parts.add(token.group(1));
        for (String part : parts) if (part.codePointCount(0, part.length()) >= SHORTEST_SECRET) found.add(part);
        found.sort((a, b) -> Integer.compare(b.length(), a.length()));
        return found;
    }

    /** {@code text}'s words joined by one space, as Python's {@code " ".join(text.split())}. */
    static String oneLine(String text) {
        String joined = WHITESPACE.matcher(text).replaceAll(" ");
        int start = joined.startsWith(" ") ? 1 : 0;
        int end = joined.endsWith(" ") ? joined.length() - 1 : joined.length();
        return start >= end ? "" : joined.substring(start, end);
    }

    /**
     * {@code text} as one line to show: {@code secrets} and any credential masked, control characters escaped, cut to
     * {@code limit} characters (code points; {@code ...} marks a cut; a negative limit: all).
     */
    static String shown(String text, List<String> secrets, int limit) {
        return shown(text, secrets, limit, false);
    }

    /**
     * {@link #shown}, but each run of whitespace (tabs, line breaks, NBSP...) shown as one space, none at either end (as
     * {@link #oneLine}: a refusal's detail on one line), once masked: whitespace a credential holds is masked with it
     * ({@code token=a\tb} reads {@code token=***}; folded first it read {@code token=*** b}, attack120 F2). The cut
     * counts the folded text's characters (of at most 8 x {@code limit + 4096} read). Python's
     * {@code shown(text, secrets, limit, fold=True)}.
     */
    static String shownOneLine(String text, List<String> secrets, int limit) {
        return shown(text, secrets, limit, true);
    }

    /** {@link #shown} ({@code fold} false) or {@link #shownOneLine} (true). */
    private static String shown(String text, List<String> secrets, int limit, boolean fold) {
        if (text == null) text = "None";
        // the secrets first, in the whole text (linear): a copy the cut crossed would show its head (attack75 A)
        for (String secret : secrets) text = text.replace(secret, MASK);
        if (limit >= 0 && fold) {
            text = foldedStart(text, limit + ROOM); // a long run of whitespace takes no room (Python's cut)
        } else if (limit >= 0 && text.codePointCount(0, text.length()) > limit + ROOM) { // only what can be shown is
            // escaped, with room for a credential begun before the cut: the first limit + ROOM code points (Python's cut)
            text = text.substring(0, text.offsetByCodePoints(0, limit + ROOM));
        }
        // masked before escaping (attack118 F1, F2: an escaped \t or \x1b read as a value or as a word's end)
        text = sub(CREDENTIAL, redactedText(text), headThen(0, MASK));
        text = sub(TOKEN_VALUE, text, headThen(0, MASK));
        text = sub(BACKSLASHED_USERINFO, text, headThen(2, ":" + MASK + "@"));
        text = sub(NAMED_SECRET, text, headThen(0, MASK));
        text = sub(AUTHORIZATION, text, match -> {
            for (int kept = 2; kept <= 5; kept++) if (match.group(kept) != null) return match.group(1) + match.group(kept) + MASK;
            return null;
        });
        if (fold) text = foldedSecretsMasked(oneLine(text), secrets); // once masked (attack120 F2)
        StringBuilder escaped = new StringBuilder();
        for (int at = 0; at < text.length(); ) {
            int code = text.codePointAt(at);
            at += Character.charCount(code);
            if (printable(code)) escaped.appendCodePoint(code);
            else escaped.append(escape(code));
        }
        text = escaped.toString();
        if (limit < 0 || text.codePointCount(0, text.length()) <= limit) return text;
        return text.substring(0, text.offsetByCodePoints(0, limit)) + "...";
    }

    /**
     * The start of {@code text} that folds into {@code length} characters (code points; its words joined by one space),
     * all of it if it folds into fewer, within its first FOLDED_READ x {@code length} characters: what
     * {@link #shownOneLine} masks of a long text (Python's {@code _folded_start}).
     */
    private static String foldedStart(String text, int length) {
        if (text.length() <= length) return text;
        int most = FOLDED_READ * length;
        if (text.codePointCount(0, text.length()) > most) text = text.substring(0, text.offsetByCodePoints(0, most));
        int joined = -1; // the length of the words read so far, joined
        Matcher word = WORD.matcher(text);
        while (word.find()) {
            int points = text.codePointCount(word.start(), word.end());
            if (joined + 1 + points >= length) return text.substring(0, text.offsetByCodePoints(word.start(), length - joined - 1));
            joined += 1 + points;
        }
        return text;
    }

    /**
     * {@code text} (folded) with each of {@code secrets} that holds whitespace masked in its folded form too (echoed with
     * a tab for its space, it reads so once folded), when that is SHORTEST_SECRET characters long at least (Python's
     * {@code _folded_secrets_masked}).
     */
    private static String foldedSecretsMasked(String text, List<String> secrets) {
        for (String secret : secrets) {
            String folded = oneLine(secret);
            if (WHITESPACE.matcher(secret).find() && folded.codePointCount(0, folded.length()) >= SHORTEST_SECRET) {
                text = text.replace(folded, MASK);
            }
        }
        return text;
    }

    /**
     * A URL as an error about it shows it: its whole userinfo read {@code ***} ({@code https://***@host/}; the {@code @}
     * may be a fullwidth U+FF20 or a small U+FE6B, which {@link #shown} reads as an {@code @} too), then escaped, masked
     * and cut to 200 characters by {@link #shown}.
     */
    static String shownUrl(String url) {
        return shown(url.replaceFirst("//[^/?#]*[@\\uff20\\ufe6b]", "//***@"), Collections.emptyList(), 200);
    }

    /** Python's str.isprintable() of one character: not other (Cc, Cf, Cs, Co, Cn), a separator, or a space but ' '. */
    private static boolean printable(int code) {
        if (code == ' ') return true;
        switch (Character.getType(code)) {
            case Character.CONTROL: case Character.FORMAT: case Character.SURROGATE: case Character.PRIVATE_USE:
            case Character.UNASSIGNED: case Character.LINE_SEPARATOR: case Character.PARAGRAPH_SEPARATOR: case Character.SPACE_SEPARATOR:
                return false;
            default:
                return true;
        }
    }

    /** {@code code} as Python's {@code repr} writes an unprintable character: {@code \n}, {@code \x1b}, {@code \u202e}. */
    private static String escape(int code) {
        if (code == '\t') return "\\t";
        if (code == '\n') return "\\n";
        if (code == '\r') return "\\r";
        String hex = Integer.toHexString(code);
        if (code < 0x100) return "\\x" + "00".substring(hex.length()) + hex;
        if (code < 0x10000) return "\\u" + "0000".substring(hex.length()) + hex;
        return "\\U" + "00000000".substring(hex.length()) + hex;
    }

    /** URLs' passwords masked, as Python's {@code dpdist._redact.redacted_text}: its patterns, in its order. */
    private static String redactedText(String text) {
        text = sub(USERINFO, text, match -> maskedUserinfo(match, 3));
        text = sub(FULLWIDTH_USERINFO, text, match -> maskedUserinfo(match, 2));
        text = sub(SPACED_USERINFO, text, headThen(0, ":" + MASK + "@"));
        text = sub(ENCODED_USERINFO, text, headThen(2, MASK + "@"));
        text = sub(QUOTED_USERINFO, text, headThen(0, ":" + MASK + "@"));
        text = sub(PARAMETER, text, headThen(0, MASK));
        text = sub(ENCODED_SEPARATOR, text, headThen(0, MASK));
        text = sub(ENCODED_PARAMETER, text, match -> passwordKey(match.group(2)) ? match.group(1) + MASK : null);
        text = sub(QUOTED_VALUE_LEFT, text, headThen(0, MASK));
        return sub(QUERY_VALUE_LEFT, text, headThen(0, MASK));
    }

    /**
     * A userinfo match masked (Python's {@code _masked_userinfo}): null (shown as it is) without a password (group
     * {@code password}); where what the pattern took for the password holds a password parameter of the query, that
     * parameter's name kept after the mask.
     */
    private static String maskedUserinfo(Matcher match, int password) {
        String value = match.group(password);
        if (value == null) return null;
        int query = value.indexOf('?');
        return match.group(1) + ":" + MASK + "@" + (query < 0 ? "" : parameterHead(value.substring(query)));
    }

    /**
     * The name and {@code =} of the first password parameter in {@code text} (as PARAMETER, ENCODED_SEPARATOR or
     * ENCODED_PARAMETER read one; Python's {@code _parameter_head}), or "".
     */
    private static String parameterHead(String text) {
        String head = "";
        int first = Integer.MAX_VALUE;
        for (Pattern pattern : new Pattern[] {PARAMETER, ENCODED_SEPARATOR, ENCODED_PARAMETER}) {
            Matcher match = pattern.matcher(text);
            while (match.find()) {
                if (pattern == ENCODED_PARAMETER && !passwordKey(match.group(2))) continue;
                if (match.start() < first) {
                    first = match.start();
                    head = match.group(1);
                }
                break;
            }
        }
        return head;
    }

    /** Whether {@code key} (an encoded parameter's name) is a password's once percent-decoded (Python's {@code _encoded_password}). */
    private static boolean passwordKey(String key) {
        String decoded = stripped(unquote(key)).toLowerCase(Locale.ROOT);
        return decoded.equals("password") || decoded.equals("sslpassword");
    }

    /**
     * A match's replacement: its first group and {@code suffix}; null (shown as it is) where group {@code password} (if
     * not 0) was not found (a {@code //user:} with no {@code @} after it matches the rest of its word, only to be read once).
     */
    private static Function<Matcher, String> headThen(int password, String suffix) {
        return match -> password != 0 && match.group(password) == null ? null : match.group(1) + suffix;
    }

    /** {@code text} with each match of {@code pattern} replaced by {@code replacement} of it (null: as it is). */
    private static String sub(Pattern pattern, String text, Function<Matcher, String> replacement) {
        Matcher match = pattern.matcher(text);
        StringBuilder out = new StringBuilder();
        int last = 0;
        while (match.find()) {
            String replaced = replacement.apply(match);
            if (replaced == null) continue; // read once, shown as it is
            out.append(text, last, match.start()).append(replaced);
            last = match.end();
        }
        return out.append(text, last, text.length()).toString();
    }

    /**
     * {@code text} without Python's whitespace at either end, as its str.strip() (String.trim takes what is up to U+0020
     * only: not U+0085, U+00A0, U+3000...).
     */
    private static String stripped(String text) {
        int start = 0;
        int end = text.length();
        while (start < end && space(text.charAt(start))) start += 1;
        while (end > start && space(text.charAt(end - 1))) end -= 1;
        return text.substring(start, end);
    }

    /** Whether {@code c} is whitespace to Python (str.isspace(): what {@link #WHITESPACE} matches). */
    private static boolean space(char c) {
        return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680
            || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
    }

    /** Python's urllib.parse.unquote: runs of %xx as UTF-8 bytes (an invalid sequence: U+FFFD), the rest as is. */
    private static String unquote(String text) {
        StringBuilder out = new StringBuilder();
        for (int at = 0; at < text.length(); ) {
            ByteArrayOutputStream run = new ByteArrayOutputStream();
            while (at + 2 < text.length() && text.charAt(at) == '%' && hex(text.charAt(at + 1)) >= 0 && hex(text.charAt(at + 2)) >= 0) {
                run.write(hex(text.charAt(at + 1)) * 16 + hex(text.charAt(at + 2)));
                at += 3;
            }
            if (run.size() > 0) {
                out.append(new String(run.toByteArray(), StandardCharsets.UTF_8));
            } else {
                out.append(text.charAt(at));
                at += 1;
            }
        }
        return out.toString();
    }

    private static int hex(char c) {
        return Character.digit(c, 16) >= 0 && c < 128 ? Character.digit(c, 16) : -1;
    }
}
