package org.dpdist.client;

/** A saved state (a device's memo, ledger or token store) does not fit what it is loaded for, or is damaged. */
public class IncompatibleStateError extends DPDistError {
    private static final long serialVersionUID = 1L;

    public IncompatibleStateError(String message) {
        super(message);
    }

    public IncompatibleStateError(String message, Throwable cause) {
        super(message, cause);
    }
}
