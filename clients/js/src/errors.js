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
