package org.dpdist.client;

/**
 * A server refused a request (or could not be reached after every retry), or served something the device refuses (a
 * relayed campaign's identity that does not match its pin, an issuer key other than the campaign's, ...): {@link #code()}
 * names the reason, {@link #status()} the HTTP status (-1 for the device's own refusals). From {@code Client.send} it
 * carries the {@link #batch()} and {@link #batchId()}: resend them together, never a fresh draw of the values.
 */
public class ServiceError extends DPDistError {
    private static final long serialVersionUID = 1L;
    private final int status;
    private final String code;
    private transient ReportBatch batch;
    private String batchId;

    public ServiceError(String message, int status, String code) {
        super(message);
        this.status = status;
        this.code = code;
    }

    public ServiceError(String message, int status, String code, Throwable cause) {
        super(message, cause);
        this.status = status;
        this.code = code;
    }

    /** A refusal of the device itself (no HTTP status). */
    public static ServiceError refusal(String message, String code) {
        return new ServiceError(message, -1, code);
    }

    /** The HTTP status of the server's answer, -1 for the device's own refusals and for a server that never answered. */
    public int status() {
        return status;
    }

    /** The reason ({@code pin_mismatch}, {@code campaign_closed}, ...), null when the server named none. */
    public String code() {
        return code;
    }

    /** The batch that was not acknowledged (from {@code Client.send}), null otherwise. */
    public ReportBatch batch() {
        return batch;
    }

    /** The batch id the unacknowledged batch must be resent under, null otherwise. */
    public String batchId() {
        return batchId;
    }

    ServiceError withBatch(ReportBatch batch, String batchId) {
        this.batch = batch;
        this.batchId = batchId;
        return this;
    }
}
