// The client contract against HttpBatonClient and the REAL server (src/server buildServer) on
// 127.0.0.1:0 over the same real SQLite file, with a real operator token; the server's status
// sources verify the sandbox's signed answers with the sandbox's keys.
import type { AddressInfo } from 'node:net';
import { HttpBatonClient } from '../../src/client/index.js';
import { systemClock } from '../../src/core/clock.js';
import { buildServer, createToken } from '../../src/server/index.js';
import { runContract } from './contract.js';

runContract('http', async (t, store, provider) => {
  const app = buildServer({ engine: store.engine, service: store.service, keys: provider.keys });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  const { port } = app.server.address() as AddressInfo;
  const { token } = await createToken(
    store.engine,
    { role: 'operator' },
    { clock: systemClock, actor: 'test' },
  );
  return new HttpBatonClient({ baseUrl: `http://127.0.0.1:${port}`, token });
});
