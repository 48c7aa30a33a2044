package org.dpdist.client;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/** Little- and big-endian integers in byte arrays, hexadecimal, base64url and SHA-256: the encodings the client writes. */
public final class Bytes {
    private Bytes() {
    }

    /** Write the {@code size}-byte unsigned little-endian {@code value} at {@code at}. */
    public static void putUnsigned(byte[] bytes, int at, int size, long value) {
        for (int i = 0; i < size; i++) bytes[at + i] = (byte) (value >>> (8 * i));
    }

    /** The {@code size}-byte unsigned little-endian integer at {@code at}. */
    public static long getUnsigned(byte[] bytes, int at, int size) {
        long value = 0;
        for (int i = size - 1; i >= 0; i--) value = (value << 8) | (bytes[at + i] & 0xffL);
        return value;
    }

    public static void putU32(byte[] bytes, int at, long value) {
        putUnsigned(bytes, at, 4, value);
    }

    public static long getU32(byte[] bytes, int at) {
        return getUnsigned(bytes, at, 4);
    }

    /** Big-endian 32-bit {@code value} as 4 bytes. */
    public static byte[] u32BigEndian(long value) {
        return new byte[] {(byte) (value >>> 24), (byte) (value >>> 16), (byte) (value >>> 8), (byte) value};
    }

    /** The concatenation of {@code parts}. */
    public static byte[] concat(byte[]... parts) {
        int size = 0;
        for (byte[] part : parts) size += part.length;
        byte[] out = new byte[size];
        int at = 0;
        for (byte[] part : parts) {
            System.arraycopy(part, 0, out, at, part.length);
            at += part.length;
        }
        return out;
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    /** Lower-case hexadecimal of {@code bytes}. */
    public static String hex(byte[] bytes) {
        char[] out = new char[2 * bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            out[2 * i] = HEX[(bytes[i] >> 4) & 0xf];
            out[2 * i + 1] = HEX[bytes[i] & 0xf];
        }
        return new String(out);
    }

    /** The bytes of hexadecimal {@code text} (an even number of digits), IllegalArgumentException otherwise. */
    public static byte[] fromHex(String text) {
        if (text.length() % 2 != 0) throw new IllegalArgumentException("odd number of hexadecimal digits");
        byte[] out = new byte[text.length() / 2];
        for (int i = 0; i < out.length; i++) {
            int high = Character.digit(text.charAt(2 * i), 16);
            int low = Character.digit(text.charAt(2 * i + 1), 16);
            if (high < 0 || low < 0) throw new IllegalArgumentException("not hexadecimal: " + text);
            out[i] = (byte) (high << 4 | low);
        }
        return out;
    }

    /** base64url of {@code bytes}, without padding. */
    public static String base64Url(byte[] bytes) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** The bytes of base64url {@code text} (padded or not); InvalidParameterError naming {@code what} if it is not base64url. */
    public static byte[] fromBase64Url(Object text, String what) {
        if (!(text instanceof String) || !((String) text).matches("[A-Za-z0-9_-]*={0,2}")) {
            throw new InvalidParameterError(what + " must be base64url text. Got " + Json.show(text) + ".");
        }
        String plain = ((String) text).replaceAll("=+$", "");
        try {
            return Base64.getUrlDecoder().decode(plain);
        } catch (IllegalArgumentException bad) {
            throw new InvalidParameterError(what + " must be base64url text. Got " + Json.show(text) + ".");
        }
    }

    /** SHA-256 of {@code bytes}. */
    public static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException impossible) {
            throw new IllegalStateException("the platform has no SHA-256", impossible);
        }
    }

    /** UTF-8 bytes of {@code text}. */
    public static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
