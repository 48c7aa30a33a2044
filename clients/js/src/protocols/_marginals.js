// Marginals and grids over records, the base of "calm" (calm.js; Zhang, Wang, Li, He, Chen, CCS 2018) and
// "hdg" (hdg.js; Yang, Wang, Li, Cheng, Su, PVLDB 2020), as dpdist.local.multi.calm and .hdg randomize on a
// device.
//
// Both divide the users at random among groups (src/groups.js): a user draws one group uniformly,
// independently of their record, and reports the group's index and the cell of their record in it
// through the group's frequency oracle at the whole budget epsilon (this client's GRR, OUE or SUE), so
// a report is epsilon-LDP for any two records; its law is M_g(y | cell_g(x)) / (groups).
//
// - calm: a group per ``order``-subset of the categorical attributes (itertools.combinations order),
//   its cells the product of their domains in C order (the first attribute slowest);
// - hdg: numerical attributes cut into ``resolution`` fine bins; a 2-D grid of g2 x g2 cells per pair
//   of attributes, then (``hybrid``, HDG; not TDG) a 1-D grid of g1 cells per attribute; g1 and g2
//   follow the paper's guideline (sec. 5.3) at ``expected_reports`` users unless given.
//
// A group's oracle is "grr" below 3 e^eps + 2 cells, else "oue" (``oracle: "auto"``), or the one named.
// The collector's client view states each group's oracle, budget, format and design constants (and
// hdg's g1, g2); a view that differs from this client's derivation is refused.

import { InvalidParameterError } from '../errors.js';
import { SampledGroups } from '../groups.js';
import { exp, roundHalfEven } from '../libm.js';
import { boolean, integer, optional, options } from '../params.js';
import { RecordProtocol, attributeDomain } from '../records.js';
import { CONFIG_VERSION } from './_base.js';

/** The most cells of one marginal or grid (Python's ``MAX_CELLS``). */
const MAX_CELLS = 1 << 16;
const ORACLES = ['auto', 'grr', 'oue', 'sue'];
/** The constants of HDG's granularity guideline (sec. 4.3 and 5.3). */
const ALPHA_1 = 0.7;
const ALPHA_2 = 0.03;

/** Every ``size``-subset of 0 .. k-1 in lexicographic order (Python's ``itertools.combinations``). */
function combinations(k, size) {
  const out = [];
  const visit = (start, chosen) => {
    if (chosen.length === size) {
      out.push(chosen);
      return;
    }
    for (let i = start; i < k; i++) visit(i + 1, [...chosen, i]);
  };
  visit(0, []);
  return out;
}

/** An int power of two in [low, high] (Python's ``_PowerOfTwo``). */
function powerOfTwo(low, high) {
  const base = integer(low, high);
  return {
    describe: () => `a power of two from ${low} to ${high}`,
    check(value) {
      const checked = base.check(value);
      if ((checked & (checked - 1)) !== 0) throw new RangeError();
      return checked;
    },
  };
}

/** Base of calm and hdg: records whose group value is a cell, reported through the group's oracle. */
class GroupedCells extends RecordProtocol {
  /**
   * @param {string} name registry name
   * @param {object} config the parsed config
   * @param {{grr: Function, oue: Function, sue: Function}} table the oracle classes
   * @param {object} rules further parameters
   * @param {object} defaults their defaults
   */
  constructor(name, config, table, rules, defaults) {
    super(name, config, { ...rules, oracle: options(ORACLES) }, { ...defaults, oracle: 'auto' });
    this.table = table;
    this.checkers = this.attributes.map((attribute) => attributeDomain(name, attribute));
  }

  /** Refuse an attribute of the wrong kind, or one naming a protocol or options (the oracle is set by 'oracle'). */
  checkAttributes(numerical) {
    for (const attribute of this.attributes) {
      const kind = 'bounds' in attribute ? 'numerical' : 'categorical';
      if (('bounds' in attribute) !== numerical || attribute.protocol !== null || Object.keys(attribute.options).length) {
        throw new InvalidParameterError(
          `The 'attributes' parameter of ${this.display} must hold ${numerical ? "numerical attributes ('bounds')" : 'categorical attributes'} ` +
            `without 'protocol' or 'options' (each ${this.groupField}'s oracle is set by 'oracle'). Attribute '${attribute.name}' is ` +
            `${kind}${attribute.protocol !== null ? ' with a protocol' : ''}.`,
        );
      }
    }
  }

  /** The oracle of a group of ``cells`` cells, at the whole budget. */
  oracle(cells) {
    let name = this.params.oracle;
    if (name === 'auto') name = cells < 3.0 * exp(this.epsilon) + 2.0 ? 'grr' : 'oue';
    return new this.table[name]({ protocol: name, version: CONFIG_VERSION, epsilon: this.epsilon, domain_size: cells });
  }

  /** Build the groups (``names``, each with its number of cells). */
  setGroups(names, cells) {
    this.groups = new SampledGroups(cells.map((count) => this.oracle(count)), this.groupField, names);
    this.format = this.groups.format;
  }

  writeReport(record, source, bytes, view, offset) {
    this.groups.writeReport((group) => this.cellOf(record, group), source, bytes, view, offset);
  }

  channelRow(record) {
    return this.groups.channelRow(this.groups.inners.map((_, group) => this.cellOf(record, group)));
  }

  reportIndex(row) {
    return this.groups.reportIndex(row);
  }

  /** A GRR report names its cell ("age in [20, 40), ..."); a unary one lists its bits. */
  describeReport(row) {
    const [group, payload] = this.groups.split(row);
    const inner = this.groups.inners[group];
    const what = `${this.groupField} ${this.groups.names[group]}`;
    return inner.name === 'grr' ? `${what}: reports the cell ${this.cellText(group, inner.reportIndex(payload))}` : `${what}: ${inner.describeReport(payload)}`;
  }

  /** Check a collector's client view: the format, each group's oracle, and ``extra`` design constants. */
  checkView(view, extra = {}) {
    this.format.check(view.format, this.display);
    const design = view.design ?? {};
    for (const [key, value] of Object.entries(design)) {
      if (key === 'groups') continue;
      if (!Object.hasOwn(extra, key) || extra[key] !== value) {
        this.refuseView(`the design constant ${key} = ${JSON.stringify(value)} (this client derives ${JSON.stringify(extra[key])})`);
      }
    }
    this.checkPartViews(design.groups, this.groups.parts, this.groupField);
  }
}

/** Consistent marginals: a group per ``order``-subset of categorical attributes ("calm"). */
export class ConsistentMarginals extends GroupedCells {
  constructor(config, table) {
    super('calm', config, table, { order: integer(1, 4) }, { order: 2 });
    this.checkAttributes(false);
    const k = this.attributes.length;
    if (this.params.order > k) {
      throw new InvalidParameterError(`The 'order' parameter of ${this.display} must be at most the number of attributes (${k}). Got ${this.params.order}.`);
    }
    this.sets = combinations(k, this.params.order);
    const sizes = this.attributes.map((attribute) => attribute.domain_size);
    const cells = this.sets.map((set) => set.reduce((product, a) => product * sizes[a], 1));
    for (const [index, count] of cells.entries()) {
      if (count > MAX_CELLS) {
        throw new InvalidParameterError(
          `The 'attributes' parameter of ${this.display}: the marginal of ${JSON.stringify(this.sets[index].map((a) => this.attributes[a].name))} ` +
            `has ${count} cells; at most ${MAX_CELLS} (lower 'order' or coarsen the attributes).`,
        );
      }
    }
    this.setGroups(this.sets.map((set) => set.map((a) => this.attributes[a].name).join(',')), cells);
  }

  get groupField() {
    return 'marginal';
  }

  /** The cell of a (checked) record in marginal ``group``: C order, the first attribute slowest. */
  cellOf(record, group) {
    return this.sets[group].reduce((cell, a) => cell * this.attributes[a].domain_size + record[a], 0);
  }

  cellText(group, cell) {
    const parts = [];
    for (const a of [...this.sets[group]].reverse()) {
      const size = this.attributes[a].domain_size;
      parts.unshift(`${this.attributes[a].name}=${this.checkers[a].labelOf(cell % size)}`);
      cell = Math.floor(cell / size);
    }
    return parts.join(', ');
  }
}

/**
 * HDG's (g1, g2) for ``n`` users (TDG: g1 = g2), powers of two in [2, resolution]: Python's
 * ``guideline_granularities``, operation for operation (the view's g1 and g2 are checked against them).
 */
export function guidelineGranularities(n, epsilon, k, hybrid, resolution) {
  const grids = (k * (k - 1)) / 2 + (hybrid ? k : 0);
  const e = exp(epsilon);
  const rounded = (value) => Math.min(Math.max(2 ** roundHalfEven(Math.log2(Math.max(value, 1.0))), 2), resolution);
  const g2 = rounded(Math.sqrt(2 * ALPHA_2 * (e - 1) * Math.sqrt(n / (grids * e))));
  if (!hybrid) return [g2, g2];
  const g1 = ((n * (e - 1) ** 2 * ALPHA_1 ** 2) / (2 * grids * e)) ** (1 / 3);
  return [Math.max(rounded(g1), g2), g2];
}

/** Hybrid (1-D and 2-D) grids over numerical attributes ("hdg"; TDG without the 1-D grids). */
export class HybridGrids extends GroupedCells {
  constructor(config, table) {
    const rules = {
      resolution: powerOfTwo(4, 1024),
      g1: optional(powerOfTwo(1, 1024)),
      g2: optional(powerOfTwo(1, 1024)),
      expected_reports: integer(1, Number.MAX_SAFE_INTEGER),
      hybrid: boolean(),
    };
    super('hdg', config, table, rules, { resolution: 64, g1: null, g2: null, expected_reports: 1000000, hybrid: true });
    const k = this.attributes.length;
    if (k < 2) {
      throw new InvalidParameterError(
        `The 'attributes' parameter of ${this.display} must hold at least two numerical attributes (a range over one ` +
          `attribute is answered by hh or haar-hrr). Got ${k}.`,
      );
    }
    this.checkAttributes(true);
    [this.g1, this.g2] = this.granularities();
    const pairs = combinations(k, 2);
    this.grids = [...pairs, ...(this.params.hybrid ? this.attributes.map((_, a) => [a]) : [])];
    const names = this.grids.map((grid) => grid.map((a) => this.attributes[a].name).join(','));
    this.setGroups(names, this.grids.map((grid) => (grid.length === 2 ? this.g2 * this.g2 : this.g1)));
  }

  get groupField() {
    return 'grid';
  }

  granularities() {
    const { resolution, hybrid, expected_reports: n } = this.params;
    const planned = guidelineGranularities(n, this.epsilon, this.attributes.length, hybrid, resolution);
    const g2 = this.params.g2 ?? planned[1];
    const g1 = !hybrid ? g2 : this.params.g1 ?? planned[0];
    if (!(g2 <= g1 && g1 <= resolution)) {
      throw new InvalidParameterError(
        `The 'g1' and 'g2' parameters of ${this.display} must satisfy g2 <= g1 <= resolution (${resolution}). Got g1=${g1}, g2=${g2}.`,
      );
    }
    if (Math.max(g2 * g2, g1) > MAX_CELLS) {
      throw new InvalidParameterError(`The 'g2' parameter of ${this.display}: a 2-D grid has at most ${MAX_CELLS} cells. Got ${g2}.`);
    }
    return [g1, g2];
  }

  /** The fine bin of a value on [0, 1] (Python's ``GridGeometry.fine``). */
  fine(unit) {
    const { resolution } = this.params;
    return Math.min(Math.floor(unit * resolution), resolution - 1);
  }

  /** The cell of a (checked: values on [0, 1]) record in grid ``group``: C order, the first attribute slowest. */
  cellOf(record, group) {
    const { resolution } = this.params;
    const grid = this.grids[group];
    if (grid.length === 1) return Math.floor(this.fine(record[grid[0]]) / (resolution / this.g1));
    const width = resolution / this.g2;
    return Math.floor(this.fine(record[grid[0]]) / width) * this.g2 + Math.floor(this.fine(record[grid[1]]) / width);
  }

  cellText(group, cell) {
    const grid = this.grids[group];
    const cells = grid.length === 1 ? [[grid[0], cell, this.g1]] : [[grid[0], Math.floor(cell / this.g2), this.g2], [grid[1], cell % this.g2, this.g2]];
    return cells.map(([a, index, count]) => {
      const [lo, hi] = this.attributes[a].bounds;
      const edge = (i) => Number((lo + ((hi - lo) * i) / count).toPrecision(6));
      return `${this.attributes[a].name} in [${edge(index)}, ${edge(index + 1)}${index + 1 === count ? ']' : ')'}`;
    }).join(', ');
  }

  checkView(view) {
    super.checkView(view, { g1: this.g1, g2: this.g2 });
  }
}
