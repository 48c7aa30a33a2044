// JSON text exactly as Python's json.dumps(..., sort_keys=True) writes it, so that a record
// header written here is byte for byte the one the Python writer produces.
//
// Python separates with ", " and ": ", escapes every non-ASCII character as \uXXXX, and writes
// floats with repr(): shortest round-trip digits (the same digits as JavaScript's), but "1.0"
// rather than "1", and exponent notation "1e-05" / "1e+16" outside 1e-4 <= |x| < 1e16.
// JavaScript numbers do not say whether they were floats, so the caller names the keys whose
// numbers are floats (``floatKeys``); every other number must be an integer.  The config in a record
// header is the client's normalized config (the same bytes whether it came bare or in a client view).

/** ``repr(x)`` of a Python float. */
export function pythonFloatRepr(x) {
  if (!Number.isFinite(x)) throw new RangeError(`JSON has no representation of ${x}`);
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa, exponentText] = x.toExponential().split('e'); // shortest round-trip digits
  const sign = mantissa.startsWith('-') ? '-' : '';
  const digits = mantissa.replace('-', '').replace('.', '');
  const exponent = Number(exponentText);
  const point = exponent + 1; // x = 0.digits * 10^point
  if (point > 16 || point < -3) {
    const head = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const magnitude = String(Math.abs(exponent)).padStart(2, '0');
    return `${sign}${head}e${exponent < 0 ? '-' : '+'}${magnitude}`;
  }
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}.0`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

function pythonString(text) {
  // JSON.stringify escapes quotes, backslashes and control characters as Python does
  // (\b \f \n \r \t and lower-case \u00XX); Python also escapes every non-ASCII code unit.
  return JSON.stringify(text).replace(/[\u007f-\uffff]/g, (c) =>
    c === '\u007f' ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * ``json.dumps(value, sort_keys=True)``.
 * @param {unknown} value plain data (objects, arrays, strings, numbers, booleans, null)
 * @param {Set<string>} [floatKeys] object keys whose numbers (or arrays of numbers) are floats
 */
export function pythonJsonDumps(value, floatKeys = new Set(), asFloat = false) {
  if (value === null || value === undefined) return 'null';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (typeof value === 'number') {
    if (asFloat) return pythonFloatRepr(value);
    if (!Number.isSafeInteger(value)) throw new RangeError(`expected an integer, got ${value}`);
    return String(value);
  }
  if (typeof value === 'string') return pythonString(value);
  if (Array.isArray(value)) return `[${value.map((item) => pythonJsonDumps(item, floatKeys, asFloat)).join(', ')}]`;
  const keys = Object.keys(value).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${keys
    .map((key) => `${pythonString(key)}: ${pythonJsonDumps(value[key], floatKeys, floatKeys.has(key))}`)
    .join(', ')}}`;
}
