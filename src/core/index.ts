// The public surface of src/core. Each module appends its own export line.
export * from './errors.js';
export * from './clock.js';
export * from './jcs.js';
export * from './digest.js';
export * from './time.js';
export * from './ids.js';
export * from './json.js';
export * from './ed25519.js';
export * from './ed25519-policy.js';
export * from './jose.js';
export * from './evidence-envelope.js';
export * from './http-host.js';
