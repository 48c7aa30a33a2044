package org.dpdist.client;

/** A ledger refused a report: over budget, a question answered already, or a collector changed the budgets of a kept memo. */
public class PrivacyBudgetError extends DPDistError {
    private static final long serialVersionUID = 1L;
    private final double remaining;

    public PrivacyBudgetError(String message, double remaining) {
        super(message);
        this.remaining = remaining;
    }

    /** The reason (the message). */
    public String reason() {
        return getMessage();
    }

    /** The budget the device has left. */
    public double remaining() {
        return remaining;
    }
}
