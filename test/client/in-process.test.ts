// The client contract against InProcessBatonClient over a real SQLite file.
import { InProcessBatonClient } from '../../src/client/index.js';
import { runContract } from './contract.js';

runContract('in-process', (_t, store) =>
  Promise.resolve(new InProcessBatonClient({ service: store.service })),
);
