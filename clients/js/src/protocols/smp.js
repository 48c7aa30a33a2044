// One sampled attribute per record, "smp" (Arcolezi et al., CIKM 2021 "Smp"; dpdist.local.multi.smp): one
// attribute j drawn uniformly, reported at epsilon with its index (the records: _multi.js; the protocols an
// attribute may use: the client's attribute protocols, _index.js).

import { SampleOne } from './_multi.js';
import { attributeProtocols } from './_attributes.js';

export default class SMP extends SampleOne {
  static protocol = 'smp';

  constructor(config) {
    super(config, attributeProtocols());
  }
}
