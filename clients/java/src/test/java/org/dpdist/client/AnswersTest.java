package org.dpdist.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What a hostile or broken server answers reaches the app only as the Python client shows it: a
 * refusal's code and detail escaped, cut and masked; a redirect refused at once naming where it pointed; a trickled
 * answer ended by the transport's timeout as a deadline for the whole answer.  Servers on 127.0.0.1; a trickling one
 * gives up after 30 s on its own (then the read fails otherwise, and the assertions on the message fail).
 */
class AnswersTest {
    static final String TOKEN = "SUBMITSECRET123456";

    @Test
    void aRefusalEchoingTheTokenAndEscapeSequencesIsShownEscapedCutAndMasked() throws Exception {
        try (FakeServer server = ClientTest.server(ClientTest.GRR, request -> {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("error", "campaign_closed");
            body.put("detail", "\u001b[2J\u001b[31mred\nline2 " + request.header("Authorization") + " and bare " + TOKEN + " " + "z".repeat(3000));
            return FakeServer.Answer.json(403, body);
        })) {
            for (HttpTransport transport : Arrays.asList(new JdkHttpTransport(Duration.ofSeconds(20)), new UrlConnectionTransport(20_000))) {
                Client client = new Client(server.url(), "c", ClientTest.fast().token(TOKEN).transport(transport));
                ServiceError error = assertThrows(ServiceError.class, () -> client.submit(1));
                assertEquals(403, error.status());
                assertEquals("campaign_closed", error.code());
                assertFalse(error.getMessage().contains(TOKEN), error.getMessage());
                assertTrue(error.getMessage().contains("HTTP 403 campaign_closed: \\x1b[2J\\x1b[31mred\\nline2 Bearer *** and bare ***"), error.getMessage());
                assertFalse(error.getMessage().chars().anyMatch(c -> c < 0x20 || c == 0x7f), error.getMessage());
                assertTrue(error.getMessage().length() < 2300 && error.getMessage().endsWith("..."), error.getMessage());
            }
        }
    }

    @Test
    void anyOtherRefusalIsShownByItsStatusHostAndSizeOnly() throws Exception {
        try (FakeServer server = ClientTest.server(ClientTest.GRR, request -> {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("error", "x\u001b]0;PWNED\u0007");
            body.put("detail", "Bearer theirs");
            return FakeServer.Answer.json(400, body);
        })) {
            Client client = new Client(server.url(), "c", ClientTest.fast().token(TOKEN));
            ServiceError error = assertThrows(ServiceError.class, () -> client.submit(1));
            String host = server.url().replaceFirst("^http://", "").replaceFirst("/.*", "");
            assertTrue(error.getMessage().endsWith(": status 400 from " + host + " (not a dpdist answer, 58 bytes)"), error.getMessage());
            assertEquals(null, error.code());
        }
    }

    /** {@code {...fields, "pad": [{},{},...]}} of about {@code bytes} bytes: ~bytes/3 empty objects. */
    static byte[] padded(String fields, int bytes) {
        StringBuilder text = new StringBuilder(fields.substring(0, fields.length() - 1)).append(",\"pad\":[{}");
        while (text.length() < bytes - 8) text.append(",{}");
        return text.append("]}").toString().getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void theAnswersBoundsAreThePythonClients() {
        Map<String, Object> answers = Json.asObject(Fixtures.python().get("answers"));
        assertEquals(((Number) answers.get("ack_bytes")).intValue(), HttpTransport.ACK_ANSWER_BYTES);
        assertEquals(((Number) answers.get("config_bytes")).intValue(), HttpTransport.MAX_ANSWER_BYTES); // 4 MiB
        for (Object row : (List<?>) answers.get("within")) {
            List<?> within = (List<?>) row;
            long[] most = Json.mostValuesWithin(((Number) within.get(0)).longValue());
            assertEquals(((Number) within.get(1)).longValue(), most[0], String.valueOf(within));
            assertEquals(((Number) within.get(2)).longValue(), most[1], String.valueOf(within));
        }
        for (Object row : (List<?>) answers.get("counts")) {
            List<?> count = (List<?>) row;
            long[] counted = Json.valuesUpperBound(((String) count.get(0)).getBytes(StandardCharsets.UTF_8));
            assertEquals(((Number) count.get(1)).longValue(), counted[0], String.valueOf(count));
            assertEquals(((Number) count.get(2)).longValue(), counted[1], String.valueOf(count));
        }
    }

    @Test
    void anAcknowledgementWithMoreValuesThanItsBoundIsNoneAndARefusalsCodeIsNotTaken() throws Exception {
        for (int status : new int[] {200, 403}) {
            try (FakeServer server = ClientTest.server(ClientTest.GRR, request -> {
                String batchId = request.path.substring(request.path.lastIndexOf('/') + 1);
                String ack = "{\"batch_id\":\"" + batchId + "\",\"campaign\":\"c\",\"accepted\":1,\"n_read\":1,\"rejected\":{},\"duplicate\":false,\"error\":\"forbidden\"}";
                return new FakeServer.Answer(status, "application/json", padded(ack, HttpTransport.ACK_ANSWER_BYTES - 100));
            })) {
                Client client = new Client(server.url(), "c", ClientTest.fast().retries(1));
                ServiceError error = assertThrows(ServiceError.class, () -> client.submit(1));
                if (status == 200) {
                    assertEquals("wrong_ack", error.code());
                    assertTrue(error.getMessage().contains("with JSON of more than 131072 arrays and objects (not parsed)"), error.getMessage());
                    assertEquals(2, server.requests.stream().filter(request -> request.method.equals("PUT")).count()); // retried
                } else {
                    assertEquals(403, error.status());
                    assertEquals(null, error.code());
                }
            }
        }
    }

    @Test
    void anAcknowledgementOrARefusalPastOneMiBIsNotReadFurther() throws Exception {
        for (int status : new int[] {200, 403}) {
            try (FakeServer server = ClientTest.server(ClientTest.GRR, request ->
                    new FakeServer.Answer(status, "application/json", padded("{\"error\":\"forbidden\"}", 2 << 20)))) {
                for (HttpTransport transport : Arrays.asList(new JdkHttpTransport(Duration.ofSeconds(20)), new UrlConnectionTransport(20_000))) {
                    Client client = new Client(server.url(), "c", ClientTest.fast().retries(0).transport(transport));
                    ServiceError error = assertThrows(ServiceError.class, () -> client.submit(1));
                    assertTrue(error.getMessage().contains("bytes (HttpTransport.ACK_ANSWER_BYTES); not read"), error.getMessage());
                }
            }
        }
    }

    @Test
    void aConfigOrAnIdentityWithMoreValuesThanFourMiBAllowIsRefusedUnparsed() throws Exception {
        byte[] hostile = padded("{\"campaign\":\"c\",\"state\":\"open\",\"config\":" + ClientTest.GRR + "}", HttpTransport.MAX_ANSWER_BYTES - 100);
        try (FakeServer server = new FakeServer(request -> new FakeServer.Answer(200, "application/json", hostile))) {
            Client client = new Client(server.url(), "c", ClientTest.fast().retries(0));
            ServiceError error = assertThrows(ServiceError.class, client::campaign);
            assertEquals("bad_answer", error.code());
            assertTrue(error.getMessage().contains("JSON of more than 524288 arrays and objects within 4194304 bytes, not parsed"), error.getMessage());
        }
        byte[] identity = padded("{\"campaign\":\"c\",\"config\":" + ClientTest.GRR + ",\"relay\":{},\"issuer\":null}", 4 << 20);
        String digest = Bytes.hex(java.security.MessageDigest.getInstance("SHA-256").digest(identity));
        ServiceError error = assertThrows(ServiceError.class, () -> Identity.identityOf(identity, "c", null, digest));
        assertEquals("bad_answer", error.code());
        assertTrue(error.getMessage().contains("JSON of more than 524288 arrays and objects"), error.getMessage());
    }

    @Test
    void aConfigAnswerJustPastFourMiBIsRefusedUnreadOneWithinIsRead() throws Exception {
        // a hostile config answer of 14.6 MB held 670 MB; Python's CONFIG_ANSWER_BYTES, from the fixture
        int most = ((Number) Json.asObject(Fixtures.python().get("answers")).get("config_bytes")).intValue();
        String body = "{\"campaign\":\"c\",\"state\":\"open\",\"config\":" + ClientTest.GRR + ",\"pad\":\"\"}";
        for (int bytes : new int[] {most + 1, most}) {
            StringBuilder text = new StringBuilder(body.substring(0, body.length() - 2));
            while (text.length() < bytes - 2) text.append('x');
            byte[] answer = text.append("\"}").toString().getBytes(StandardCharsets.UTF_8);
            assertEquals(bytes, answer.length);
            try (FakeServer server = new FakeServer(request -> new FakeServer.Answer(200, "application/json", answer))) {
                Client client = new Client(server.url(), "c", ClientTest.fast().retries(0));
                if (bytes > most) {
                    ServiceError error = assertThrows(ServiceError.class, client::campaign);
                    assertTrue(error.getMessage().contains("longer than " + most + " bytes"), error.getMessage());
                } else {
                    assertEquals("c", client.campaign().get("campaign"));
                }
            }
        }
    }

    @Test
    void aRedirectIsRefusedAtOnceNamingTheStatusAndWhereItPointed() throws Exception {
        try (FakeServer server = ClientTest.server(ClientTest.GRR, request ->
                new FakeServer.Answer(302, "text/html", new byte[0]).header("Location", "http://u:pw@elsewhere.example/steal?token=" + TOKEN))) {
            for (HttpTransport transport : Arrays.asList(new JdkHttpTransport(Duration.ofSeconds(20)), new UrlConnectionTransport(20_000))) {
                Client client = new Client(server.url(), "c", ClientTest.fast().token(TOKEN).transport(transport));
                ServiceError error = assertThrows(ServiceError.class, () -> client.submit(1));
                assertEquals(302, error.status());
                assertEquals("redirected", error.code());
                assertTrue(error.getMessage().contains("HTTP 302: a redirect to 'http://u:pw@elsewhere.example/steal?token=***', not followed"), error.getMessage());
            }
            assertEquals(2, server.requests.stream().filter(request -> request.method.equals("PUT")).count()); // one each: not retried
        }
    }

    @Test
    void aRedirectWhoseLocationIsNoValidHeaderValueIsRefusedAtOnceNotRetried() throws Exception {
        // the JDK refuses the answer itself (ProtocolException), which read "cannot reach the server", retried
        try (FakeServer server = ClientTest.server(ClientTest.GRR, request -> new FakeServer.Answer(302, "text/html", new byte[0])
                .header("Location", "http://u:secretpw@evil.example/\u001b[2J?token=" + TOKEN))) {
            for (HttpTransport transport : Arrays.asList(new JdkHttpTransport(Duration.ofSeconds(20)), new UrlConnectionTransport(20_000))) {
                Client client = new Client(server.url(), "c", ClientTest.fast().token(TOKEN).transport(transport));
                ServiceError error = assertThrows(ServiceError.class, () -> client.submit(1));
                assertEquals("redirected", error.code(), error.getMessage());
                String message = error.getMessage();
                assertTrue(message.contains("'http://u:secretpw@evil.example/\\x1b[2J?token=***'"), message);
                assertFalse(message.contains(TOKEN) || message.chars().anyMatch(c -> c < 0x20), message);
                if (transport instanceof JdkHttpTransport) {
                    assertTrue(message.contains("the server answered a redirect whose Location is not a valid header value"), message);
                }
            }
            assertEquals(2, server.requests.stream().filter(request -> request.method.equals("PUT")).count()); // one each: not retried
        }
        assertEquals("http://a/\u001b[2J", JdkHttpTransport.invalidLocation("Invalid header value \"LOCATION: http://a/\u001b[2J\""));
        assertEquals(null, JdkHttpTransport.invalidLocation("Invalid header value \"X-Location: http://a/\u001b\""));
        assertEquals(null, JdkHttpTransport.invalidLocation("Invalid header name \"Location\u001b\""));
    }

    @Test
    void aServerTextIsShownAsPythonShowsItByteForByte() {
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> cases = (List<Map<String, Object>>) Fixtures.read("shown.json");
        assertTrue(cases.size() >= 200);
        for (Map<String, Object> one : cases) {
            @SuppressWarnings("unchecked")
            List<String> secrets = (List<String>) one.get("secrets");
            int limit = one.get("limit") == null ? -1 : ((Number) one.get("limit")).intValue();
            assertEquals(one.get("shown"), Shown.shown((String) one.get("text"), secrets, limit), Json.show(one.get("text")));
        }
        assertEquals(Arrays.asList("token=\"abcdefgh\"", "abcdefgh"), Shown.secretsOf("PrivateToken token=\"abcdefgh\""));
        assertEquals(Collections.emptyList(), Shown.secretsOf("Bearer abc"));
    }

    /** A server that, to every connection, sends {@code head} at once, then one byte every 100 ms for at most 30 s. */
    static final class Trickling implements AutoCloseable {
        final ServerSocket socket = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
        final Thread thread;

        Trickling(String head, String drip) throws IOException {
            thread = new Thread(() -> {
                while (!socket.isClosed()) {
                    try (Socket connection = socket.accept()) {
                        InputStream in = connection.getInputStream();
                        in.read(new byte[65536]); // the request (small)
                        OutputStream out = connection.getOutputStream();
                        out.write(head.getBytes(StandardCharsets.US_ASCII));
                        out.flush();
                        for (int sent = 0; sent < 300 && !socket.isClosed(); sent++) {
                            Thread.sleep(100);
                            out.write(drip.getBytes(StandardCharsets.US_ASCII));
                            out.flush();
                        }
                    } catch (IOException | InterruptedException ended) {
                        // the client closed it (its deadline), or the test ended
                    }
                }
            });
            thread.setDaemon(true);
            thread.start();
        }

        String url() {
            return "http://127.0.0.1:" + socket.getLocalPort() + "/api/campaigns/c/config";
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    @Test
    void aTrickledAnswerEndsAtTheTransportsTimeoutHeadOrBody() throws Exception {
        String[][] trickles = {
            {"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n", " "}, // the body
            {"HTTP/1.1 200 OK\r\nX-Pad: ", "a"}, // the head
        };
        for (String[] trickle : trickles) {
            try (Trickling server = new Trickling(trickle[0], trickle[1])) {
                for (HttpTransport transport : Arrays.asList(new JdkHttpTransport(Duration.ofMillis(1500)), new UrlConnectionTransport(1500))) {
                    IOException error = assertThrows(IOException.class, () -> transport.send("GET", server.url(), Collections.emptyMap(), null));
                    String said = error.getMessage() + " " + error.getCause();
                    assertTrue(said.contains("not whole within 1500 ms") || said.contains("timed out"), transport + ": " + said);
                }
            }
        }
    }

    @Test
    void aBodyClosedShortOfItsContentLengthIsAFailureNotAnAnswer() throws Exception {
        // HttpURLConnection ends such a body without an error: the transport compares it with its Content-Length
        try (ServerSocket socket = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) {
            Thread server = new Thread(() -> {
                try (Socket connection = socket.accept()) {
                    connection.getInputStream().read(new byte[65536]);
                    OutputStream out = connection.getOutputStream();
                    out.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"campaign\": ".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                } catch (IOException ended) {
                    // the test ends
                }
            });
            server.setDaemon(true);
            server.start();
            String url = "http://127.0.0.1:" + socket.getLocalPort() + "/api/campaigns/c/config";
            IOException error = assertThrows(IOException.class, () -> new UrlConnectionTransport(5000).send("GET", url, Collections.emptyMap(), null));
            assertTrue(String.valueOf(error.getMessage()).contains("cut short: 13 of its 100 bytes"), error.getMessage());
        }
    }

    @Test
    void aServerUrlWithAPasswordOrAQueryIsRefusedByNameWithoutShowingIt() {
        for (String url : Arrays.asList("http://u:JPW123@127.0.0.1:9", "http://u%3AJPW123@127.0.0.1:9", "http://127.0.0.1:9/?token=JPW123",
                "http://127.0.0.1:9/#JPW123x")) {
            InvalidParameterError error = assertThrows(InvalidParameterError.class, () -> new Client(url, "c", ClientTest.fast()));
            assertTrue(error.getMessage().startsWith("The 'serverUrl' argument of Client must be"), error.getMessage());
            assertFalse(error.getMessage().contains("JPW123") && !url.contains("#"), error.getMessage());
        }
        // a fullwidth or small @ (which NFKC reads as @): not a URL java.net.URI gives a host, and its userinfo not shown
        for (String url : Arrays.asList("http://u:JPW123\uff20127.0.0.1:9", "http://u\uff1aJPW123\ufe6b127.0.0.1:9/", "http://u%3AJPW123\uff20h/")) {
            InvalidParameterError error = assertThrows(InvalidParameterError.class, () -> new Client(url, "c", ClientTest.fast()));
            assertTrue(error.getMessage().contains("Got \"http://***@") && !error.getMessage().contains("JPW123"), error.getMessage());
        }
    }

    @Test
    void aUrlAnErrorNamesIsShownWithoutItsUserinfoWhateverItsAt() {
        assertEquals("https://***@host/x?token=***&a=***#***", Shown.shownUrl("https://user:PW1\uff20host/x?token=PW2&a=b#PW3"));
        assertEquals("https://***@host/", Shown.shownUrl("https://user\uff1aPW1\ufe6bhost/"));
        assertEquals("ftp://***@h/\\u202e", Shown.shownUrl("ftp://u:PW1@h/\u202e"));
        for (String url : Arrays.asList("ftp://u:PW1@relay.example/\u202e", "https://u:PW1\uff20r/", "https://u\uff1aPW1\ufe6bh/")) {
            InvalidParameterError error = assertThrows(InvalidParameterError.class, () -> Identity.originOf(url, "The relay URL"));
            assertTrue(!error.getMessage().contains("PW1") && !error.getMessage().contains("\u202e") && error.getMessage().contains("://***@"),
                error.getMessage());
        }
    }
}
