package org.dpdist.client;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * No line the client writes holds a secret it was given: its token and its issuer credential, echoed by a server in
 * every form (as sent, percent-, JSON- and HTML-escaped, in base64 at each offset) through every path a
 * {@link ServiceError}'s message takes: a dpdist refusal, a refusal that is none, a redirect, a success that acknowledges
 * nothing, a failure to reach the server.  Seeded secrets of every kind of character.
 */
class KnownSecretsTest {
    private static final int[] ALPHABET = "abcXYZ0189-_.~+/=:@%&<>\"' \u00e4\u00f6\u4e2d\ud83d\udd11".codePoints().toArray();

    /** {@code secret} in each form a server could echo it in. */
    static List<String> echoes(String secret) {
        Set<String> forms = new LinkedHashSet<>();
        String percent = URLEncoder.encode(secret, StandardCharsets.UTF_8).replace("+", "%20");
        StringBuilder json = new StringBuilder();
        StringBuilder html = new StringBuilder();
        for (char unit : secret.toCharArray()) json.append(String.format("\\u%04x", (int) unit));
        secret.codePoints().forEach(code -> html.append("&#").append(code).append(';'));
        Matcher hex = Pattern.compile("%[0-9A-F]{2}").matcher(percent);
        StringBuilder lower = new StringBuilder();
        while (hex.find()) hex.appendReplacement(lower, hex.group().toLowerCase());
        Collections.addAll(forms, secret, percent, hex.appendTail(lower).toString(), json.toString(), html.toString(), Json.show(secret),
            secret.replace("&", "&amp;").replace("<", "&lt;"), secret.replace(' ', '+'));
        for (String prefix : new String[] {"", "u", "u:"}) {
            byte[] data = (prefix + secret).getBytes(StandardCharsets.UTF_8);
            forms.add(Base64.getEncoder().encodeToString(data));
            forms.add(Base64.getUrlEncoder().withoutPadding().encodeToString(data));
        }
        return new ArrayList<>(forms);
    }

    private static String secret(Random random, int length) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < length; i++) out.appendCodePoint(ALPHABET[random.nextInt(ALPHABET.length)]);
        return out.toString();
    }

    /** A transport answering the campaign's config, and everything else as {@code kind} says, each echoing {@code said}. */
    private static HttpTransport hostile(String kind, String said) {
        return (method, url, headers, body) -> {
            Map<String, Object> document = new LinkedHashMap<>();
            if (method.equals("GET")) {
                document.put("campaign", "c");
                document.put("state", "open");
                document.put("config", Json.parse(ClientTest.GRR));
            } else if (kind.equals("unreachable")) {
                throw new IOException("connection refused: " + said);
            } else if (kind.equals("redirect")) {
                return new HttpTransport.Response(302, Collections.singletonMap("Location", Collections.singletonList("http://h/?t=" + said)), new byte[0]);
            } else {
                document.put(kind.equals("wrong") ? "batch_id" : "error", kind.equals("refusal") ? "campaign_closed" : said);
                document.put("detail", said);
            }
            int status = method.equals("GET") || kind.equals("wrong") ? 200 : 409;
            return new HttpTransport.Response(status, Collections.singletonMap("Content-Type", Collections.singletonList("application/json")),
                Json.show(document).getBytes(StandardCharsets.UTF_8));
        };
    }

    @Test
    void noMessageOfTheClientHoldsItsTokenOrItsIssuerCredentialInAnyFormAServerEchoesItIn() {
        Random random = new Random(85);
        for (int round = 0; round < 12; round++) {
            String token = secret(random, 6 + round);
            String credential = secret(random, 20);
            List<String> forms = new ArrayList<>(echoes(token));
            forms.addAll(echoes(credential));
            String said = String.join(" | ", forms);
            for (String kind : new String[] {"refusal", "other", "redirect", "wrong", "unreachable"}) {
                Client client = new Client("http://collector.test", "c", ClientTest.fast().retries(1).token(token)
                    .issuer(credential, "http://issuer.test").transport(hostile(kind, said)));
                ServiceError error = assertThrows(ServiceError.class, () -> client.submit(1));
                for (String form : forms) {
                    if (form.codePointCount(0, form.length()) < 4) continue;
                    assertFalse(error.getMessage().contains(form) || String.valueOf(error.code()).contains(form),
                        kind + ": " + form + " in " + error.getMessage());
                }
            }
        }
    }
}
