// Split budget over records, "spl" (Arcolezi et al., CIKM 2021 "Spl"; dpdist.local.multi.spl): every attribute
// randomized by its own protocol at epsilon / k, one field per attribute (the records and their attributes:
// _multi.js; the protocols an attribute may use: the client's attribute protocols, _index.js).

import { SplitBudget } from './_multi.js';
import { attributeProtocols } from './_attributes.js';

export default class SPL extends SplitBudget {
  static protocol = 'spl';

  constructor(config) {
    super(config, attributeProtocols());
  }
}
