package org.dpdist.client;

import java.io.IOException;
import java.util.Timer;
import java.util.TimerTask;

/**
 * A deadline for one whole answer, its head and its body: past it, {@code abort} runs (closing the connection or the
 * stream a read blocks on), so a server that trickles its answer, each byte within the per-read timeout, cannot hold
 * the client (and the storage lock its {@code submit} holds) for ever (attack67 F10).  One daemon timer thread for all.
 */
final class AnswerDeadline implements AutoCloseable {
    private static final Timer TIMER = new Timer("dpdist-answer-deadline", true);
    private final TimerTask task;
    private final long millis;
    private final long endNanos;
    private volatile boolean passed;

    /** Runs {@code abort} in {@code left} ms unless closed before: {@code millis} after the request's start. */
    AnswerDeadline(long millis, long left, Runnable abort) {
        this.millis = millis;
        this.endNanos = System.nanoTime() + Math.max(1, left) * 1_000_000L;
        this.task = new TimerTask() {
            @Override
            public void run() {
                passed = true;
                try {
                    abort.run();
                } catch (RuntimeException ignored) {
                    // the read it ends fails anyway, and the timer thread must live on
                }
            }
        };
        TIMER.schedule(task, Math.max(1, left));
    }

    /**
     * {@code failure} of a read of {@code url}, said as the deadline's when it had passed (the abort made the read fail),
     * else as it is.
     */
    IOException explained(IOException failure, String url) {
        if (!passed) return failure;
        return new IOException("the answer of " + url + " was not whole within " + millis + " ms (the transport's timeout, a deadline "
            + "for the whole answer)", failure);
    }

    /**
     * Refuse to read on past the deadline: the abort may not reach a read under way (HttpURLConnection's
     * {@code disconnect} from another thread sometimes leaves it reading a trickled body to its end, 30 s and more), so
     * whoever reads checks this between reads.
     */
    void check(String url) throws IOException {
        if (passed || System.nanoTime() - endNanos > 0) {
            passed = true;
            throw explained(new IOException("deadline passed"), url);
        }
    }

    @Override
    public void close() {
        task.cancel();
    }
}
