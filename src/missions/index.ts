export * from './consume.js';
// The public surface of src/missions (the stored half of the Mission-aware harness).
export * from './verified.js';
export * from './model.js';
export * from './matrix.js';
export * from './view.js';
export * from './machine.js';
export * from './entry-check.js';
export * from './rebind.js';
export * from './evidence.js';
export * from './cache-key.js';
export * from './ports.js';
export * from './inputs.js';
export * from './service.js';
export * from './signal-batcher.js';
export * from './executor-scope.js';
