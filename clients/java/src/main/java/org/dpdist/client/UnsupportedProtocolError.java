package org.dpdist.client;

/** The config names a protocol this client does not implement. */
public class UnsupportedProtocolError extends InvalidParameterError {
    private static final long serialVersionUID = 1L;

    public UnsupportedProtocolError(String message) {
        super(message);
    }
}
