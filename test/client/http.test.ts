// The client contract against HttpBatonClient and the REAL server (src/server buildServer) on
// 127.0.0.1:0 over the same real SQLite file, with a real operator token; the server's status
// sources verify the sandbox's signed answers with the sandbox's keys.
import { HttpBatonClient } from '../../src/client/index.js';
import { runContract } from './contract.js';
import { batonOn } from './wire.js';

runContract('http', async (t, store, provider) => {
  const { url, token } = await batonOn(t, store, provider);
  return new HttpBatonClient({ baseUrl: url, token });
});
