// Users sampled into groups, each reporting through its group's 1-D protocol (Python's
// dpdist.local.multi._groups.SampledGroups): smp (a group per attribute), calm (a group per
// marginal) and hdg (a group per grid) share this design.
//
// Each user draws a group uniformly at random, independently of their record, and reports the group's
// index with their group value (an attribute's value, a marginal's cell, a grid's cell) randomized by
// the group's protocol at the whole budget.  The report is a record of two fields: ``<field>`` (the
// group in the narrowest unsigned integer: one byte up to 256 groups) and ``payload`` (the group protocol's report as its
// little-endian bytes, zero-padded to the widest group).  Its law is M_g(y | value_g) / (groups).

import { recordReports, smallestUnsigned } from './format.js';

export class SampledGroups {
  /**
   * @param {object[]} inners each group's 1-D protocol (this client's)
   * @param {string} field the index field's name ("attribute", "marginal", "grid")
   * @param {string[]} names each group's name
   */
  constructor(inners, field, names) {
    this.inners = inners;
    this.field = field;
    this.names = names;
    this.width = Math.max(...inners.map((inner) => inner.rowBytes));
    const count = inners.length;
    this.format = recordReports([
      { name: field, dtype: smallestUnsigned(count), low: 0, high: count, reason: `${field}_out_of_range` },
      { name: 'payload', dtype: '|u1', shape: [this.width] },
    ]);
    this.payloadOffset = this.format.offsetOf(1);
    this.indexBytes = this.payloadOffset; // 1, 2 or 4: the index field comes first
  }

  get count() {
    return this.inners.length;
  }

  /** The parts a client view's design lists, in order: each group's name and protocol. */
  get parts() {
    return this.inners.map((inner, index) => ({ name: this.names[index], inner }));
  }

  /** Write one report at ``offset``: a uniform group g, then ``valueOf(g)`` randomized by g's protocol. */
  writeReport(valueOf, source, bytes, view, offset) {
    const chosen = source.uniformInt(this.count);
    if (this.indexBytes === 1) view.setUint8(offset, chosen);
    else if (this.indexBytes === 2) view.setUint16(offset, chosen, true);
    else view.setUint32(offset, chosen, true);
    const at = offset + this.payloadOffset;
    bytes.fill(0, at, at + this.width); // padding: zero
    this.inners[chosen].writeReport(valueOf(chosen), source, bytes, view, at);
  }

  /** The exact law of a report given each group's value (``values[g]``): the groups' outputs in turn. */
  channelRow(values) {
    const rows = this.inners.map((inner, group) => inner.channelRow(values[group]));
    const out = new Float64Array(rows.reduce((total, row) => total + row.length, 0));
    let at = 0;
    for (const row of rows) {
      for (let y = 0; y < row.length; y++) out[at + y] = row[y] / this.count;
      at += row.length;
    }
    return out;
  }

  /** The group of a report and its payload's bytes (the group protocol's report). */
  split(row) {
    const view = new DataView(row.buffer, row.byteOffset, row.byteLength);
    const chosen = this.indexBytes === 1 ? view.getUint8(0) : this.indexBytes === 2 ? view.getUint16(0, true) : view.getUint32(0, true);
    return [chosen, row.subarray(this.payloadOffset, this.payloadOffset + this.inners[chosen].rowBytes)];
  }

  /** The number of outputs of each group's exact channel (item 0, or the unit value 0, has them all). */
  outputCounts() {
    if (this._outputCounts === undefined) this._outputCounts = this.inners.map((inner) => inner.channelRow(0).length);
    return this._outputCounts;
  }

  /** The report's column in ``channelRow`` (the groups' outputs one after another). */
  reportIndex(row) {
    const [chosen, payload] = this.split(row);
    if (this._outputOffsets === undefined) {
      // each group's first column: the counts of the groups before it, summed once
      this._outputOffsets = this.outputCounts().map((_, group) => this.outputCounts().slice(0, group).reduce((a, b) => a + b, 0));
    }
    const offset = this._outputOffsets[chosen];
    return offset + this.inners[chosen].reportIndex(payload);
  }

  describeReport(row) {
    const [chosen, payload] = this.split(row);
    return `${this.field} ${this.names[chosen]}: ${this.inners[chosen].describeReport(payload)}`;
  }
}
