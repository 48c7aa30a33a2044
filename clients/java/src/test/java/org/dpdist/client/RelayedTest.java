package org.dpdist.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The device algorithm of a relayed campaign against an in-process collector, relay and issuer ({@link RelayedFakes}),
 * as the JavaScript client's relayed.test.js: the campaign from its identity, one token per report obtained before the
 * draw, each report sealed to the collector's key and sent to the relay with its pin and token; and the attacks, each
 * refused by name before anything is drawn or sent: a relay serving its own key, the relay's URL without the pin, another
 * issuer, another token key, a TokenChallenge the pin does not give, no credential; tokens kept through an outage and an
 * issuer's lost answer.
 */
class RelayedTest {
    private static Client.Options device(Path folder, TracingSource source) {
        Client.Options options = Client.options().storage(new FileStorage(folder)).retries(1).retryDelayMs(1);
        return source == null ? options : options.source(source);
    }

    @Test
    void aDeviceTakesTheCampaignFromItsIdentityAndSendsEachSealedReportWithItsPinAndToken(@TempDir Path folder) throws Exception {
        try (RelayedFakes fakes = new RelayedFakes()) {
            Client client = new Client(fakes.collector.url(), "c", device(folder, null).issuer(RelayedFakes.CREDENTIAL, fakes.issuer.url()));
            java.util.List<Map<String, Object>> acks = client.submitMany(Arrays.asList(1, 2, 3));
            assertEquals(3L, acks.get(0).get("relayed"));
            assertEquals(3, fakes.records.size()); // opened with the collector's key: dpdist records of one report each
            for (byte[] record : fakes.records) {
                assertEquals("DPDISTR\n", new String(Arrays.copyOf(record, 8), java.nio.charset.StandardCharsets.US_ASCII));
                assertTrue(new String(record, java.nio.charset.StandardCharsets.US_ASCII).contains("\"shape\": [1]"));
            }
            assertEquals(3, (int) fakes.issued.get(RelayedFakes.CREDENTIAL));
            for (FakeServer.Request request : fakes.relay.requests) {
                if (request.method.equals("PUT")) assertEquals(fakes.pin, request.header(Identity.PIN_HEADER));
            }
            assertTrue(new TokenWallet(new FileStorage(folder)).view(Bytes.base64Url(fakes.challenge(fakes.pin))).bound.isEmpty());
        }
    }

    @Test
    void aRelayServingItsOwnKeyOrTheRelaysUrlWithoutThePinIsRefusedBeforeAnyDraw(@TempDir Path folder) throws Exception {
        try (RelayedFakes fakes = new RelayedFakes()) {
            TracingSource source = new TracingSource(1, false);
            // with the pin, from the relay's URL: a relay that swapped the key serves an identity of another hash
            fakes.swap = true;
            Client pinned = new Client(fakes.relay.url(), "c", device(folder, source).pin(fakes.pin).issuer(RelayedFakes.CREDENTIAL, fakes.issuer.url()));
            assertEquals("pin_mismatch", assertThrows(ServiceError.class, () -> pinned.submit(1)).code());
            // without the pin, the relay's own URL is refused even when it passes the collector's identity on
            fakes.swap = false;
            Client unpinned = new Client(fakes.relay.url(), "c", device(folder, source).issuer(RelayedFakes.CREDENTIAL, fakes.issuer.url()));
            assertEquals("pin_required", assertThrows(ServiceError.class, () -> unpinned.submit(1)).code());
            // the pin of another identity, given with the collector's URL
            Client other = new Client(fakes.collector.url(), "c", device(folder, source).pin("ab".repeat(32)).issuer(RelayedFakes.CREDENTIAL, fakes.issuer.url()));
            assertEquals("pin_mismatch", assertThrows(ServiceError.class, () -> other.submit(1)).code());
            assertTrue(source.calls.isEmpty() && fakes.issued.isEmpty() && fakes.reportRequests() == 0);
            // with the right pin the relay's URL serves the campaign
            Client honest = new Client(fakes.relay.url(), "c", device(folder, null).pin(fakes.pin).issuer(RelayedFakes.CREDENTIAL, fakes.issuer.url()));
            assertEquals(1L, honest.submit(4).get("relayed"));
        }
    }

    @Test
    void refusalsAboutTheIssuerComeBeforeAnyDrawOrCredentialSent(@TempDir Path folder) throws Exception {
        try (RelayedFakes fakes = new RelayedFakes()) {
            TracingSource source = new TracingSource(1, false);
            Client another = new Client(fakes.collector.url(), "c", device(folder, source).issuer(RelayedFakes.CREDENTIAL, "https://issuer.elsewhere.example"));
            assertEquals("issuer_mismatch", assertThrows(ServiceError.class, () -> another.submit(1)).code());
            Client none = new Client(fakes.collector.url(), "c", device(folder, source));
            assertEquals("credential_required", assertThrows(ServiceError.class, () -> none.submit(1)).code());
            fakes.publishedTokenKey = RelayedFakes.tokenKeyOf(fakes.issuerKey.getModulus().add(java.math.BigInteger.TWO), fakes.issuerKey.getPublicExponent());
            Client swapped = new Client(fakes.collector.url(), "c", device(folder, source).issuer(RelayedFakes.CREDENTIAL, fakes.issuer.url()));
            assertEquals("issuer_key_mismatch", assertThrows(ServiceError.class, () -> swapped.submit(1)).code());
            fakes.publishedTokenKey = null;
            fakes.publishedTokensEach = 1000L;
            Client more = new Client(fakes.collector.url(), "c", device(folder, source).issuer(RelayedFakes.CREDENTIAL, fakes.issuer.url()));
            assertEquals("tokens_each_mismatch", assertThrows(ServiceError.class, () -> more.submit(1)).code());
            fakes.publishedTokensEach = 100L;
            fakes.publishedChallenge = Bytes.base64Url(PrivacyPass.tokenChallenge("issuer.test", new byte[32], ""));
            Client tagged = new Client(fakes.collector.url(), "c", device(folder, source).issuer(RelayedFakes.CREDENTIAL, fakes.issuer.url()));
            assertEquals("challenge_mismatch", assertThrows(ServiceError.class, () -> tagged.submit(1)).code());
            assertTrue(source.calls.isEmpty() && fakes.issued.isEmpty() && fakes.reportRequests() == 0);
            assertThrows(InvalidParameterError.class, () -> Client.options().issuer(RelayedFakes.CREDENTIAL, null)); // a credential needs its issuer
            assertThrows(InvalidParameterError.class, () -> Client.options().issuer("", fakes.issuer.url()));
        }
        try (RelayedFakes open = new RelayedFakes()) {
            open.withoutIssuer();
            TracingSource source = new TracingSource(2, false);
            Client given = new Client(open.collector.url(), "c", device(folder.resolve("x"), source).issuer(RelayedFakes.CREDENTIAL, open.issuer.url()));
            assertEquals("issuer_mismatch", assertThrows(ServiceError.class, () -> given.submit(1)).code()); // it admits anyone
            assertTrue(source.calls.isEmpty());
        }
    }

    @Test
    void aRelayOutageBurnsNoTokenTheResendCarriesTheSameOnes(@TempDir Path folder) throws Exception {
        try (RelayedFakes fakes = new RelayedFakes()) {
            Client client = new Client(fakes.collector.url(), "c", device(folder, null).issuer(RelayedFakes.CREDENTIAL, fakes.issuer.url()));
            fakes.down = true;
            ServiceError failed = assertThrows(ServiceError.class, () -> client.submitMany(Arrays.asList(1, 2, 3, 4)));
            assertEquals(4, failed.batch().length());
            assertEquals(4, (int) fakes.issued.get(RelayedFakes.CREDENTIAL));
            assertEquals(4, client.unsentReports());
            fakes.down = false;
            java.util.List<Map<String, Object>> acks = client.flush();
            assertEquals(4L, acks.get(0).get("relayed"));
            assertEquals(4, (int) fakes.issued.get(RelayedFakes.CREDENTIAL)); // no token more
            assertEquals(4, fakes.records.size());
        }
    }

    @Test
    void aRelayedBatchWhoseAppRestartedIsResentWithItsBoundTokensByTheNextClient(@TempDir Path folder) throws Exception {
        // after a relay outage and a restart, the token stayed bound to a batch that lived only in memory
        try (RelayedFakes fakes = new RelayedFakes()) {
            Client client = new Client(fakes.collector.url(), "c", device(folder, null).issuer(RelayedFakes.CREDENTIAL, fakes.issuer.url()));
            fakes.down = true;
            assertThrows(ServiceError.class, () -> client.submit(2));
            assertEquals(1, (int) fakes.issued.get(RelayedFakes.CREDENTIAL));
            fakes.down = false;
            Client restarted = new Client(fakes.collector.url(), "c", device(folder, null).issuer(RelayedFakes.CREDENTIAL, fakes.issuer.url()));
            java.util.List<Map<String, Object>> acks = restarted.flush();
            assertEquals(1, acks.size());
            assertEquals(1L, acks.get(0).get("relayed"));
            assertEquals(1, (int) fakes.issued.get(RelayedFakes.CREDENTIAL)); // the bound token, not another
            assertEquals(1, fakes.records.size());
            assertTrue(new TokenWallet(new FileStorage(folder)).view(Bytes.base64Url(fakes.challenge(fakes.pin))).bound.isEmpty());
        }
    }

    @Test
    void aTokenRequestWhoseAnswerWasLostIsSentAgainTheSameBytes(@TempDir Path folder) throws Exception {
        try (RelayedFakes fakes = new RelayedFakes()) {
            fakes.loseNext = true;
            Client client = new Client(fakes.collector.url(), "c", device(folder, null).retries(2).issuer(RelayedFakes.CREDENTIAL, fakes.issuer.url()));
            assertEquals(1L, client.submit(5).get("relayed"));
            java.util.List<FakeServer.Request> requests = fakes.issuer.to("/issuer/v1/keys/k/token-request");
            assertEquals(2, requests.size());
            assertTrue(Arrays.equals(requests.get(0).body, requests.get(1).body));
            assertEquals(1, (int) fakes.issued.get(RelayedFakes.CREDENTIAL)); // counted once
        }
    }

    @Test
    void aTokenSpentOnAnotherReportIsDroppedAndTheResendTakesAFreshOne(@TempDir Path folder) throws Exception {
        try (RelayedFakes fakes = new RelayedFakes()) {
            Client client = new Client(fakes.collector.url(), "c", device(folder, null).retries(0).issuer(RelayedFakes.CREDENTIAL, fakes.issuer.url()));
            client.prepareTokens(1);
            String scope = Bytes.base64Url(fakes.challenge(fakes.pin));
            String token = (String) new TokenWallet(new FileStorage(folder)).view(scope).spare.get(0).get("token");
            fakes.spent.put(Bytes.hex(Bytes.fromBase64Url(token, "token")), "someone-else.0");
            ServiceError spent = assertThrows(ServiceError.class, () -> client.submit(6));
            assertEquals("token_spent", spent.code());
            assertTrue(new TokenWallet(new FileStorage(folder)).view(scope).bound.isEmpty()); // forgotten
            assertEquals(1L, client.send(spent.batch(), spent.batchId()).get("relayed")); // another token, the same report
        }
    }
}
