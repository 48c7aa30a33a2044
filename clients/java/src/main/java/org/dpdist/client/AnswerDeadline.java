package org.dpdist.client;

import java.io.IOException;
import java.util.Timer;
import java.util.TimerTask;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A deadline for one whole answer, its head and its body: past it, {@code abort} runs (closing the connection or the
 * stream a read blocks on), so a server that trickles its answer, each byte within the per-read timeout, cannot hold
 * the client (and the storage lock its {@code submit} holds) for ever (attack67 F10).  One daemon timer thread for all,
 * which never runs an abort itself: each runs on a daemon thread of its own, as an abort may block until the read it
 * ends returns (HttpURLConnection's {@code disconnect} waits for the lock its reading thread holds), and the timer must
 * stay free for every other deadline in the process (attack76 F10).
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
                aborted(abort);
            }
        };
        TIMER.schedule(task, Math.max(1, left));
    }

    /** Runs {@code abort} on a daemon thread of its own, which may wait as long as the abort blocks; returns at once. */
    static void aborted(Runnable abort) {
        Thread thread = new Thread(() -> {
            try {
                abort.run();
            } catch (RuntimeException ignored) {
                // the read it ends fails anyway
            }
        }, "dpdist-answer-abort");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * The result of {@code exchange}, an exchange of {@code url} under way on another thread, waited for until the
     * deadline at most: past it, {@code abort} runs (on its own thread) and the IOException says the deadline's, whether
     * or not the exchange's read has ended yet (attack76 F1: a read under way ends only when its next byte or its per-read
     * timeout comes, up to one more timeout).  The exchange's own IOException, runtime exception or error is thrown as it is.
     */
    <T> T await(Future<T> exchange, String url, Runnable abort) throws IOException {
        try {
            return exchange.get(Math.max(0, endNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException late) {
            passed = true;
            exchange.cancel(true);
            aborted(abort);
            throw explained(new IOException("deadline passed", late), url);
        } catch (InterruptedException interrupted) {
            exchange.cancel(true);
            aborted(abort);
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", interrupted);
        } catch (ExecutionException failed) {
            Throwable cause = failed.getCause();
            if (cause instanceof IOException) throw explained((IOException) cause, url);
            if (cause instanceof RuntimeException) throw (RuntimeException) cause;
            if (cause instanceof Error) throw (Error) cause;
            throw new IOException(String.valueOf(cause), cause);
        }
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
