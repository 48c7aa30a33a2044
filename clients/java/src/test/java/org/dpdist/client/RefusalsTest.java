package org.dpdist.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.dpdist.client.protocols.FrequencyProtocol;
import org.dpdist.client.protocols.Memo;
import org.dpdist.client.protocols.NumericalProtocol;
import org.dpdist.client.protocols.Protocol;
import org.dpdist.client.protocols.RecordProtocol;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A person's values are never shown: each refusal of a value, through every protocol of Python's fixture, the Client
 * and a device's ledger, says where the value is and what is wrong with it, never what it is (an app that forwards
 * exceptions to a crash reporter does not send it).
 */
class RefusalsTest {
    /** What the values below are marked with: no message may hold one. */
    static final String[] MARKS = {"73519", "hovercraft", "\u0416"};

    /** The messages of {@code error} and of the exceptions it was raised from, with its {@code toString}. */
    static List<String> texts(Throwable error) {
        List<String> found = new ArrayList<>();
        for (Throwable at = error; at != null && found.size() < 50; at = at.getCause()) {
            found.add(String.valueOf(at));
            found.add(String.valueOf(at.getMessage()));
        }
        return found;
    }

    static Map<String, Object> map(Object... pairs) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) map.put((String) pairs[i], pairs[i + 1]);
        return map;
    }

    /** Batches holding a marked value the protocol refuses (or, a number past numerical bounds, clips). */
    static List<List<?>> marked(Protocol protocol) {
        List<List<?>> batches = new ArrayList<>(Arrays.asList(Arrays.asList("hovercraft-73519"), Arrays.asList(map("v", 73519)),
            Arrays.asList(Arrays.asList(73519, "hovercraft"))));
        if (protocol instanceof RecordProtocol) {
            List<Map<String, Object>> attributes = ((RecordProtocol) protocol).attributes();
            for (int at = 0; at < attributes.size(); at++) {
                for (Object value : new Object[] {73519 + 1_000_000, -73519, "hovercraft-73519", 73519.5}) {
                    List<Object> record = new ArrayList<>(Collections.nCopies(attributes.size(), 0));
                    record.set(at, value);
                    batches.add(Arrays.asList(record));
                }
                batches.add(Arrays.asList(map((String) attributes.get(at).get("name"), "hovercraft-73519")));
            }
        } else if (protocol.kind().equals("key_value")) {
            batches.add(Arrays.asList(map("73519", 0.5)));
            batches.add(Arrays.asList(Arrays.asList(Arrays.asList(0, 73519.5))));
            batches.add(Arrays.asList(Arrays.asList(Arrays.asList("hovercraft", 0.1))));
            batches.add(Arrays.asList(Arrays.asList(Arrays.asList(0, "hovercraft"))));
            batches.add(Arrays.asList(Arrays.asList(Arrays.asList(0, 0.1), Arrays.asList(0, 0.2))));
            batches.add(Arrays.asList(map("073519", 0.1)));
            batches.add(Arrays.asList(73519));
        } else if (!(protocol instanceof NumericalProtocol)) {
            long past = protocol instanceof FrequencyProtocol ? ((FrequencyProtocol) protocol).domainSize() + 73519L : 73519L;
            for (Object value : new Object[] {past, -73519, 73519.5, BigInteger.valueOf(2).pow(200).add(BigInteger.valueOf(73519)), "hovercraft\u0416",
                "\u0416", "a\u0416", 73519L * 1_000_000_000_000L}) {
                batches.add(Arrays.asList(0, value));
            }
        }
        return batches;
    }

    static List<String> shown(List<String> messages) {
        List<String> shown = new ArrayList<>();
        for (String message : messages) for (String mark : MARKS) if (message.contains(mark)) shown.add(message);
        return shown;
    }

    @Test
    void noRefusalOfPrivatizeShowsAValueItWasGivenForEveryProtocolOfPythonsFixture() {
        List<Map<String, Object>> configs = new ArrayList<>(Fixtures.entries("configs"));
        for (Map<String, Object> multi : Fixtures.entries("multi")) configs.add(Json.asObject(Json.asObject(multi.get("view")).get("config")));
        List<String> messages = new ArrayList<>();
        int supported = 0;
        for (Map<String, Object> config : configs) {
            Protocol protocol;
            try {
                protocol = DpDist.fromConfig(config);
            } catch (UnsupportedProtocolError unsupported) {
                continue;
            }
            supported += 1;
            for (List<?> values : marked(protocol)) {
                try {
                    protocol.privatize(values, new SeededSource(1));
                } catch (DPDistError refused) {
                    messages.addAll(texts(refused));
                }
            }
        }
        assertTrue(supported >= 30 && messages.size() > 6 * supported, messages.size() + " messages of " + supported + " protocols");
        assertEquals(Collections.emptyList(), shown(messages));
    }

    @Test
    void noRefusalOfADeviceShowsItsValueOrItsMemo(@TempDir Path folder) throws Exception {
        List<String> messages = new ArrayList<>();
        String[][] campaigns = {
            {"{\"protocol\": \"grr\", \"version\": 1, \"epsilon\": 1.0, \"labels\": [\"bus\", \"bike\", \"car\"]}"},
            {"{\"protocol\": \"l-grr\", \"version\": 1, \"epsilon\": 2.0, \"epsilon_1\": 1.0, \"domain_size\": 5}"},
            {"{\"protocol\": \"pem\", \"version\": 1, \"epsilon\": 2.0, \"alphabet\": \"abc\", \"max_chars\": 3, \"k\": 1}"},
            {"{\"protocol\": \"sw\", \"version\": 1, \"epsilon\": 1.0, \"bounds\": [0, 10]}"},
        };
        Object[] values = {"hovercraft-73519", 73519, -73519, 73519.5, "ab\u0416", map("minutes", 73519), null};
        for (String[] campaign : campaigns) {
            try (FakeServer server = ClientTest.server(campaign[0], ClientTest::ack)) {
                for (Client.Options options : new Client.Options[] {ClientTest.fast(),
                    Client.options().retries(0).source(new SeededSource(3)).storage(new FileStorage(folder.resolve(campaign[0].hashCode() + "")))}) {
                    Client client = new Client(server.url(), "c", options);
                    for (Object value : values) {
                        try {
                            client.submit(value);
                        } catch (DPDistError refused) {
                            messages.addAll(texts(refused));
                        }
                        try {
                            client.submitMany(Arrays.asList(value));
                        } catch (DPDistError refused) {
                            messages.addAll(texts(refused));
                        }
                    }
                }
            }
        }
        // a memo is keyed by a person's past values: damaged in its keys or entries, it is refused unshown
        Map<String, Object> config = Json.asObject(Json.parse(campaigns[1][0]));
        Protocol protocol = DpDist.fromConfig(config);
        for (Object memo : new Object[] {map("73519", 2), map("1", "hovercraft-73519"), map("1", 73519), "hovercraft-73519"}) {
            Map<String, Object> stream = map("collector", "local", "reports", 1, "config", config, "memo", memo);
            List<Object> broken = Arrays.asList(map("config", config, "memo", memo),
                map("format", "dpdist-ledger", "version", 2, "budget", 10, "charges", new ArrayList<>(), "streams", map("local l-grr", stream)),
                map("format", "hovercraft-73519"),
                map("format", "dpdist-ledger", "version", 2, "budget", 10, "streams", map(), "charges", Arrays.asList("hovercraft-73519")),
                map("format", "dpdist-ledger", "version", 2, "budget", 10, "streams", map(), "charges", new ArrayList<>(), "answered", "hovercraft-73519"),
                map("format", "dpdist-ledger", "version", 2, "budget", 10, "streams", map(), "charges", new ArrayList<>(), "answered",
                    map("a b", "hovercraft-73519")),
                map("format", "dpdist-ledger", "version", 2, "budget", 10, "streams", map(), "charges", new ArrayList<>(), "rounds",
                    map("a b", "hovercraft-73519")));
            try {
                new Memo(protocol, Json.asObject(broken.get(0)), null);
            } catch (DPDistError refused) {
                messages.addAll(texts(refused));
            }
            for (Object state : broken.subList(1, broken.size())) {
                try {
                    Ledger.fromJson(state, null);
                } catch (DPDistError refused) {
                    messages.addAll(texts(refused));
                }
            }
        }
        // a ledger or tokens that are no JSON: refused without the parser's words (they name a character of the text)
        try (FakeServer server = ClientTest.server(campaigns[1][0], ClientTest::ack)) {
            for (String key : new String[] {Client.LEDGER_KEY, "dpdist-tokens"}) {
                FileStorage storage = new FileStorage(folder.resolve("broken-" + key));
                storage.setItem(key, "hovercraft-73519");
                Client client = new Client(server.url(), "c", Client.options().retries(0).storage(storage));
                try {
                    client.submit(1);
                    client.prepareTokens(1);
                } catch (DPDistError refused) {
                    messages.addAll(texts(refused));
                }
            }
        }
        assertTrue(messages.size() > 60, messages.size() + " messages");
        assertEquals(Collections.emptyList(), shown(messages));
    }
}
