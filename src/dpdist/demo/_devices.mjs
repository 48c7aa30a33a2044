// The JavaScript devices of `dpdist demo --campaign` (src/dpdist/demo/_campaign.py): each value read from stdin (a
// JSON list) is one device, with its own Client and in-memory ledger, sending one report; a line "sent" each.
//
//   node _devices.mjs SERVER CAMPAIGN CLIENT_MODULE_URL < values.json

const [server, campaign, clientModule] = process.argv.slice(2);
const { Client } = await import(clientModule);

class Memory {
  constructor() { this.items = new Map(); }
  getItem(key) { return this.items.has(key) ? this.items.get(key) : null; }
  setItem(key, value) { this.items.set(key, String(value)); }
}

let text = '';
for await (const chunk of process.stdin) text += chunk;
for (const item of JSON.parse(text)) {
  const device = new Client(server, campaign, { memoStorage: new Memory(), retries: 3 });
  await device.submit(item);
  process.stdout.write('sent\n');
}
