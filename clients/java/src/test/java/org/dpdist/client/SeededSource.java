package org.dpdist.client;

/**
 * xoshiro128** seeded by splitmix32: a deterministic stand-in for the CSPRNG in tests, word for word the JavaScript
 * client's {@code deterministicSource} (clients/js/test/helpers.js), so that the same seed gives both clients the same
 * words and, through the same draw rules, the same reports.
 */
public final class SeededSource extends RandomSource {
    private final int[] s = new int[4];
    private int x;

    public SeededSource(long seed) {
        super(true);
        x = (int) seed;
        for (int i = 0; i < 4; i++) s[i] = splitmix();
    }

    private int splitmix() {
        x += 0x9e3779b9;
        int z = x;
        z = (z ^ (z >>> 16)) * 0x85ebca6b;
        z = (z ^ (z >>> 13)) * 0xc2b2ae35;
        return z ^ (z >>> 16);
    }

    @Override
    protected void fill(int[] words) {
        for (int i = 0; i < words.length; i++) {
            int result = Integer.rotateLeft(s[1] * 5, 7) * 9;
            int t = s[1] << 9;
            s[2] ^= s[0];
            s[3] ^= s[1];
            s[1] ^= s[2];
            s[0] ^= s[3];
            s[2] ^= t;
            s[3] = Integer.rotateLeft(s[3], 11);
            words[i] = result;
        }
    }
}
