// How many reports of a fetched config fit one request body: a campaign config is an instruction to the device,
// as Python's dpdist/_wire/_report_bound.py.
//
// A device builds its protocol from the config a server answers and sizes its reports by it, so a hostile server or
// proxy answering the config GET with a huge domain (``domain_size`` = 2*10^7: ~530 bytes on the wire) could make
// ``submitMany`` randomize gigabytes.  Before anything is drawn, sent or charged, the client computes the encoded
// bytes of one report (a binary record, as wire.js's ``encodeRecord`` writes it) and refuses (ServiceError
// ``unexpected_answer``) a config whose statistic is over CLIENT_MAX_STATISTIC_BYTES or whose one report does not
// fit min(the config answer's ``max_body_bytes``, CLIENT_MAX_BODY_BYTES), or whose record header (it carries the config)
// is past the MAX_HEADER_BYTES a service reads of one (every batch would be refused after the draw);
// batches hold at most ``rowsPerBody`` reports: what fits the body, and no more than the answer's ``max_batch_reports``
// (the service's per-batch work bound: a batch of more is refused 413 ``too_many_rows``).

import { ServiceError, UnsupportedProtocolError } from './errors.js';
import { pythonJsonDumps } from './pyjson.js';
import { fromConfig } from './registry.js';
import { shown } from './shown.js';

/** The protocol of the config a server answered for ``campaign``.  A config this client cannot build because a
 * parameter is out of range or missing is the server's answer refused (ServiceError ``unexpected_answer``), not the
 * app's own mistake (InvalidParameterError), as Python's ``protocol_of_answer``; a protocol dpdist has
 * and this client does not implement stays UnsupportedProtocolError (the server is right, this client cannot take
 * part).  Nothing is drawn or sent either way. */
export function protocolOfAnswer(config, campaign) {
  try {
    return fromConfig(config);
  } catch (error) {
    if (error instanceof UnsupportedProtocolError) throw error;
    // any other failure to build it is the answer's (a raw RangeError or TypeError is no app's bug); the
    // collector's text in it escaped and cut
    throw new ServiceError(`The config answer of campaign ${JSON.stringify(campaign)} is not a config this client can use: `
      + `${shown(error instanceof Error ? error.message : error, [], 400)} Is the server a dpdist service of a version `
      + 'this client reads? Nothing was drawn or sent.', { status: 200, code: 'unexpected_answer' });
  }
}

/** The largest body a device sends whatever the config answer says: the service's default --max-body-bytes (16 MiB). */
export const CLIENT_MAX_BODY_BYTES = 16 * 1024 * 1024;
/** The largest statistic (entries x 8 bytes) of a campaign a device takes part in: the service's default
 * --max-statistic-bytes (64 MiB). */
export const CLIENT_MAX_STATISTIC_BYTES = 64 * 1024 * 1024;
/** The most bytes of a binary record's header a service reads (1 MiB, Python's dpdist._io._binary._MAX_HEADER_BYTES). */
export const MAX_HEADER_BYTES = 1024 * 1024;

const PLACEHOLDER_ID = '0'.repeat(32); // a file id's length is what matters
const MAX_CRC = 0xffffffff; // the CRC counted at its longest
const STATISTIC_ITEM_BYTES = 8; // Python's statistic dtypes are int64 or float64

/** Bytes of one binary record of ``rows`` reports of ``protocol`` with a file id (at least what encodeRecord writes:
 * its CRC counted at its longest), without drawing or allocating the reports. */
export function recordBytes(protocol, rows) {
  const payload = rows * protocol.rowBytes;
  const header = pythonJsonDumps({
    config: protocol.config, crc32: MAX_CRC, dtype: protocol.descr, file_id: PLACEHOLDER_ID, payload_bytes: payload,
    shape: [rows, ...protocol.rowShape],
  }, protocol.floatKeys);
  return 14 + new TextEncoder().encode(header).length + payload;
}

/** Entries of the aggregate statistic of ``protocol`` (Python's ``statistic_size``), from its parameters. */
export function statisticSize(protocol) {
  const sum = (inners) => inners.reduce((total, inner) => total + statisticSize(inner), 0);
  if (protocol.groups?.inners) return protocol.groups.inners.length + sum(protocol.groups.inners); // smp, calm, hdg
  if (protocol.inners) return sum(protocol.inners); // spl, rsfd, rsrfd
  switch (protocol.name) {
    case 'hr': return protocol.outputSize;
    case 'sw': case 'gw': case 'opm': case 'opm-circular': return protocol.buckets;
    case 'pem': return protocol.lengths.length * protocol.hashCount * protocol.g;
    case 'dbitflippm': return 2 * protocol.domainSize;
    case 'cms': return protocol.k * (protocol.m + 1);
    case 'hcms': return 2 * protocol.k * protocol.m;
    case 'threshold': return 2 * protocol.params.cuts.length;
    case 'privkv': return 3 * protocol.domainSize;
    case 'pckv-grr': case 'pckv-ue': return 2 * protocol.extendedSize;
    default: return protocol.domainSize; // a frequency oracle: one count per item
  }
}

/** The positive int the config answer ``document`` gives as ``field`` (undefined when absent or null); a value that is
 * not an int >= 1 (a bool, a float, a string, 0, negative, past 2^53) is the server's answer refused
 * (``unexpected_answer``), nothing drawn or sent. */
function statedCount(document, field, campaign) {
  const stated = document !== null && typeof document === 'object' ? document[field] : undefined;
  if (stated === undefined || stated === null) return undefined;
  if (!Number.isSafeInteger(stated) || stated < 1) {
    throw new ServiceError(`The config answer of campaign '${campaign}' gives '${field}' = ${String(JSON.stringify(stated)).slice(0, 40)}, ` +
      'not an int >= 1; nothing was drawn or sent.', { status: 200, code: 'unexpected_answer' });
  }
  return stated;
}

/** The body the config answer ``document`` says the service takes (``max_body_bytes``), capped by
 * CLIENT_MAX_BODY_BYTES (none stated: the cap); a value that is not an int >= 1 is refused. */
export function bodyLimit(document, campaign) {
  const stated = statedCount(document, 'max_body_bytes', campaign);
  return stated === undefined ? CLIENT_MAX_BODY_BYTES : Math.min(stated, CLIENT_MAX_BODY_BYTES);
}

/** The most reports one batch may hold that the config answer ``document`` states (``max_batch_reports``: the
 * service refuses a larger batch 413 ``too_many_rows``, its committer's work per batch bounded); none stated
 * (an older service): Infinity, the body size alone bounds a batch.  A value that is not an int >= 1 is refused. */
export function batchReportsLimit(document, campaign) {
  return statedCount(document, 'max_batch_reports', campaign) ?? Infinity;
}

/** Refuse (``unexpected_answer``) a config whose statistic is over CLIENT_MAX_STATISTIC_BYTES: a campaign the service
 * refuses to create at its default limits, whose reports and randomization grow with it. */
export function checkStatistic(protocol, campaign) {
  const needed = statisticSize(protocol) * STATISTIC_ITEM_BYTES;
  if (needed > CLIENT_MAX_STATISTIC_BYTES) {
    throw new ServiceError(`The config answer of campaign '${campaign}' describes a campaign of ${protocol.name} ('config': ` +
      `${largestField(protocol.config)}) whose statistic takes ${needed} bytes, more than the ${CLIENT_MAX_STATISTIC_BYTES} a device ` +
      'takes part in (the service\'s default --max-statistic-bytes); refused before anything was drawn or charged.',
    { status: 200, code: 'unexpected_answer' });
  }
}

/** Bytes of the header of a binary record of ``protocol`` (it carries the config: labels and all). */
export function headerBytes(protocol) {
  return recordBytes(protocol, 0) - 14;
}

/** Refuse (``unexpected_answer``) a config whose record header is past the MAX_HEADER_BYTES a service reads of one:
 * every batch would be refused (150,000 labels were taken). */
export function checkHeader(protocol, campaign) {
  const size = headerBytes(protocol);
  if (size > MAX_HEADER_BYTES) {
    throw new ServiceError(`The config answer of campaign '${campaign}' describes ${protocol.name} reports whose record header (it ` +
      `carries the config) takes ${size} bytes, more than the ${MAX_HEADER_BYTES} a service reads of one: no batch of them ` +
      'could be counted; refused before anything was drawn or charged.', { status: 200, code: 'unexpected_answer' });
  }
}

/** The most reports (at most ``wanted`` and the answer's ``max_batch_reports``, at least 1) whose record fits
 * ``bodyLimit``; a bad ``max_body_bytes`` or ``max_batch_reports``, or a config whose statistic is too
 * large, whose record header is past MAX_HEADER_BYTES or whose one report does not fit is refused
 * (``unexpected_answer``) before anything is drawn. */
export function rowsPerBody(protocol, document, campaign, wanted) {
  checkStatistic(protocol, campaign);
  checkHeader(protocol, campaign);
  const limit = bodyLimit(document, campaign);
  const most = Math.min(wanted, batchReportsLimit(document, campaign)); // checked before anything is drawn too
  const one = recordBytes(protocol, 1);
  if (one > limit) {
    const stated = document?.max_body_bytes;
    throw new ServiceError(`The config answer of campaign '${campaign}' describes ${protocol.name} reports of ${one} bytes each ` +
      `('config': ${largestField(protocol.config)}), more than one request body may hold (${limit} bytes: 'max_body_bytes' ` +
      `${stated === undefined || stated === null ? 'absent' : `= ${stated}`}, at most ${CLIENT_MAX_BODY_BYTES} on this device); ` +
      'refused before anything was drawn or charged.', { status: 200, code: 'unexpected_answer' });
  }
  let rows = Math.max(1, Math.min(most, Math.floor((limit - recordBytes(protocol, 0)) / Math.max(protocol.rowBytes, 1))));
  while (rows > 1 && recordBytes(protocol, rows) > limit) rows -= 1; // the digits of the shape: a few bytes
  return rows;
}

/** The config's largest integer field, e.g. ``domain_size = 20000000`` (what sizes its reports). */
function largestField(config) {
  let best = null;
  for (const [key, value] of Object.entries(config)) {
    if (Number.isInteger(value) && (best === null || value > best[1] || (value === best[1] && key > best[0]))) best = [key, value];
  }
  return best === null ? 'its protocol' : `${best[0]} = ${best[1]}`;
}
