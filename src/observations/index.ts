// The public surface of src/observations (DESIGN.md §7; build spec Part B).
export * from './model.js';
export { refuse, type Rule } from './refusal.js';
export { readRecord, readRecordValue, DEFAULT_APPROVED_LOCATOR_PREFIXES, type ReadOptions } from './parse.js';
export { IMPLEMENTED_EXTENSIONS } from './rules.js';
export * from './digest-object.js';
export * from './envelope.js';
export * from './coding.js';
export * from './barrier.js';
export * from './weights.js';
export * from './measurement-profile.js';
export * from './handoff.js';
export * from './namespace.js';
export * from './rational.js';
export * from './metrics.js';
export * from './fic-criteria.js';
export * from './study.js';
export * from './coverage.js';
export * from './render.js';
