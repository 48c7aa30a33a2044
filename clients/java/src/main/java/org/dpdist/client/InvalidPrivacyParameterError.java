package org.dpdist.client;

/** A privacy parameter (epsilon, epsilon_1) outside the range dpdist supports (Python's InvalidPrivacyParameterError). */
public class InvalidPrivacyParameterError extends InvalidParameterError {
    private static final long serialVersionUID = 1L;

    public InvalidPrivacyParameterError(String message) {
        super(message);
    }
}
