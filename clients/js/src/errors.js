// Errors of the JavaScript client; names match dpdist.errors so messages read the same.

/** Base class of every error the dpdist client raises. */
export class DPDistError extends Error {
  constructor(message) {
    super(message);
    this.name = new.target.name;
  }
}

/** A config parameter is missing, of the wrong type or outside its allowed set. */
export class InvalidParameterError extends DPDistError {}

/** The config names a protocol this client does not implement. */
export class UnsupportedProtocolError extends InvalidParameterError {}

/** A user's value lies outside the protocol's domain or bounds. */
export class OutOfDomainError extends DPDistError {}

/** A user's value has the wrong type (not an integer item, not a finite number). */
export class InvalidValueTypeError extends DPDistError {}

/** A saved state (a device's memo) does not fit the protocol it is loaded for, or is malformed. */
export class IncompatibleStateError extends DPDistError {}

/**
 * A server refused a request (or could not be reached after every retry), or served something the device refuses
 * (a relayed campaign's identity that does not match its pin, an issuer key other than the campaign's, ...): ``code``
 * names the reason, ``status`` the HTTP status (null for the device's own refusals).  From ``Client.send`` it carries
 * the ``batch`` and ``batchId``: resend them together, never a fresh draw of the values.
 */
export class ServiceError extends DPDistError {
  constructor(message, { status = null, code = null } = {}) {
    super(message);
    this.status = status;
    this.code = code;
  }
}
