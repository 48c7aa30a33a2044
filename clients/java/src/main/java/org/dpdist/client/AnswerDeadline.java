package org.dpdist.client;

import java.io.IOException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A deadline for one whole answer, its head and its body: past it, {@code abort} runs (closing the connection or the
 * stream a read blocks on), so a server that trickles its answer, each byte within the per-read timeout, cannot hold
 * the client (and the storage lock its {@code submit} holds) for ever.  One daemon scheduler thread for
 * all, which hands each abort to a pool of daemon threads (reused, idle ones end after 10 s), as an abort may block until
 * the read it ends returns (HttpURLConnection's {@code disconnect} waits for the lock its reading thread holds), and the
 * scheduler must stay free for every other deadline in the process.  The scheduler survives a failing
 * task (a java.util.Timer died for the whole process when an abort's thread could not start) and drops a
 * closed deadline's task at once (N1: the Timer kept each, and its connection, until its due time).
 */
final class AnswerDeadline implements AutoCloseable {
    private static final ScheduledThreadPoolExecutor SCHEDULER = scheduler();
    /** Where aborts run; package-private so a test can make every hand-over fail (a thread that cannot start). */
    static volatile Executor aborts = abortPool();
    private final ScheduledFuture<?> task;
    private final long millis;
    private final long endNanos;
    private final Runnable abort;
    private final AtomicBoolean abortStarted = new AtomicBoolean();
    private final boolean abortMayBlock;
    private volatile boolean passed;

    /**
     * Runs {@code abort} in {@code left} ms unless closed before: {@code millis} after the request's start.  An abort that
     * may block ({@code abortMayBlock}: HttpURLConnection's {@code disconnect}) only hurries an exchange that ends by
     * itself (on a thread of its own, its reads under a per-read timeout and {@link #check}ed): when no thread can take
     * it, it is left undone rather than run on the scheduler's thread or the caller's; one that cannot block (closing the
     * JDK's body stream, which the caller's own thread reads) then runs on the scheduler's.
     */
    AnswerDeadline(long millis, long left, boolean abortMayBlock, Runnable abort) {
        this.millis = millis;
        this.endNanos = System.nanoTime() + Math.max(1, left) * 1_000_000L;
        this.abortMayBlock = abortMayBlock;
        this.abort = abort;
        this.task = scheduled(() -> {
            passed = true;
            abortOnce();
        }, Math.max(1, left));
    }

    /**
     * {@code deadline} scheduled in {@code left} ms, or null when the scheduler's thread cannot start (a thread limit; a
     * later deadline starts it again): the reads' checks and {@link #await} still end the answer at its deadline.
     */
    private static ScheduledFuture<?> scheduled(Runnable deadline, long left) {
        try {
            return SCHEDULER.schedule(deadline, left, TimeUnit.MILLISECONDS);
        } catch (OutOfMemoryError | RuntimeException noThread) {
            return null;
        }
    }

    private static ScheduledThreadPoolExecutor scheduler() {
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, daemons("dpdist-answer-deadline"));
        scheduler.setRemoveOnCancelPolicy(true);
        return scheduler;
    }

    private static Executor abortPool() {
        return new ThreadPoolExecutor(0, Integer.MAX_VALUE, 10, TimeUnit.SECONDS, new SynchronousQueue<>(), daemons("dpdist-answer-abort"));
    }

    /** Daemon threads named {@code name} (the transports' exchange and worker pools too). */
    static ThreadFactory daemons(String name) {
        return runnable -> {
            Thread thread = new Thread(runnable, name);
            thread.setDaemon(true);
            return thread;
        };
    }

    /** How many deadlines the scheduler holds (not yet due, not closed): for the tests. */
    static int scheduled() {
        return SCHEDULER.getQueue().size();
    }

    /**
     * Runs the abort once at most (the scheduler and a caller past the deadline may both ask), on a pool thread: it may
     * wait as long as the abort blocks; returns at once.  When no thread can take it (a thread limit: OutOfMemoryError
     * "unable to create native thread"), an abort that cannot block runs here, and nothing escapes to the
     * scheduler; one that may block is left undone: on the scheduler's thread it held every other deadline of the process
     * until the read it ends returned, and on the caller's thread it held the caller (HttpURLConnection's
     * {@code disconnect} waits for the JDK's keep-alive cleaner, which reads the rest of an abandoned body for up to 5 s:
     * deadlines of 400 ms ended after 5.0 and 5.4 s in CI's runs).
     */
    private void abortOnce() {
        if (!abortStarted.compareAndSet(false, true)) return;
        try {
            aborts.execute(() -> abortQuietly(abort));
        } catch (Throwable noThread) {
            if (!abortMayBlock) abortQuietly(abort);
        }
    }

    private static void abortQuietly(Runnable abort) {
        try {
            abort.run();
        } catch (RuntimeException ignored) {
            // the read it ends fails anyway
        }
    }

    /**
     * The result of {@code exchange}, an exchange under way on another thread, waited for until the deadline at most:
     * past it, the abort runs (on its own thread) and the IOException says the deadline's, whether or not the exchange's
     * read has ended yet (a read under way ends only when its next byte or its per-read timeout comes, up to
     * one more timeout).  The exchange's own IOException, runtime exception or error is thrown as it is.
     */
    <T> T await(Future<T> exchange, String url) throws IOException {
        try {
            return exchange.get(Math.max(0, endNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException late) {
            passed = true;
            exchange.cancel(true);
            abortOnce();
            throw explained(new IOException("deadline passed", late), url);
        } catch (InterruptedException interrupted) {
            exchange.cancel(true);
            abortOnce();
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

    /** Drops the deadline (the answer is whole, or failed): its task leaves the scheduler at once, and the abort with it. */
    @Override
    public void close() {
        if (task != null) task.cancel(false);
    }
}
