package org.dpdist.client;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.zip.CRC32;

/**
 * dpdist's binary report record ({@code dpdist/_io/_binary.py}), written byte for byte as Python does (and the
 * JavaScript client's {@code src/wire.js}):
 *
 * <pre>
 *   magic    8 bytes "DPDISTR\n"
 *   version  uint16 little-endian (1)
 *   length   uint32 little-endian, bytes of the header
 *   header   UTF-8 JSON, json.dumps(sort_keys=True): config, dtype (NumPy descr), shape, payload_bytes, crc32 (zlib's
 *            CRC-32 of the payload) and file_id (32 lower-case hex digits, the same in every record of one file: the
 *            ingest paths' no-file-twice key)
 *   payload  the reports' C-order bytes
 * </pre>
 *
 * A report file is a sequence of records.
 */
public final class Wire {
    public static final byte[] RECORD_MAGIC = {0x44, 0x50, 0x44, 0x49, 0x53, 0x54, 0x52, 0x0a}; // DPDISTR\n
    public static final int RECORD_VERSION = 1;
    private static final Pattern FILE_ID = Pattern.compile("[0-9a-f]{32}");

    private Wire() {
    }

    /** zlib.crc32 of {@code bytes} (an unsigned 32-bit integer). */
    public static long crc32(byte[] bytes) {
        CRC32 crc = new CRC32();
        crc.update(bytes, 0, bytes.length);
        return crc.getValue();
    }

    /** A fresh random file id: 32 lower-case hex digits (128 bits from the CSPRNG). */
    public static String newFileId() {
        byte[] bytes = new byte[16];
        new java.security.SecureRandom().nextBytes(bytes);
        return Bytes.hex(bytes);
    }

    private static String checkFileId(String fileId) {
        if (fileId == null || !FILE_ID.matcher(fileId).matches()) {
            throw new InvalidParameterError("The 'fileId' option must be 32 lower-case hex digits. Got " + Json.show(fileId) + " instead.");
        }
        return fileId;
    }

    /** The JSON header of a record for {@code batch}, as Python writes it ({@code fileId} null: none). */
    public static String recordHeader(ReportBatch batch, String fileId) {
        Map<String, Object> header = new LinkedHashMap<>();
        header.put("config", batch.config);
        header.put("crc32", crc32(batch.bytes));
        header.put("dtype", batch.descr);
        header.put("payload_bytes", (long) batch.bytes.length);
        List<Object> shape = new ArrayList<>();
        for (int size : batch.shape) shape.add((long) size);
        header.put("shape", shape);
        if (fileId != null) header.put("file_id", checkFileId(fileId));
        return PyJson.dumps(header, batch.floatKeys);
    }

    /**
     * One binary record holding {@code batch}; {@code fileId} is the id of the file the record belongs to (give every
     * record of a file the same one, from {@link #newFileId}; null writes none).
     */
    public static byte[] encodeRecord(ReportBatch batch, String fileId) {
        byte[] header = Bytes.utf8(recordHeader(batch, fileId));
        ByteArrayOutputStream out = new ByteArrayOutputStream(14 + header.length + batch.bytes.length);
        out.write(RECORD_MAGIC, 0, RECORD_MAGIC.length);
        byte[] lengths = new byte[6];
        Bytes.putUnsigned(lengths, 0, 2, RECORD_VERSION);
        Bytes.putU32(lengths, 2, header.length);
        out.write(lengths, 0, 6);
        out.write(header, 0, header.length);
        out.write(batch.bytes, 0, batch.bytes.length);
        return out.toByteArray();
    }

    /** {@link #encodeRecord(ReportBatch, String)} without a file id. */
    public static byte[] encodeRecord(ReportBatch batch) {
        return encodeRecord(batch, null);
    }
}
