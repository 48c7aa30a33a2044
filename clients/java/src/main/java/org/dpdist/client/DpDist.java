package org.dpdist.client;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.dpdist.client.protocols.Protocol;
import org.dpdist.client.protocols.ProtocolIndex;

/**
 * The dpdist client on the JVM: randomize on the user's device with the same mechanisms, config and wire format as the
 * Python aggregator of dpdist (the JavaScript client's {@code src/index.js}).  This entry point holds every protocol;
 * {@link EntryPoint} holds one.
 *
 * <pre>{@code
 * String config = "{\"protocol\": \"oue\", \"version\": 1, \"epsilon\": 1.0, \"domain_size\": 1024}"; // proto.config()
 * ReportBatch reports = DpDist.privatize(config, Arrays.asList(3, 17, 1023));  // bytes, descr "|u1", shape [3, 128]
 * byte[] record = DpDist.privatizeRecord(config, Arrays.asList(42, 7));       // one binary report record (rows shuffled)
 * }</pre>
 */
public final class DpDist {
    /** The version of dpdist this client goes with (one version for the Python package and its clients). */
    public static final String VERSION = "0.1.0";

    private DpDist() {
    }

    /** Names of the protocols this client implements, sorted. */
    public static List<String> supportedProtocols() {
        List<String> names = new ArrayList<>(ProtocolIndex.protocols().keySet());
        Collections.sort(names);
        return Collections.unmodifiableList(names);
    }

    /**
     * The protocol a config (as written by Python's {@code proto.config()}: a map or its JSON text), or a collector's
     * client view, describes.
     */
    public static Protocol fromConfig(Object config) {
        return Config.build(config, ProtocolIndex.protocols(), null);
    }

    /** Randomize {@code values} under {@code config}: one report per value, from the CSPRNG. */
    public static ReportBatch privatize(Object config, List<?> values) {
        return privatize(config, values, RandomSource.secureSource());
    }

    /** Randomize {@code values} under {@code config}, drawing from {@code source} (a seeded one only in tests). */
    public static ReportBatch privatize(Object config, List<?> values, RandomSource source) {
        Protocol protocol = config instanceof Protocol ? (Protocol) config : fromConfig(config);
        return protocol.privatize(values, source);
    }

    /**
     * {@link #privatize} then {@link Wire#encodeRecord}: the bytes of one binary report record, its reports in a
     * uniformly random order (not the order of {@code values}: a record is what leaves the device), without a file id.
     */
    public static byte[] privatizeRecord(Object config, List<?> values) {
        return privatizeRecord(config, values, RandomSource.secureSource(), null);
    }

    /** {@link #privatizeRecord(Object, List)} from {@code source}, with the file id {@code fileId} (null: none). */
    public static byte[] privatizeRecord(Object config, List<?> values, RandomSource source, String fileId) {
        return Wire.encodeRecord(Shuffle.shuffleBatch(privatize(config, values, source), source), fileId);
    }
}
