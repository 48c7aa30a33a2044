package org.dpdist.client;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;

/**
 * The body of one answer of {@link JdkHttpTransport}, gathered as the JDK reads it (on its own threads) up to a limit:
 * beyond it the reading stops (the subscription cancelled, the connection closed) and the body is an IOException.  The
 * whole exchange, head and body, is then one call on a thread of the transport's, which the caller waits for with a
 * bound and its interrupt ends: the JDK's {@code InputStream} of a body (JDK 17), read on the caller's thread, ignored
 * an interrupt and cleared it.
 */
final class JdkAnswerBody implements HttpResponse.BodySubscriber<byte[]> {
    private final int limit;
    private final String url;
    /** The bytes gathered ({@code size} of them), in one array that grows as they arrive ({@link #room}) (a 4 MiB
     * answer held twice that in a growing ByteArrayOutputStream and its final copy; an array taken at the
     * declared length once 8 KiB had arrived held 4 MiB for 8 KiB sent). */
    private byte[] gathered;
    private int size;
    private final long declared;
    private final CompletableFuture<byte[]> body = new CompletableFuture<>();
    private Flow.Subscription subscription;
    private boolean cancelled;

    /**
     * A body of at most {@code limit} bytes; {@code declared} its Content-Length (-1: none): the array takes that size
     * once an eighth of it arrived ({@link #room}; not at once: a server declaring 4 MiB and sending nothing held 4 MiB
     * a request, and sending 8 KiB), and a body of its declared length ends in an array of
     * that length (no last copy).
     */
    JdkAnswerBody(int limit, String url, long declared) {
        this.limit = limit;
        this.url = url;
        this.declared = declared;
        this.gathered = new byte[(int) Math.min(limit, Math.min(declared >= 0 ? declared : 8192, 8192))];
    }

    /** The bytes the body's array holds room for now (the tests read how it grows). */
    synchronized int capacity() {
        return gathered.length;
    }

    @Override
    public CompletionStage<byte[]> getBody() {
        return body;
    }

    @Override
    public void onSubscribe(Flow.Subscription given) {
        boolean refused;
        synchronized (this) {
            subscription = given;
            refused = cancelled;
        }
        if (refused) given.cancel();
        else given.request(Long.MAX_VALUE); // as the JDK's own byte-array body: all it reads, up to the limit (then cancelled)
    }

    @Override
    public void onNext(List<ByteBuffer> buffers) {
        synchronized (this) {
            if (cancelled) return; // bytes the JDK had read before the cancel came
        }
        for (ByteBuffer buffer : buffers) {
            int more = buffer.remaining();
            if ((long) size + more > limit) {
                cancel(HttpTransport.tooLong(url, limit));
                return;
            }
            if (size + more > gathered.length) gathered = Arrays.copyOf(gathered, (int) Math.min(limit, room((long) size + more)));
            buffer.get(gathered, size, more);
            size += more;
        }
    }

    /**
     * The array's next length for {@code needed} bytes: twice its length (at least {@code needed}), and the declared
     * length once an eighth of it arrived. An honest answer then ends in one array of its length, the last copy holding
     * an eighth more (doubling to it held half more, and honest 3-4 MiB configs failed at -Xmx16m); a
     * server declaring more than it sends makes this hold at most eight times what it sent (an array of the declared
     * length once 8 KiB had arrived: 512 times; once 64 KiB had: 64 times, and eight stalled requests took
     * a 16 MB heap).
     */
    private long room(long needed) {
        long doubled = Math.max(needed, 2L * gathered.length);
        if (declared < needed) return doubled; // no length declared, or one the body passed: it is cut at the limit
        return needed * 8 >= declared ? declared : Math.min(doubled, declared);
    }

    @Override
    public void onError(Throwable failure) {
        body.completeExceptionally(failure);
    }

    @Override
    public void onComplete() {
        body.complete(size == gathered.length ? gathered : Arrays.copyOf(gathered, size));
    }

    /** Stops the reading (the deadline passed, or the caller was interrupted): the body is {@code why}. */
    void cancel(IOException why) {
        Flow.Subscription given;
        synchronized (this) {
            cancelled = true;
            given = subscription;
        }
        body.completeExceptionally(why);
        if (given != null) given.cancel();
    }
}
