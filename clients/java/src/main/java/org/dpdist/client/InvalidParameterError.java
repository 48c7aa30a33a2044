package org.dpdist.client;

/** A config parameter (or an option of this client) is missing, of the wrong type or outside its allowed set. */
public class InvalidParameterError extends DPDistError {
    private static final long serialVersionUID = 1L;

    public InvalidParameterError(String message) {
        super(message);
    }
}
