package org.dpdist.client;

import java.util.ArrayList;
import java.util.List;

/**
 * A seeded source that records every draw made of it ({@code name(arguments)}, the calls made from outside: a draw's
 * own words are not listed) and answers every coin ({@code bernoulli}) with {@code coin}: the JavaScript client's
 * {@code drawTraces} proxy.  A randomizer whose draws do not depend on its coins or the value leaves one trace.
 */
public final class TracingSource extends RandomSource {
    private final RandomSource inner;
    private final boolean coin;
    public final List<String> calls = new ArrayList<>();

    public TracingSource(long seed, boolean coin) {
        super(true);
        this.inner = new SeededSource(seed);
        this.coin = coin;
    }

    @Override
    public long word() {
        long value = inner.word();
        calls.add("word()");
        return value;
    }

    @Override
    public void words(int count, int[] out) {
        inner.words(count, out);
        calls.add("words(" + count + ")");
    }

    @Override
    public long uniformInt(long n) {
        long value = inner.uniformInt(n);
        calls.add("uniformInt(" + n + ")");
        return value;
    }

    @Override
    public boolean bernoulli(double p) {
        return coin;
    }

    @Override
    public double uniform53() {
        double value = inner.uniform53();
        calls.add("uniform53()");
        return value;
    }

    /** The trace: every call, in order. */
    public String trace() {
        return String.join(" ", calls);
    }
}
