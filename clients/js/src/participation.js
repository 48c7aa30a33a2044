// One report per campaign on this device, drawn once and kept: what the participation page offers.
//
// A page that lets a person draw again until they like the report breaks eps-LDP: the report sent
// is then the person's pick among several draws, whose law is not the randomizer's (with k draws
// the probability of a report can grow up to k-fold, so the ratio between two values' chances is
// no longer bounded by e^eps), and picks lean away from the true value, which biases the estimate.
// So the first report drawn for a campaign is stored (before it is shown) under a key of the
// campaign id and its config, and every later visit offers that report again: reloading the
// page, or typing the same value, shows the same report; another value is refused
// (ReportAlreadyDrawnError) while the kept report is unsent, and once it is sent the campaign is
// done on this device. The person may send the kept report or not; they never choose among draws.
//
// Until the report is sent the record keeps the value it was drawn for (to tell the same value
// from another; a longitudinal campaign's memo keeps values too); once sent, only the report and
// its batch id are kept. Clearing the browser's site data removes the record: nothing on a device
// can stop a person who does that, but the page never offers a second draw itself.

import { DPDistError, IncompatibleStateError, InvalidParameterError } from './errors.js';
import { ReportBatch } from './protocols/_base.js';
import { canonical } from './protocols/_longitudinal.js';

const RECORD_VERSION = 1;

/** A report was already drawn for this campaign on this device, for another value (``kept`` is it). */
export class ReportAlreadyDrawnError extends DPDistError {
  constructor(message, kept) {
    super(message);
    this.kept = kept;
  }
}

/** The storage key of a campaign's kept report: its id and its config (a new config is a new campaign). */
export function participationKey(campaignId, protocol) {
  return `dpdist-participation:${campaignId}:${canonical(protocol.config)}`;
}

/**
 * A value as compared between visits: the number, BigInt or word typed (not its spelling: 42.50 is 42.5);
 * a record (an array of them) as its values in order.
 */
export function valueKey(value) {
  if (Array.isArray(value)) return `record:${JSON.stringify(value.map(valueKey))}`;
  return typeof value === 'bigint' ? `bigint:${value}` : `${typeof value}:${String(value)}`;
}

function toHex(bytes) {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

function fromHex(text) {
  if (typeof text !== 'string' || !/^(?:[0-9a-f]{2})*$/.test(text)) throw new TypeError('not hex');
  return Uint8Array.from(text.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

/**
 * The one report of a campaign on this device.
 *
 * @param {string} campaignId
 * @param {import('./protocols/_base.js').Protocol} protocol the campaign's protocol
 * @param {{getItem: (key: string) => string|null, setItem: (key: string, value: string) => void}} storage
 *   where the report is kept (the page passes window.localStorage)
 */
export class Participation {
  constructor(campaignId, protocol, storage) {
    if (storage === null || storage === undefined || typeof storage.getItem !== 'function' || typeof storage.setItem !== 'function') {
      throw new InvalidParameterError(
        "The 'storage' argument of Participation must have getItem and setItem (such as window.localStorage): " +
          'without it a reload would draw a new report, and a person could pick among draws.',
      );
    }
    this.campaignId = campaignId;
    this.protocol = protocol;
    this.storage = storage;
    this.key = participationKey(campaignId, protocol);
    this._record = this._load();
  }

  _load() {
    const text = this.storage.getItem(this.key);
    if (text === null || text === undefined) return null;
    let record;
    try {
      record = JSON.parse(text);
      if (record.version !== RECORD_VERSION || typeof record.batchId !== 'string' || !Array.isArray(record.shape)) throw new TypeError('fields');
      fromHex(record.bytes);
    } catch (error) {
      // never replaced by a fresh draw: that would be the redraw this record exists to prevent
      throw new IncompatibleStateError(
        `The report kept for campaign '${this.campaignId}' under '${this.key}' is unreadable (${error.message}); it was not replaced.`,
      );
    }
    return record;
  }

  _save(record) {
    this.storage.setItem(this.key, JSON.stringify(record));
    this._record = record;
  }

  /**
   * The kept report, or null before the first draw: ``{batch, batchId, value, sent}`` (``value`` is
   * the text it was drawn for, null once sent; ``sent`` is the server's ack, or null).
   */
  get kept() {
    const record = this._record;
    if (record === null) return null;
    const batch = new ReportBatch(this.protocol.config, this.protocol.floatKeys, record.descr, record.shape, fromHex(record.bytes));
    return { batch, batchId: record.batchId, value: record.valueText, sent: record.sent };
  }

  /**
   * The report of ``value``: the kept one if there is one (drawn for this value, or already sent),
   * else ``draw(value)``'s, stored before it is returned. Another value than the kept report's, while
   * it is unsent, throws ReportAlreadyDrawnError: the campaign's one report is already drawn.
   *
   * @param {*} value the parsed value
   * @param {string} valueText how to show it (the text typed)
   * @param {(value: *) => ReportBatch} draw randomizes one value (one row)
   * @param {() => string} newBatchId a fresh batch id (the report is always sent under it)
   * @returns {{batch: ReportBatch, batchId: string, value: string|null, sent: object|null, fresh: boolean}}
   */
  report(value, valueText, draw, newBatchId) {
    this._record = this._load(); // read again: another tab may have drawn this campaign's report since
    if (this._record !== null) {
      const record = this._record;
      if (record.sent === null && record.valueKey !== valueKey(value)) {
        throw new ReportAlreadyDrawnError(
          `This browser already drew its one report for campaign '${this.campaignId}', for the value ` +
            `${JSON.stringify(record.valueText)}. A report is drawn once and kept: send that one, or none.`,
          this.kept,
        );
      }
      return { ...this.kept, fresh: false };
    }
    const batch = draw(value);
    if (batch.length !== 1) throw new InvalidParameterError(`Participation.report needs a draw of one report. Got ${batch.length}.`);
    this._save({
      version: RECORD_VERSION,
      valueKey: valueKey(value),
      valueText: String(valueText),
      descr: batch.descr,
      shape: batch.shape,
      bytes: toHex(batch.bytes),
      batchId: newBatchId(),
      sent: null,
    });
    return { ...this.kept, fresh: true };
  }

  /** Record that the kept report was sent (``ack``: the server's acknowledgement); its value is forgotten. */
  markSent(ack) {
    if (this._record === null) throw new InvalidParameterError('Participation.markSent: no report was drawn.');
    const { valueKey: _, valueText: __, ...rest } = this._record;
    this._save({ ...rest, valueKey: null, valueText: null, sent: { batch_id: ack.batch_id, accepted: ack.accepted } });
  }
}
