package org.dpdist.client;

/** Base class of every error the dpdist client raises; the names match {@code dpdist.errors} so messages read the same. */
public class DPDistError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public DPDistError(String message) {
        super(message);
    }

    public DPDistError(String message, Throwable cause) {
        super(message, cause);
    }

    /** The error's name as the other clients print it ("InvalidParameterError", ...). */
    public String name() {
        return getClass().getSimpleName();
    }
}
