package org.dpdist.client;

/** A user's value has the wrong type (not an integer item, not a finite number, not a record or a set of pairs). */
public class InvalidValueTypeError extends DPDistError {
    private static final long serialVersionUID = 1L;

    public InvalidValueTypeError(String message) {
        super(message);
    }
}
