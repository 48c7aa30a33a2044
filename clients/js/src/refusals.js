// Refusals of a person's values: how many break the rule and where, never what.

/** What a refusal says in place of a value it refuses (Python's ``dpdist._validation.NOT_SHOWN``, Java's words). */
export const NOT_SHOWN = "not shown: a user's value is private";

/**
 * The refusal of the value at ``position`` by ``rule`` (``"The 'values' argument of GRR.privatize must hold integers
 * in [0, 4)"``), saying ``what`` it is (``'outside it'``): a value given to a protocol is a person's, and an error's
 * text travels (a crash reporter, a log), so it takes no value and none can be shown.
 * @param {typeof import('./errors.js').DPDistError} ErrorClass
 */
export function refusedValue(ErrorClass, rule, what, position) {
  return new ErrorClass(`${rule}. The value at position ${position} is ${what} (${NOT_SHOWN}).`);
}
