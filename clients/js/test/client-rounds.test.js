// A page that keeps its Client and submits again after 'wait_for_round', as the refusal
// says ("submit again once round k is open"), must reach its round once the collector opens it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client, Ledger, ServiceError } from '../src/index.js';
import { deterministicSource, memoryStorage } from './helpers.js';

test('the same Client submits its round once it opens after wait_for_round', async () => {
  const round = (k) => ({ protocol: 'threshold', version: 1, epsilon: 1.0, bounds: [0.0, 10.0], cuts: [256 * k], grid_size: 1024, round: k });
  let open = 1;
  const requests = [];
  const fetch = async (url, { method }) => {
    requests.push({ url, method });
    if (method === 'GET') {
      return Response.json({ campaign: 'c1', state: 'open', config: round(open), submit_to: `c1-r${open}`,
        rounds: { round: open, of: 3, round_state: 'open', sizes: [100, 200, 300] } });
    }
    return Response.json({ campaign: `c1-r${open}`, batch_id: url.split('/').at(-1), n_read: 1, accepted: 1, rejected: {}, duplicate: false });
  };
  const storage = memoryStorage();
  const drawn = new Ledger();
  assert.equal(drawn.roundFor('c1', 'local', [100, 200, 300], { uniformInt: () => 150 }), 2); // this device: round 2
  storage.setItem('dpdist-ledger', JSON.stringify(drawn.toJSON()));
  const device = new Client('', 'c1', { fetch, memoStorage: storage, source: deterministicSource(12) });
  await assert.rejects(device.submit(3), (error) => error instanceof ServiceError && error.code === 'wait_for_round');
  open = 2; // the collector advanced: the device's round is open now
  const ack = await device.submit(3);
  assert.equal(ack.accepted, 1);
  assert.match(requests.find((r) => r.method === 'PUT').url, /\/api\/campaigns\/c1-r2\/batches\//);
});
