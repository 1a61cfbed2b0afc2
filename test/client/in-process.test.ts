// The client contract against InProcessBatonClient over a real SQLite file, with Baton's status
// sources (src/providers) holding the sandbox's keys, as the server has them.
import { InProcessBatonClient } from '../../src/client/index.js';
import { StatusSources } from '../../src/providers/index.js';
import { runContract } from './contract.js';

runContract('in-process', (_t, store, provider) =>
  Promise.resolve(
    new InProcessBatonClient({
      service: store.service,
      statusSources: new StatusSources({ keys: provider.keys }),
    }),
  ),
);
