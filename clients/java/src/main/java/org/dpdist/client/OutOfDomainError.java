package org.dpdist.client;

/** A user's value lies outside the protocol's domain or bounds. */
public class OutOfDomainError extends DPDistError {
    private static final long serialVersionUID = 1L;

    public OutOfDomainError(String message) {
        super(message);
    }
}
