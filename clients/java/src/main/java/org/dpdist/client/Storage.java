package org.dpdist.client;

import java.util.function.Supplier;

/**
 * Where a device keeps what must outlive the process: its privacy ledger (key {@code dpdist-ledger}) and its Privacy
 * Pass tokens (key {@code dpdist-tokens}), as the JavaScript client keeps them in {@code localStorage}.
 * {@link FileStorage} writes each key to a file atomically; an Android app may implement this on its own files (or
 * SharedPreferences with {@code commit()}), provided {@link #setItem} returns only once the value is durable and
 * throws when it is not (a full disk): a report is sent only after its charge is stored.
 */
public interface Storage {
    /** The value under {@code key}, or null. */
    String getItem(String key);

    /** Store {@code value} under {@code key}, durably, or throw (nothing sent depends on an unsaved value). */
    void setItem(String key, String value);

    /**
     * {@code action} while no other client (in this process or, for a file storage, another process) reads, draws from
     * and saves this storage's ledger: the Web Lock {@code dpdist-ledger} of the JavaScript client.
     */
    default <T> T withLock(Supplier<T> action) {
        synchronized (this) {
            return action.get();
        }
    }
}
