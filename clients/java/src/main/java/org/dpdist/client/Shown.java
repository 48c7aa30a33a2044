package org.dpdist.client;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Text from outside as the client shows it in a {@link ServiceError}, as Python's {@code dpdist._shown.shown} (byte for
 * byte: {@code clients/js/test/fixtures/shown.json}): the client's secrets masked in every form a server could echo
 * them in (its {@code spelling}s of each character and base64 at any offset), control characters escaped, cut.
 */
final class Shown {
    static final String MASK = "***";
    private static final int SHORTEST_SECRET = 4; // a shorter secret would mask common words

    /** The patterns of the secrets met last (at most PATTERNS_KEPT, as Python's lru_cache), by the secrets. */
    private static final Map<List<String>, Pattern> PATTERNS = new HashMap<>();
    private static final int PATTERNS_KEPT = 256;

    private Shown() { }

    private static String hex(int number, int width) { // a pattern of number in hexadecimal, either case
        StringBuilder out = new StringBuilder();
        for (char digit : String.format("%0" + width + "x", number).toCharArray()) out.append(Character.isLetter(digit) ? "[" + digit + Character.toUpperCase(digit) + "]" : digit);
        return out.toString();
    }

    /** A pattern of a character as itself or in each form a text may escape it in (Python's). */
    private static String spelling(int code) {
        String character = new String(Character.toChars(code));
        Set<String> forms = new LinkedHashSet<>();
        StringBuilder percent = new StringBuilder();
        for (byte one : character.getBytes(StandardCharsets.UTF_8)) percent.append('%').append(hex(one & 0xff, 2));
        String named = code == '&' ? "&amp;" : code == '<' ? "&lt;" : code == '>' ? "&gt;" : code == '"' ? "&quot;" : character;
        Collections.addAll(forms, Pattern.quote(character), percent.toString(), "&#0{0,3}" + code + ";",
            "&#[xX]0{0,3}" + hex(code, 1) + ";", Pattern.quote(named));
        if (code < 0x10000) forms.add("\\\\u" + hex(code, 4));
        else Collections.addAll(forms, "\\\\u" + hex(Character.highSurrogate(code), 4) + "\\\\u" + hex(Character.lowSurrogate(code), 4), "\\\\U" + hex(code, 8));
        if (code < 0x100) forms.add("\\\\x" + hex(code, 2));
        if ("\"'\\/".indexOf(code) >= 0) forms.add(Pattern.quote("\\" + character));
        if (code == ' ') forms.add("\\+");
        return "(?:" + String.join("|", forms) + ")";
    }

    private static int length(String text) { return text.codePointCount(0, text.length()); }

    /** {@code secret} and its base64 at each offset in a longer text, standard and URL-safe (Python's secret_forms). */
    private static List<String> secretForms(String secret) {
        List<String> forms = new ArrayList<>();
        if (length(secret) < SHORTEST_SECRET) return forms;
        forms.add(secret);
        byte[] data = secret.getBytes(StandardCharsets.UTF_8);
        for (int offset = 0; offset < 3; offset++) {
            byte[] shifted = new byte[offset + data.length];
            System.arraycopy(data, 0, shifted, offset, data.length);
            String encoded = Base64.getEncoder().withoutPadding().encodeToString(shifted);
            int start = (8 * offset + 5) / 6;
            for (String form : new String[] {encoded.substring(start, 8 * (offset + data.length) / 6), encoded.substring(start)}) Collections.addAll(forms, form, form.replace('+', '-').replace('/', '_'));
        }
        forms.removeIf(form -> length(form) < SHORTEST_SECRET);
        return forms;
    }

    /**
     * One pattern of every form of {@code secrets}, the longest first (then in code order, as Python's), or null; compiled
     * once for the same secrets, as Python's (a request names its URL with the client's secrets masked, and a credential's
     * pattern, thousands of alternatives, took 0.1-0.4 CPU-s to compile at each request).
     */
    private static Pattern patternOf(List<String> secrets) {
        synchronized (PATTERNS) {
            if (PATTERNS.containsKey(secrets)) return PATTERNS.get(secrets);
            Pattern pattern = compiled(secrets);
            if (PATTERNS.size() >= PATTERNS_KEPT) PATTERNS.clear();
            PATTERNS.put(new ArrayList<>(secrets), pattern);
            return pattern;
        }
    }

    private static Pattern compiled(List<String> secrets) {
        Set<String> forms = new LinkedHashSet<>();
        for (String secret : secrets) forms.addAll(secretForms(secret));
        List<String> sorted = new ArrayList<>(forms);
        sorted.sort((a, b) -> length(a) != length(b) ? Integer.compare(length(b), length(a)) : a.compareTo(b));
        String spelt = sorted.stream().map(form -> form.codePoints().mapToObj(Shown::spelling).collect(Collectors.joining()))
            .collect(Collectors.joining("|"));
        return sorted.isEmpty() ? null : Pattern.compile(spelt);
    }

    /** The credential an {@code Authorization} header's value carries (a {@code PrivateToken token="..."}'s token too). */
    static List<String> secretsOf(String authorization) {
        String credential = authorization == null || authorization.indexOf(' ') < 0 ? "" : authorization.substring(authorization.indexOf(' ') + 1).trim();
        Set<String> found = new LinkedHashSet<>(Collections.singletonList(credential));
        var token = Pattern.compile("token=\"?([^\",\\s]+)").matcher(credential);
        while (token.find()) found.add(token.group(1));
        found.removeIf(part -> length(part) < SHORTEST_SECRET);
        return new ArrayList<>(found);
    }

    /** {@code text} as one line: {@code secrets} masked in every form, control characters escaped, cut (negative: all). */
    static String shown(String text, List<String> secrets, int limit) {
        Pattern pattern = patternOf(secrets);
        if (text == null) text = "None";
        if (pattern != null) text = pattern.matcher(text).replaceAll(MASK);
        StringBuilder escaped = new StringBuilder();
        text.codePoints().forEach(code -> escaped.append(printable(code) ? new String(Character.toChars(code)) : code == '\t' ? "\\t"
            : code == '\n' ? "\\n" : code == '\r' ? "\\r" : String.format(code < 0x100 ? "\\x%02x" : code < 0x10000 ? "\\u%04x" : "\\U%08x", code)));
        String out = escaped.toString();
        if (pattern != null && !out.equals(text)) out = pattern.matcher(out).replaceAll(MASK); // a secret its escaping spells
        return limit < 0 || length(out) <= limit ? out : out.substring(0, out.offsetByCodePoints(0, limit)) + "...";
    }

    /** A URL an error about it names (the application's own): its userinfo, query values and fragment read {@code ***}. */
    static String shownUrl(String url) {
        return shown(url.replaceFirst("//[^/?#]*[@\\uff20\\ufe6b]", "//***@").replaceAll("([?&][^=&#]*=)[^&#]*", "$1***")
            .replaceFirst("(?s)#.*", "#***"), Collections.<String>emptyList(), 200);
    }

    /** {@code {code, "code: detail"}} of a dpdist refusal, else {@code {null, "status N from HOST (not a dpdist answer, N bytes)"}}. */
    static String[] refusal(int status, byte[] body, String host, List<String> secrets) {
        java.util.Map<String, Object> document = null;
        try {
            document = Json.asObject(Json.parseAnswer(body, HttpTransport.ACK_ANSWER_BYTES));
        } catch (IllegalArgumentException notJson) { /* no dpdist answer */ }
        Object code = document == null ? null : document.get("error");
        if (!(code instanceof String) || !Codes.CODES.contains(code)) {
            return new String[] {null, "status " + status + " from " + shown(host, Collections.<String>emptyList(), 100) + " (not a dpdist answer, "
                + body.length + " bytes)"};
        }
        String said = document.get("detail") instanceof String ? shown((String) document.get("detail"), secrets, 2000) : "";
        return new String[] {(String) code, said.trim().isEmpty() ? (String) code : code + ": " + said};
    }

    /** Python's str.isprintable() of one character: not other (Cc, Cf, Cs, Co, Cn), a separator, or a space but ' '. */
    private static boolean printable(int code) {
        int type = Character.getType(code);
        return code == ' ' || !(type == Character.CONTROL || type == Character.FORMAT || type == Character.SURROGATE || type == Character.PRIVATE_USE
            || type == Character.UNASSIGNED || type == Character.LINE_SEPARATOR || type == Character.PARAGRAPH_SEPARATOR || type == Character.SPACE_SEPARATOR);
    }
}
