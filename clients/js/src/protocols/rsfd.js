// Random sampling plus fake data, "rsfd" (Arcolezi et al., CIKM 2021 "RS+FD"; dpdist.local.multi.rsfd): one
// attribute randomized at epsilon, a fake report for every other one, so the index is hidden (the records and
// the fake data: _multi.js, fake.js).

import { RandomSamplingFakeData } from './_multi.js';
import { attributeProtocols } from './_attributes.js';

export default class RSFD extends RandomSamplingFakeData {
  static protocol = 'rsfd';

  constructor(config) {
    super(config, attributeProtocols());
  }
}
