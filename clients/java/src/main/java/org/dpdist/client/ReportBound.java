package org.dpdist.client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.dpdist.client.protocols.Protocol;

/**
 * How many reports of a fetched config fit one request body: a campaign config is an instruction to the device,
 * as Python's {@code dpdist/_wire/_report_bound.py}.  A hostile server or proxy answering the config GET
 * with a huge domain ({@code domain_size} = 2*10^7: ~530 bytes on the wire) could make {@code submitMany} randomize
 * gigabytes.  Before anything is drawn, sent or charged, the client computes the bytes of one report's binary record (as
 * {@link Wire#encodeRecord} writes it) and refuses ({@code bad_answer}) a config whose statistic is over
 * {@link #CLIENT_MAX_STATISTIC_BYTES} or whose one report does not fit min(the config answer's {@code max_body_bytes},
 * {@link #CLIENT_MAX_BODY_BYTES}), or whose record header (it carries the config) is past the {@link #MAX_HEADER_BYTES} a
 * service reads of one (every batch would be refused after the draw); batches hold at most
 * {@link #rowsPerBody} reports: what fits the body, and no more than the answer's {@code max_batch_reports} (the
 * service's per-batch work bound: a batch of more is refused 413 {@code too_many_rows}).
 */
public final class ReportBound {
    /** The largest body a device sends whatever the config answer says: the service's default --max-body-bytes (16 MiB). */
    public static final long CLIENT_MAX_BODY_BYTES = 16L << 20;
    /** The largest statistic (entries x 8 bytes) of a campaign a device takes part in: the service's default --max-statistic-bytes (64 MiB). */
    public static final long CLIENT_MAX_STATISTIC_BYTES = 64L << 20;
    /** The most bytes of a binary record's header a service reads (1 MiB, Python's {@code dpdist._io._binary._MAX_HEADER_BYTES}). */
    public static final long MAX_HEADER_BYTES = 1L << 20;

    private static final String PLACEHOLDER_ID = "00000000000000000000000000000000"; // its length is what matters
    private static final long MAX_CRC = 0xFFFFFFFFL; // the CRC counted at its longest
    private static final long MAX_STATED = 1L << 53; // a max_batch_reports past it is refused (Python's bound: no JSON int every reader takes)

    private ReportBound() {
    }

    /**
     * The protocol of the config a server answered for {@code campaign}.  A config this client cannot build because a
     * parameter is out of range or missing is the server's answer refused ({@code bad_answer}), not the app's own mistake
     * ({@link InvalidParameterError}), as Python's {@code protocol_of_answer}; a protocol dpdist has and this
     * client does not implement stays {@link UnsupportedProtocolError}.  Nothing is drawn or sent either way.
     */
    static Protocol protocolOfAnswer(Object config, String campaign) {
        try {
            return DpDist.fromConfig(config);
        } catch (UnsupportedProtocolError error) {
            throw error;
        } catch (RuntimeException error) { // any failure to build it is the answer's: a raw exception is no app's bug
            throw new ServiceError("The config answer of campaign '" + campaign + "' is not a config this client can use: "
                + Shown.shown(String.valueOf(error.getMessage()), java.util.Collections.emptyList(), 400)
                + " Is the server a dpdist service of a version this client reads? Nothing was drawn or sent.", 200, "bad_answer");
        }
    }

    /** Bytes of one binary record of {@code rows} reports of {@code protocol} with a file id, nothing drawn or allocated. */
    public static long recordBytes(Protocol protocol, long rows) {
        long payload = rows * protocol.rowBytes();
        Map<String, Object> header = new LinkedHashMap<>();
        header.put("config", protocol.config());
        header.put("crc32", MAX_CRC);
        header.put("dtype", protocol.descr());
        header.put("file_id", PLACEHOLDER_ID);
        header.put("payload_bytes", payload);
        List<Object> shape = new ArrayList<>();
        shape.add(rows);
        for (int size : protocol.rowShape()) shape.add((long) size);
        header.put("shape", shape);
        return 14L + Bytes.utf8(PyJson.dumps(header, protocol.floatKeys())).length + payload;
    }

    /** The body the config answer says the service takes ({@code max_body_bytes}), capped by {@link #CLIENT_MAX_BODY_BYTES}. */
    static long bodyLimit(Map<String, Object> answer, String campaign) {
        long stated = statedCount(answer, "max_body_bytes", campaign, Long.MAX_VALUE); // any long, as Python
        return stated == 0 ? CLIENT_MAX_BODY_BYTES : Math.min(stated, CLIENT_MAX_BODY_BYTES);
    }

    /**
     * The most reports one batch may hold that the config answer states ({@code max_batch_reports}: the service refuses
     * a larger batch 413 {@code too_many_rows}, its committer's work per batch bounded); none stated (an older service):
     * {@link Long#MAX_VALUE}, the body size alone bounds a batch.  A value that is not an int >= 1 is refused.
     */
    static long batchReportsLimit(Map<String, Object> answer, String campaign) {
        long stated = statedCount(answer, "max_batch_reports", campaign, MAX_STATED);
        return stated == 0 ? Long.MAX_VALUE : stated;
    }

    /**
     * The positive int the config answer gives as {@code field} (0 when absent or null); a value that is not an int >= 1
     * (a bool, a float, a string, 0, negative) or is past {@code most} is the server's answer refused ({@code bad_answer}),
     * nothing drawn or sent.
     */
    private static long statedCount(Map<String, Object> answer, String field, String campaign, long most) {
        Object stated = answer == null ? null : answer.get(field);
        if (stated == null) return 0;
        if (!(stated instanceof Long || stated instanceof Integer) || ((Number) stated).longValue() < 1
            || ((Number) stated).longValue() > most) {
            String shown = Json.show(stated);
            throw new ServiceError("The config answer of campaign '" + campaign + "' gives '" + field + "' = "
                + shown.substring(0, Math.min(shown.length(), 40)) + ", not an int >= 1; nothing was drawn or sent.", 200, "bad_answer");
        }
        return ((Number) stated).longValue();
    }

    /** Refuse a config whose statistic is over {@link #CLIENT_MAX_STATISTIC_BYTES} ({@code bad_answer}). */
    static void checkStatistic(Protocol protocol, String campaign) {
        long needed = protocol.statisticSize() * 8;
        if (needed > CLIENT_MAX_STATISTIC_BYTES) {
            throw new ServiceError("The config answer of campaign '" + campaign + "' describes a campaign of " + protocol.name + " ('config': "
                + largestField(protocol.config()) + ") whose statistic takes " + needed + " bytes, more than the " + CLIENT_MAX_STATISTIC_BYTES
                + " a device takes part in (the service's default --max-statistic-bytes); refused before anything was drawn or charged.", 200, "bad_answer");
        }
    }

    /** Bytes of the header of a binary record of {@code protocol} (it carries the config: labels and all). */
    public static long headerBytes(Protocol protocol) {
        return recordBytes(protocol, 0) - 14;
    }

    /** Refuse ({@code bad_answer}) a config whose record header is past the {@link #MAX_HEADER_BYTES} a service reads of
     * one: every batch would be refused (150,000 labels were taken). */
    static void checkHeader(Protocol protocol, String campaign) {
        long size = headerBytes(protocol);
        if (size > MAX_HEADER_BYTES) {
            throw new ServiceError("The config answer of campaign '" + campaign + "' describes " + protocol.name + " reports whose record header (it "
                + "carries the config) takes " + size + " bytes, more than the " + MAX_HEADER_BYTES + " a service reads of one: no batch of them "
                + "could be counted; refused before anything was drawn or charged.", 200, "bad_answer");
        }
    }

    /**
     * The most reports (at most {@code wanted} and the answer's {@code max_batch_reports}, at least 1) whose record fits
     * {@link #bodyLimit}; a bad {@code max_body_bytes} or {@code max_batch_reports}, or a config whose statistic is too
     * large, whose record header is past {@link #MAX_HEADER_BYTES} or whose one report does not fit, is refused
     * ({@code bad_answer}) before anything is drawn.
     */
    static int rowsPerBody(Protocol protocol, Map<String, Object> answer, String campaign, int wanted) {
        checkStatistic(protocol, campaign);
        checkHeader(protocol, campaign);
        long limit = bodyLimit(answer, campaign);
        long most = Math.min(wanted, batchReportsLimit(answer, campaign)); // checked before anything is drawn too
        long one = recordBytes(protocol, 1);
        if (one > limit) {
            Object stated = answer == null ? null : answer.get("max_body_bytes");
            throw new ServiceError("The config answer of campaign '" + campaign + "' describes " + protocol.name + " reports of " + one
                + " bytes each ('config': " + largestField(protocol.config()) + "), more than one request body may hold (" + limit
                + " bytes: 'max_body_bytes' " + (stated == null ? "absent" : "= " + stated) + ", at most " + CLIENT_MAX_BODY_BYTES
                + " on this device); refused before anything was drawn or charged.", 200, "bad_answer");
        }
        long rows = Math.max(1, Math.min(most, (limit - recordBytes(protocol, 0)) / Math.max(protocol.rowBytes(), 1)));
        while (rows > 1 && recordBytes(protocol, rows) > limit) rows -= 1; // the digits of the shape: a few bytes
        return (int) rows;
    }

    /** The config's largest integer field, e.g. {@code domain_size = 20000000} (what sizes its reports). */
    private static String largestField(Map<String, Object> config) {
        String key = null;
        long best = 0;
        for (Map.Entry<String, Object> entry : config.entrySet()) {
            Object value = entry.getValue();
            if (!(value instanceof Long || value instanceof Integer)) continue;
            long number = ((Number) value).longValue();
            if (key == null || number > best || (number == best && entry.getKey().compareTo(key) > 0)) {
                key = entry.getKey();
                best = number;
            }
        }
        return key == null ? "its protocol" : key + " = " + best;
    }
}
