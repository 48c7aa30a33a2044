// Random sampling plus realistic fake data, "rsrfd" (Arcolezi et al., PVLDB 2023 "RS+RFD";
// dpdist.local.multi.rsrfd): rsfd with fake data drawn from public priors (the records and the fake data:
// _multi.js, fake.js).

import { RealisticFakeData } from './_multi.js';
import { attributeProtocols } from './_attributes.js';

export default class RSRFD extends RealisticFakeData {
  static protocol = 'rsrfd';

  constructor(config) {
    super(config, attributeProtocols());
  }
}
