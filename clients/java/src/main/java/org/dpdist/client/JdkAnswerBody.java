package org.dpdist.client;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;

/**
 * The body of one answer of {@link JdkHttpTransport}, gathered as the JDK reads it (on its own threads) up to a limit:
 * beyond it the reading stops (the subscription cancelled, the connection closed) and the body is an IOException.  The
 * whole exchange, head and body, is then one call on a thread of the transport's, which the caller waits for with a
 * bound and its interrupt ends: the JDK's {@code InputStream} of a body (JDK 17), read on the caller's thread, ignored
 * an interrupt and cleared it (attack78 N2).
 */
final class JdkAnswerBody implements HttpResponse.BodySubscriber<byte[]> {
    private final int limit;
    private final String url;
    private final ByteArrayOutputStream gathered = new ByteArrayOutputStream();
    private final CompletableFuture<byte[]> body = new CompletableFuture<>();
    private Flow.Subscription subscription;
    private boolean cancelled;

    JdkAnswerBody(int limit, String url) {
        this.limit = limit;
        this.url = url;
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
            if (gathered.size() + buffer.remaining() > limit) {
                cancel(HttpTransport.tooLong(url, limit));
                return;
            }
            byte[] bytes = new byte[buffer.remaining()];
            buffer.get(bytes);
            gathered.write(bytes, 0, bytes.length);
        }
    }

    @Override
    public void onError(Throwable failure) {
        body.completeExceptionally(failure);
    }

    @Override
    public void onComplete() {
        body.complete(gathered.toByteArray());
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
